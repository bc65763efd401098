"""The fixes of TL204, TL402 and TL403 keep what a tensor is: each case is linted through
the real CLI, and the old expression and the fix's text are both run under torch and
compared (dtype, shape, device, requires_grad, and the values where they are defined).
A safe fix must also agree under a float64 default dtype, which changes what
`torch.Tensor` makes."""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import run_torchlint

torch = pytest.importorskip("torch")

SETUP = """\
import numpy as np
import torch

x = torch.arange(3.0, dtype=torch.float64)
ints = torch.arange(3)
w = torch.ones(2, 3, requires_grad=True)
"""

CASES = [
    # TL204: sizes, data, tensors, .new(), .type()
    "torch.Tensor(2, 3)",
    "torch.Tensor()",
    "torch.FloatTensor(2, 3)",
    "torch.LongTensor(4)",
    "torch.DoubleTensor(len(ints))",
    "torch.ByteTensor(ints.size())",
    "torch.Tensor([3, 1])",
    "torch.FloatTensor([3, 1])",
    "torch.LongTensor([1.5, 2.5])",
    "torch.FloatTensor(np.arange(3))",
    "torch.HalfTensor((1, 2))",
    "torch.BoolTensor([1, 0])",
    "torch.IntTensor([[1, 2], [3, 4]])",
    "torch.FloatTensor(x.float())",
    "torch.Tensor(ints)",
    "x.new(2, 3)",
    "x.new()",
    "x.new([1, 2])",
    "ints.new([0.5, 1.5])",
    "x.type(torch.FloatTensor)",
    "ints.type('torch.DoubleTensor')",
    # TL403
    "torch.tensor(x)",
    "torch.tensor(ints, dtype=torch.float16)",
    "torch.tensor(w.t(), requires_grad=True)",
    "torch.tensor(w, dtype=torch.float64, requires_grad=False)",
    # TL402
    "w.clone().detach()",
    "torch.clone(w * 2, memory_format=torch.contiguous_format).detach()",
]


