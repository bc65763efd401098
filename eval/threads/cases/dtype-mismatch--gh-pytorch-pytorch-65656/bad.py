# The report's notebook cells: a random batch made with dtype=float (Python's float, which torch
# reads as float64) goes through a LayerNorm module, whose weight and bias are float32.
import torch

torch.manual_seed(0)

a = torch.randn((2, 5), dtype=float)
normal = torch.nn.LayerNorm((5))
out = normal(a)
print(out.shape)
