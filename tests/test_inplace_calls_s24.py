"""Session 24: a call runs its callee's writes.  ``self.block(x)`` runs ``Block.forward``
(``nn.Module.__call__`` hands ``x`` on as it is), and ``init(w)`` runs ``init``: when the
callee writes the parameter that receives the argument in place on every call (an in-place
layer applied to it, ``t[:] = ..``, ``t.uniform_()``), the call writes the caller's tensor.
The rules about in-place writes autograd checks (TL303 on views that may not be written,
TL417 on leaves, TL409 on saved tensors) see those writes at the call.  Real files, the real
CLI."""

from __future__ import annotations

import textwrap

BLOCK_ON_CHUNK = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.act = nn.ReLU(inplace={inplace})
        self.fc = nn.Linear(width, width)

    def forward(self, h):
{body}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 8)
        self.block = Block(4)

    def forward(self, x):
        left, right = self.enc(x).chunk(2, dim=1)
        return self.block({passed}) + right


Net()(torch.randn(3, 4)).sum().backward()
"""

UNCONDITIONAL = "        return self.fc(self.act(h))"
CONDITIONAL = "        if self.training:\n            h = self.act(h)\n        return self.fc(h)"


def _block(inplace: str = "True", body: str = UNCONDITIONAL, passed: str = "left") -> str:
    return textwrap.dedent(BLOCK_ON_CHUNK).format(inplace=inplace, body=body, passed=passed)


def test_a_submodule_whose_forward_writes_its_input_writes_a_chunk_view(project) -> None:
    project.write("net.py", _block())
    found = project.findings("--select", "TL303", "--no-cache")
    assert [(f[1], f[3]) for f in found] == [(23, "TL303")], found


def test_the_same_submodule_working_out_of_place_is_quiet(project) -> None:
    project.write("net.py", _block(inplace="False"))
    assert project.findings("--select", "TL303", "--no-cache") == []


def test_a_submodule_that_writes_its_input_on_some_calls_only_is_quiet(project) -> None:
    project.write("net.py", _block(body=CONDITIONAL))
    assert project.findings("--select", "TL303", "--no-cache") == []


def test_a_cloned_view_given_to_the_writing_submodule_is_quiet(project) -> None:
    project.write("net.py", _block(passed="left.clone()"))
    assert project.findings("--select", "TL303", "--no-cache") == []


HELPER_ON_PARAMETER = """
import torch
from torch import nn


{decorator}def scaled_uniform_(tensor, scale):
    tensor.uniform_(-scale, scale)


class Layer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return x * self.weight


layer = Layer(3)
{call}
print(layer(torch.ones(3)).sum())
"""


def _helper(call: str, decorator: str = "") -> str:
    return textwrap.dedent(HELPER_ON_PARAMETER).format(call=call, decorator=decorator)


def test_a_helper_that_writes_its_parameter_given_a_parameter_writes_a_leaf(project) -> None:
    # The helper is given a plain tensor too: its parameter is not always a leaf, the call is.
    project.write("init.py", _helper("noise = scaled_uniform_(torch.empty(3), 1.0)\nscaled_uniform_(layer.weight, 0.1)"))
    found = project.findings("--select", "TL417", "--no-cache")
    assert [(f[1], f[3]) for f in found] == [(20, "TL417")], found


def test_a_helper_whose_own_write_is_reported_is_not_reported_again_at_its_call(project) -> None:
    # `tensor` is known to be a leaf inside the helper when its only caller passes one: the
    # write is reported there, once.
    project.write("init.py", _helper("scaled_uniform_(layer.weight, 0.1)").replace(
        "    tensor.uniform_(-scale, scale)", "    tensor[:] = scale * torch.rand_like(tensor)"))
    found = project.findings("--select", "TL417", "--no-cache")
    assert len(found) == 1, found


def test_the_helper_given_the_parameter_under_no_grad_or_its_data_is_quiet(project) -> None:
    project.write("init.py", _helper("with torch.no_grad():\n    scaled_uniform_(layer.weight, 0.1)"))
    assert project.findings("--select", "TL417", "--no-cache") == []
    project.write("init.py", _helper("scaled_uniform_(layer.weight.data, 0.1)"))
    assert project.findings("--select", "TL417", "--no-cache") == []


def test_a_helper_that_turns_gradients_off_itself_is_quiet(project) -> None:
    project.write("init.py", _helper("scaled_uniform_(layer.weight, 0.1)", decorator="@torch.no_grad()\n"))
    assert project.findings("--select", "TL417", "--no-cache") == []


def test_a_helper_that_hands_its_parameter_to_itself_ends(project) -> None:
    source = _helper("scaled_uniform_(layer.weight, 0.1)").replace(
        "    tensor.uniform_(-scale, scale)", "    if scale > 1:\n        scaled_uniform_(tensor, scale / 2)")
    project.write("init.py", source)
    assert project.findings("--select", "TL417", "--no-cache") == []


SAVED_THEN_BLOCK = """
import torch
from torch import nn


class Shift(nn.Module):
    def forward(self, z):
        z {op} 1.0
        return z


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.shift = Shift()

    def forward(self, x):
        gate = torch.sigmoid(self.fc(x))
        {assign}self.shift(gate)
        return gate.sum(){plus}


Head()(torch.randn(2, 4)).backward()
"""


def test_a_submodule_writing_its_input_over_a_saved_output_is_reported(project) -> None:
    project.write("head.py", textwrap.dedent(SAVED_THEN_BLOCK).format(op="+=", assign="", plus=""))
    found = project.findings("--select", "TL409", "--no-cache")
    assert [(f[1], f[3]) for f in found] == [(19, "TL409")], found


def test_the_submodule_adding_out_of_place_is_quiet(project) -> None:
    source = textwrap.dedent(SAVED_THEN_BLOCK).format(op="+=", assign="shifted = ", plus=" + shifted.sum()")
    project.write("head.py", source.replace("        z += 1.0\n        return z", "        return z + 1.0"))
    assert project.findings("--select", "TL409", "--no-cache") == []


SEQUENTIAL_OF_WRITING_BLOCK = """
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.act = nn.ReLU(inplace={inplace})
        self.fc = nn.Linear(width, width)

    def forward(self, h):
        return self.fc(self.act(h))


net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), Gate(4))
net(torch.randn(2, 4)).sum().backward()
"""


def test_a_module_whose_forward_writes_its_input_after_a_saving_layer_is_reported(project) -> None:
    # `Gate` works in place on its input as its `nn.ReLU(inplace=True)` does: after `nn.Sigmoid`,
    # which saves its output, the backward raises.
    project.write("seq.py", textwrap.dedent(SEQUENTIAL_OF_WRITING_BLOCK).format(inplace="True"))
    found = project.findings("--select", "TL409", "--no-cache")
    assert [f[3] for f in found] == ["TL409"], found


def test_the_same_module_working_out_of_place_after_a_saving_layer_is_quiet(project) -> None:
    project.write("seq.py", textwrap.dedent(SEQUENTIAL_OF_WRITING_BLOCK).format(inplace="False"))
    assert project.findings("--select", "TL409", "--no-cache") == []
