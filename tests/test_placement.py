"""The placement analysis (dtypes and devices) and its rules, TL413 and TL416: the facts it
holds measured under real torch and numpy, near misses through the real CLI, and the runtime
verdicts of the fixtures."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES, finding_rows, lint_findings, run_torchlint
from torchlint.analysis import torch_api

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


# --- the facts, as torch 2.13 and numpy behave -------------------------------------------

def _numpy(qualname: str):
    target = np
    for part in qualname.split(".")[1:]:
        target = getattr(target, part)
    return target


@pytest.mark.parametrize("qualname", sorted(torch_api.NUMPY_FLOAT64_FUNCTIONS))
def test_numpy_float64_functions_are_float64(qualname: str) -> None:
    function = _numpy(qualname)
    if qualname in ("numpy.loadtxt", "numpy.genfromtxt"):
        import io
        result = function(io.StringIO("1 2\n3 4"))
    elif qualname in ("numpy.mean", "numpy.std", "numpy.var", "numpy.average"):
        result = function(np.arange(4))  # integers in, float64 out
    elif qualname in ("numpy.linspace", "numpy.logspace", "numpy.random.uniform", "numpy.random.normal",
                      "numpy.random.beta", "numpy.random.gamma", "numpy.random.laplace"):
        result = function(1, 2, 3)
    elif qualname in ("numpy.random.exponential",):
        result = function(1.0, 3)
    else:
        result = function(3)
    assert np.asarray(result).dtype == np.float64, qualname


@pytest.mark.parametrize("qualname", ["numpy.mean", "numpy.std", "numpy.var", "numpy.average"])
def test_numpy_statistics_keep_a_float32_arrays_dtype(qualname: str) -> None:
    assert _numpy(qualname)(np.ones((2, 3), dtype=np.float32), axis=0).dtype == np.float32, qualname


def test_a_float32_array_centred_by_its_mean_is_not_reported(tmp_path: Path) -> None:
    """`np.mean` is float64 of integers, not of a float32 array: no TL413 claim that it is."""
    source = """
        import numpy as np
        import torch
        import torch.nn as nn

        layer = nn.Linear(3, 1)
        x = np.ones((4, 3), dtype=np.float32)
        centred = x - np.mean(x, axis=0, keepdims=True)
        print(layer(torch.from_numpy(centred)))
    """
    assert lint_findings(tmp_path, source, "TL413") == []
    bad = source.replace("dtype=np.float32", "dtype=np.int64")
    assert finding_rows(lint_findings(tmp_path, bad, "TL413")) == [(9, "TL413")]


@pytest.mark.parametrize("qualname", sorted(torch_api.NUMPY_INT64_FUNCTIONS))
def test_numpy_int64_functions_are_int64(qualname: str) -> None:
    function = _numpy(qualname)
    arguments = {"numpy.random.randint": (0, 3, 4), "numpy.bincount": (np.arange(3),),
                 "numpy.argmax": (np.ones(3),), "numpy.argmin": (np.ones(3),), "numpy.argsort": (np.ones(3),),
                 "numpy.random.binomial": (3, 0.5), "numpy.random.geometric": (0.5,),
                 "numpy.random.negative_binomial": (3, 0.5), "numpy.random.hypergeometric": (3, 4, 2)}
    result = function(*arguments.get(qualname, (3,)))
    assert np.asarray(result).dtype == np.int64, qualname


def test_numpy_true_division_of_integers_is_float64() -> None:
    counts = np.bincount(np.array([0, 1, 1]), minlength=2)
    assert (counts.sum() / (2 * np.maximum(counts, 1))).dtype == np.float64


_INDEX_CALLS = {
    "torch.nn.Embedding": lambda indices: torch.nn.Embedding(10, 4)(indices),
    "torch.nn.EmbeddingBag": lambda indices: torch.nn.EmbeddingBag(10, 4)(indices.reshape(1, -1)),
    "torch.nn.functional.embedding": lambda indices: torch.nn.functional.embedding(indices, torch.randn(10, 4)),
    "torch.nn.functional.one_hot": lambda indices: torch.nn.functional.one_hot(indices, 10),
}


@pytest.mark.parametrize("qualname", sorted(torch_api.INDEX_INPUTS))
def test_index_inputs_refuse_floating_indices(qualname: str) -> None:
    assert torch_api.INDEX_INPUTS[qualname] == 0
    call = _INDEX_CALLS[qualname]
    call(torch.tensor([1, 2, 3]))
    for dtype in (torch.float32, torch.float64):
        with pytest.raises(RuntimeError, match="to have one of the following scalar types|index tensor"):
            call(torch.tensor([1, 2, 3], dtype=dtype))


def test_python_floats_make_the_default_dtype_and_ints_int64() -> None:
    assert torch.tensor([1.0, -2, 3]).dtype == torch.float32
    assert torch.tensor([[1, 2], [-3, 4]]).dtype == torch.int64


@pytest.mark.parametrize("qualname", sorted(torch_api.FLOAT32_WEIGHT_LAYERS))
def test_float32_layers_refuse_float64(qualname: str) -> None:
    layer = getattr(torch.nn, qualname.rsplit(".", 1)[1])
    shapes = {"Bilinear": ((3, 3, 2), [(2, 3), (2, 3)]), "Conv1d": ((3, 2, 1), [(1, 3, 4)]),
              "Conv2d": ((3, 2, 1), [(1, 3, 4, 4)]), "Conv3d": ((3, 2, 1), [(1, 3, 4, 4, 4)]),
              "ConvTranspose1d": ((3, 2, 1), [(1, 3, 4)]), "ConvTranspose2d": ((3, 2, 1), [(1, 3, 4, 4)]),
              "ConvTranspose3d": ((3, 2, 1), [(1, 3, 4, 4, 4)])}
    shapes.update({"LayerNorm": ((3,), [(2, 3)]), "GroupNorm": ((1, 3), [(2, 3, 4)]),
                   "BatchNorm1d": ((3,), [(2, 3)]), "BatchNorm2d": ((3,), [(2, 3, 4, 4)]),
                   "BatchNorm3d": ((3,), [(2, 3, 2, 2, 2)]), "MultiheadAttention": ((4, 2), [(5, 2, 4)] * 3),
                   "TransformerEncoderLayer": ((4, 2, 8), [(5, 2, 4)]),
                   "TransformerEncoder": ((torch.nn.TransformerEncoderLayer(4, 2, 8), 1), [(5, 2, 4)]),
                   "TransformerDecoderLayer": ((4, 2, 8), [(5, 2, 4), (5, 2, 4)]),
                   "TransformerDecoder": ((torch.nn.TransformerDecoderLayer(4, 2, 8), 1), [(5, 2, 4), (5, 2, 4)]),
                   "Transformer": ((4, 2, 1, 1, 8), [(5, 2, 4), (5, 2, 4)])})
    built, inputs = shapes.get(layer.__name__, ((3, 2), [(2, 3)]))
    module = layer(*built)
    assert next(module.parameters()).dtype == torch.float32
    with pytest.raises((RuntimeError, ValueError)):  # the RNNs raise ValueError
        module(*[torch.randn(*shape, dtype=torch.float64) for shape in inputs])


@pytest.mark.parametrize("qualname", sorted(torch_api.WEIGHT_MATCHING_LOSSES))
def test_losses_refuse_float64_class_weights(qualname: str) -> None:
    weight = torch.ones(3, dtype=torch.float64)
    logits, target = torch.randn(4, 3), torch.randint(0, 3, (4,))
    name = qualname.rsplit(".", 1)[1]
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        if qualname.startswith("torch.nn.functional."):
            getattr(torch.nn.functional, name)(logits, target, weight)
        else:
            getattr(torch.nn, name)(weight=weight)(logits, target)


@pytest.mark.parametrize("qualname", sorted(torch_api.FLOAT_TARGET_LOSSES))
def test_binary_losses_refuse_integer_targets(qualname: str) -> None:
    name = qualname.rsplit(".", 1)[1]
    loss = getattr(torch.nn.functional, name) if qualname.startswith("torch.nn.functional.") \
        else getattr(torch.nn, name)()
    probabilities = torch.rand(4)
    float64_raises = torch_api.FLOAT_TARGET_LOSSES[qualname][1]
    with pytest.raises(RuntimeError):
        loss(probabilities, torch.ones(4, dtype=torch.long))
    if float64_raises:
        with pytest.raises(RuntimeError):
            loss(probabilities, torch.ones(4, dtype=torch.float64))
    else:
        loss(probabilities, torch.ones(4, dtype=torch.float64))


def test_value_typed_factories_take_the_dtype_of_their_values() -> None:
    assert torch.full((2,), 1).dtype == torch.int64
    assert torch.full((2,), 1.0).dtype == torch.float32
    assert torch.arange(3).dtype == torch.int64
    assert torch.from_numpy(np.random.randn(2)).dtype == torch.float64
    assert torch.tensor(np.ones(2)).dtype == torch.float64


def test_products_refuse_mixed_dtypes() -> None:
    for name in sorted(torch_api.SAME_DTYPE_PRODUCTS):
        a, b = torch.ones(1, 2, 2, dtype=torch.long), torch.ones(1, 2, 2)
        if name == "torch.mm":
            a, b = a[0], b[0]
        with pytest.raises(RuntimeError):
            getattr(torch, name.rsplit(".", 1)[1])(a, b)


def test_a_plain_tensor_attribute_is_not_moved() -> None:
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mask = torch.ones(2)
            self.register_buffer("kept", torch.ones(2))

    block = Block().to("meta")
    assert block.mask.device.type == "cpu" and block.kept.device.type == "meta"


# --- near misses, through the real CLI -------------------------------------------------------

NEAR_MISSES = {
    "converted model": """
        import numpy as np
        import torch
        from torch import nn
        model = nn.Linear(4, 1).double()
        out = model(torch.from_numpy(np.random.randn(8, 4)))
    """,
    "default dtype changed": """
        import numpy as np
        import torch
        from torch import nn
        torch.set_default_dtype(torch.float64)
        out = nn.Linear(4, 1)(torch.from_numpy(np.random.randn(8, 4)))
    """,
    "float32 array": """
        import numpy as np
        import torch
        from torch import nn
        x = torch.from_numpy(np.random.randn(8, 4).astype(np.float32))
        out = nn.Linear(4, 1)(x)
        labels = torch.from_numpy(np.random.randint(0, 3, 8))
        out2 = nn.Embedding(3, 2)(labels)
    """,
    "moved to the cpu": """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.scale = torch.ones(3)
            def forward(self, x):
                return self.fc(x) * self.scale
        model = Net().to("cpu")
    """,
    "attribute moved in forward": """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.scale = torch.ones(3)
            def forward(self, x):
                h = torch.zeros(x.shape[0], 3).to(x.device)
                return self.fc(x + h) * self.scale.to(x.device)
        model = Net().to(torch.device("cuda"))
    """,
    "attribute iterated and read with item()": """
        import torch
        from torch import nn
        class CalibrationError(nn.Module):
            def __init__(self, bins=10):
                super().__init__()
                edges = torch.linspace(0, 1, bins + 1)
                self.lowers, self.uppers = edges[:-1], edges[1:]
                self.lowers = edges[:-1]
            def forward(self, confidences):
                total = torch.zeros(1, device=confidences.device)
                for lower in zip(self.lowers):
                    total += confidences.gt(lower[0].item()).float().mean()
                return total
        metric = CalibrationError().cuda()
    """,
    "scalar attribute and device given": """
        import torch
        from torch import nn
        device = torch.device("cuda")
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.scale = torch.ones(3, device=device)
            def forward(self, x):
                h = torch.zeros(x.shape[0], 3, device=x.device)
                return self.fc(x + h) * self.scale
        model = Net().to(device)
    """,
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_are_not_reported(name: str, tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(textwrap.dedent(NEAR_MISSES[name]))
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL413,TL416", str(path))
    assert result.returncode == 0, result.stdout


def test_the_finding_names_where_the_dtype_comes_from() -> None:
    path = FIXTURES / "TL413-dtype-mismatch" / "bad_numpy_features.py"
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL413", "--output-format", "full",
                           str(path))
    assert "np.random.randn(64, 5)" in result.stdout and "returns float64" in result.stdout
    assert "the input of `nn.Linear`" in result.stdout


# --- arrays made from lists, and the rows of arrays --------------------------------------------

THROUGH_LISTS_AND_ROWS = {
    "windows stacked by np.array": ("""
        import numpy as np
        import torch
        from torch import nn
        def windows(series, width):
            return np.array([series[i:i + width] for i in range(len(series) - width)])[..., None]
        series = np.sin(np.linspace(0, 10, 100))
        x = torch.tensor(windows(series, 8))
        out, _ = nn.LSTM(1, 4, batch_first=True)(x)
    """, [(8, "TL413")]),
    "a list of Python floats": ("""
        import numpy as np
        import torch
        from torch import nn
        rows = [[0.5, 1.0], [2.0, 3.5]]
        x = torch.from_numpy(np.array(rows))
        out = nn.Linear(2, 1)(x)
    """, [(6, "TL413")]),
    "rows of an array": ("""
        import numpy as np
        import torch
        from torch import nn
        features = np.random.randn(10, 4)
        model = nn.Linear(4, 2)
        for row in features:
            print(model(torch.from_numpy(row)))
    """, [(8, "TL413")]),
    "float32 rows are not": ("""
        import numpy as np
        import torch
        from torch import nn
        features = np.random.randn(10, 4).astype(np.float32)
        model = nn.Linear(4, 2)
        for row in features:
            print(model(torch.from_numpy(row)))
        stacked = np.stack([row * 2 for row in features])
        print(model(torch.from_numpy(stacked)))
    """, []),
    # numpy joins arrays of two dtypes into the wider one: float32 with float64 is float64
    "a list of arrays of two dtypes promotes to float64": ("""
        import numpy as np
        import torch
        from torch import nn
        parts = [np.zeros(4, dtype=np.float32), np.random.randn(4)]
        print(nn.Linear(4, 2)(torch.from_numpy(np.array(parts))))
    """, [(6, "TL413")]),
    "a list of float32 and int16 arrays stays float32": ("""
        import numpy as np
        import torch
        from torch import nn
        parts = [np.zeros(4, dtype=np.float32), np.ones(4, dtype=np.int16)]
        print(nn.Linear(4, 2)(torch.from_numpy(np.array(parts))))
    """, []),
}


@pytest.mark.parametrize("name", sorted(THROUGH_LISTS_AND_ROWS))
def test_dtypes_through_lists_and_rows(name: str, tmp_path: Path) -> None:
    source, expected = THROUGH_LISTS_AND_ROWS[name]
    assert finding_rows(lint_findings(tmp_path, source, "TL413")) == expected


# --- tensors made on the CPU in helpers and submodules of a moved module -----------------------

HELPER_AND_SUBMODULE = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    class Encoder(nn.Module):
        def __init__(self, hidden=4):
            super().__init__()
            self.hidden = hidden
            self.rnn = nn.GRU(3, hidden, batch_first=True)
        def init_hidden(self, batch_size{device_parameter}):
            return torch.zeros(1, batch_size, self.hidden{device})
        def forward(self, x):
            out, _ = self.rnn(x, self.init_hidden(x.size(0){device_argument}))
            return out
    class Positions(nn.Module):
        def forward(self, x):
            return x + torch.arange(x.size(1){device}).unsqueeze(0).unsqueeze(-1)
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.positions = Positions()
        def forward(self, x):
            return self.positions(self.encoder(x))
    model = Model().to(device)
    print(model(torch.randn(2, 5, 3, device=device)).shape)
"""


