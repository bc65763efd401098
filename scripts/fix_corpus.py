"""Fix released legacy packages from PyPI with the real CLI and check that nothing broke.

    python scripts/fix_corpus.py                  # the legacy packages of design.md (and MORE_LEGACY)
    python scripts/fix_corpus.py sru==2.0.0       # just these

Each package is copied from corpus/ (downloaded by pypi_corpus.py) into a temporary
folder and fixed with `torchlint check --isolated --select ALL --fix --unsafe-fixes`.
Then, for every file: a file that compiled before must still compile, a file that did
not compile before must be untouched or compile now (fixing `async=` makes a file
valid Python 3.7+), no file may have more findings of a rule after the fixes than before
(a fix must not create a finding), and a second `--diff --unsafe-fixes` run must find
nothing left to fix.  Prints per package the files changed, fixes applied per rule, and
the failures; exits 1 when anything failed.  Nothing from a package is executed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from pypi_corpus import LEGACY, MORE_LEGACY, REPO, download

_FIXED_LINE = re.compile(r"^\s+(\d+) × (TL\d+) ")


def compiles(data: bytes, name: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, name, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def torchlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--select", "ALL", *args],
                          capture_output=True, text=True, cwd=cwd)


def _findings(folder: Path) -> Counter:
    """The findings of every rule in ``folder``, counted per (file, rule)."""
    import json

    result = torchlint("--output-format", "json", "--no-cache", ".", cwd=folder)
    counts: Counter = Counter()
    for item in json.loads(result.stdout or "[]"):
        counts[(os.path.relpath(item["filename"], folder),
                item["code"])] += 1
    return counts


def fix_package(requirement: str) -> tuple[dict, list[str]]:
    source = download(requirement)
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as temporary:
        copy = Path(temporary) / source.name
        shutil.copytree(source, copy)
        before = {path: path.read_bytes() for path in copy.rglob("*.py")}
        found_before = _findings(copy)
        first = torchlint("--fix", "--unsafe-fixes", "--show-fixes", "--quiet", ".", cwd=copy)
        if first.returncode not in (0, 1) or "Traceback" in first.stderr:
            failures.append(f"fix run exited {first.returncode}: {first.stderr.strip()[:500]}")
        fixed: Counter = Counter()
        for line in first.stdout.splitlines():
            match = _FIXED_LINE.match(line)
            if match:
                fixed[match.group(2)] += int(match.group(1))
        changed = 0
        for path, old in before.items():
            new = path.read_bytes()
            if new == old:
                continue
            changed += 1
            relative = path.relative_to(copy).as_posix()
            if not compiles(old, relative):
                # Only `async=` (a syntax error since Python 3.7) is fixed in a file that does
                # not compile: the fix must then make it compile.
                if not compiles(new, relative):
                    failures.append(f"{relative}: did not compile before, was changed, and still does not")
            elif not compiles(new, relative):
                failures.append(f"{relative}: compiled before, does not after the fix")
        # No fix may create a finding: per file and rule, the count can only go down.
        found_after = _findings(copy)
        created = sorted(key for key, number in found_after.items() if number > found_before.get(key, 0))
        for file, code in created:
            failures.append(f"{file}: the fixes created {found_after[(file, code)] - found_before.get((file, code), 0)} "
                            f"new {code} finding(s)")
        second = torchlint("--diff", "--unsafe-fixes", "--quiet", ".", cwd=copy)
        if second.returncode != 0 or second.stdout:
            changed_again = [line[4:] for line in second.stdout.splitlines() if line.startswith("+++ ")]
            failures.append(f"a second fix run would still change {len(changed_again)} files: {changed_again[:5]}"
                            + (f" ({second.stderr.strip()[:300]})" if second.returncode == 2 else ""))
    return {"files": len(before), "changed": changed, "fixed": fixed}, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY)
    args = parser.parse_args()
    results = {}
    all_failures = []
    for requirement in args.packages:
        results[requirement], failures = fix_package(requirement)
        all_failures += [f"{requirement}: {failure}" for failure in failures]
        print(f"{requirement}: done", file=sys.stderr)
    codes = sorted({code for result in results.values() for code in result["fixed"]})
    print("| " + " | ".join(["package", "files", "changed", "fixes", *codes]) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(codes))
    totals: Counter = Counter()
    for requirement, result in results.items():
        totals.update(result["fixed"])
        cells = [requirement, result["files"], result["changed"], sum(result["fixed"].values()),
                 *(result["fixed"].get(code, 0) for code in codes)]
        print("| " + " | ".join(map(str, cells)) + " |")
    files = sum(r["files"] for r in results.values())
    changed = sum(r["changed"] for r in results.values())
    cells = ["total", files, changed, sum(totals.values()), *(totals[code] for code in codes)]
    print("| " + " | ".join(map(str, cells)) + " |")
    print(f"\n{len(all_failures)} failures")
    for failure in all_failures:
        print(f"- {failure}")
    sys.exit(1 if all_failures else 0)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
