"""TL414 (a model with Dropout/BatchNorm evaluated in training mode), issue 41's eighth
session: programs in the shapes people post ("different results every time I run
inference", "Expected more than 1 value per channel when training", "the validation loss
changes"), each linted through the real CLI with its fixed twin, and run under torch to show
that the bad one has the bug and the twin has not."""

from __future__ import annotations

import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import lint_findings
from torch_programs import run_program as torch_program


@dataclass(frozen=True)
class Probe:
    source: str  # the bad program; it prints a line starting with "BUG:" or raises `raises`
    fix: tuple[str, str]  # (text, replacement): the twin
    rows: tuple[int, ...]  # where TL414 reports on the bad program
    raises: str = ""

    @property
    def bad(self) -> str:
        return textwrap.dedent(self.source)

    @property
    def fixed(self) -> str:
        old, new = self.fix
        assert self.bad.count(old) == 1, old
        return self.bad.replace(old, new)


PROBES: dict[str, Probe] = {}


# A loop whose body calls `model.train()` leaves the model in training mode whether it ran
# or not (built: training mode; `train()`: training mode): the evaluation after it.
PROBES["train-in-loop-then-inference-mode"] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 8, 3), nn.BatchNorm1d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 14, 1))
    optimizer = torch.optim.Adam(model.parameters())
    signals, targets = torch.randn(20, 2, 16), torch.randn(20, 1)
    for epoch in range(4):
        model.train()
        for i in range(0, 20, 5):
            optimizer.zero_grad()
            nn.functional.l1_loss(model(signals[i:i + 5]), targets[i:i + 5]).backward()
            optimizer.step()

    with torch.inference_mode():
        forecast = model(signals[:4])
        single = model(signals[:1])
    if not torch.allclose(single, forecast[:1]):
        print("BUG: the forecast of a sample depends on the batch it comes in")
""", ("with torch.inference_mode():", "model.eval()\nwith torch.inference_mode():"), (17, 18))

PROBES["predict-method-after-training-loop"] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(7, 21), nn.Dropout(0.25), nn.ReLU())
            self.decoder = nn.Linear(21, 5)

        def forward(self, x):
            return self.decoder(self.encoder(x))

        def predict(self, x):
            with torch.no_grad():
                return self(x).argmax(-1)

    tagger = Tagger()
    optimizer = torch.optim.Adam(tagger.parameters())
    for _ in range(3):
        tagger.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(tagger(torch.randn(9, 7)), torch.randint(0, 5, (9,))).backward()
        optimizer.step()

    sentence = torch.randn(30, 7)
    tags = tagger.predict(sentence)
    if not torch.equal(tags, tagger.predict(sentence)):
        print("BUG: predicted tags change from call to call")
""", ("    def predict(self, x):\n", "    def predict(self, x):\n        self.eval()\n"), (29,))


# A model of the module evaluated by this file's functions: followed into them as the
# caller's (train() then test(), both on the global `model`), and, where nothing in the file
# can switch it, in training mode wherever they run (a service's `predict`).
PROBES["global-model-train-then-test"] = Probe("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(1)

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc1_drop = nn.Dropout(0.2)
            self.fc2 = nn.Linear(32, 4)

        def forward(self, x):
            return F.log_softmax(self.fc2(self.fc1_drop(F.relu(self.fc1(x)))), dim=1)

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    train_data = [(torch.randn(10, 16), torch.randint(0, 4, (10,))) for _ in range(3)]

    def train(epoch):
        model.train()
        for data, target in train_data:
            optimizer.zero_grad()
            F.nll_loss(model(data), target).backward()
            optimizer.step()

    def test():
        test_loss = 0
        for data, target in train_data:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
        return test_loss

    for epoch in range(1, 3):
        train(epoch)
        print(test())
    if test() != test():
        print("BUG: the test loss changes between two runs of test()")
""", ("    test_loss = 0\n", "    model.eval()\n    test_loss = 0\n"), (32,))

PROBES["global-model-loaded-predict-one"] = Probe("""
    import io

    import torch
    from torch import nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.bn = nn.BatchNorm1d(16)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(torch.relu(self.bn(self.fc1(x))))

    buffer = io.BytesIO()
    torch.save(Classifier().state_dict(), buffer)
    buffer.seek(0)
    model = Classifier()
    model.load_state_dict(torch.load(buffer))

    def predict(features):
        x = torch.tensor(features, dtype=torch.float32).unsqueeze(0)
        with torch.no_grad():
            output = model(x)
        return output.argmax(dim=1).item()

    if __name__ == "__main__":
        print(predict([0.5] * 8))
""", ("model.load_state_dict(torch.load(buffer))\n", "model.load_state_dict(torch.load(buffer))\nmodel.eval()\n"),
    (26,), raises="Expected more than 1 value per channel when training")

PROBES["global-model-never-switched-read-out"] = Probe("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
    net.load_state_dict(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2)).state_dict())

    def classify(sample):
        probs = F.softmax(net(sample), dim=-1)
        return probs.detach().numpy()

    first, second = classify(torch.ones(1, 10)), classify(torch.ones(1, 10))
    if not (first == second).all():
        print("BUG: two predictions of one input differ")
""", ("def classify(sample):\n", "net.eval()\n\n\ndef classify(sample):\n"), (11,))

