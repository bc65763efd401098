# Cheetah-style beam dynamics: a Segment of elements (drifts, quadrupoles) with tensor lengths and
# strengths, so that an optimizer can differentiate the beam through them; Segment.plot_twiss tracks
# the beam element by element and plots the beta functions along s with matplotlib. The user makes a
# drift length a tensor that requires grad and plots the lattice. Matplotlib draws into a figure
# that is never shown or saved.
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

torch.manual_seed(0)


class Element:
    def __init__(self, length):
        self.length = torch.as_tensor(length)

    def transfer_map(self):
        raise NotImplementedError

    def track(self, twiss):
        # propagate (beta, alpha, gamma) through the 2x2 transfer matrix
        R = self.transfer_map()
        beta, alpha, gamma = twiss
        new_beta = R[0, 0] ** 2 * beta - 2 * R[0, 0] * R[0, 1] * alpha + R[0, 1] ** 2 * gamma
        new_alpha = (-R[0, 0] * R[1, 0] * beta + (R[0, 0] * R[1, 1] + R[0, 1] * R[1, 0]) * alpha
                     - R[0, 1] * R[1, 1] * gamma)
        new_gamma = (1 + new_alpha ** 2) / new_beta
        return new_beta, new_alpha, new_gamma

    def split(self, resolution):
        n = max(int(torch.ceil(self.length / resolution).item()), 1)
        return [type(self)(**{**self.__dict__, "length": self.length / n}) for _ in range(n)]


class Drift(Element):
    def transfer_map(self):
        one, zero = torch.ones_like(self.length), torch.zeros_like(self.length)
        return torch.stack([torch.stack([one, self.length]), torch.stack([zero, one])])


class Quadrupole(Element):
    def __init__(self, length, k1):
        super().__init__(length)
        self.k1 = torch.as_tensor(k1)

    def transfer_map(self):
        kl = self.k1 * self.length
        one = torch.ones_like(kl)
        return torch.stack([torch.stack([one, self.length]), torch.stack([-kl, one - kl * self.length])])


class Segment:
    def __init__(self, elements):
        self.elements = elements

    def plot_twiss(self, incoming, resolution=0.1, ax=None):
        twiss = incoming
        s_positions, beta_x = [torch.tensor(0.0)], [incoming[0]]
        for element in self.elements:
            for piece in element.split(resolution):
                twiss = piece.track(twiss)
                s_positions.append(s_positions[-1] + piece.length)
                beta_x.append(twiss[0])

        stacked_s_positions = torch.stack(torch.broadcast_tensors(*s_positions))
        plot_s = stacked_s_positions.detach()
        stacked_beta_x = torch.stack(torch.broadcast_tensors(*beta_x))
        plot_beta_x = stacked_beta_x.detach()

        if ax is None:
            fig = plt.figure()
            ax = fig.add_subplot(111)
        ax.plot(plot_s, plot_beta_x, label=r"$\beta_x$")
        ax.set_xlabel("s (m)")
        ax.set_ylabel(r"$\beta$ (m)")
        ax.legend()
        return ax


segment = Segment(elements=[
    Drift(length=torch.tensor(1.0, requires_grad=True)),
    Quadrupole(length=torch.tensor(0.2), k1=torch.tensor(4.0)),
    Drift(length=torch.tensor(0.5)),
])
incoming = (torch.tensor(5.0), torch.tensor(0.0), torch.tensor(0.2))
ax = segment.plot_twiss(incoming=incoming)
print("plotted", len(ax.lines[0].get_xdata()), "points")
