"""Issue 41, session 16: where TL415 (numpy-requires-grad) lost the tensor that requires grad.

The thread corpus's dev misses of numpy-requires-grad showed the analysis of which tensors
require grad stopping at everyday Python, not at torch:

- an iterative solver binds ``u`` before its loop and again on every pass of it; after the
  loop ``u`` holds what the last pass computed, but the value before the loop (made without
  gradient) was taken to reach the read as well, so ``np.log(u)`` went unreported;
- ``for i, det in enumerate(detections)`` (and ``zip``) gave the loop variable nothing;
- a list made as ``[None] * n`` and filled by ``out[i] = x`` was not known to hold ``x``;
- the ``*args``/``**kwargs`` of a decorator's wrapper (``def result(*args, **kwargs)`` that turns
  every tensor argument into numpy) and a ``*series`` parameter were not known to hold what the
  calls pass;
- reading one call's result took a parameter to be what any call passes (``double(x)`` counted
  as requiring grad because ``double(w)`` does).

Each bad program runs under torch and raises "Can't call numpy() on Tensor that requires
grad"; ``--runtime`` confirms it; its fixed twin has no finding. Real files, the real CLI."""

from __future__ import annotations

import subprocess

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")

EXPECTED = "Can't call numpy() on Tensor that requires grad"


def _run(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=180)


def _check(project, bad: str, fixed: str, rows: list[int]) -> None:
    """``bad`` is reported at ``rows`` and raises; ``fixed`` has no finding and runs."""
    project.write("bad.py", bad)
    project.write("fixed.py", fixed)
    assert [row for _name, row, _col, _code in project.findings("--no-cache", "--select", "TL415", "bad.py")] == rows
    assert project.findings("--no-cache", "--select", "TL415", "fixed.py") == []
    ran = _run(project, "bad.py")
    assert ran.returncode != 0 and EXPECTED in ran.stderr, ran.stderr
    ran = _run(project, "fixed.py")
    assert ran.returncode == 0, ran.stderr


SOLVER = '''\
import numpy as np
import torch

torch.manual_seed(0)


def scaling(a, kernel, iterations=20):
    u = torch.ones(a.shape[0], dtype=a.dtype) / a.shape[0]
    for it in range(iterations):
        v = 1.0 / (kernel.T @ u)
        u = a / (kernel @ v)
        if it % 5 == 0:
            print(it, float((u * (kernel @ v) - a).abs().max()))
    return u, np.log(u + 1e-16)


logits = torch.randn(6, dtype=torch.float64, requires_grad=True)
kernel = torch.rand(6, 6, dtype=torch.float64) + 0.1
u, log_u = scaling(torch.softmax(logits, 0), kernel)
u.sum().backward()
print(log_u.shape, logits.grad.norm().item())
'''


def test_a_name_rebound_on_every_pass_of_a_loop_holds_the_last_pass_after_it(project) -> None:
    _check(project, SOLVER, SOLVER.replace("np.log(u + 1e-16)", "np.log(u.detach() + 1e-16)"), [14])


def test_a_rebinding_a_pass_may_skip_leaves_the_value_before_the_loop(project) -> None:
    skipped = SOLVER.replace("        u = a / (kernel @ v)\n", "        if it > 0:\n            u = a / (kernel @ v)\n")
    project.write("skipped.py", skipped)
    assert project.findings("--no-cache", "--select", "TL415", "skipped.py") == []
    broken = SOLVER.replace("        u = a / (kernel @ v)\n", "        if it == 3:\n            break\n"
                                                             "        u = a / (kernel @ v)\n")
    project.write("broken.py", broken)
    assert project.findings("--no-cache", "--select", "TL415", "broken.py") == []


DETECTIONS = '''\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def as_corners(x):
    y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    y[:, 2:] = x[:, :2] + x[:, 2:]
    return y


def keep_confident(prediction, threshold=0.3):
    output = [torch.zeros((0, 5))] * prediction.shape[0]
    for index, boxes in enumerate(prediction):
        boxes = boxes[boxes[:, 4] > threshold]
        output[index] = torch.cat((as_corners(boxes[:, :4]), boxes[:, 4:]), 1)
    return output


def to_rows(output):
    rows = []
    for image, (detections, sizes) in enumerate(zip(output, [64] * len(output))):
        for x1, y1, x2, y2, conf in detections.cpu().numpy():
            rows.append([image, x1 / sizes, y1 / sizes, x2 / sizes, y2 / sizes, conf])
    return np.array(rows)


model = nn.Sequential(nn.Flatten(1), nn.Linear(48, 20), nn.Unflatten(1, (4, 5)), nn.Sigmoid())
model.eval()
prediction = model(torch.rand(2, 3, 4, 4))
print(to_rows(keep_confident(prediction)).shape)
'''


