"""The aliasing and graph fixes, run under real torch: each fixture's original shows the
bug and its `.fixed` version (what `--fix --unsafe-fixes` makes of it) behaves correctly.

One subprocess runs every original and another every fixed file (importing torch costs
seconds), each file with `runpy` in fresh globals and its printed output captured; a
check then runs on those globals and that output.  The same check must fail (or the
file raise) on the original, so that a check which cannot tell the two apart fails too.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import FIXTURES

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

# fixture (relative to fixtures/) -> statements that set `ok` from the file's globals
# and `out`, the text it printed.
CHECKS = {
    # The detached copy is zeroed, `b` and the gradient keep their values.
    "TL301-detach-inplace/bad_seed_detach_zero": """
        ok = b.item() == 2.0 and a.grad.item() == 2.0 and "tensor(2., grad_fn" in out
    """,
    # Clamping the copy leaves the saved sigmoid alone, so backward() runs and is right.
    "TL301-detach-inplace/bad_saved_output": """
        s = torch.sigmoid(x)
        ok = torch.allclose(x.grad, s * (1 - s)) and torch.equal(probabilities, s)
    """,
    # Every function of the fix cases: the original tensors keep their values.
    "TL301-detach-inplace/bad_fix_cases": """
        x = torch.ones(2)
        snapshot = write_to_base(x)
        ok = snapshot.tolist() == [1.0, 1.0] and x.tolist() == [2.0, 2.0]
        ok = ok and parenthesized_and_annotated(torch.ones(4)).tolist() == [1.0] * 4
        ok = ok and detached_array(torch.ones(2)).tolist() == [1.0, 1.0]
        ok = ok and data_alias(torch.ones(2)).tolist() == [1.0, 1.0]
    """,
    # Both detach_() calls are rebinds now: no error, and the gradient of sum(y * y).
    "TL302-detach-inplace-method/bad_view_and_saved": """
        s = torch.sigmoid(x)
        ok = "view:" not in out and torch.allclose(x.grad, 2 * s * s * (1 - s)) and not y.requires_grad
    """,
    "TL302-detach-inplace-method/bad_fix_cases": """
        head = head_of(torch.arange(4.0, requires_grad=True))
        ok = head.tolist() == [0.0, 1.0] and not head.requires_grad
    """,
    # The view is a copy made before `x += 1`; the reshape (display-only) is untouched.
    "TL303-view-inplace/bad_seed_view_then_write": """
        ok = torch.allclose(y, (x - 1).view(4)) and z[0, 0].item() == 0.0
    """,
    "TL303-view-inplace/bad_fix_cases": """
        ok = transposed_snapshot(torch.ones(2, 2)).tolist() == [[1.0, 1.0], [1.0, 1.0]]
        ok = ok and multi_line(torch.zeros(4)).tolist() == [[0.0, 0.0], [0.0, 0.0]]
        ok = ok and filled_through_the_view(torch.ones(3)).tolist() == [1.0, 1.0]
    """,
    # Array and tensor are independent copies.
    "TL304-numpy-sharing/bad_shared_memory": """
        ok = t.tolist() == [1.0, 1.0, 1.0] and array.tolist() == [0.0, 0.0, 0.0]
        ok = ok and weights[0] == 10.0 and scores.tolist() == [1.0, 1.0, 1.0]
    """,
    "TL304-numpy-sharing/bad_fix_cases": """
        ok = write_the_array(torch.zeros(2)).tolist() == [0.0, 0.0]
        ok = ok and write_the_tensor(np.ones(2, dtype=np.float32)).tolist() == [1.0, 1.0]
        ok = ok and write_a_row(torch.ones(2, 2)).tolist() == [1.0, 1.0]
    """,
    # The comparison now says what the tutorial means: `b` shares `a`'s memory.
    "TL305-id-storage-compare/bad_seed_id_compare": """
        ok = out.splitlines()[0] == "True"
    """,
    "TL305-id-storage-compare/bad_fix_cases": """
        ok = out.splitlines()[:2] == ["False", "True False"] and same
    """,
    # Same total, but neither it nor the history keeps a graph.
    "TL401-loss-accumulation/bad_validation_total": """
        expected = sum(criterion(model(inputs), labels).item() for inputs, labels in batches)
        ok = (abs(val_loss.item() - expected) < 1e-5 and val_loss.grad_fn is None
              and "graphs kept by history: 0" in out)
    """,
}

DRIVER = textwrap.dedent("""
    import contextlib, io, json, runpy, sys, textwrap, traceback
    import numpy as np
    import torch

    results = {}
    for name, (path, check) in json.loads(sys.stdin.read()).items():
        torch.manual_seed(0)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                scope = runpy.run_path(path, run_name="__main__")
            scope.update(torch=torch, np=np, out=printed.getvalue())
            exec(textwrap.dedent(check), scope)
            results[name] = {"ok": bool(scope["ok"]), "out": printed.getvalue(), "error": None}
        except Exception as error:
            results[name] = {"ok": False, "out": printed.getvalue(),
                             "error": "".join(traceback.format_exception_only(type(error), error))}
    print(json.dumps(results))
""")


def run_all(suffix: str) -> dict:
    jobs = {name: (str(FIXTURES / f"{name}{suffix}"), check) for name, check in CHECKS.items()}
    completed = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(jobs), capture_output=True,
                               text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def originals() -> dict:
    return run_all(".py")


@pytest.fixture(scope="module")
def fixed() -> dict:
    return run_all(".fixed")


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_fixed_fixture_behaves(name: str, fixed: dict) -> None:
    result = fixed[name]
    assert result["error"] is None, result["error"]
    assert result["ok"], result["out"]


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_original_fixture_shows_the_bug(name: str, originals: dict) -> None:
    result = originals[name]
    assert not result["ok"], result["out"]