# A function that only predicts (its outputs read out, nothing back-propagated), handed a
# model holding trained weights: `compute_accuracy(model, loader)` after training.
PROBES["accuracy-function-after-fit"] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)

    class ConvNet(nn.Module):
        def __init__(self, num_classes=4):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
            self.fc = nn.Linear(8 * 4 * 4, num_classes)

        def forward(self, x):
            return self.fc(self.features(x).flatten(1))

    def fit(model, batches, lr=0.01):
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for images, labels in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(images), labels).backward()
            opt.step()

    def compute_accuracy(model, batches):
        correct, total = 0, 0
        for images, labels in batches:
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
        return correct / total

    batches = [(torch.randn(8, 1, 8, 8), torch.randint(0, 4, (8,))) for _ in range(3)]
    model = ConvNet()
    fit(model, batches)
    print("accuracy", compute_accuracy(model, batches))
    mean_before = model.features[1].running_mean.clone()
    compute_accuracy(model, batches)
    if not torch.equal(mean_before, model.features[1].running_mean):
        print("BUG: evaluating changed the batch-norm running statistics")
""", ("    correct, total = 0, 0\n", "    model.eval()\n    correct, total = 0, 0\n"), (36,))


# Where the model comes from and goes: a training function that hands the model back
# (`model = train_model(model, ..)`), a classifier built from an OrderedDict, weights loaded
# and the prediction printed, `eval()` called on a copy instead of the model, a builder of
# this file that raises on a name it does not know.
PROBES['train-function-returns-the-model'] = Probe("""
    import torch
    from torch import nn, optim

    torch.manual_seed(0)


    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.4), nn.Linear(24, 1))

        def forward(self, x):
            return self.layers(x)


    def train_model(model, data, epochs=3):
        optimizer = optim.Adam(model.parameters(), lr=1e-2)
        criterion = nn.MSELoss()
        model.train()
        for _ in range(epochs):
            for x, y in data:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
        return model


    data = [(torch.randn(32, 6), torch.randn(32, 1)) for _ in range(4)]
    model = MLP()
    model = train_model(model, data)

    x_test = torch.randn(5, 6)
    with torch.no_grad():
        a = model(x_test)
        b = model(x_test)
    # -- check --
    if not torch.equal(a, b):
        print("BUG: predictions of the trained model differ between two calls")
""", ('with torch.no_grad():\n', 'model.eval()\nwith torch.no_grad():\n'), (36, 37))

PROBES['ordereddict-classifier'] = Probe("""
    from collections import OrderedDict

    import torch
    from torch import nn

    torch.manual_seed(0)

    classifier = nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(20, 50)),
        ("relu", nn.ReLU()),
        ("drop", nn.Dropout(p=0.5)),
        ("fc2", nn.Linear(50, 4)),
        ("output", nn.LogSoftmax(dim=1)),
    ]))
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(classifier.parameters(), lr=0.05)

    images, labels = torch.randn(64, 20), torch.randint(0, 4, (64,))
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(classifier(images), labels)
        loss.backward()
        optimizer.step()

    with torch.no_grad():
        test_loss = criterion(classifier(images), labels).item()
        again = criterion(classifier(images), labels).item()
    # -- check --
    if test_loss != again:
        print("BUG: the validation loss changes from one evaluation to the next", test_loss, again)
