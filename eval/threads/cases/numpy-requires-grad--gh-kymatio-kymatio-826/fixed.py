# kymatio's example "Reconstruct a synthetic signal from its scattering transform": a harmonic
# signal is analysed with a 1-D scattering transform, and a random guess y is moved by gradient
# descent (with a "bold driver" learning rate) until its scattering coefficients match; the loss
# history is plotted at the end. A small stand-in computes first-order scattering-like coefficients
# (a low-passed STFT modulus) since kymatio is not installed, and a stand-in for matplotlib.pyplot
# converts what it plots with numpy as matplotlib does.
import numpy as np
import torch
from torch.autograd import backward


class _Pyplot:  # matplotlib is not installed here: plot()/specgram() turn their data into arrays like it
    def plot(self, *data, **kwargs):
        return [np.asarray(d, dtype=float) for d in data]

    specgram = plot

    def __getattr__(self, name):  # figure, title, show
        return lambda *args, **kwargs: None


plt = _Pyplot()


class Scattering1D:  # stands in for kymatio.torch.Scattering1D(J, shape, Q)
    def __init__(self, J, shape, Q):
        self.n_fft = 2 ** J
        self.pool = torch.nn.AvgPool1d(4)

    def __call__(self, x):
        U1 = torch.stft(x, self.n_fft, hop_length=self.n_fft // 4, window=torch.hann_window(self.n_fft),
                        return_complex=True).abs()
        return self.pool(U1.unsqueeze(0)).squeeze(0)


def generate_harmonic_signal(T, num_intervals=4, gamma=0.9, random_state=42):
    rng = np.random.RandomState(random_state)
    num_notes = 2 * (num_intervals - 1) + 1
    support = T // num_intervals
    half_support = support // 2
    base_freq = 0.1 * rng.rand(num_notes) + 0.05
    phase = 2 * np.pi * rng.rand(num_notes)
    window = np.hanning(support)
    x = np.zeros(T, dtype='float32')
    t = np.arange(0, support)
    u = 2 * np.pi * t
    for i in range(num_notes):
        ind_start = i * half_support
        note = np.zeros(support)
        for k in range(1):
            note += (np.power(gamma, k) * np.cos(u * (k + 1) * base_freq[i] + phase[i]))
        x[ind_start:ind_start + support] += note * window
    return x


T = 2 ** 10
x = torch.from_numpy(generate_harmonic_signal(T))
plt.figure(figsize=(8, 2))
plt.plot(x.numpy())
plt.title("Original signal")

J = 6
Q = 16
scattering = Scattering1D(J, T, Q)
Sx = scattering(x)

learning_rate = 1
bold_driver_accelerator = 1.1
bold_driver_brake = 0.55
n_iterations = 40

# Random guess to initialize.
torch.manual_seed(0)
y = torch.randn((T,), requires_grad=True)
Sy = scattering(y)

history = []
signal_update = torch.zeros_like(x)

# Iterate to reconstruct random guess to be close to target.
for k in range(n_iterations):
    # Backpropagation.
    err = torch.norm(Sx - Sy)

    if k % 10 == 0:
        print('Iteration %3d, loss %.2f' % (k, err.detach().numpy()))

    # Measure the new loss.
    history.append(err.detach())

    backward(err)

    delta_y = y.grad

    # Gradient descent
    with torch.no_grad():
        signal_update = - learning_rate * delta_y
        new_y = y + signal_update
    new_y.requires_grad = True

    # New forward propagation.
    Sy = scattering(new_y)

    if history[k] > history[k - 1]:
        learning_rate *= bold_driver_brake
    else:
        learning_rate *= bold_driver_accelerator
        y = new_y

plt.figure(figsize=(8, 2))
plt.plot(history)
plt.title("MSE error vs. iterations")

plt.figure(figsize=(8, 2))
plt.plot(y.detach().numpy())
plt.title("Reconstructed signal")
plt.show()
print("final loss", round(float(history[-1]), 4))