def lint(tmp_path: Path, source: str) -> list[dict]:
    path = tmp_path / "cases.py"
    path.write_text(source)
    result = run_torchlint("check", "--isolated", "--select", "TL204,TL402,TL403", "--output-format", "json",
                           str(path), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return result.json()


def fixed_line(line: str, fix: dict) -> str:
    """``line`` with the fix's edits applied (all of them on this line, right to left)."""
    for edit in sorted(fix["edits"], key=lambda e: e["location"]["column"], reverse=True):
        assert edit["location"]["row"] == edit["end_location"]["row"]
        start, end = edit["location"]["column"] - 1, edit["end_location"]["column"] - 1
        line = line[:start] + edit["content"] + line[end:]
    return line


@pytest.fixture(scope="module")
def fixes(tmp_path_factory) -> dict[str, dict]:
    """Each case's fix, by case, from one run of the CLI."""
    lines = SETUP.splitlines()
    first = len(lines) + 1
    lines += [f"value = {case}" for case in CASES]
    found = lint(tmp_path_factory.mktemp("dtypes"), "\n".join(lines) + "\n")
    by_row = {item["location"]["row"]: item for item in found}
    result = {}
    for index, case in enumerate(CASES):
        item = by_row.get(first + index)
        assert item is not None, f"no finding for {case}"
        if item["fix"] is not None:
            fixed = fixed_line(f"value = {case}", item["fix"])
            assert fixed.startswith("value = ")
            result[case] = {"code": item["code"], "applicability": item["fix"]["applicability"],
                            "expression": fixed[len("value = "):]}
    return result


@contextmanager
def default_dtype(dtype):
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def evaluate(expression: str):
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(SETUP, namespace)
        return eval(expression, namespace)


def describe(tensor, values: bool) -> tuple:
    described = (tensor.dtype, tuple(tensor.shape), tensor.device, tensor.requires_grad, tensor.is_leaf)
    return described + ((tensor.tolist(),) if values else ())


def same_tensor(old: str, new: str) -> None:
    before, after = evaluate(old), evaluate(new)
    values = "empty" not in new  # torch.empty / new_empty: uninitialized either way
    assert describe(after, values) == describe(before, values), f"{old} -> {new}"


@pytest.mark.parametrize("case", CASES)
def test_the_fix_makes_the_same_tensor(case: str, fixes: dict) -> None:
    if case not in fixes:
        pytest.skip(f"no fix for {case}")
    same_tensor(case, fixes[case]["expression"])


@pytest.mark.parametrize("case", CASES)
def test_a_safe_fix_also_agrees_under_a_float64_default(case: str, fixes: dict) -> None:
    if case not in fixes or fixes[case]["applicability"] != "safe":
        pytest.skip(f"no safe fix for {case}")
    with default_dtype(torch.float64):
        same_tensor(case, fixes[case]["expression"])


def test_every_case_has_a_fix(fixes: dict) -> None:
    assert [case for case in CASES if case not in fixes] == []


def test_torch_tensor_data_keeps_float32_and_is_unsafe(fixes: dict) -> None:
    fix = fixes["torch.Tensor([3, 1])"]
    assert fix["expression"] == "torch.tensor([3, 1], dtype=torch.float32)"
    assert evaluate(fix["expression"]).dtype == torch.Tensor([3, 1]).dtype == torch.float32
    assert evaluate("torch.tensor([3, 1])").dtype == torch.int64  # why the dtype must be named
    # Unsafe because the legacy call follows the default dtype and the fix does not.
    assert fix["applicability"] == "unsafe"
    with default_dtype(torch.float64):
        assert evaluate("torch.Tensor([3, 1])").dtype != evaluate(fix["expression"]).dtype


def test_the_expected_spellings(fixes: dict) -> None:
    spelled = {case: (fix["expression"], fix["applicability"]) for case, fix in fixes.items()}
    assert spelled["torch.Tensor(2, 3)"] == ("torch.empty(2, 3)", "safe")
    assert spelled["torch.FloatTensor(2, 3)"] == ("torch.empty(2, 3, dtype=torch.float32)", "safe")
    assert spelled["torch.LongTensor(4)"] == ("torch.empty(4, dtype=torch.int64)", "safe")
    assert spelled["x.new(2, 3)"] == ("x.new_empty(2, 3)", "safe")
    assert spelled["x.new([1, 2])"] == ("x.new_tensor([1, 2])", "safe")
    assert spelled["x.type(torch.FloatTensor)"] == ('x.to("cpu", torch.float32)', "safe")
    assert spelled["torch.tensor(w.t(), requires_grad=True)"] == \
        ("w.t().detach().clone().requires_grad_()", "safe")
    assert spelled["torch.tensor(ints, dtype=torch.float16)"] == \
        ("ints.detach().clone().to(dtype=torch.float16)", "safe")
    assert spelled["w.clone().detach()"] == ("w.detach().clone()", "safe")
    assert spelled["torch.clone(w * 2, memory_format=torch.contiguous_format).detach()"] == \
        ("(w * 2).detach().clone(memory_format=torch.contiguous_format)", "safe")


def test_set_default_tensor_type_and_its_fix_set_the_same_default(tmp_path: Path) -> None:
    statement = "torch.set_default_tensor_type(torch.DoubleTensor)"
    found = lint(tmp_path, f"import torch\n{statement}\n")
    assert [item["fix"]["applicability"] for item in found] == ["safe"]
    fixed = fixed_line(statement, found[0]["fix"])
    assert fixed == "torch.set_default_dtype(torch.float64)"
    outcomes = []
    for code in (statement, fixed):
        with default_dtype(torch.float32), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, {"torch": torch})
            outcomes.append((torch.get_default_dtype(), torch.Tensor(1).dtype, torch.empty(1).dtype,
                             torch.tensor([1.0]).dtype))
            torch.set_default_tensor_type(torch.FloatTensor)
    assert outcomes[0] == outcomes[1] == (torch.float64,) * 4
