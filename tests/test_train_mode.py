"""TL414 (a model with Dropout/BatchNorm evaluated in training mode) and TL412 (torch.empty
parameters and buffers nothing fills): real files through the real CLI, real torch for the
runtime verdicts, and the torch API table checked against torch's signatures."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from conftest import FIXTURES, lint_findings, run_torchlint
from torchlint.analysis import torch_api
from torch_programs import run_program as torch_program


def findings(tmp_path: Path, source: str, code: str, *extra: str) -> list[dict]:
    return lint_findings(tmp_path, source, code, *extra)


LOOP = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.3), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(16, 4), torch.randn(16, 1))] * 3
    for epoch in range(2):
        {before_train}
        for x, y in data:
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        {before_eval}
        with torch.no_grad():
            val = model(data[0][0])
"""


@pytest.mark.parametrize("before_train, before_eval, reported", [
    ("model.train()", "pass", True),  # the loop's training step puts it back in training mode
    ("pass", "pass", True),  # built in training mode, never changed
    ("model.train()", "model.eval()", False),
    ("pass", "model.eval()", False),
    ("model.train()", "if epoch: model.eval()", False),  # one arm leaves the mode unknown
    ("model.train()", "evaluate_elsewhere(model)", False),  # handed to code not seen
])
def test_mode_through_a_training_loop(tmp_path, before_train, before_eval, reported) -> None:
    source = LOOP.format(before_train=before_train, before_eval=before_eval)
    found = findings(tmp_path, source, "TL414")
    assert [f["location"]["row"] for f in found] == ([16] if reported else [])


HELD_BY_A_CLASS = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))

        def forward(self, x):
            return self.head(x)

    class Predictor{bases}:
        def __init__(self, weights):
            self.model = Net()
            self.model.load_state_dict(weights)
            {in_init}

        def predict(self, x):
            with torch.no_grad():
                return self.model(x)

    predictor = Predictor(Net().state_dict())
    {outside}
    print(predictor.predict(torch.randn(3, 4)))
