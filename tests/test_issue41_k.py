"""Issue 41 leftovers (helper K): TL417 for modules that write their input in place (built
with `inplace=True` or switched on by `m.inplace = True` over `model.modules()`) called on
a leaf that requires grad.  Real files through the real CLI, real torch for the verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import lint_findings


def findings(tmp_path: Path, source: str, code: str, *extra: str) -> list[dict]:
    return lint_findings(tmp_path, source, code, *extra)


FUSION = """
    import torch
    import torch.nn as nn

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(2))
            self.act = {act}

        def forward(self, x):
            w = self.act({argument})
            return w[0] * x + w[1] * x

    def init_weights(model):
        for m in model.modules():
    {switch}

    model = Fusion()
    init_weights(model)
    model(torch.randn(3)).sum().backward()
"""


@pytest.mark.parametrize("act, argument, switch, reported", [
    ("nn.ReLU()", "self.weight", "        if isinstance(m, nn.ReLU):\n                m.inplace = True", True),
    ("nn.ReLU()", "self.weight", "        if type(m) in [nn.ReLU, nn.ReLU6]:\n                m.inplace = True", True),
    ("nn.ReLU()", "self.weight", "        if hasattr(m, 'inplace'):\n                m.inplace = True", True),
    ("nn.ReLU(inplace=True)", "self.weight", "        pass", True),
    # the switch names another class
    ("nn.ReLU()", "self.weight", "        if isinstance(m, nn.LeakyReLU):\n                m.inplace = True", False),
    # a copy of the weights is passed
    ("nn.ReLU()", "self.weight.clone()", "        if isinstance(m, nn.ReLU):\n                m.inplace = True",
     False),
    # switched off
    ("nn.ReLU()", "self.weight", "        if isinstance(m, nn.ReLU):\n                m.inplace = False", False),
])
def test_an_inplace_module_called_on_a_parameter(tmp_path, act, argument, switch, reported) -> None:
    found = findings(tmp_path, FUSION.format(act=act, argument=argument, switch=switch), "TL417")
    assert [f["location"]["row"] for f in found] == ([12] if reported else [])


def test_an_inplace_module_on_a_parameter_is_confirmed_at_runtime(tmp_path) -> None:
    source = FUSION.format(act="nn.ReLU()", argument="self.weight",
                           switch="        if isinstance(m, nn.ReLU):\n                m.inplace = True")
    found = findings(tmp_path, source, "TL417", "--runtime")
    assert len(found) == 1
    assert found[0]["runtime"]["verdict"] == "CONFIRMED", found[0]["runtime"]


HOOKS = """
    import torch
    import torch.nn as nn

    def train(model, batches, hooks):
        state = {{"loss": None}}
        for x in batches:
            loss = model(x).pow(2).mean()
            state["loss"] = {stored}
            loss.backward()
            hooks["on_forward"](state)
            state["loss"] = None

    def on_forward(state):
        print(state["loss"].data[0])

    train(nn.Linear(3, 1), [torch.randn(4, 3)], {{"on_forward": on_forward}})
"""


@pytest.mark.parametrize("stored, reported", [
    ("loss", True),
    ("loss.detach()", True),
    ("model(x)", False),  # a batch of outputs: not 0-dim
])
def test_a_0_dim_loss_read_back_by_its_key_in_a_hook(tmp_path, stored, reported) -> None:
    found = findings(tmp_path, HOOKS.format(stored=stored), "TL203")
    assert [f["location"]["row"] for f in found] == ([15] if reported else [])


def test_a_0_dim_loss_read_back_by_its_key_is_confirmed_at_runtime(tmp_path) -> None:
    found = findings(tmp_path, HOOKS.format(stored="loss"), "TL203", "--runtime")
    assert len(found) == 1
    assert found[0]["runtime"]["verdict"] == "CONFIRMED", found[0]["runtime"]
