"""Device and dtype mismatches in the shapes people post (issue 41, session 7): programs in
tests/data/placement_s7/<name>/ each make the mistake (bad.py) and its fix (fixed.py).

For each: torch 2.13 shows the bug on bad.py (the meta device stands for the GPU), fixed.py
runs; the real CLI reports bad.py on the line to change and nothing on fixed.py. The facts the
analysis gained are measured under real torch, numpy and scikit-learn."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from conftest import run_torchlint
from torchlint.analysis import torch_api
from torch_programs import run_program as torch_program

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

DATA = Path(__file__).parent / "data" / "placement_s7"
_DEVICE = "is not on the expected device"

# name -> (the findings on bad.py: (row, code), what torch says when bad.py runs)
CASES = {
    # class labels made with torch.LongTensor(list) for the loss of a moved model's output
    "d19": ([(9, "TL416")], _DEVICE),
    # an LSTM's (h0, c0) kept in a plain attribute, made by init_hidden() in __init__
    "d20": ([(11, "TL416")], "are not at the same device"),
    # a GCN layer's Parameter (float32) multiplied with float64 features from np.eye
    "t14": ([(24, "TL413")], "to have the same dtype"),
    # a float64 mask from numpy in a plain attribute, met with `@`
    "t15": ([(10, "TL413")], "to have the same dtype"),
    # the values of a DataFrame of float64 numpy columns
    "t02": ([(7, "TL413")], "mat1 and mat2 must have the same dtype"),
    # the feature columns of pd.read_csv(..) (float64 or int64, never float32)
    "t13": ([(18, "TL413")], "mat1 and mat2 must have the same dtype"),
    # the batch of a loop over a DataLoader unpacked in the loop's body, not moved
    "d16": ([(23, "TL416")], _DEVICE),
    # a decoder never moved, given the output of an encoder moved to the device
    "d17": ([(27, "TL416")], _DEVICE),
    # a uint8 image array divided by 255.0 (float64) into a Conv2d
    "t11": ([(6, "TL413")], "should be the same"),
    # train_test_split keeps the float64 of np.random.rand
    "t12": ([(12, "TL413")], "mat1 and mat2 must have the same dtype"),
    # a tensor made without device= in a loss module's forward, met with the model's output
    "d01": ([(16, "TL416")], _DEVICE),
    # a trainer that holds the device moves the targets but not the inputs of a DataLoader
    "d02": ([(17, "TL416")], _DEVICE),
    # an evaluate() helper given a loader of a Dataset class whose items stay on the CPU
    "d03": ([(23, "TL416")], _DEVICE),
    # a plain tensor attribute set in the __init__ of a base class of the moved module
    "d05": ([(8, "TL416")], _DEVICE),
    # class weights that a helper function returns, on the CPU, for a loss of a moved model
    "d06": ([(14, "TL416")], _DEVICE),
    # a plain attribute of a submodule's class (positional encoding)
    "d07": ([(13, "TL416")], _DEVICE),
    # an agent's state made with the legacy constructor torch.FloatTensor (always the CPU)
    "d08": ([(12, "TL416")], _DEVICE),
    # init_hidden() returns a tensor made without device=
    "d09": ([(14, "TL416")], "are not at the same device"),
    # a loss module's plain attribute made from the list its constructor is given, reported where
    # it first meets the device: `gather` with the targets (an index on the GPU; the meta device
    # that stands for it here lets the CPU kernel through, so torch raises on the next line)
    "d10": ([(13, "TL416")], _DEVICE),
    # a model moved by the helper that builds it, given a batch stacked from CPU tensors
    "d11": ([(13, "TL416")], _DEVICE),
    # a causal mask made in forward without device=
    "d12": ([(15, "TL416")], _DEVICE),
    # a runner class that moves its model and feeds it torch.from_numpy(..)
    "d13": ([(15, "TL416")], _DEVICE),
    # a metric (a plain class with __call__) whose weights stay on the CPU
    "d14": ([(10, "TL416")], _DEVICE),
    # reparameterization noise made with torch.randn(mu.size())
    "d15": ([(13, "TL416")], _DEVICE),
    # a Dataset whose __getitem__ converts float64 numpy rows
    "t01": ([(16, "TL413")], "mat1 and mat2 must have the same dtype"),
    # class weights from scikit-learn's compute_class_weight (float64)
    "t04": ([(8, "TL413")], "expected scalar type Float but found Double"),
    # sliding windows of a float64 series into an LSTM
    "t05": ([(19, "TL413")], "does not match weight dtype"),
    # integer labels of BCEWithLogitsLoss given to a trainer's step()
    "t06": ([(20, "TL413")], "can't be cast to the desired output type Long"),
    # a helper returns np.stack of float64 signals (np.pi, a range, np.linspace), as_tensor keeps it
    "t07": ([(21, "TL413")], "should be the same"),
    # token ids made with torch.Tensor (float32) into an EmbeddingBag
    "t08": ([(16, "TL413")], "'indices' to have one of the following scalar types"),
    # int64 labels of a TensorDataset into BCEWithLogitsLoss (reported at the `.astype(np.int64)`
    # that names the dtype, session 22)
    "t09": ([(7, "TL413")], "can't be cast to the desired output type Long"),
    # a plain attribute from numpy ([0.5] * n: float64) scales the input of a Linear
    "t10": ([(10, "TL413")], "mat1 and mat2 must have the same dtype"),
}


def _findings(path: Path) -> list[tuple[int, str]]:
    result = run_torchlint("check", "--isolated", "--no-cache", "--select", "TL413,TL416", "--output-format",
                           "json", str(path))
    assert result.returncode in (0, 1), result.stderr
    return [(item["location"]["row"], item["code"]) for item in result.json()]


def _run(path: Path) -> subprocess.CompletedProcess:
    return torch_program(str(path), timeout=120, cwd=path.parent)


def test_every_case_is_listed() -> None:
    assert sorted(path.name for path in DATA.iterdir() if path.is_dir()) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_is_reported_where_it_is_fixed(name: str) -> None:
    assert _findings(DATA / name / "bad.py") == CASES[name][0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_twin_is_clean(name: str) -> None:
    assert _findings(DATA / name / "fixed.py") == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_shows_the_bug_and_not_on_the_twin(name: str) -> None:
    bad = _run(DATA / name / "bad.py")
    assert bad.returncode != 0 and CASES[name][1] in bad.stderr, bad.stderr[-2000:]
    fixed = _run(DATA / name / "fixed.py")
    assert fixed.returncode == 0, fixed.stderr[-2000:]


# --- the facts, as the libraries behave -------------------------------------------------

def test_pandas_reads_numbers_as_float64_or_int64(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    texts = {",": "a,b,c\n1,2.5,-3\n4,0.25,6\n", "\t": "a\tb\tc\n1\t2.5\t-3\n4\t0.25\t6\n",
             None: "a  b     c\n1  2.5   -3\n4  0.25  6\n"}
    readers = {"pandas.read_csv": ",", "pandas.read_table": "\t", "pandas.read_fwf": None}
    assert set(readers) == torch_api.PANDAS_TEXT_READERS
    for qualname, separator in readers.items():
        path = tmp_path / f"{qualname}.txt"
        path.write_text(texts[separator])
        frame = getattr(pd, qualname.rsplit(".", 1)[1])(path)
        assert [str(dtype) for dtype in frame.dtypes] == ["int64", "float64", "int64"], qualname
        assert frame.drop(columns=["a"]).values.dtype == np.float64
        assert frame.values.dtype == np.float64 and frame[["a", "c"]].to_numpy().dtype == np.int64
    frame = pd.DataFrame(np.random.rand(3, 2))
    arguments = {"dropna": (), "fillna": (0,), "head": (), "tail": (), "sample": (2,), "copy": (), "reset_index": (),
                 "sort_index": (), "sort_values": (0,), "query": ("index >= 0",), "filter": ([0],),
                 "drop": ([1], 1)}
    assert set(arguments) == torch_api.FRAME_KEEPING_METHODS
    for method, given in arguments.items():
        assert (getattr(frame, method)(given[0], axis=given[1]) if method == "drop" else
                getattr(frame, method)(*given)).values.dtype == np.float64, method
    assert frame.iloc[:, :1].values.dtype == frame.loc[:, [0]].to_numpy().dtype == np.float64


def test_train_test_split_keeps_each_arrays_dtype() -> None:
    model_selection = pytest.importorskip("sklearn.model_selection")
    for qualname in torch_api.ARRAY_SPLITTING_FUNCTIONS:
        function = getattr(model_selection, qualname.rsplit(".", 1)[1])
        arrays = (np.random.rand(10, 2), np.arange(10, dtype=np.int32), np.ones(10, dtype=np.float32))
        parts = function(*arrays, test_size=0.2, random_state=0)
        assert [part.dtype for part in parts] == [array.dtype for array in arrays for _ in range(2)], qualname


def test_scikit_learn_class_weights_are_float64() -> None:
    sklearn_utils = pytest.importorskip("sklearn.utils")
    from sklearn.utils import class_weight

    labels = np.array([0, 0, 1, 2, 2, 2])
    for qualname in sorted(torch_api.ARRAY_FLOAT64_FUNCTIONS):
        module, _, name = qualname.rpartition(".")
        function = getattr(class_weight if module.endswith("class_weight") else sklearn_utils, name)
        if name == "compute_class_weight":
            result = function("balanced", classes=np.unique(labels), y=labels)
        else:
            result = function("balanced", labels)
        assert isinstance(result, np.ndarray) and result.dtype == np.float64, qualname


def test_float_constants_are_python_floats() -> None:
    for qualname in torch_api.FLOAT_CONSTANTS:
        module, _, name = qualname.rpartition(".")
        value = getattr(np if module == "numpy" else math, name)
        assert type(value) is float and (np.ones(2, dtype=np.int64) * value).dtype == np.float64, qualname


def test_legacy_tensor_types_make_cpu_tensors() -> None:
    for name in torch_api.LEGACY_TYPE_DTYPES:
        assert torch_api.is_cpu_tensor_type(f"torch.{name}")
        assert getattr(torch, name)([1, 0]).device.type == "cpu", name
    assert not torch_api.is_cpu_tensor_type("torch.cuda.FloatTensor")
    assert not torch_api.is_cpu_tensor_type("torch.tensor")
