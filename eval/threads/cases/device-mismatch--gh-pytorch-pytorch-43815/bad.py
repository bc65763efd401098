# A module keeps its constant offsets and scales in a dict, registers every entry as a buffer so
# that it is saved and moved with the module, and then reads the constants from the dict in
# forward. Module.to() replaces the registered buffers by copies on the new device and updates
# the module attributes, but the dict still holds the tensors from before the move. The module is
# moved to the GPU (the meta device stands in for it here) and applied to a batch on the GPU.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda")


class Foo(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = {
            "a": torch.Tensor([1]),
            "b": torch.Tensor([1, 2, 3]),
        }
        for name in self.data:
            self.register_buffer("data_" + name, self.data[name])
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        return self.proj(x) * self.data["b"] + self.data["a"]


m = Foo()
print("m.data['a'] is m.data_a:", m.data["a"] is m.data_a)
m.to(device)
print("after to():", m.data["a"].device.type, m.data_a.device.type)
x = torch.randn(4, 3).to(device)
out = m(x)
print(tuple(out.shape), out.device.type)