def test_cpu_tensors_from_a_helper_and_in_a_submodule_are_found(tmp_path: Path) -> None:
    source = HELPER_AND_SUBMODULE.format(device_parameter="", device="", device_argument="")
    assert finding_rows(lint_findings(tmp_path, source, "TL416")) == [(11, "TL416"), (17, "TL416")]
    result = run_torchlint("check", "--isolated", "--no-cache", "--runtime", "--select", "TL416",
                           "--output-format", "json", str(tmp_path / "train.py"))
    verdicts = [finding["runtime"]["verdict"] for finding in json.loads(result.stdout)]
    assert verdicts[0] == "CONFIRMED", result.stdout  # the run stops at the first mismatch


def test_tensors_made_on_the_inputs_device_are_not_reported(tmp_path: Path) -> None:
    source = HELPER_AND_SUBMODULE.format(device_parameter=", device", device=", device=device",
                                         device_argument=", x.device")
    assert lint_findings(tmp_path, source.replace("torch.arange(x.size(1), device=device)",
                                                  "torch.arange(x.size(1), device=x.device)"), "TL416") == []


# --- targets of a loss, and CPU tensors in a layer's input ------------------------------------

TARGETS = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    model = nn.Linear(4, 3).to(device)
    criterion = nn.CrossEntropyLoss()
    x = torch.randn(8, 4).to(device)
    y = {target}
    loss = criterion(model(x), y)
    mse = nn.functional.mse_loss(model(x), {other})
