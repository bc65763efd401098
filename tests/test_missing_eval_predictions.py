"""TL414 beyond `no_grad` blocks and evaluating names: models built by this file's factory
functions, a model handed to the function that evaluates it (the finding goes on that call),
predictions read out of the graph from a model holding trained weights, and the runtime
verdicts for models that only call `F.dropout(training=self.training)` and for chained
forwards (`model(x).argmax(1)`).  Real files through the real CLI, real torch."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import lint_findings, run_torchlint


def findings(tmp_path: Path, source: str, *extra: str) -> list[dict]:
    return lint_findings(tmp_path, source, "TL414", *extra, name="predict.py")


FACTORY = """
    import torch
    from torch import nn

    def make_net(classes=3):
    {factory}

    @torch.no_grad()
    def score(net, x):
        return net(x).softmax(-1)

    net = make_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(net(torch.randn(8, 4)), torch.randint(0, 3, (8,))).backward()
        opt.step()
    print(score(net, torch.randn(2, 4)))
"""


@pytest.mark.parametrize("factory, reported", [
    ("    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, classes))", True),
    # may return None (falls off its end): not known to build a module
    ("    if classes:\n            return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, classes))",
     False),
    # returns a model already switched to eval mode: not a new module in training mode
    ("    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, classes)).eval()", False),
    # no layer that behaves differently in training mode
    ("    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, classes))", False),
])
def test_a_factory_function_builds_a_model_in_training_mode(tmp_path, factory, reported) -> None:
    found = findings(tmp_path, FACTORY.format(factory=factory))
    if not reported:
        assert found == []
        return
    (finding,) = found
    # the model is handed to `score`, which evaluates whatever mode it is given: the call is flagged
    assert finding["location"]["row"] == 18
    assert "by `score()`" in finding["message"] and "built by `make_net()`" in finding["message"]
    notes = {note["message"].split(",")[0]: note["location"]["row"] for note in finding["related"]}
    assert notes["the forward runs here"] == 10


def test_the_fix_goes_before_the_call_that_hands_the_model_over(tmp_path) -> None:
    source = FACTORY.format(factory="    return nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, classes))")
    path = tmp_path / "predict.py"
    path.write_text(textwrap.dedent(source))
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL414", "--fix", "--unsafe-fixes",
                           str(path))
    assert result.returncode in (0, 1), result.stderr
    lines = path.read_text().splitlines()
    assert lines[17:19] == ["net.eval()", "print(score(net, torch.randn(2, 4)))"]


PREDICT = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))

        def forward(self, x):
            return self.body(x)

    def main(state, images):
        net = Net()
        {load}
        labels = []
        for image in images:
            out = net(image)
            {use}
        return labels

    labels = main(Net().state_dict(), [torch.randn(1, 4) for _ in range(3)])
"""


@pytest.mark.parametrize("load, use, reported", [
    ("net.load_state_dict(state)", "labels.append(out.argmax(1).item())", True),
    ("net.load_state_dict(state)", "labels.append(out.detach().numpy())", True),
    # fresh weights: nothing trained is predicted
    ("pass", "labels.append(out.argmax(1).item())", False),
    # the graph is kept: a caller may back-propagate through it
    ("net.load_state_dict(state)", "labels.append(out)", False),
    # a backward runs here: a training step, not a prediction
    ("net.load_state_dict(state)", "out.sum().backward(); labels.append(out.argmax(1).item())", False),
    ("net.load_state_dict(state); net.eval()", "labels.append(out.argmax(1).item())", False),
])
def test_predictions_read_out_of_the_graph(tmp_path, load, use, reported) -> None:
    found = findings(tmp_path, PREDICT.format(load=load, use=use))
    assert [f["location"]["row"] for f in found] == ([18] if reported else [])
    if reported:
        assert "as a prediction" in found[0]["message"]
        assert any(note["location"]["row"] == 15 and "weights are loaded" in note["message"]
                   for note in found[0]["related"])


