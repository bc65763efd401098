"""Session 22 facts of the train-mode analysis (TL414), each on a bad program and its fixed
twin (shapes of our own, run under torch to show the bug is real):

- ``model = holder.model`` names the module the holder keeps: ``model.train()`` then
  training puts ``holder.model`` in training mode too, so a ``validate(holder)`` of the file
  that evaluates ``holder.model`` evaluates it in training mode;
- a method of a class named for evaluating (a ``Predictor``'s) owns the mode it evaluates
  in: when the model is handed to it in training mode, the finding is on the forward whose
  prediction it reads out, where ``model.eval()`` belongs; a class of any other name runs
  whatever mode its caller chose, and the finding stays on the call that hands the model;
- a forward inside a method of the model (``model.sample(x)``) called in the ``no_grad``
  block of a ``predict()`` the caller reaches through ``validate(holder)`` is reported on
  that call in ``predict()``, not inside the model's method;
- calls of the file's functions are followed three deep (train -> validate -> predict ->
  the model's ``generate``).

And what stays quiet: the holder's model put in eval mode by its other name
(``model.eval()``), or handed to an unknown function in between; a name rebound since.
"""

from __future__ import annotations

import pytest

from test_eval_s20 import _write
from torch_programs import run_program

HOLDER = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5))
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.body(x))

    def sample(self, x):
        return self.head(self.body(x)).softmax(-1)


class Holder:
    def __init__(self, model, data):
        self.model, self.data = model, data


def predict(model, batches):
    outputs = []
    with torch.no_grad():
        for x in batches:
            outputs.append(model.sample(x))
    return torch.cat(outputs)


def validate(holder):
    return predict(holder.model, holder.data)


def train(holder, epochs=2):
    model = holder.model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    results = []
    for _ in range(epochs):
        for x in holder.data:
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
        results.append(validate(holder))
    return results


holder = Holder(Net(), [torch.randn(8, 4) for _ in range(3)])
train(holder)
first, second = validate(holder), validate(holder)
if not torch.equal(first, second):
    raise SystemExit("BUG: two validations of one model differ (the model is in training mode)")
"""

PREDICTOR = """
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(8, 3)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens)))


class Predictor:
    def __init__(self, batch_size=2):
        self.batch_size = batch_size

    def label_all(self, model, sentences):
        labels = []
        for start in range(0, len(sentences), self.batch_size):
            labels.extend(self.label_batch(model, sentences[start:start + self.batch_size]))
        return labels

    def label_batch(self, model, batch):
        scores = model(torch.tensor(batch))
        return scores.detach().argmax(-1).tolist()


trained = Tagger()
torch.save(trained.state_dict(), "tagger.pt")
model = Tagger()
model.load_state_dict(torch.load("tagger.pt"))
sentences = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 3, 5]]
first = Predictor().label_all(model, sentences)
second = Predictor().label_all(model, sentences)
if first != second:
    raise SystemExit("BUG: two labellings of one corpus differ (the tagger is in training mode)")
"""

# (source, line of the finding, the fixed twin's replacement)
CASES = {
    "holder_alias_predict": (HOLDER, 27, ("    with torch.no_grad():\n",
                                          "    model.eval()\n    with torch.no_grad():\n")),
    "predictor_method": (PREDICTOR, 27, ("        scores = model(", "        model.eval()\n        scores = model(")),
}


def _findings(project) -> list:
    return project.findings("--select", "TL414", "--no-cache")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found_and_its_twin_is_not(project, case) -> None:
    found_on_its_line_and_twin_quiet(project, *CASES[case])


def found_on_its_line_and_twin_quiet(project, source: str, row: int, fixed: tuple[str, str]) -> None:
    """``source`` as prog.py has one TL414 finding, on ``row``; with ``fixed`` applied, none."""
    _write(project, source)
    found = _findings(project)
    assert [(f[0], f[1], f[3]) for f in found] == [("prog.py", row, "TL414")], found
    _write(project, source, fixed)
    assert _findings(project) == []


def torch_shows_the_bug(project, source: str, _row: int, fixed: tuple[str, str]) -> None:
    """Run under torch, ``source`` says BUG and its fixed twin does not."""
    pytest.importorskip("torch")
    assert "BUG" in _stderr_of_run(project, source)
    assert "BUG" not in _stderr_of_run(project, source.replace(*fixed))


def _stderr_of_run(project, source: str) -> str:
    project.write("prog.py", source)
    return run_program("prog.py", cwd=project.root, timeout=120).stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_shows_the_bug(project, case) -> None:
    torch_shows_the_bug(project, *CASES[case])


def test_the_finding_says_how_the_model_got_there(project) -> None:
    _write(project, HOLDER)
    [finding] = project.run("check", "--select", "TL414", "--no-cache", "--output-format", "json").json()
    assert finding["message"].startswith("`model` is evaluated under `torch.no_grad()`"), finding["message"]
    related = {item["location"]["row"]: item["message"] for item in finding["related"]}
    assert "training mode" in related[38] and "training mode" in related[45], related  # model.train(), validate(holder)


QUIET = {
    # the other name of the holder's model is switched before validating
    "switched_by_its_other_name": HOLDER.replace("        results.append(validate(holder))",
                                                 "        model.eval()\n        results.append(validate(holder))"),
    # the holder is handed to code not seen, which may switch what it holds
    "holder_handed_on": HOLDER.replace("        results.append(validate(holder))",
                                       "        getattr(holder, 'sync')()\n        results.append(validate(holder))")
                              .replace("class Holder:\n", "class Holder:\n    sync = print\n\n"),
    # the name is bound to another module: `holder.model` was never put in training mode
    "name_rebound": HOLDER.replace("    model.train()\n", "    model = nn.Dropout(0.1)\n    model.train()\n")
                          .replace("    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", "")
                          .replace("            optimizer.zero_grad()\n            model(x).pow(2).mean().backward()\n"
                                   "            optimizer.step()\n", "            model(x).pow(2).mean().backward()\n"),
    # a function of another name runs the mode it is given: the finding stays on the call
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_what_stays_quiet(project, case) -> None:
    _write(project, QUIET[case])
    assert _findings(project) == []


def test_a_function_of_another_name_is_reported_at_the_call(project) -> None:
    source = PREDICTOR.replace("class Predictor:", "class Labeller:").replace("Predictor()", "Labeller()") \
        .replace("label_all", "run_all").replace("label_batch", "run_batch")
    _write(project, source)
    found = _findings(project)
    assert [(f[0], f[1], f[3]) for f in found] == [("prog.py", 36, "TL414")], found