"""


@pytest.mark.parametrize("target, other, rows", [
    ("torch.randint(0, 3, (8,))", "torch.zeros(8, 3).to(device)", [9]),
    ("torch.randint(0, 3, (8,)).to(device)", "torch.zeros(8, 3)", [10]),
    ("torch.randint(0, 3, (8,), device=device)", "torch.zeros(8, 3, device=device)", []),
    ("torch.randint(0, 3, (8,)).to(device)", "torch.tensor(0.5)", []),  # 0-dim: mixes with any device
])
def test_a_cpu_target_of_a_loss_given_a_moved_output(tmp_path: Path, target: str, other: str, rows) -> None:
    found = lint_findings(tmp_path, TARGETS.format(target=target, other=other), "TL416")
    assert [row for row, _ in finding_rows(found)] == rows
    if rows:
        assert "the target" in found[0]["message"]


NOISE = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
        def forward(self, x):
            noise = {noise}
            return self.fc(x + 0.1 * noise)
    net = Net().to(device)
    print(net(torch.randn(3, 4, device=device)).shape)
"""


def reported_and_confirmed(tmp_path: Path, source: str, rows: list[int]) -> list[dict]:
    """TL416's findings on ``source`` are on ``rows``, each confirmed by the runtime check."""
    found = lint_findings(tmp_path, source, "TL416", "--runtime")
    assert [row for row, _ in finding_rows(found)] == rows
    assert all(item["runtime"]["verdict"] == "CONFIRMED" for item in found), found
    return found


