#!/usr/bin/env python3
"""Measure a legacy PyTorch repository's migration with torchlint, step by step (docs/migrate.md).

Copies REPO (a folder, e.g. corpus/scripts/<owner>+<name>, which scripts/script_corpus.py
rebuilds) to a temporary folder, applies torchlint's fixes there in the order docs/migrate.md
gives, and prints after each step: the findings fixed and left (per rule, `--select ALL`), the
files changed, whether every .py file still compiles, and whether a second pass of the same
step would change anything. REPO itself is never written to.

    python scripts/migrate_measure.py corpus/scripts/andreasveit+densenet-pytorch
    python scripts/migrate_measure.py REPO --keep /tmp/after     # keep the migrated copy
    python scripts/migrate_measure.py REPO --run 'python train.py --epochs 1'

--run runs a command in a scratch copy of each step's result (before the first step too) and
shows its exit status, or the last line it printed when it failed. Run this script with the
Python that has torchlint installed: it calls `python -m torchlint` with it.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# docs/migrate.md explains the order.
CRASH = "TL205,TL206,TL203,TL211,TL212,TL213,TL501,TL502"
DEPRECATED = "TL201,TL202,TL207,TL208,TL209,TL210,TL503,TL504,TL508,TL509,TL515,TL516,TL517"
SILENT = "TL101,TL102,TL103,TL204,TL3,TL4,TL505"
OPTIONAL = "TL506,TL507,TL510,TL511,TL512,TL513,TL514"
STEPS = [  # (label, rules, with --unsafe-fixes)
    ("1 crash", CRASH, False),
    ("2 deprecated", DEPRECATED, False),
    ("2u deprecated", DEPRECATED, True),
    ("3 silent", SILENT, False),
    ("3u silent", SILENT, True),
    ("4 optional", OPTIONAL, True),
]


def torchlint(folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torchlint", "check", str(folder), "--isolated",
               "--no-cache", "--jobs", "1", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def sources(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.py"))}


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def findings(folder: Path) -> collections.Counter:
    out = torchlint(folder, "--select", "ALL", "--output-format", "json", "--exit-zero")
    return collections.Counter(f["code"] for f in json.loads(out.stdout))


def compiles(folder: Path) -> list[str]:
    """The .py files that do not compile (as `python -m py_compile` would say)."""
    bad = []
    for name, text in sources(folder).items():
        try:
            compile(text, name, "exec")
        except (SyntaxError, ValueError) as error:
            bad.append(f"{name}:{getattr(error, 'lineno', '?')}")
    return bad


def run(folder: Path, command: str, timeout: float) -> str:
    with tempfile.TemporaryDirectory(prefix="migrate-run-") as scratch:
        work = Path(scratch) / folder.name
        shutil.copytree(folder, work)
        try:
            done = subprocess.run(command, shell=True, cwd=work, capture_output=True,
                                  text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return f"timeout ({timeout:g} s)"
    if done.returncode == 0:
        return "ok"
    output = done.stdout + done.stderr
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    places = re.findall(r'File "(?:.*/)?([^"/]+)", line (\d+)', output)
    where = f" at {places[-1][0]}:{places[-1][1]}" if places else ""
    last = lines[-1].split(". ")[0][:60] if lines else ""
    return f"exit {done.returncode}{where}: {last}"


def step(folder: Path, rules: str, unsafe: bool) -> tuple[int, bool, list[str]]:
    """Apply one step's fixes; return (number fixed, whether a second pass changes nothing,
    torchlint's error lines: a fix it refused, for instance)."""
    extra = ["--unsafe-fixes"] if unsafe else []
    out = torchlint(folder, "--select", rules, "--fix", *extra)
    errors = [line.replace(str(folder) + "/", "") for line in out.stderr.splitlines()
              if line.startswith("torchlint: error:")]
    if out.returncode not in (0, 1) and not errors:
        raise SystemExit(f"torchlint failed ({out.returncode}):\n{out.stderr}")
    fixed = re.search(r"\((\d+) fixed", out.stdout)
    again = torchlint(folder, "--select", rules, "--diff", *extra)
    stable = again.returncode in (0, 2) and not again.stdout.strip()  # 2: a refused fix, again
    return (int(fixed.group(1)) if fixed else 0), stable, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="the repository folder (never modified)")
    parser.add_argument("--keep", type=Path, help="copy the migrated folder here at the end")
    parser.add_argument("--run", metavar="COMMAND", help="run this (shell) in each step's result")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for --run")
    args = parser.parse_args()
    repo = args.repo.resolve()
    if not repo.is_dir():
        raise SystemExit(f"{repo}: not a folder")
    if args.keep and args.keep.exists():
        raise SystemExit(f"{args.keep}: exists; not overwritten")
    before_digest = digest(repo)

    with tempfile.TemporaryDirectory(prefix="migrate-") as tmp:
        work = Path(tmp) / repo.name
        shutil.copytree(repo, work, ignore=shutil.ignore_patterns(".git", ".torchlint_cache"))
        files = sources(work)
        lines = sum(text.count(b"\n") for text in files.values())
        print(f"{repo.name}: {len(files)} .py files, {lines} lines")

        counts = {"0 before": findings(work)}
        notes: list[str] = []
        rows = [("0 before", "", "", "", compiles(work), "",
                 run(work, args.run, args.timeout) if args.run else "")]
        for label, rules, unsafe in STEPS:
            previous = sources(work)
            fixed, stable, errors = step(work, rules, unsafe)
            notes += [f"{label}: {error}" for error in errors]
            now = sources(work)
            changed = sorted(name for name in now if now[name] != previous.get(name)) or ["-"]
            counts[label] = findings(work)
            rows.append((label, rules + (" +unsafe" if unsafe else ""), str(fixed),
                         ", ".join(changed) if len(changed) <= 2 else f"{len(changed)} files",
                         compiles(work),
                         "no change" if stable else "CHANGES",
                         run(work, args.run, args.timeout) if args.run else ""))

        print("\nstep           fixed  left  files changed          compiles  2nd pass   run")
        for label, rules, fixed, changed, bad, stable, status in rows:
            left = sum(counts[label].values())
            ok = "yes" if not bad else "NO " + (" ".join(bad) if len(bad) <= 2
                                                else f"{len(bad)} files")
            print(f"{label:<14} {fixed:>5}  {left:>4}  {changed:<22} {ok:<9} {stable:<10} {status}")
        print("\nrules of each step:")
        for label, rules, *_ in rows[1:]:
            print(f"  {label:<14} {rules}")

        codes = sorted(set().union(*counts.values()))
        print("\nfindings per rule (--select ALL) after each step:")
        print("rule   " + " ".join(f"{label.split()[0]:>3}" for label in counts))
        for code in codes:
            print(f"{code:<6} " + " ".join(f"{counts[label][code]:>3}" for label in counts))
        print("total  " + " ".join(f"{sum(c.values()):>3}" for c in counts.values()))

        for note in notes:
            print(f"\n{note}")
        broken = {b.split(":")[0] for b in rows[-1][4]} - {b.split(":")[0] for b in rows[0][4]}
        print(f"\nfiles that compiled before and not after: {', '.join(sorted(broken)) or 'none'}")

        if args.keep:
            shutil.copytree(work, args.keep)
            print(f"\nmigrated copy: {args.keep}")

    if digest(repo) != before_digest:
        raise SystemExit(f"{repo} changed during the measurement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
