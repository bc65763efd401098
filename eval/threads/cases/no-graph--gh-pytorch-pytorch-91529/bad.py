# Per-layer weight gradients recomputed by hand: a full backward hook on each Linear of a small
# MLP saves the layer's input and the ratio grad_output / output, and compute_grad re-runs an
# identical copy of the layer on that input to get the weight gradient with autograd. Random
# features and labels stand in for the reporter's image batches.
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def compute_grad(input: Tensor, layer: nn.Linear, cast: Tensor):
    x = input.clone().detach()
    cast = cast.clone().detach()
    x.requires_grad = True

    # an identical linear layer, loaded with the layer's weights
    func = nn.Linear(in_features=layer.in_features, out_features=layer.out_features, bias=True)
    func.load_state_dict(layer.state_dict())

    y = func(x)
    dy = y * cast
    dy.sum().backward()
    return func.weight.grad


saved_inputs = {}
per_layer_grads = {}


def save_input(module, inputs):
    saved_inputs[module] = inputs[0].detach()


def register_hooks(model):
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            def hook(module, grad_input, grad_output, name=name):
                output = module(saved_inputs[module]).detach()
                cast = grad_output[0] / (output + 1e-8)
                per_layer_grads[name] = compute_grad(saved_inputs[module], module, cast)
            module.register_forward_pre_hook(save_input)
            module.register_full_backward_hook(hook)


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
register_hooks(model)
criterion = nn.CrossEntropyLoss()

x, target = torch.randn(5, 8), torch.randint(0, 4, (5,))
loss = criterion(model(x), target)
loss.backward()
for name, grad in per_layer_grads.items():
    print(name, tuple(grad.shape), round(grad.norm().item(), 4))