@pytest.mark.parametrize("noise, rows", [
    ("torch.randn(x.shape)", [10]),
    ("torch.randn(x.shape, device=x.device)", []),
    ("torch.tensor(2.0)", []),  # 0-dim: mixes with any device
])
def test_a_cpu_tensor_in_the_arithmetic_of_a_layers_input(tmp_path: Path, noise: str, rows) -> None:
    reported_and_confirmed(tmp_path, NOISE.format(noise=noise), rows)


# --- CPU lengths for packing, and a state tuple bound to a name ----------------------------------

PACKED = """
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 5, batch_first=True)
        def forward(self, x, lengths):
            state = torch.zeros(1, lengths.size(0), 5{device})
            states = (state, state)
            out, _ = self.lstm(pack_padded_sequence(x, lengths, batch_first=True), states)
            return pad_packed_sequence(out, batch_first=True)[0]
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
        def forward(self, x, lengths):
            return self.encoder(x, lengths)
    model = Model().to(device)
    lengths = torch.tensor([3, 2])  # pack_padded_sequence wants them on the CPU
    print(model(torch.randn(2, 3, 4, device=device), lengths).shape)
"""


@pytest.mark.parametrize("device, rows", [("", [11]), (", device=x.device", [])])
def test_cpu_lengths_are_fine_and_a_state_tuple_is_followed(tmp_path: Path, device: str, rows) -> None:
    found = lint_findings(tmp_path, PACKED.format(device=device), "TL416")
    assert [row for row, _ in finding_rows(found)] == rows


