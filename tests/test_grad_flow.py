"""The requires-grad analysis (torchlint/analysis/grad_flow.py) through the rules built on
it: real files through the real CLI, and real torch for the runtime verdicts."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.conftest import finding_rows, lint_findings, run_torchlint
from torch_programs import run_program as torch_program

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "TL415-numpy-requires-grad"
needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")


def findings(tmp_path: Path, source: str, select: str = "TL415", *extra: str) -> list[dict]:
    return lint_findings(tmp_path, source, select, *extra, isolated=False)


def test_a_helper_receiving_a_loss_two_calls_away(tmp_path):
    found = findings(tmp_path, """
        import torch
        import torch.nn as nn

        def to_float(value):
            return float(value.cpu().numpy())

        class Logger:
            def __init__(self):
                self.rows = []

            def log(self, name, value):
                self.rows.append((name, to_float(value)))

        class Unit:
            def __init__(self, module: nn.Module, logger: Logger):
                self.module, self.logger = module, logger
                self.loss_fn = nn.MSELoss()

            def step(self, x, y):
                loss = self.loss_fn(self.module(x), y)
                self.logger.log("loss", loss)
                loss.backward()

        Unit(nn.Linear(4, 1), Logger()).step(torch.randn(8, 4), torch.randn(8, 1))
        """)
    assert finding_rows(found) == [(6, "TL415")]
    message = found[0]["message"]
    assert "the output of `self.module`, line 21" in message
    assert found[0]["fix"]["edits"][0]["content"] == ".detach()"


def test_parameters_and_requires_grad_leaves(tmp_path):
    found = findings(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn

        layer = nn.Embedding(10, 3)
        weights = layer.weight.numpy()
        w = torch.zeros(3, requires_grad=True)
        shown = np.asarray(w * 2)
        for p in layer.parameters():
            print(p.numpy())
        """)
    assert finding_rows(found) == [(7, "TL415"), (9, "TL415"), (11, "TL415")]


def test_what_does_not_require_grad_is_left_alone(tmp_path):
    found = findings(tmp_path, """
        import numpy as np
        import torch
        import torch.nn as nn
        from elsewhere import Attention  # not known to have parameters

        model = nn.Linear(4, 3)
        x = torch.randn(8, 4)
        out = model(x)
        a = out.detach().numpy()
        b = out.data.numpy()
        c = out.argmax(1).numpy()
        d = (out > 0).numpy()
        e = torch.tensor(out.tolist()).numpy()
        values, indices = out.max(1)
        f = indices.numpy()
        g = out.max(1)[1].numpy()
        with torch.no_grad():
            h = model(x).numpy()
        i = Attention()(x).numpy()
        grads = torch.autograd.grad(out.sum(), x if x.requires_grad else model.weight)[0].numpy()

        @torch.no_grad()
        def predict(inputs):
            return model(inputs).numpy()

        def summary(inputs):
            return model(inputs).numpy()

        with torch.no_grad():
            s = summary(x)
        """)
    assert finding_rows(found) == []


def test_a_file_that_freezes_parameters_is_not_judged_on_them(tmp_path):
    found = findings(tmp_path, """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)
        for p in model.parameters():
            p.requires_grad = False
        out = model(torch.randn(8, 4)).numpy()
        """)
    assert finding_rows(found) == []


def test_set_grad_enabled_false_as_a_statement(tmp_path):
    found = findings(tmp_path, """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 3)

        def evaluate(x):
            torch.set_grad_enabled(False)
            out = model(x).numpy()
            torch.set_grad_enabled(True)
            late = model(x).numpy()
            return out, late
        """)
    assert finding_rows(found) == [(11, "TL415")]


def test_fixtures_are_runnable_and_show_the_error():
    for path in sorted(FIXTURES.glob("bad_*.py")):
        completed = torch_program(str(path), timeout=120)
        assert "Can't call numpy() on Tensor that requires grad" in completed.stderr, path


@needs_torch
def test_runtime_confirms_the_fixtures():
    result = run_torchlint("check", "--no-cache", "--select", "TL415", "--runtime", "--output-format", "json",
                           str(FIXTURES))
    found = json.loads(result.stdout)
    verdicts = {(Path(item["filename"]).name, item["runtime"]["verdict"]) for item in found}
    assert verdicts == {("bad_metrics_helper.py", "CONFIRMED"), ("bad_plot_weights.py", "CONFIRMED"),
                        ("bad_collected_predictions.py", "CONFIRMED")}, found


def test_a_list_of_graph_tensors_copied_into_a_new_leaf(tmp_path):
    found = findings(tmp_path, """
        import torch
        import torch.nn as nn
        from torch.distributions import Categorical

        class Agent:
            def __init__(self):
                self.actor = nn.Linear(4, 2)
                self.log_probs = []

            def act(self, state):
                dist = Categorical(logits=self.actor(state))
                action = dist.sample()
                self.log_probs.append(dist.log_prob(action))
                return action.item()

            def loss(self, advantages):
                log_probs = torch.tensor(self.log_probs, requires_grad=True)
                return -(log_probs * advantages).mean()

        agent = Agent()
        actions = [agent.act(s) for s in torch.randn(5, 4)]
        agent.loss(torch.ones(5)).backward()
        """, "TL403")
    assert finding_rows(found) == [(18, "TL403")]
    assert "the output of `self.actor`, line 12" in found[0]["message"]


def test_numbers_taken_out_first_are_not_a_cut(tmp_path):
    found = findings(tmp_path, """
        import torch
        import torch.nn as nn

        net = nn.Linear(2, 1)
        x = torch.randn(8, 2)
        values = [net(x).sum().item(), net(x).mean().item()]
        a = torch.tensor(values)
        b = torch.as_tensor([net(x).detach(), net(x).detach()])
        lengths = [part.size(0) for part in [net(x), net(x + 1)]]
        c = torch.tensor(lengths, dtype=torch.long)
        """, "TL403")
    assert finding_rows(found) == []


@needs_torch
@pytest.mark.parametrize("kept, rows", [("loss", [(14, "TL415")]), ("loss.item()", []), ("loss.detach()", [])])
def test_numpy_reducing_a_list_of_losses(tmp_path, kept, rows):
    found = findings(tmp_path, f"""
        import numpy as np
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(3):
            loss = ((model(torch.randn(8, 4)) - 1) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append({kept})
        print(np.mean(losses))
        """, "TL415", "--runtime")
    assert finding_rows(found) == rows
    assert all(item["runtime"]["verdict"] == "CONFIRMED" for item in found), found
