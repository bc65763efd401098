"""The one table of torch facts (torchlint/analysis/torch_facts.py, its rows generated
into torch_facts_table.py by scripts/gen_torch_facts.py): its shape, that it is what the
script writes from the torch installed, and the facts the analyses depend on."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from torchlint.analysis import torch_facts, torch_names


def test_rows_are_sorted_unique_and_complete() -> None:
    names = [row[0] for row in torch_facts._rows()]
    assert names == sorted(set(names))
    assert all(len(row) == len(torch_facts.FIELDS) + 1 for row in torch_facts._rows())
    assert torch_facts.TORCH_VERSION == torch_names.TORCH_VERSION
    assert set(torch_names.TENSOR_METHODS) == torch_facts.methods()
    assert set(torch_names.TENSOR_PROPERTIES) == torch_facts.properties()
    assert set(torch_names.TORCH_FUNCTIONS) <= torch_facts.functions() | {"classproperty"}


def test_queries() -> None:
    assert torch_facts.method("view").aliasing == "view"
    assert torch_facts.method("nope") is None
    assert torch_facts.fact("torch.FloatTensor").legacy_dtype == "float32"
    assert "add_" in torch_facts.methods(in_place="data")
    assert {"view", "reshape", "contiguous"} <= torch_facts.methods(aliasing={"view", "maybe_view", "maybe_self"})
    assert "relu" in torch_facts.functions("torch.nn.functional")
    assert "LSTM" in torch_facts.module_classes(returns="tuple")


def test_aliasing_facts_from_torch() -> None:
    method = torch_facts.method
    for name in ("contiguous", "to", "cpu", "float", "type_as"):  # self when nothing changes, else a copy
        assert method(name).aliasing == "maybe_self", name
    for name in ("reshape", "reshape_as", "flatten", "ravel"):  # a view when the layout allows, else a copy
        assert method(name).aliasing == "maybe_view", name
    for name in ("split", "chunk", "unbind", "tensor_split", "hsplit", "unsafe_split"):
        assert (method(name).returns, method(name).aliasing) == ("tuple", "view"), name
    for name in ("requires_grad_", "detach_", "squeeze_", "unsqueeze_", "t_", "transpose_", "set_"):
        assert method(name).in_place == "metadata", name
    for name in ("add_", "zero_", "copy_", "fill_", "resize_"):
        assert method(name).in_place == "data", name
    assert method("clone").aliasing == "copy"


def test_the_table_is_what_the_script_writes_from_torch(tmp_path) -> None:
    """Nobody edited the generated rows by hand, and the script still runs."""
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != torch_facts.TORCH_VERSION:
        pytest.skip(f"the table is for torch {torch_facts.TORCH_VERSION}, this is {torch.__version__}")
    written = tmp_path / "table.py"
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen_torch_facts.py"), str(written)], check=True,
                   capture_output=True)
    assert written.read_text(encoding="utf-8") == \
        (REPO / "torchlint" / "analysis" / "torch_facts_table.py").read_text(encoding="utf-8")


def test_importing_the_table_imports_no_torch() -> None:
    code = "import sys, torchlint.analysis.torch_facts as f; f.methods(); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_hand_picked_tensor_uses_are_tensor_only() -> None:
    """The uses taken as evidence of a tensor are picked by hand, but each must be one that
    no numpy array, memoryview, nn.Module, optimizer or builtin has (torch_facts.tensor_only)."""
    from torchlint.analysis import semantic, torch_api

    def tensor_only(name: str) -> bool:
        fact = torch_facts.method(name)
        return fact is not None and fact.tensor_only

    assert all(tensor_only(name) for name in semantic.TENSOR_USE_ATTRIBUTES)
    # `size` and `view` count only with the arguments only a tensor's take (`x.size(0)`,
    # `x.view(n, -1)`); `data` lets one `x.data` use as a tensor vouch for the others of that `x`;
    # `requires_grad_` is recorded for when a tensor's grad is switched on, never as evidence of
    # a kind (an nn.Module has it too).
    assert semantic.EVIDENCE_ATTRIBUTES == semantic.TENSOR_USE_ATTRIBUTES | semantic.MODULE_USE_ATTRIBUTES | {
        "item", "size", "view", "data", "requires_grad_"}
    # `x.data.cpu()`: nn.Module has cpu/cuda/float/double/half too, but a Module has no `.data`.
    shared_with_modules = {"cpu", "cuda", "float", "double", "half"}
    assert torch_api.DATA_TENSOR_USES - torch_api.TENSOR_ONLY_USES == shared_with_modules
    assert all(tensor_only(name) for name in torch_api.TENSOR_ONLY_USES)


def test_scalar_first_overloads_are_the_ones_torch_deprecates() -> None:
    """TL210's table is torch's own list of deprecated signatures (shipped with torch in
    torchgen), with the positional parameters in their order."""
    import importlib.util
    import re
    from pathlib import Path

    from torchlint.analysis import torch_api

    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        pytest.skip("torchgen (shipped with torch) is not installed")
    listing = Path(spec.origin).parent / "packaged" / "autograd" / "deprecated.yaml"
    deprecated = set()
    for name, parameters in re.findall(r"^- name: (\w+)\((.*?)\) ->", listing.read_text(), re.MULTILINE):
        positional = parameters.split(", *")[0].split(", ")
        deprecated.add((name, tuple(parameter.split()[-1] for parameter in positional)))
    ours = {(name, signature) for name, signatures in torch_api.SCALAR_FIRST_OVERLOADS.items()
            for signature in signatures}
    assert ours == deprecated
    assert {p for _, signature in ours for p in signature if p not in ("self",)} - {
        "other", "tensor1", "tensor2", "mat1", "mat2", "mat", "vec", "vec1", "vec2", "batch1", "batch2"
    } == torch_api.SCALAR_PARAMETERS


def test_what_operations_save_for_backward_comes_from_torch() -> None:
    """The `saves` column (generated under saved_tensors_hooks): what TL409 and the
    aliasing rules count as read again by backward."""
    saves = {name: torch_facts.fact(name).saves for name in (
        "torch.Tensor.exp", "torch.sigmoid", "torch.nn.functional.relu", "torch.Tensor.log", "torch.Tensor.mul",
        "torch.matmul", "torch.nn.functional.linear", "torch.Tensor.add", "torch.Tensor.view", "torch.nn.Linear",
        "torch.nn.ReLU", "torch.nn.Dropout")}
    assert saves == {
        "torch.Tensor.exp": "O", "torch.sigmoid": "O", "torch.nn.functional.relu": "O",  # their result
        "torch.Tensor.log": "I",  # its input
        # the other operand, whether it requires grad ("i") or not ("c": `w * t` keeps `t`)
        "torch.Tensor.mul": "ci", "torch.matmul": "ci", "torch.nn.functional.linear": "ci", "torch.nn.Linear": "ci",
        "torch.Tensor.add": "n", "torch.Tensor.view": "n", "torch.nn.Dropout": "n",  # nothing of these
        "torch.nn.ReLU": "o",
    }


def test_what_an_integer_tensor_gives_comes_from_torch() -> None:
    """The `integer` column (an int64 and a float32 input called alike): what TL220 follows
    from an index tensor to a division."""
    integer = {name: torch_facts.fact(name).integer for name in (
        "torch.Tensor.view", "torch.Tensor.squeeze", "torch.Tensor.cuda", "torch.Tensor.data", "torch.Tensor.add",
        "torch.Tensor.argmax", "torch.Tensor.nonzero", "torch.Tensor.long", "torch.Tensor.int", "torch.randperm",
        "torch.Tensor.topk", "torch.Tensor.max", "torch.sort", "torch.Tensor.div", "torch.Tensor.float",
        "torch.Tensor.mean", "torch.Tensor.eq", "torch.Tensor.type_as", "torch.zeros")}
    assert integer == {
        "torch.Tensor.view": "keeps", "torch.Tensor.squeeze": "keeps", "torch.Tensor.cuda": "keeps",
        "torch.Tensor.data": "keeps", "torch.Tensor.add": "keeps",
        "torch.Tensor.argmax": "always", "torch.Tensor.nonzero": "always", "torch.Tensor.long": "always",
        "torch.Tensor.int": "always", "torch.randperm": "always",
        "torch.Tensor.topk": "indices", "torch.Tensor.max": "indices", "torch.sort": "indices",
        # true division, float conversion, means (refused on integers), bool results, the other's dtype
        "torch.Tensor.div": None, "torch.Tensor.float": None, "torch.Tensor.mean": None, "torch.Tensor.eq": None,
        "torch.Tensor.type_as": None, "torch.zeros": None,
    }


def test_what_a_module_gives_and_holds_comes_from_torch() -> None:
    """A module class's aliasing (its call may give its input itself, or a view of it) and
    `parameters` (its own, when built): what TL408 and TL410 read instead of lists of names."""
    passing = torch_facts.module_classes(aliasing={"maybe_self", "view"})
    assert {"Identity", "Dropout", "ReLU", "Flatten", "Unflatten", "Threshold"} <= passing
    assert not {"Linear", "Sequential", "Conv2d", "Softmax"} & passing  # a container's call depends on its modules
    assert torch_facts.fact("torch.nn.Unflatten").aliasing == "view"
    holding = torch_facts.module_classes(parameters=True)
    assert {"Linear", "Embedding", "LSTM", "MultiheadAttention", "Bilinear", "AdaptiveLogSoftmaxWithLoss",
            "TransformerEncoder"} <= holding
    assert not {"ReLU", "Dropout", "CrossEntropyLoss", "MaxPool2d"} & holding
    assert torch_facts.fact("torch.nn.ReLU").parameters is False
    assert torch_facts.fact("torch.Tensor.view").parameters is None


def test_inplace_argument_positions_match_torch():
    """torch_api.INPLACE_ARGUMENT_POSITION is where each torch.nn module takes `inplace`."""
    torch = pytest.importorskip("torch")
    import inspect

    from torchlint.analysis import torch_api

    found = {}
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            parameters = list(inspect.signature(cls.__init__).parameters)[1:]
            if "inplace" in parameters:
                found[name] = parameters.index("inplace")
    assert torch_api.INPLACE_ARGUMENT_POSITION == found
