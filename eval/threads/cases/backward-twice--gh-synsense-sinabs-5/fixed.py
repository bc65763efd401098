# Spiking layer that keeps its membrane potential in a registered buffer: reset_states() zeroes
# the buffer in place between samples, then the next sample's loss is backpropagated.
import torch
import torch.nn as nn

torch.manual_seed(0)


class StatefulLayer(nn.Module):
    def __init__(self, state_names):
        super().__init__()
        for name in state_names:
            self.register_buffer(name, torch.zeros(0))

    def is_state_initialised(self):
        return all(buffer.numel() > 0 for buffer in self.buffers())

    def init_state_with_shape(self, shape):
        for name, buffer in self.named_buffers():
            self.register_buffer(name, torch.zeros(shape))

    def reset_states(self, randomize=False):
        """Reset the state/buffers in a layer."""
        if self.is_state_initialised():
            for buffer in self.buffers():
                if randomize:
                    torch.nn.init.uniform_(buffer).detach_()
                else:
                    buffer.zero_().detach_()


class IAF(StatefulLayer):
    def __init__(self, threshold=1.0):
        super().__init__(state_names=["v_mem"])
        self.threshold = threshold

    def forward(self, x):  # x: (time, batch, features)
        if not self.is_state_initialised():
            self.init_state_with_shape(x.shape[1:])
        spikes = []
        for x_t in x:
            self.v_mem = self.v_mem + x_t
            spike = torch.sigmoid(4 * (self.v_mem - self.threshold))
            self.v_mem = self.v_mem - spike * self.threshold
            spikes.append(spike)
        return torch.stack(spikes)


model = nn.Sequential(nn.Linear(6, 4), IAF())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for sample in range(3):
    x = torch.rand(10, 2, 6)
    model[1].reset_states()
    optimizer.zero_grad()
    out = model(x)
    loss = (out.sum(0) - 3.0).pow(2).mean()
    loss.backward()
    optimizer.step()
    print(f"sample {sample}: loss {loss.item():.4f}")