# --- a module never moved, given a moved input -------------------------------------------------

NEVER_MOVED = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    model = {construction}
    {between}
    x = torch.randn(8, 4).to({target})
    out = model(x)
"""


@pytest.mark.parametrize("construction, between, target, rows", [
    ("nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))", "pass", "device", [8]),
    ("nn.Linear(4, 1)", "model.to(device)", "device", []),
    ("nn.Linear(4, 1, device=device)", "pass", "device", []),
    ("nn.Linear(4, 1)", "prepare(model)", "device", []),  # handed to code that may move it
    ("nn.Linear(4, 1)", "pass", '"cpu"', []),
    ("nn.Linear(4, 1)", "torch.set_default_device(device)", "device", []),
])
def test_a_module_never_moved_given_a_moved_input(tmp_path: Path, construction, between, target, rows) -> None:
    source = NEVER_MOVED.format(construction=construction, between=between, target=target)
    found = lint_findings(tmp_path, source, "TL416", "--runtime")
    assert [row for row, _ in finding_rows(found)] == rows
    if rows:
        assert "never moved" in found[0]["message"] and found[0]["runtime"]["verdict"] == "CONFIRMED"
        result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL416", "--fix", "--unsafe-fixes",
                               str(tmp_path / "train.py"))
        assert result.returncode == 0, result.stdout
        assert ".to(device)" in (tmp_path / "train.py").read_text().splitlines()[4]


# --- the runtime waits for the use where the error comes -------------------------------------

DATASET = """
    import numpy as np
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset
    class Series(Dataset):
        def __init__(self):
            self.x = np.random.randn(64, 3, 20)
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return torch.from_numpy(self.x[i])
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 4, 5)
        def forward(self, x):
            return self.conv(x).mean()
    model = Net()
    for batch in DataLoader(Series(), batch_size=16):
        model(batch).backward()
