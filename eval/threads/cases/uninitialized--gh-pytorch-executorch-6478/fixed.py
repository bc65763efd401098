# Llama export example, pre-quantized path: nn.Linear layers are swapped for an int8 linear
# whose weight/scales/zeros buffers are allocated empty and then filled from a pre-quantized
# (symmetric) checkpoint that has no zero points.
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)


class Int8DynActInt8WeightLinear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=False, precision=torch.float32):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.precision = precision
        # currently storing unpacked int8 weights
        self.register_buffer("weight", torch.zeros((out_features, in_features), dtype=torch.int8))
        self.register_buffer("scales", torch.zeros((out_features), dtype=torch.float32))
        self.register_buffer("zeros", torch.zeros((out_features), dtype=torch.float32))

    def forward(self, input):
        w_dq = (self.weight.to(self.precision) - self.zeros[:, None]) * self.scales[:, None]
        return input.to(self.precision) @ w_dq.t()


def replace_linear_for_pre_quantization(module):
    for name, child in module.named_children():
        if isinstance(child, nn.Linear):
            setattr(module, name, Int8DynActInt8WeightLinear(child.in_features, child.out_features))
        else:
            replace_linear_for_pre_quantization(child)
    return module


def symmetric_quantize(model):
    state = {}
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear):
            scales = mod.weight.abs().amax(dim=1) / 127
            state[name + ".weight"] = torch.round(mod.weight / scales[:, None]).to(torch.int8)
            state[name + ".scales"] = scales
    return state


class FeedForward(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)))


float_model = FeedForward().eval()
checkpoint = symmetric_quantize(float_model)  # weight + scales only, zero points are implicit 0

model = replace_linear_for_pre_quantization(FeedForward())
missing, unexpected = model.load_state_dict(checkpoint, strict=False)
print("missing keys:", missing)
with torch.no_grad():
    x = torch.randn(2, 32)
    out = model(x)
    ref = float_model(x)
print("max abs diff vs float model:", (out - ref).abs().max().item())

# -- corpus check --
if not torch.isfinite(out).all():
    print("BUG: the quantized model outputs nan: its zero-point buffers were never initialized")
