# Spiking network trained chunk by chunk: the LIF cell's state returned by one chunk is passed
# into the next chunk's forward, then each chunk's loss is backpropagated.
from typing import NamedTuple

import torch
import torch.nn as nn

torch.manual_seed(0)


class LIFState(NamedTuple):
    v: torch.Tensor
    i: torch.Tensor


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, tau_mem=0.9, tau_syn=0.8):
        super().__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * 0.5)
        self.hidden_size, self.tau_mem, self.tau_syn = hidden_size, tau_mem, tau_syn

    def forward(self, inputs, state=None):
        if state is None:
            state = LIFState(v=torch.zeros(inputs.shape[1], self.hidden_size),
                             i=torch.zeros(inputs.shape[1], self.hidden_size))
        outputs = []
        for x in inputs:
            i = self.tau_syn * state.i + x @ self.input_weights.t()
            v = self.tau_mem * state.v + i
            spike = torch.sigmoid(5 * (v - 1.0))  # surrogate spike
            state = LIFState(v=v - spike, i=i)
            outputs.append(spike)
        return torch.stack(outputs), state


model = LIFCell(12, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.rand(5, 20, 8, 12)  # 5 chunks of 20 time steps, batch of 8
s = None
for chunk in data:
    optimizer.zero_grad()
    out, s = model(chunk, s)
    loss = (out.mean() - 0.2) ** 2
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.5f}")