"""


@pytest.mark.parametrize("bases, in_init, outside, reported", [
    ("", "pass", "pass", True),  # built in __init__, evaluated in another method
    ("(object)", "pass", "pass", True),
    ("", "self.model.eval()", "pass", False),
    ("", "pass", "predictor.model.eval()", False),  # switched from outside the class
    ("", "pass", "prepare(predictor)", False),  # the instance handed to code not seen
    ("(nn.Module)", "pass", "predictor.eval()", False),  # a module: its eval() reaches the model
])
def test_a_model_built_by_a_class_and_evaluated_in_a_method(tmp_path, bases, in_init, outside, reported) -> None:
    source = HELD_BY_A_CLASS.format(bases=bases, in_init=in_init, outside=outside)
    if bases == "(nn.Module)":
        source = source.replace("self.model = Net()", "super().__init__()\n            self.model = Net()")
    found = findings(tmp_path, source, "TL414")
    assert [f["location"]["row"] for f in found] == ([21] if reported else [])


def test_no_dropout_or_batchnorm_no_finding(tmp_path) -> None:
    source = LOOP.format(before_train="model.train()", before_eval="pass").replace(
        "nn.BatchNorm1d(8), nn.Dropout(0.3)", "nn.ReLU(), nn.Dropout(0.0)")
    assert findings(tmp_path, source, "TL414") == []


def test_monte_carlo_dropout_is_left_alone(tmp_path) -> None:
    source = """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
        net.eval()
        net.train()
        with torch.no_grad():
            samples = [net(torch.randn(1, 3)) for _ in range(5)]
    """
    assert findings(tmp_path, source, "TL414") == []


def test_the_evidence_names_the_mode_and_the_layer() -> None:
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL414", "--output-format", "json",
                           str(FIXTURES / "TL414-missing-eval" / "bad_validate_in_trainer.py"))
    (finding,) = result.json()
    assert "`self.model.train()` put it there" in finding["message"]
    notes = [note["message"] for note in finding["related"]] if "related" in finding else []
    assert not notes or any("training mode" in note for note in notes)


def test_runtime_confirms_the_training_flag(tmp_path) -> None:
    source = LOOP.format(before_train="model.train()", before_eval="pass")
    (finding,) = findings(tmp_path, source, "TL414", "--runtime")
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "training mode" in finding["runtime"]["evidence"]


def test_runtime_confirms_an_uninitialized_buffer_read(tmp_path) -> None:
    source = """
        import torch
        from torch import nn

        class Affine(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("shift", torch.empty(n))
                self.scale = nn.Parameter(torch.ones(n))

            def forward(self, x):
                return x * self.scale + self.shift

        print(Affine(3)(torch.randn(2, 3)))
    """
    (finding,) = findings(tmp_path, source, "TL412", "--runtime")
    assert finding["location"]["row"] == 8
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]


def test_filled_or_loaded_parameters_are_not_reported(tmp_path) -> None:
    source = """
        import torch
        from torch import nn

        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.empty(3))
                for p in self.parameters():
                    nn.init.normal_(p)

            def forward(self, x):
                return x * self.w

        class B(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = nn.Parameter(torch.empty(3))
                self.v.data.uniform_()

            def forward(self, x):
                return x * self.v
    """
    assert findings(tmp_path, source, "TL412") == []


@pytest.mark.parametrize("qualname", sorted(torch_api.TRAIN_MODE_LAYERS))
def test_train_mode_argument_positions_match_torch(qualname) -> None:
    torch = pytest.importorskip("torch")
    cls = torch
    for part in qualname.split(".")[1:]:
        cls = getattr(cls, part)
    name, position, _default = torch_api.TRAIN_MODE_LAYERS[qualname]
    if position is None:
        return  # RNN/LSTM/GRU take their arguments as *args: by keyword only here
    parameters = [p for p in inspect.signature(cls.__init__).parameters][1:]
    assert parameters[position] == name


@pytest.mark.parametrize("qualname", sorted(torch_api.TRAIN_MODE_FUNCTIONS))
def test_training_argument_positions_match_torch(qualname) -> None:
    functional = pytest.importorskip("torch.nn.functional")
    function = getattr(functional, qualname.rsplit(".", 1)[-1])
    assert list(inspect.signature(function).parameters)[torch_api.TRAIN_MODE_FUNCTIONS[qualname]] == "training"


TORCHVISION_MODEL_PREDICTS = '''
import torch
import torchvision

model = torchvision.models.resnet18(num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    preds = model(torch.randn(2, 3, 32, 32)).argmax(1)
'''


@pytest.mark.parametrize("source, expected", [
    (TORCHVISION_MODEL_PREDICTS, [("bad.py", 13, 13, "TL414")]),
    (TORCHVISION_MODEL_PREDICTS.replace("with torch.no_grad():", "model.eval()\nwith torch.no_grad():"), []),
    (TORCHVISION_MODEL_PREDICTS.replace("resnet18(num_classes=10)", "vit_b_16(num_classes=10)"), []),
], ids=["resnet-in-training-mode", "resnet-in-eval-mode", "vit-has-no-such-layer"])
def test_a_torchvision_model_evaluated_in_training_mode(project, source, expected) -> None:
    # The layers come from the generated table of torchvision's builders (vit_b_16's
    # dropout is 0 by default): torchvision itself is not needed to lint.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL414") == expected
    if expected:
        message = project.run("check", "--no-cache", "--select", "TL414", "--output-format", "json").json()[0]
        assert "`nn.BatchNorm2d` normalizes with each batch's statistics" in message["message"]


WRAPPED_FOR_DATA_PARALLEL = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.drop(torch.relu(self.fc(x))))


torch.manual_seed(0)
model = nn.DataParallel(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
opt.zero_grad()
loss.backward()
opt.step()
sample = torch.randn(1, 4)
with torch.no_grad():
    first, second = model(sample), model(sample)
if not torch.equal(first, second):
    print("BUG: two predictions of one sample differ")
'''


@pytest.mark.parametrize("source, expected", [
    (WRAPPED_FOR_DATA_PARALLEL, [("bad.py", 25, 21, "TL414")]),
    (WRAPPED_FOR_DATA_PARALLEL.replace("with torch.no_grad():", "model.eval()\nwith torch.no_grad():"), []),
], ids=["wrapped-in-training-mode", "wrapped-in-eval-mode"])
def test_a_model_wrapped_by_data_parallel(project, source, expected) -> None:
    project.write("bad.py", source)
    assert [row for row in project.findings("--no-cache", "--select", "TL414")][:1] == expected
    pytest.importorskip("torch")
    ran = torch_program("bad.py", cwd=project.root)
    assert ("BUG:" in ran.stdout) == bool(expected), ran.stderr