def test_prediction_fix_goes_before_the_loop(tmp_path) -> None:
    path = tmp_path / "predict.py"
    path.write_text(textwrap.dedent(PREDICT.format(load="net.load_state_dict(state)",
                                                   use="labels.append(out.argmax(1).item())")))
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL414", "--fix", "--unsafe-fixes",
                           str(path))
    assert result.returncode in (0, 1), result.stderr
    lines = path.read_text().splitlines()
    assert lines[15:18] == ["    labels = []", "    net.eval()", "    for image in images:"]


def test_runtime_confirms_a_functional_dropout_reading_self_training(tmp_path) -> None:
    source = """
        import torch
        from torch import nn
        import torch.nn.functional as F

        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return self.fc(F.dropout(x, 0.3, training=self.training))

        @torch.no_grad()
        def predict(model, x):
            return model(x)

        model = Tagger()
        model.load_state_dict(Tagger().state_dict())
        print(predict(model, torch.randn(2, 4)))
    """
    (finding,) = findings(tmp_path, source, "--runtime")
    assert finding["location"]["row"] == 20
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "`F.dropout` with `training=True` (line 12)" in finding["runtime"]["evidence"]


def test_runtime_reads_the_model_of_a_chained_forward(tmp_path) -> None:
    source = """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        nn.functional.cross_entropy(net(torch.randn(8, 4)), torch.randint(0, 3, (8,))).backward()
        opt.step()
        with torch.no_grad():
            print(net(torch.randn(4, 4)).argmax(1))
    """
    (finding,) = findings(tmp_path, source, "--runtime")
    assert finding["location"]["row"] == 10
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]


SCRIPT_PREDICTION = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    x = torch.linspace(-3, 3, 64).unsqueeze(1)
    for t in range(5):
        loss = F.mse_loss(net(x), torch.sin(x))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    {prepare}
    y_plot = net(x).detach()
    {after}
"""


@pytest.mark.parametrize("prepare, after, rows", [
    ("", "", [15]),  # the training loop ended: a prediction in the same script
    ("net.eval()", "", []),
    ("", "F.mse_loss(net(x), x).backward()", []),  # something back-propagates after it
])
def test_a_prediction_after_the_training_loop_of_a_script(tmp_path, prepare, after, rows) -> None:
    found = findings(tmp_path, SCRIPT_PREDICTION.format(prepare=prepare, after=after))
    assert [finding["location"]["row"] for finding in found] == rows


EPOCH_LOOP = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters())
    train = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
    test = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(2)]
    for epoch in range(3):
        for x, y in train:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        test_loss = 0.0
        for x, y in test:
            {test}
        print(epoch, test_loss)
"""


@pytest.mark.parametrize("test, rows", [
    # the test loop beside the training loop, in the epoch loop: predictions in training mode
    ("test_loss += nn.functional.cross_entropy(model(x), y).item()", [16]),
    # a later backward goes through it: training, not a prediction
    ("out = model(x)\n            test_loss += out.sum().item()\n            out.mean().backward()", []),
])
def test_a_test_loop_beside_the_training_loop(tmp_path, test, rows) -> None:
    found = findings(tmp_path, EPOCH_LOOP.format(test=test))
    assert [finding["location"]["row"] for finding in found] == rows


GAN_STEP = """
    import torch
    from torch import nn

    G = nn.Sequential(nn.Linear(2, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    D = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.3), nn.Linear(8, 1))
    opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
    for step in range(3):
        fake = G(torch.randn(8, 2)).detach()  # D trains on G's output, in training mode
        loss_d = D(fake).mean() - D(torch.randn(8, 2)).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        loss_g = -D(G(torch.randn(8, 2))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
"""


def test_a_detached_fake_of_a_gan_step_is_no_prediction(tmp_path) -> None:
    assert findings(tmp_path, GAN_STEP) == []
