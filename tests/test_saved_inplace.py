"""TL409 across module boundaries: what a module keeps for backward (its output, its input,
through `nn.Sequential`, a project module's `forward`, a dict of activation classes), views of
a saved tensor, and the write that follows.  Real files through the real CLI; one runtime run
under real torch confirms a finding."""

from __future__ import annotations

import json

import pytest

CALL_OVERRIDE = """
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 1, 3, padding=1)
        self.relu = nn.ReLU()

    def __call__(self, x):
        att = self.relu(self.conv(x))
        att[:, :, 0, :] = 0
        att[:, :, -1, :] = 0
        return x * att
"""

SLICE_PRODUCT = """
import torch
from torch import nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)

    def forward(self, x, y):
        x = self.conv(x)
        w = self.conv(y).flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0] * w[:3]
        return x.mean()
"""

TRANSPOSED_INTO_LAYER = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.pos_conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.pos_conv = nn.Sequential(self.pos_conv, nn.GELU())
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.features(x)

    def features(self, x):
        pos = self.pos_conv(x.transpose(1, 2)).transpose(1, 2)
        x += pos
        return self.norm(x)
"""

ACTIVATION_TABLE = """
import torch
from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}


class FeedForward(nn.Module):
    def __init__(self, dim, activation="relu"):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = ACTIVATIONS[activation]()
        self.drop = nn.Dropout(0.1, inplace=True)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


blocks = nn.ModuleList([FeedForward(8) for _ in range(2)])
"""

# The same shapes, written the way that works.
GOOD = {
    "clone_first.py": CALL_OVERRIDE.replace("att[:, :, 0, :] = 0", "att = att.clone()\n        att[:, :, 0, :] = 0"),
    "copy_slice.py": SLICE_PRODUCT.replace("x[0, :, 0, 0] * w[:3]", "x[0, :, 0, 0].clone() * w[:3]"),
    "out_of_place.py": TRANSPOSED_INTO_LAYER.replace("x += pos", "x = x + pos"),
    # GELU keeps its input, not its output: the in-place dropout after it is fine.
    "gelu_table.py": ACTIVATION_TABLE.replace("FeedForward(8)", 'FeedForward(8, activation="gelu")'),
    # A dict keyed by strings holds no view: writing one entry is not a tensor write.
    "dict_entries.py": """
        import torch
        from torch import nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(4)

            def forward(self, outputs):
                outputs["pair"] = self.norm(outputs["pair"])
                outputs["extra"] = outputs["pair"] * 2
                return outputs
    """,
}


@pytest.mark.parametrize("source, row, column", [
    (CALL_OVERRIDE, 13, 9),  # the first write only: a clone before it fixes all of them
    (SLICE_PRODUCT, 13, 9),
    (TRANSPOSED_INTO_LAYER, 17, 9),
    (ACTIVATION_TABLE, 12, 21),
])
def test_writes_to_what_a_module_saved_are_found(project, source, row, column) -> None:
    project.write("model.py", source)
    assert project.findings("--select", "TL409", "--no-cache") == [("model.py", row, column, "TL409")]


def test_the_fixed_shapes_have_no_finding(project) -> None:
    for name, source in GOOD.items():
        project.write(name, source)
    assert project.findings("--select", "TL409", "--no-cache") == []


def test_the_activation_is_named_by_its_key(project) -> None:
    project.write("model.py", ACTIVATION_TABLE)
    result = project.run("check", "--select", "TL409", "--no-cache", "--output-format", "json")
    [finding] = result.json()
    assert '`ACTIVATIONS[activation]` is that class, the key being "relu"' in finding["message"], finding["message"]


def test_the_slice_is_confirmed_under_torch(project) -> None:
    pytest.importorskip("torch")
    project.write("model.py", SLICE_PRODUCT + """

model = Scale()
loss = model(torch.randn(1, 3, 5, 5), torch.randn(1, 3, 3, 3))
loss.backward()
""")
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "modified by an inplace operation" in finding["runtime"]["evidence"]


AUGMENTED_ACTIVATION = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.act = nn.{activation}()

    def forward(self, x):
        out = self.act(self.conv(x))
        out += x
        return out


Block(3)(torch.randn(1, 3, 8, 8)).mean().backward()
"""


@pytest.mark.parametrize("activation, rows", [
    ("Sigmoid", [13]),  # saves its output: `+=` on it is read by the backward
    ("Identity", []),  # saves nothing
    ("BatchNorm2d", []),  # saves its input, not its output (the ResNet block's `out += identity`)
])
def test_an_augmented_write_to_the_output_of_a_layer_that_saved_it(project, activation, rows) -> None:
    pytest.importorskip("torch")
    source = AUGMENTED_ACTIVATION.replace("nn.{activation}()", f"nn.{activation}(3)" if "Norm" in activation
                                          else f"nn.{activation}()")
    project.write("block.py", source)
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    found = result.json()
    assert [finding["location"]["row"] for finding in found] == rows
    assert all(finding["runtime"]["verdict"] == "CONFIRMED" for finding in found), found


WRITTEN_IN_A_LOOP = """
import torch
from torch import nn


class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 5)
        self.w = nn.Parameter(torch.ones(5))

    def forward(self, x):
        hidden = torch.zeros(x.size(0), x.size(1) + 1, 5)
        for t in range(x.size(1)):
            {write}
        return hidden[:, -1].sum()


model = {name}()
model(torch.randn(2, 4, 3)).backward()
"""


@pytest.mark.parametrize("write, rows", [
    ("hidden[:, t + 1] = self.cell(x[:, t], hidden[:, t])", [14]),  # the cell keeps its hidden state input
    ("hidden[:, t + 1] = hidden[:, t] * self.w + x[:, t].sum(1, keepdim=True)", [14]),  # `*` keeps it for `w`
    ("hidden = torch.cat([hidden[:, 1:], self.cell(x[:, t], hidden[:, -1])[:, None]], 1)", []),
])
def test_a_state_written_into_the_tensor_a_step_saved(project, write, rows) -> None:
    pytest.importorskip("torch")
    project.write("rnn.py", WRITTEN_IN_A_LOOP.format(name="Recurrent", write=write))
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    found = result.json()
    assert [finding["location"]["row"] for finding in found] == rows
    assert all(finding["runtime"]["verdict"] == "CONFIRMED" for finding in found), found


STEP_IN_A_HELPER = """
import torch
from torch import nn


def train_discriminator(D, opt_d, real, fake):
    loss = -(D(real).mean() - D(fake).mean())
    opt_d.zero_grad()
    loss.backward(retain_graph=True)
    opt_d.step()


G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
{optimizers}
fake = G(torch.randn(8, 2))
score = D(fake)
train_discriminator(D, opt_d, torch.randn(8, 2), fake)
{generator}
"""


@pytest.mark.parametrize("optimizers", [
    "opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())",
    "opt_g = torch.optim.Adam(G.parameters())\nopt_d = torch.optim.Adam(D.parameters())",
])
@pytest.mark.parametrize("generator, reported", [
    ("(-score.mean()).backward()", True),
    ("(-D(fake).mean()).backward()", False),  # D's forward again, after the step
])
def test_a_step_in_a_helper_before_a_backward_through_its_model(project, optimizers, generator, reported) -> None:
    pytest.importorskip("torch")
    project.write("gan.py", STEP_IN_A_HELPER.format(optimizers=optimizers, generator=generator))
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    found = result.json()
    row = 18 if optimizers.count("\n") else 17
    assert [finding["location"]["row"] for finding in found] == ([row] if reported else [])
    assert all(finding["runtime"]["verdict"] == "CONFIRMED" for finding in found), found