"""


def test_an_error_raised_where_the_value_is_used_is_waited_for(tmp_path: Path) -> None:
    # `__getitem__` runs 16 times before the first forward: the run must not stop when the
    # flagged line has been seen, before the line where the error comes.
    (finding,) = lint_findings(tmp_path, DATASET, "TL413", "--runtime")
    assert finding["location"]["row"] == 12
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]


CALLED_USE = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
        def forward(self, h):
            return self.fc(h)
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
        def forward(self, x):
            h = torch.zeros(x.size(0), 4)
            return self.inner(h) + x
    model = Outer().to(device)
    print(model(torch.randn(2, 4, device=device)).shape)
"""


def test_an_error_raised_inside_the_code_a_use_calls_confirms(tmp_path: Path) -> None:
    # The use is `self.inner(h)`; the error comes from `self.fc(h)` in Inner's forward,
    # a frame further in: it passes through the use on its way out.
    (finding,) = lint_findings(tmp_path, CALLED_USE, "TL416", "--runtime")
    assert finding["location"]["row"] == 16
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]


# --- the runtime check confirms the fixtures ---------------------------------------------------

@pytest.mark.parametrize("fixture", [
    "TL413-dtype-mismatch/bad_class_weights.py", "TL413-dtype-mismatch/bad_int_labels.py",
    "TL416-device-mismatch/bad_mask_attribute.py",
])
def test_runtime_confirms(fixture: str) -> None:
    code = fixture[:5]
    result = run_torchlint("check", "--isolated", "--no-cache", "--runtime", "--select", code,
                           "--output-format", "json", str(FIXTURES / fixture))
    [finding] = json.loads(result.stdout)
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "RuntimeError" in finding["runtime"]["evidence"]


# --- a CPU tensor meeting one on a device, wherever they meet --------------------------------------

MEETINGS = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")


    def accuracy(output, target):
        pred = output.argmax(dim=1)
        return (pred == target).float().mean()


    model = nn.Linear(4, 3).to(device)
    batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
    for x, y in batches:
        out = model(x.to(device))
        print(accuracy(out, {label}))
