# CrypTen keeps its own table of autograd functions (crypten.gradients): each op registers a
# forward and a backward, and the backward of a reduction rebuilds the input's shape from
# ctx. Here the table is written with torch.autograd.Function, a small regressor runs on the
# GPU (the meta device stands in for it) and its loss is the registered "sum" of squared
# errors, so loss.backward() reaches AutogradSum.backward with a gradient on the GPU.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # "cuda" in the person's run

FUNCTION_REGISTRY = {}


def register_function(name):
    def register(cls):
        FUNCTION_REGISTRY[name] = cls
        return cls
    return register


def get_grad_fn(name):
    return FUNCTION_REGISTRY[name]


@register_function("sum")
class AutogradSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dim=None, keepdim=False):
        ctx.input_size = input.size()
        ctx.dim = dim
        ctx.keepdim = keepdim
        if dim is None:
            return input.sum()
        return input.sum(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        input_size = ctx.input_size
        if ctx.dim is None:
            return grad_output.mul(torch.ones(input_size, device=grad_output.device)), None, None
        if not ctx.keepdim:
            grad_output = grad_output.unsqueeze(ctx.dim)
        return grad_output.expand(input_size), None, None


@register_function("square")
class AutogradSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input * input

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output.mul(input).mul(2)


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 6).to(device)
y = torch.randn(32, 1).to(device)

for step in range(2):
    out = model(x)
    err = get_grad_fn("square").apply(out - y)
    loss = get_grad_fn("sum").apply(err)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {tuple(loss.shape)} on {loss.device.type}")