""", ('with torch.no_grad():\n', 'classifier.eval()\nwith torch.no_grad():\n'), (27, 28))

PROBES['loaded-prediction-printed'] = Probe("""
    import os
    import tempfile

    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)


    class SmallResNet(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU())
            self.fc = nn.Linear(8, num_classes)

        def forward(self, x):
            return self.fc(self.stem(x).mean((2, 3)))


    checkpoint = os.path.join(tempfile.mkdtemp(), "net.pth")
    torch.save(SmallResNet(num_classes=5).state_dict(), checkpoint)

    model = SmallResNet(num_classes=5)
    model.load_state_dict(torch.load(checkpoint))

    image = torch.rand(2, 3, 64, 64)
    probabilities = F.softmax(model(image), dim=1)
    print(probabilities)
    # -- check --
    reference = F.softmax(model.eval()(image), dim=1)
    if not torch.allclose(probabilities, reference):
        print("BUG: the prediction was made with batch statistics, not the trained ones")
""",
    ('model.load_state_dict(torch.load(checkpoint))\n\n',
     'model.load_state_dict(torch.load(checkpoint))\nmodel.eval()\n\n'),
    (29,))

PROBES['eval-on-the-copy'] = Probe("""
    import copy

    import torch
    from torch import nn

    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(5, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Dropout(0.2), nn.Linear(20, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(40, 5), torch.randn(40, 1)
    best_loss, best_model = float("inf"), None
    for epoch in range(3):
        model.train()
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if loss.item() < best_loss:
            best_loss = loss.item()
            best_model = copy.deepcopy(model)

    best_model.eval()
    with torch.no_grad():
        final = model(x[:4])
    # -- check --
    with torch.no_grad():
        again = model(x[:4])
    if not torch.equal(final, again):
        print("BUG: the model evaluated is still in training mode")
""", ('best_model.eval()\n', 'model.eval()\n'), (25, 28))

PROBES['builder-that-raises-on-unknown-names'] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    class SmallCNN(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
            self.head = nn.Linear(6, classes)

        def forward(self, x):
            return self.head(self.body(x).flatten(1))


    class TinyMLP(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.Dropout(0.5), nn.Linear(32, classes))

        def forward(self, x):
            return self.net(x)


    def create_model(name, classes):
        if name == "cnn":
            return SmallCNN(classes)
        if name == "mlp":
            return TinyMLP(classes)
        raise ValueError(f"unknown model {name}")


    model = create_model("cnn", 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    images, labels = torch.randn(10, 3, 8, 8), torch.randint(0, 3, (10,))
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        opt.step()

    with torch.no_grad():
        scores = model(images[:1])
        scores_in_batch = model(images)[:1]
    # -- check --
    if not torch.allclose(scores, scores_in_batch):
        print("BUG: a prediction depends on the rest of the batch")
""", ('with torch.no_grad():\n', 'model.eval()\nwith torch.no_grad():\n'), (44, 45))


# Where the evaluation hides: the `val` phase of a loop over phases under
# `set_grad_enabled(phase == "train")`, predictions after an `evaluate()` that puts the model
# back in training mode, a DataParallel wrapper around a loaded model (its accuracy read with
# `.data`), one image classified with `torch.argmax`.
PROBES['phase-loop-without-eval'] = Probe("""
    import copy

    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, 3))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataloaders = {p: [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)] for p in ("train", "val")}
    history = []
    for epoch in range(2):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            running_loss = 0.0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item()
            history.append((phase, running_loss))
    # -- check --
    if model.training:
        print("BUG: the validation phase ran with dropout and batch statistics", history)
""", ('        running_loss = 0.0\n', '        else:\n            model.eval()\n        running_loss = 0.0\n'), (21,))

PROBES['evaluate-restores-training-mode'] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    def evaluate(model, x, y):
        model.eval()
        with torch.no_grad():
            loss = nn.functional.mse_loss(model(x), y).item()
        model.train()
        return loss


    model = nn.Sequential(nn.Linear(3, 9), nn.Dropout(0.5), nn.Linear(9, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(20, 3), torch.randn(20, 1)
    for epoch in range(5):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        print(epoch, evaluate(model, x, y))

    with torch.no_grad():
        final = model(x[:2])
        again = model(x[:2])
    # -- check --
    if not torch.equal(final, again):
        print("BUG: the final predictions are made in training mode")
""", ('\nwith torch.no_grad():\n', '\nmodel.eval()\nwith torch.no_grad():\n'), (26, 27))

PROBES['data-parallel-around-a-loaded-model'] = Probe("""
    import io

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class PointNetCls(nn.Module):
        def __init__(self, k=4):
            super().__init__()
            self.fc1 = nn.Linear(3, 16)
            self.bn1 = nn.BatchNorm1d(16)
            self.dropout = nn.Dropout(p=0.3)
            self.fc2 = nn.Linear(16, k)

        def forward(self, x):
            return F.log_softmax(self.fc2(self.dropout(F.relu(self.bn1(self.fc1(x))))), dim=1)


    buffer = io.BytesIO()
    torch.save(PointNetCls().state_dict(), buffer)
    buffer.seek(0)

    classifier = PointNetCls(k=4)
    classifier.load_state_dict(torch.load(buffer))
    classifier = nn.DataParallel(classifier)

    points, target = torch.randn(10, 3), torch.randint(0, 4, (10,))
    pred = classifier(points)
    loss = F.nll_loss(pred, target)
    pred_choice = pred.data.max(1)[1]
    correct = pred_choice.eq(target.data).cpu().sum()
    print("loss %f accuracy %f" % (loss.item(), correct.item() / 10.0))
    # -- check --
    if not torch.equal(classifier(points), classifier(points)):
        print("BUG: the test accuracy changes from run to run")
""",
    ('classifier = nn.DataParallel(classifier)\n\n',
     'classifier = nn.DataParallel(classifier)\nclassifier.eval()\n\n'),
    (32,))

PROBES['classify-one-image-torch-argmax'] = Probe("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class DigitNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
            self.fc = nn.Linear(4, 10)

        def forward(self, x):
            return self.fc(self.conv(x).flatten(1))


    def classify_image(model, image):
        logits = model(image.unsqueeze(0))
        return int(torch.argmax(logits, dim=1))


    model = DigitNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        images, labels = torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()

    digit = torch.randn(1, 8, 8)
    print("this is a", classify_image(model, digit))
    # -- check --
    with torch.no_grad():
        as_used = model(digit.unsqueeze(0))
        model.eval()
        trained = model(digit.unsqueeze(0))
    if not torch.allclose(as_used, trained):
        print("BUG: the digit was classified with batch statistics of one image")
""", ('    logits = model(image.unsqueeze(0))\n', '    model.eval()\n    logits = model(image.unsqueeze(0))\n'), (32, 35))


# A plain class of this file handed the model keeps it in the mode it was given (its
# `__init__` switches nothing), and a function whose name says it evaluates anywhere in the
# name (`run_inference`).
PROBES['predictor-object-given-the-model'] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    class SentenceTagger(nn.Module):
        def __init__(self, vocab=40, dim=12, tags=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.dropout = nn.Dropout(0.5)
            self.proj = nn.Linear(dim, tags)

        def forward(self, tokens):
            return self.proj(self.dropout(self.embed(tokens)))


    class Predictor:
        def __init__(self, model, vocab):
            self._model = model
            self._vocab = vocab

        def predict_json(self, sentence):
            tokens = torch.tensor([[self._vocab.get(word, 0) for word in sentence.split()]])
            with torch.no_grad():
                logits = self._model(tokens)
            return logits.argmax(-1).tolist()


    vocab = {"the": 1, "cat": 2, "sat": 3}
    model = SentenceTagger()
    model.load_state_dict(SentenceTagger().state_dict())
    predictor = Predictor(model, vocab)
    first = predictor.predict_json("the cat sat")
    # -- check --
    with torch.no_grad():
        a = model(torch.tensor([[1, 2, 3]]))
        b = model(torch.tensor([[1, 2, 3]]))
    if not torch.equal(a, b):
        print("BUG: the predictor runs the model with dropout on", first)
""", ('        self._vocab = vocab\n', '        self._model.eval()\n        self._vocab = vocab\n'), (27, 38, 39))

PROBES['run-inference-function'] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)

    net = nn.Sequential(nn.Linear(5, 10), nn.BatchNorm1d(10), nn.ReLU(), nn.Linear(10, 2))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(5):
        net.train()
        x, y = torch.randn(16, 5), torch.randint(0, 2, (16,))
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()


    def run_inference(model, samples):
        probabilities = model(samples).softmax(-1)
        return probabilities


    sample = torch.randn(1, 5)
    print(run_inference(net, sample))
""",
    ('    probabilities = model(samples).softmax(-1)\n',
     '    model.eval()\n    probabilities = model(samples).softmax(-1)\n'),
    (23,), raises='Expected more than 1 value per channel when training')


# Weights loaded by a function of the file (`load_checkpoint(model, path)`), and the model
# printed on the way (`print(model)` switches nothing).
PROBES['checkpoint-loaded-by-a-function'] = Probe("""
    import io

    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))

        def forward(self, x):
            return self.body(x)


    def load_checkpoint(model, source):
        checkpoint = torch.load(source)
        model.load_state_dict(checkpoint["state_dict"])
        return checkpoint["epoch"]


    buffer = io.BytesIO()
    torch.save({"state_dict": Regressor().state_dict(), "epoch": 7}, buffer)
    buffer.seek(0)

    model = Regressor()
    print(model)
    epoch = load_checkpoint(model, buffer)
    house = torch.tensor([[0.2, 1.0, -0.5, 3.0]])
    price = model(house).item()
    print(f"epoch {epoch}: predicted price {price:.3f}")
""",
    ('house = torch.tensor([[0.2, 1.0, -0.5, 3.0]])\n',
     'model.eval()\nhouse = torch.tensor([[0.2, 1.0, -0.5, 3.0]])\n'),
    (33,), raises='Expected more than 1 value per channel when training')


# A builder of the file that loads the weights, moves the model and wraps it in
# DataParallel before returning it.
PROBES['builder-moves-and-wraps-the-model'] = Probe("""
    import argparse
    import io

    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class ConvClassifier(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.drop = nn.Dropout(dropout)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(self.drop(self.conv(x)))


    def get_model(args, weights):
        model = ConvClassifier(args.dropout)
        model.load_state_dict(torch.load(weights))
        if args.cuda:
            model = model.cuda()
        model = nn.DataParallel(model)
        return model


    parser = argparse.ArgumentParser()
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--cuda", action="store_true")
    args = parser.parse_args([])
    weights = io.BytesIO()
    torch.save(ConvClassifier(0.5).state_dict(), weights)
    weights.seek(0)

    model = get_model(args, weights)
    image = torch.randn(1, 1, 10, 10)
    with torch.no_grad():
        first = model(image).argmax(1).item()
        scores = [model(image) for _ in range(2)]
    # -- check --
    if not torch.equal(scores[0], scores[1]):
        print("BUG: the same image gets different scores", first)
""", ('image = torch.randn(1, 1, 10, 10)\n', 'model.eval()\nimage = torch.randn(1, 1, 10, 10)\n'), (42, 43))


# Closures of the function that builds the model (`def evaluate():` inside `main()`).
PROBES['closure-evaluates-the-model-of-main'] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    def main():
        model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.5), nn.Linear(24, 2))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        data = [(torch.randn(16, 6), torch.randint(0, 2, (16,))) for _ in range(3)]

        def train_epoch():
            model.train()
            for x, y in data:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()

        def evaluate():
            with torch.no_grad():
                return sum(nn.functional.cross_entropy(model(x), y).item() for x, y in data)

        for epoch in range(2):
            train_epoch()
            print(epoch, evaluate())
        # -- check --
        if evaluate() != evaluate():
            print("BUG: the validation loss changes between two evaluations")


    main()
