"""call_sites: the values the project's own calls give a function or class, read from the
text alone (issue 19's "arguments from the project's own call sites")."""

from __future__ import annotations

import ast
import textwrap

import pytest

from torchlint.runtime.call_sites import CallSites, NotFixed, fixed_value


def params(*names: str, defaults: tuple[str, ...] = ()) -> list[dict]:
    return [{"name": name, "annotation": None, "default": name in defaults, "keyword": False} for name in names]


def sites(tmp_path, **files: str) -> CallSites:
    paths = []
    for name, text in files.items():
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(text).lstrip())
        paths.append(str(path))
    return CallSites(paths, str(tmp_path))


@pytest.mark.parametrize(("text", "value"), [
    ("[3, 4, 6, 3]", [3, 4, 6, 3]), ("(3 - 1) // 2", 1), ("-0.5", -0.5), ("{'a': (1, 2)}", {"a": (1, 2)}),
    ("'train'", "train"), ("2 * N", 16), ("[N, [32, 16]]", [8, [32, 16]]),
])
def test_fixed_values(text, value) -> None:
    assert fixed_value(ast.parse(text, mode="eval").body, {"N": 8}) == value


@pytest.mark.parametrize("text", ["args.depth", "len(x)", "M", "[1, *rest]", "'a' * 3", "2 ** 1000", "1 // 0"])
def test_values_only_a_run_knows_are_not_fixed(text) -> None:
    with pytest.raises(NotFixed):
        fixed_value(ast.parse(text, mode="eval").body, {"N": 8})


def test_the_call_that_fixes_most_parameters_wins_with_names_bound_once(tmp_path) -> None:
    found = sites(tmp_path, models="""
        WIDTH = 64
        def resnext50(base_width):
            return ResNeXt(base_width, WIDTH, [3, 4, 6, 3], num_classes=1000)
        def tiny():
            return ResNeXt(base_width=2, cardinality=1, layers=[1, 1, 1, 1])
    """).arguments("ResNeXt", params("base_width", "cardinality", "layers", "num_classes", defaults=("num_classes",)),
                   str(tmp_path / "resnext.py"))
    assert found == {"base_width": ("2", "models.py:5"), "cardinality": ("1", "models.py:5"),
                     "layers": ("[1, 1, 1, 1]", "models.py:5")}


def test_a_call_gives_its_values_for_parameters_with_defaults_too(tmp_path) -> None:
    found = sites(tmp_path, model="""
        def features():
            return TorchMoji(nb_classes=None, nb_tokens=NB_TOKENS, feature_output=True, dropout=rate())

        def emojis():
            return TorchMoji(nb_classes=64, nb_tokens=NB_TOKENS, dropout=0.5, return_attention=False)
    """).arguments("TorchMoji", params("nb_classes", "nb_tokens", "feature_output", "dropout", "return_attention",
                                       defaults=("feature_output", "dropout", "return_attention")),
                   str(tmp_path / "model.py"))
    # None for a required parameter turns a part off: not taken, and the call that gives it counts for nothing.
    assert found == {"nb_classes": ("64", "model.py:5"), "dropout": ("0.5", "model.py:5"),
                     "return_attention": ("False", "model.py:5")}


def test_calls_of_another_function_of_the_same_name_are_not_its_calls(tmp_path) -> None:
    found = sites(tmp_path, train="""
        import numpy as np
        from numpy import unique
        import helpers

        def train(epochs):
            return epochs

        train(5)
        unique([1, 2])
        np.unique([3])
        helpers.unique([4])
    """, helpers="""
        def unique(values):
            return values
    """)
    assert found.arguments("train", params("epochs"), str(tmp_path / "train.py")) == {"epochs": ("5", "train.py:8")}
    assert found.arguments("train", params("epochs"), str(tmp_path / "other.py")) == {}
    assert found.arguments("unique", params("values"), str(tmp_path / "helpers.py")) == {
        "values": ("[4]", "train.py:11")}


def test_names_the_function_rebinds_or_takes_are_not_the_modules(tmp_path) -> None:
    found = sites(tmp_path, train="""
        import model
        SIZE = 8
        DEPTH = 1
        DEPTH = 2
        def main(SIZE):
            hidden = 16
            layers = 3
            layers += 1
            return model.Net(SIZE, hidden, layers, DEPTH)
    """, model="""
        class Net:
            pass
    """).arguments("Net", params("size", "hidden", "layers", "depth"), str(tmp_path / "model.py"))
    assert found == {"hidden": ("16", "train.py:9")}


def test_methods_of_values_are_not_calls_of_a_function(tmp_path) -> None:
    found = sites(tmp_path, loop="""
        def run(model, loader):
            model.train(True)
            loader.dataset.train(5)
    """).arguments("train", params("epochs"), str(tmp_path / "train.py"))
    assert found == {}


def test_a_parameter_read_for_its_attributes_is_an_object_of_the_project_class_that_has_them(tmp_path) -> None:
    found = sites(tmp_path, data="""
        import torch

        class Alphabet:
            def __init__(self):
                self.names = []

            def size(self):
                return len(self.names)

        class Data:
            def __init__(self):
                self.HP_gpu = False
                self.word_alphabet = Alphabet()
                self.char_alphabet = Alphabet()

        class MoreData(Data):
            def __init__(self):
                super().__init__()
                self.extra = 1
    """, rnn="""
        import torch.nn as nn

        class BaseRNN(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.hidden_size = hidden_size

        class DecoderRNN(BaseRNN):
            def __init__(self, vocab_size, hidden_size):
                super().__init__(hidden_size)
                self.out = nn.Linear(hidden_size, vocab_size)
    """, train="""
        import torch
        from data import Data

        class Broken:
            def __init__(self):
                self.HP_gpu = True
                self.word_alphabet = None

        data = Data()
        for epoch in range(3):
            print(epoch)
    """)
    data, rnn = str(tmp_path / "data.py"), str(tmp_path / "rnn.py")
    # The closest class that has them all; a script's classes are not imported (it would run).
    assert found.project_class({"HP_gpu", "word_alphabet"}) == (data, "Data")
    assert found.project_class({"HP_gpu", "extra"}) == (data, "MoreData")
    # What a base class sets, and what every nn.Module has, count.
    assert found.project_class({"hidden_size", "out", "parameters"}) == (rnn, "DecoderRNN")
    # One attribute is not enough to say; none has them all.
    assert found.project_class({"HP_gpu"}) is None
    assert found.project_class({"HP_gpu", "vocab"}) is None


def test_attributes_read_on_what_init_keeps_are_the_parameters_attributes(tmp_path) -> None:
    from torchlint.runtime.plan import FilePlan

    source = textwrap.dedent("""
        class TopKDecoder:
            def __init__(self, decoder_rnn, k, tokens):
                self.rnn = decoder_rnn
                self.k = k
                self.tokens = tokens
                self.hidden_size = self.rnn.hidden_size

            def forward(self, inputs):
                return self.rnn.forward_step(inputs), self.k.bit_length(), self.tokens.size()
    """)
    plan = FilePlan(str(tmp_path / "topk.py"), source)
    init = plan.constructor("TopKDecoder.forward")
    uses = {param["name"]: param.get("use") for param in plan.parameters(init)}
    # Two attributes make an object; one says too little.
    assert uses == {"self": None, "decoder_rnn": "attributes:forward_step,hidden_size", "k": None, "tokens": None}
