"""Issue 41, session 13: what an object or a function is handed reaches where it is used,
also when the object is built in the call of its method (``Evaluator(model, data).run()``)
and when a function passes on its ``*args``/``**kwargs`` (``def timed(*args, **kwargs):
return evaluate(*args, **kwargs)``, a metric's ``forward`` calling ``self.update(*args,
**kwargs)``): the parameters of the function at the end take the values the calls hand in.

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import DROPOUT_NET, twin, twin_tests

EVALUATOR_BUILT_IN_THE_CALL = twin(
    "an evaluator built where its method is called predicts in training mode", "TL414", DROPOUT_NET + '''\

class Evaluator:
    def __init__(self, model, batches):
        self.model = model
        self.batches = batches

    def predictions(self):
        with torch.no_grad():
            return torch.cat([self.model(x) for x, _ in self.batches])


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randint(0, 2, (16,))) for _ in range(4)]
for x, y in batches:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
first = Evaluator(model, batches).predictions()

# -- check --
second = Evaluator(model, batches).predictions()
if not torch.equal(first, second):
    print("BUG: the predictions change from call to call")
''', ("first = Evaluator", "model.eval()\nfirst = Evaluator"), "wrong-value", "BUG:", ((23, 31, "TL414"),))

EVALUATION_THROUGH_ARGS = twin(
    "a wrapper passes its *args and **kwargs on to the evaluation", "TL414", DROPOUT_NET + '''\

def evaluate(model, batches, verbose=False):
    with torch.no_grad():
        return torch.cat([model(x) for x, _ in batches])


def timed(*args, **kwargs):
    return evaluate(*args, **kwargs)


model = Net()
batches = [(torch.randn(16, 4), torch.randint(0, 2, (16,))) for _ in range(4)]
first = timed(model, batches, verbose=True)

# -- check --
if not torch.equal(first, timed(model, batches)):
    print("BUG: the predictions change from call to call")
''', ("first = timed(", "model.eval()\nfirst = timed("), "wrong-value", "BUG:", ((27, 9, "TL414"),))

VALUE_THROUGH_ARGS = twin(
    "a metric's entry point passes its arguments on to update(), which indexes a 0-dim error", "TL203", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Metric:
    def compute(self, *args, **kwargs):
        return self.update(*args, **kwargs)

    def update(self, preds, target):
        error = (preds - target).abs().mean()
        return error.data[0]


model = nn.Linear(4, 1)
metric = Metric()
print(metric.compute(model(torch.randn(8, 4)), torch.randn(8, 1)))
''', ("error.data[0]", "error.item()"), "raises", "invalid index of a 0-dim tensor", ((13, 16, "TL203"),))

CASES = {
    "evaluator_built_in_the_call": EVALUATOR_BUILT_IN_THE_CALL,
    "evaluation_through_args": EVALUATION_THROUGH_ARGS,
    "value_through_args": VALUE_THROUGH_ARGS,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_wrapper_that_hands_its_args_to_another_module_may_switch_the_mode(project) -> None:
    """`helpers.evaluate(*args)` may call `model.eval()`: after the wrapper the mode is unknown."""
    bad = EVALUATION_THROUGH_ARGS.bad.replace("    return evaluate(*args, **kwargs)",
                                              "    return helpers.evaluate(*args, **kwargs)")
    bad = bad.replace("import torch.nn as nn\n", "import torch.nn as nn\nimport helpers\n", 1)
    bad = bad.replace("first = timed(model, batches, verbose=True)",
                      "timed(model, batches)\nwith torch.no_grad():\n    first = model(batches[0][0])")
    project.write("other.py", bad)
    assert project.findings("--no-cache", "--select", "TL414", "other.py") == []


def test_a_wrapper_whose_evaluation_switches_to_eval_mode_leaves_the_model_there(project) -> None:
    """`evaluate` calls `model.eval()`: the forward after `timed(model, ..)` is in eval mode."""
    bad = EVALUATION_THROUGH_ARGS.bad.replace("    with torch.no_grad():\n        return torch.cat",
                                              "    model.eval()\n    with torch.no_grad():\n        return torch.cat")
    bad = bad.replace("first = timed(model, batches, verbose=True)",
                      "timed(model, batches)\nwith torch.no_grad():\n    first = model(batches[0][0])")
    project.write("switched.py", bad)
    assert project.findings("--no-cache", "--select", "TL414", "switched.py") == []


def test_a_keyword_the_wrapper_takes_itself_is_not_passed_on(project) -> None:
    """`def compute(self, preds, *args)`: `preds` stays with `compute`; `update` gets what follows."""
    bad = VALUE_THROUGH_ARGS.bad.replace(
        "def compute(self, *args, **kwargs):\n        return self.update(*args, **kwargs)",
        "def compute(self, preds, *args):\n        return self.update(*args)")
    bad = bad.replace("print(metric.compute(model(torch.randn(8, 4)), torch.randn(8, 1)))",
                      "print(metric.compute(model(torch.randn(8, 4)), 0.5, 1.5))")
    project.write("own.py", bad)
    assert project.findings("--no-cache", "--select", "TL203", "own.py") == []