""", ('        with torch.no_grad():\n', '        model.eval()\n        with torch.no_grad():\n'), (22,))


# A model class taken from a registry of the file (`MODELS[args.model](...)`): built, and
# with a layer that behaves differently whichever class it is.
PROBES['model-from-a-registry-dict'] = Probe("""
    import argparse

    import torch
    from torch import nn

    torch.manual_seed(0)


    class ConvNet(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
            self.head = nn.Linear(4, classes)

        def forward(self, x):
            return self.head(self.body(x).flatten(1))


    class MLP(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.net = nn.Sequential(nn.Flatten(), nn.Linear(36, 16), nn.Dropout(0.5), nn.Linear(16, classes))

        def forward(self, x):
            return self.net(x)


    MODELS = {"conv": ConvNet, "mlp": MLP}

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="conv")
    args = parser.parse_args([])
    model = MODELS[args.model](classes=3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(8, 1, 6, 6), torch.randint(0, 3, (8,))
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    test_x = torch.randn(5, 1, 6, 6)
    with torch.no_grad():
        batch_scores = model(test_x)
        one_score = model(test_x[:1])
    # -- check --
    if not torch.allclose(batch_scores[:1], one_score):
        print("BUG: the score of an image depends on the batch it is in")
""", ('with torch.no_grad():\n', 'model.eval()\nwith torch.no_grad():\n'), (44, 45))


@pytest.mark.parametrize("name", sorted(PROBES))
def test_the_bad_program_is_reported_and_its_twin_is_not(tmp_path, name) -> None:
    probe = PROBES[name]
    found = lint_findings(tmp_path, probe.bad, "TL414")
    assert tuple(f["location"]["row"] for f in found) == probe.rows, found
    assert lint_findings(tmp_path, probe.fixed, "TL414", name="fixed.py") == []


# torchvision builders given trained weights hold trained weights (torchvision need not be
# installed to lint them): a prediction read out of them is an evaluation.
PRETRAINED = {
    "script": ("""
        import torch
        from torchvision import models, transforms
        from PIL import Image

        model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        preprocess = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
        img = preprocess(Image.open("dog.jpg")).unsqueeze(0)
        scores = model(img)
        print("predicted class:", scores.argmax(1).item())
    """, ("img = preprocess", "model.eval()\nimg = preprocess"), (9,)),
    "service-object": ("""
        import torch
        import torchvision

        class FeatureExtractor:
            def __init__(self, layer=-1):
                self.model = torchvision.models.alexnet(pretrained=True)
                self.layer = layer

            def compute_activation(self, images):
                out = self.model(images)
                return out.detach().numpy()

        extractor = FeatureExtractor()
        print(extractor.compute_activation(torch.rand(2, 3, 224, 224)).shape)
    """, ("        self.layer = layer\n", "        self.layer = layer\n        self.model.eval()\n"), (11,)),
}


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_a_pretrained_torchvision_model_holds_trained_weights(tmp_path, name) -> None:
    source, (old, new), rows = PRETRAINED[name]
    source = textwrap.dedent(source)
    found = lint_findings(tmp_path, source, "TL414")
    assert tuple(f["location"]["row"] for f in found) == rows, found
    assert lint_findings(tmp_path, source.replace(old, new), "TL414", name="fixed.py") == []
    unloaded = source.replace("weights=models.ResNet50_Weights.IMAGENET1K_V2", "weights=None").replace(
        "pretrained=True", "pretrained=False")
    assert lint_findings(tmp_path, unloaded, "TL414", name="random.py") == []


SWITCHED_ELSEWHERE = """
    import torch
    from torch import nn

    net = {net}
    model = {model}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(6, 4)).mean().backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        print(model(torch.ones(2, 4)))
"""

# Programs that are right, in the same shapes: nothing to report.
GOOD = {
    "generator-samples-from-noise": """
        import torch
        from torch import nn

        netG = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Tanh())
        optG = torch.optim.Adam(netG.parameters())

        def generate_image(frame, netG):
            noise = torch.randn(32, 8)
            samples = netG(noise)
            return samples.cpu().data.numpy()

        for step in range(3):
            optG.zero_grad()
            netG(torch.randn(16, 8)).pow(2).mean().backward()
            optG.step()
            generate_image(step, netG)
    """,
    "global-model-switched-in-setup": """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
        model.load_state_dict(nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2)).state_dict())

        def setup():
            model.eval()

        def predict(x):
            with torch.no_grad():
                return model(x).argmax(1).item()

        setup()
        print(predict(torch.ones(1, 4)))
    """,
    "global-model-shape-check": """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())

        def count_parameters():
            return sum(p.numel() for p in net.parameters())

        if __name__ == "__main__":
            print(net(torch.randn(2, 3, 8, 8)).shape, count_parameters())
    """,
    # `eval()` on the module another name holds, or that a DataParallel wraps
    "wrapper-evaluated-after-its-module-is-switched": SWITCHED_ELSEWHERE.format(
        net="nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))", model="nn.DataParallel(net)"),
    "alias-switched": SWITCHED_ELSEWHERE.format(
        net="nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))", model="net.to(torch.device('cpu'))"),
    "registry-with-a-class-without-dropout-or-batch-norm": """
        import sys

        import torch
        from torch import nn

        class WithNorm(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))

            def forward(self, x):
                return self.net(x)

        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 4)

            def forward(self, x):
                return self.net(x)

        MODELS = {"norm": WithNorm, "plain": Plain}
        model = MODELS[sys.argv[1]]()
        with torch.no_grad():
            print(model(torch.ones(1, 4)))
    """,
    "batch-norm-recalibration": """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
        model.load_state_dict(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1)).state_dict())

        def recalibrate_bn(model, batches):
            model.train()
            with torch.no_grad():
                for x in batches:
                    model(x)
            model.eval()

        recalibrate_bn(model, [torch.randn(8, 4) for _ in range(3)])
        with torch.no_grad():
            print(model(torch.ones(1, 4)))
    """,
    "monte-carlo-dropout-function": """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
        opt = torch.optim.Adam(model.parameters())
        for _ in range(5):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()

        def mc_predict(model, x, samples=20):
            model.train()
            with torch.no_grad():
                outputs = torch.stack([model(x) for _ in range(samples)])
            return outputs.mean(0), outputs.std(0)

        print(mc_predict(model, torch.ones(2, 4)))
    """,
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_right_programs_are_not_reported(tmp_path, name) -> None:
    assert lint_findings(tmp_path, GOOD[name], "TL414") == []


def _run(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    path = tmp_path / "program.py"
    path.write_text(source)
    return torch_program(str(path), timeout=120, cwd=tmp_path)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_the_bad_program_shows_the_bug_under_torch(tmp_path, name) -> None:
    pytest.importorskip("torch")
    probe = PROBES[name]
    bad = _run(tmp_path, probe.bad)
    if probe.raises:
        assert bad.returncode != 0 and probe.raises in bad.stderr, bad.stderr
    else:
        assert bad.returncode == 0 and "BUG:" in bad.stdout, (bad.stdout, bad.stderr)
    fixed = _run(tmp_path, probe.fixed)
    assert fixed.returncode == 0 and "BUG:" not in fixed.stdout, (fixed.stdout, fixed.stderr)


@pytest.mark.parametrize("name", ["global-model-train-then-test", "phase-loop-without-eval",
                                  "predictor-object-given-the-model", "closure-evaluates-the-model-of-main"])
def test_runtime_confirms_the_training_mode(tmp_path, name) -> None:
    pytest.importorskip("torch")
    found = lint_findings(tmp_path, PROBES[name].bad, "TL414", "--runtime")
    assert found and all(f["runtime"]["verdict"] == "CONFIRMED" for f in found), [f.get("runtime") for f in found]