def test_items_of_enumerate_zip_and_of_a_list_filled_by_index(project) -> None:
    _check(project, DETECTIONS, DETECTIONS.replace("prediction = model(", "with torch.no_grad():\n"
                                                                        "    prediction = model("), [25])


WRAPPED = '''\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def tensor_friendly(fn):
    def result(*args, **kwargs):
        args = [a.cpu().numpy() if isinstance(a, torch.Tensor) else a for a in args]
        for k in kwargs:
            if isinstance(kwargs[k], torch.Tensor):
                kwargs[k] = kwargs[k].cpu().numpy()
        return fn(*args, **kwargs)
    return result


class Board:
    def __init__(self):
        self.curves = {}

    @tensor_friendly
    def line(self, Y, X=None, name="loss"):
        self.curves.setdefault(name, []).extend(np.asarray(Y).ravel().tolist())

    @tensor_friendly
    def images(self, batch, name="samples"):
        self.curves[name] = np.clip(batch, 0, 1).shape


board = Board()
model = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    batch = torch.rand(4, 8)
    output = model(batch)
    loss = ((output - batch) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    board.line(Y=loss.view(1), X=np.array([step]))
    board.images(output)
print(board.curves)
'''


def test_the_arguments_a_decorators_wrapper_receives(project) -> None:
    _check(project, WRAPPED, WRAPPED.replace(".cpu().numpy()", ".cpu().detach().numpy()"), [10, 13])


PLOTTED = '''\
import numpy as np
import torch


class Plotter:
    def plot(self, *series, **style):
        return [np.asarray(s, dtype=float) for s in series]


plotter = Plotter()
torch.manual_seed(0)
target = torch.randn(16)
guess = torch.randn(16, requires_grad=True)
history = []
for step in range(5):
    err = ((guess - target) ** 2).mean()
    history.append(err)
    err.backward()
    with torch.no_grad():
        guess -= 0.5 * guess.grad
        guess.grad.zero_()
print([a.shape for a in plotter.plot(history)])
'''


def test_a_star_parameter_holds_the_lists_its_calls_pass(project) -> None:
    _check(project, PLOTTED, PLOTTED.replace("history.append(err)", "history.append(err.item())"), [17])


CALLS = '''\
import torch

torch.manual_seed(0)


def double(t):
    return t * 2


w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
doubled_w = double(w)
doubled_x = double(x)
print(doubled_x.numpy())
print(doubled_w.numpy())
'''


def test_a_call_result_is_read_with_that_calls_arguments(project) -> None:
    _check(project, CALLS, CALLS.replace("doubled_w.numpy()", "doubled_w.detach().numpy()"), [15])


# The images first: the wrapper's positional branch meets the output on its first run (with the
# loss first, that line runs once without a tensor, and the run stops at the keyword branch).
IMAGES_FIRST = WRAPPED.replace("    board.line(Y=loss.view(1), X=np.array([step]))\n    board.images(output)\n",
                               "    board.images(output)\n    board.line(Y=loss.view(1), X=np.array([step]))\n")


@pytest.mark.parametrize("program, fixed", [
    (SOLVER, SOLVER.replace("np.log(u + 1e-16)", "np.log(u.detach() + 1e-16)")),
    (WRAPPED, WRAPPED.replace(".cpu().numpy()", ".cpu().detach().numpy()")),
    (IMAGES_FIRST, IMAGES_FIRST.replace(".cpu().numpy()", ".cpu().detach().numpy()")),
    (PLOTTED, PLOTTED.replace("history.append(err)", "history.append(err.item())")),
])
def test_runtime_confirms_the_new_findings(project, program: str, fixed: str) -> None:
    project.write("bad.py", program)
    result = project.run("check", "--runtime", "--select", "TL415", "--no-cache", "--output-format", "json", "bad.py")
    verdicts = {finding["location"]["row"]: finding["runtime"]["verdict"] for finding in result.json()}
    # The run stops at the first conversion that raises; a line that ran before without a
    # tensor that requires grad is judged on that run (the wrapper's line 10 with the loss first).
    assert "CONFIRMED" in verdicts.values(), verdicts
    assert program != IMAGES_FIRST or verdicts[10] == "CONFIRMED", verdicts
    project.write("fixed.py", fixed)
    result = project.run("check", "--runtime", "--select", "TL415", "--no-cache", "--output-format", "json", "fixed.py")
    assert result.json() == []
