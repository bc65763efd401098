"""Issue 41, session 12: a method's parameters take their values from every call of the
method the file makes, whatever holds the instance it is called on. A census of the script
corpus and the dev cases found method calls the analysis did not see as calls in 30
repositories: on an attribute that holds an instance (``self.meter.add(loss)``, the most
common), on an instance built in the call (``Evaluator().accuracy(..)``), on a name known
only by inference, and ``self.m(..)`` in a class that inherits ``m``.

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests

METER_ATTRIBUTE = twin(
    "a meter kept by the trainer is handed the 0-dim loss", "TL203", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Meter:
    def __init__(self):
        self.total = 0.0

    def add(self, loss):
        self.total += loss.data[0]


class Trainer:
    def __init__(self, model):
        self.model = model
        self.meter = Meter()

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.meter.add(loss)


trainer = Trainer(nn.Linear(4, 1))
trainer.step(torch.randn(8, 4), torch.randn(8, 1))
print(trainer.meter.total)
''', ("loss.data[0]", "loss.item()"), "raises", "invalid index of a 0-dim tensor", ((12, 23, "TL203"),))

INSTANCE_BUILT_IN_THE_CALL = twin(
    "an evaluator built where its method is called", "TL203", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Evaluator:
    def accuracy(self, logits, labels):
        correct = (logits.argmax(1) == labels).sum()
        return correct.data[0] / len(labels)


model = nn.Linear(4, 3)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
print(Evaluator().accuracy(model(x), y))
''', ("correct.data[0]", "correct.item()"), "raises", "invalid index of a 0-dim tensor", ((10, 16, "TL203"),))

INHERITED_METHOD = twin(
    "a task calls the logging method its base class defines", "TL203", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseTask:
    def record(self, name, value):
        print(name, round(value.data[0], 3))


class Regression(BaseTask):
    def __init__(self):
        self.net = nn.Linear(4, 1)

    def run(self, x, y):
        loss = ((self.net(x) - y) ** 2).mean()
        loss.backward()
        self.record("loss", loss)


Regression().run(torch.randn(8, 4), torch.randn(8, 1))
''', ("value.data[0]", "value.item()"), "raises", "invalid index of a 0-dim tensor", ((9, 27, "TL203"),))

CASES = {
    "meter_attribute": METER_ATTRIBUTE,
    "instance_built_in_the_call": INSTANCE_BUILT_IN_THE_CALL,
    "inherited_method": INHERITED_METHOD,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_call_of_an_override_is_no_call_of_the_base_method(project) -> None:
    """`self.record(..)` in a class that overrides `record` runs the override: the base
    method's parameter is not given the loss."""
    case = INHERITED_METHOD
    overriding = case.bad.replace('''    def run(self, x, y):''', '''    def record(self, name, value):
        print(name, value.item())

    def run(self, x, y):''')
    project.write("override.py", overriding)
    assert project.findings("--no-cache", "--select", "TL203", "override.py") == []


def test_a_method_of_another_class_with_the_same_name_is_no_call(project) -> None:
    """`self.seen.add(loss)` on a set is not `Meter.add`: nothing is given to the meter."""
    case = METER_ATTRIBUTE
    project.write("other.py", case.bad.replace("self.meter = Meter()", "self.meter = set()"))
    assert project.findings("--no-cache", "--select", "TL203", "other.py") == []


def test_a_documented_dimension_is_kept_when_the_calls_pass_a_tensor(project) -> None:
    """The calls say `coords` is a tensor, its docstring that it is 2-D: a row of it is
    1-D and an element of a row 0-dim."""
    project.write("docs.py", '''\
import torch


class Glimpse:
    def corners(self, coords):
        """
        Args:
            coords: a 2D Tensor of shape (B, 2).
        """
        rows = coords - 1
        first = rows[0]
        return first[0].data[0]


def main():
    glimpse = Glimpse()
    glimpse.corners(torch.rand(4, 2))
''')
    assert project.findings("--no-cache", "--select", "TL203", "docs.py") == [("docs.py", 12, 16, "TL203")]