"""


@pytest.mark.parametrize("label, rows", [
    ("y", [9]),  # met in a helper, through its parameters
    ("y.to(device)", []),
    ("y.to(out.device)", []),
    ("y.sum()", []),  # 0-dim: mixes with any device
])
def test_a_cpu_tensor_compared_with_a_moved_output(tmp_path: Path, label: str, rows) -> None:
    reported_and_confirmed(tmp_path, MEETINGS.format(label=label), rows)


LOSS_ATTRIBUTE = """
    import torch
    from torch import nn
    import torch.nn.functional as F
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")


    class FocalLoss(nn.Module):
        def __init__(self, alpha=0.25):
            super().__init__()
            self.alpha = {alpha}

        def forward(self, inputs, targets):
            bce = F.binary_cross_entropy_with_logits(inputs, targets.float(), reduction="none")
            return (self.alpha.gather(0, targets) * bce).mean()


    model = nn.Linear(4, 1).to(device)
    criterion = FocalLoss()
    x = torch.randn(8, 4).to(device)
    y = torch.randint(0, 2, (8,)).to(device)
    loss = criterion(model(x).view(-1), y)
"""


@pytest.mark.parametrize("alpha, rows", [
    ("torch.tensor([alpha, 1 - alpha])", [15]),
    ("torch.tensor([alpha, 1 - alpha], device=device)", []),
])
def test_a_plain_tensor_attribute_of_a_loss_given_device_inputs(tmp_path: Path, alpha: str, rows) -> None:
    found = reported_and_confirmed(tmp_path, LOSS_ATTRIBUTE.format(alpha=alpha), rows)
    if rows:  # moving the loss would not move a plain attribute: not advised
        assert "never moved" not in found[0]["message"]


HELPER_MASK = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")


    def subsequent_mask(size):
        return torch.triu(torch.ones(1, size, size{device}), diagonal=1) == 0


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(8, 8)

        def forward(self, x):
            mask = subsequent_mask(x.size(1))
            scores = self.q(x) @ x.transpose(1, 2)
            return scores.masked_fill(mask == 0, -1e9)


    model = Decoder().to(device)
    print(model(torch.randn(2, 5, 8, device=device)).shape)
"""


@pytest.mark.parametrize("device, rows", [("", [19]), (", device=device", [])])
def test_a_mask_made_on_the_cpu_by_a_helper(tmp_path: Path, device: str, rows) -> None:
    reported_and_confirmed(tmp_path, HELPER_MASK.format(device=device), rows)


CONDITIONAL_MOVE = """
    import torch
    from torch import nn
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    use_cuda = True
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    if use_cuda:
        model = model.to(device)
    x = torch.randn(3, 4){input_move}
    print(model(x).shape)
"""


@pytest.mark.parametrize("input_move, rows", [("", [9]), (".to(device)", [])])
def test_a_module_moved_on_one_path(tmp_path: Path, input_move: str, rows) -> None:
    reported_and_confirmed(tmp_path, CONDITIONAL_MOVE.format(input_move=input_move), rows)


BLOCK_FIRST = """
    import numpy as np
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, c_in, c_out):
            super().__init__()
            self.conv = nn.Conv1d(c_in, c_out, 3, padding=1)
            self.bn = nn.BatchNorm1d(c_out)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))


    model = nn.Sequential(Block(3, 8), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 2))
    series = np.random.normal(size=(4, 3, 16)){cast}
    out = model(torch.from_numpy(series))
"""


@pytest.mark.parametrize("cast, rows", [("", [19]), (".astype(np.float32)", [])])
def test_float64_into_a_sequential_whose_first_layer_is_a_block_of_the_file(tmp_path: Path, cast: str, rows) -> None:
    found = lint_findings(tmp_path, BLOCK_FIRST.format(cast=cast), "TL413", "--runtime")
    assert [row for row, _ in finding_rows(found)] == rows
    assert all(item["runtime"]["verdict"] == "CONFIRMED" for item in found), found
    if rows:
        assert "`nn.Conv1d`" in found[0]["message"]


TRAINED_THEN_TESTED = """
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    device = torch.device("meta")
    model = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.Linear(8, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
    for x, y in data:
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
    for x, y in data:
        print(model(x).shape)
"""


def test_a_mismatch_after_training_on_the_meta_device_is_confirmed(tmp_path: Path) -> None:
    # The monitor compares saved tensors' bytes at backward; meta tensors have none to compare.
    reported_and_confirmed(tmp_path, TRAINED_THEN_TESTED, [14])
