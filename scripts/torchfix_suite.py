#!/usr/bin/env python3
"""Run TorchFix's own test fixtures through torchlint, by TOR code (issue 20).

TorchFix's sdist has no tests; its public repository has them
(``tests/fixtures/<group>/checker/*.py`` with the expected ``.txt`` lines, and
``codemod/*.in.py`` -> ``*.out.py``).  Nothing of TorchFix is committed here: point this
script at a local copy of that repository (a checkout, or the git directory ``fetch``
brings, read with ``git archive``).

    python scripts/torchfix_suite.py /work/.mirror/pytorch-labs+torchfix/repo
    python scripts/torchfix_suite.py PATH --show      # every difference, line by line

Checker fixtures: torchlint is run with every rule that names a TorchFix code, and each
finding is read as the TOR code its rule stands for; the ``line:col TORxxx`` of each
expected line must be reported, and nothing else (messages are torchlint's own).
TOR9xx fixtures (pytorch/pytorch's internals) are skipped: no torchlint rule is meant
for them.  Codemod fixtures: the ``.in.py`` is fixed with ``--fix --unsafe-fixes`` and
compared with the ``.out.py``: identical, the same code (equal syntax trees: layout
differs), or different (printed with ``--show``).  Exit status 1 when a checker fixture
or a codemod differs.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from torchlint.framework import catalogue  # noqa: E402


def fixtures_root(source: Path, into: Path) -> Path:
    """The ``tests/fixtures`` folder of a TorchFix checkout, or exported from its git directory."""
    if (source / "tests" / "fixtures").is_dir():
        return source / "tests" / "fixtures"
    archive = subprocess.run(["git", f"--git-dir={source}", "archive", "HEAD", "tests/fixtures"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "tests" / "fixtures"


def aliases() -> dict[str, str]:
    """torchlint code -> the TOR code it reports as, for every rule that names one."""
    found = {}
    for info in catalogue.RULES.values():
        for code in info.torchfix:
            found[info.code] = code
    return found


def torchlint(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchlint", *arguments, "--no-cache"],
                          cwd=cwd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def check(path: Path, codes: dict[str, str]) -> list[str]:
    result = torchlint(["check", path.name, "--select", ",".join(codes), "--output-format", "json",
                        "--exit-zero"], path.parent)
    findings = json.loads(result.stdout or "[]")
    return sorted({f"{f['location']['row']}:{f['location']['column']} {codes[f['code']]}"
                   for f in findings if f["code"] in codes}, key=_order)


def _order(line: str) -> tuple:
    position, code = line.split(" ", 1)
    row, column = position.split(":")
    return int(row), int(column), code


def fix(path: Path, codes: dict[str, str], scratch: Path) -> str:
    target = scratch / path.name.replace(".in.py", ".py")
    shutil.copyfile(path, target)
    torchlint(["check", target.name, "--select", ",".join(codes), "--fix", "--unsafe-fixes", "--exit-zero"], scratch)
    return target.read_text(encoding="utf-8")


def same_code(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torchfix", type=Path, help="a TorchFix checkout, or its git directory")
    parser.add_argument("--show", action="store_true", help="print every difference")
    options = parser.parse_args()
    codes = aliases()
    failed = False
    with tempfile.TemporaryDirectory() as temporary:
        root = fixtures_root(options.torchfix.resolve(), Path(temporary) / "export")
        expected_total = found_total = 0
        print("| fixture | expected | found | missed | extra |")
        print("|---|---:|---:|---:|---:|")
        for source in sorted(root.glob("*/checker/*.py")):
            expected = [" ".join(line.split(" ", 2)[:2]) for line in
                        source.with_suffix(".txt").read_text(encoding="utf-8").splitlines() if line.strip()]
            if any(line.split(" ")[1].startswith("TOR9") for line in expected):
                continue
            found = check(source, codes)
            missed = [line for line in expected if line not in found]
            extra = [line for line in found if line not in expected]
            expected_total += len(expected)
            found_total += len(expected) - len(missed)
            failed = failed or bool(missed or extra)
            print(f"| {source.parent.parent.name}/{source.stem} | {len(expected)} | {len(expected) - len(missed)} "
                  f"| {len(missed)} | {len(extra)} |")
            if options.show:
                for line in missed:
                    print(f"    missed {line}")
                for line in extra:
                    print(f"    extra  {line}")
        print(f"\nchecker: {found_total} of {expected_total} expected findings, exactly\n")
        print("| codemod | result |")
        print("|---|---|")
        scratch = Path(temporary) / "scratch"
        counts = {"identical": 0, "same code": 0, "different": 0}
        for source in sorted(root.glob("*/codemod/*.in.py")):
            expected = source.with_name(source.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
            scratch.mkdir(exist_ok=True)
            fixed = fix(source, codes, scratch)
            result = "identical" if fixed == expected else "same code" if same_code(fixed, expected) else "different"
            counts[result] += 1
            failed = failed or result == "different"
            print(f"| {source.parent.parent.name}/{source.name[:-len('.in.py')]} | {result} |")
            if options.show and result != "identical":
                import difflib
                sys.stdout.writelines("    " + line for line in difflib.unified_diff(
                    expected.splitlines(True), fixed.splitlines(True), "expected", "torchlint"))
            shutil.rmtree(scratch)
        print(f"\ncodemods: {counts['identical']} identical, {counts['same code']} the same code, "
              f"{counts['different']} different, of {sum(counts.values())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
