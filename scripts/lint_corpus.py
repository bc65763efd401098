"""Lint released packages from PyPI with the real `torchlint` CLI and report what it found.

    python scripts/lint_corpus.py                       # allennlp 0.5.0, pyro-ppl 0.1.2, timm 1.0.11
    python scripts/lint_corpus.py --all                 # every legacy and modern package in design.md
    python scripts/lint_corpus.py --sample 30 --seed 7  # also print 30 random findings to review

For each package: files, lines, wall time, findings per rule, unlintable files (TL000,
with reasons) and whether torchlint exited with an internal error.  The sample shows
each finding with its source line and evidence, for checking by hand.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pypi_corpus import LEGACY, MODERN, REPO, download

DEFAULT = ["allennlp==0.5.0", "pyro-ppl==0.1.2", "timm==1.0.11"]


def lint(folder: Path) -> tuple[list[dict], int, float, str]:
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--output-format", "json", str(folder)],
        capture_output=True, text=True, cwd=REPO,
    )
    elapsed = time.perf_counter() - start
    findings = json.loads(completed.stdout) if completed.stdout.strip() else []
    return findings, completed.returncode, elapsed, completed.stderr


def source_line(finding: dict) -> str:
    try:
        lines = Path(finding["filename"]).read_text(encoding="utf-8", errors="replace").splitlines()
        return lines[finding["location"]["row"] - 1].strip()
    except (OSError, IndexError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*")
    parser.add_argument("--all", action="store_true", help="every package listed in design.md")
    parser.add_argument("--sample", type=int, default=0, help="print this many random findings")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    packages = args.packages or (LEGACY + MODERN if args.all else DEFAULT)

    all_findings: list[tuple[str, dict]] = []
    codes = sorted({"TL000"} | {c for c in _rule_codes()})
    print("| package | files | lines | seconds | exit | " + " | ".join(codes) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(codes))
    problems = []
    for requirement in packages:
        folder = download(requirement)
        files = [p for p in folder.rglob("*.py")]
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        findings, code, elapsed, stderr = lint(folder)
        counts = Counter(f["code"] for f in findings)
        print(f"| {requirement} | {len(files)} | {lines} | {elapsed:.1f} | {code} | "
              + " | ".join(str(counts.get(c, 0)) for c in codes) + " |")
        if code not in (0, 1):
            problems.append(f"{requirement}: exit {code}\n{stderr}")
        for finding in findings:
            if finding["code"] == "TL000":
                problems.append(f"{requirement}: {finding['message']}")
            all_findings.append((requirement, finding))
    for problem in problems:
        print(f"\n- {problem}")

    if args.sample:
        candidates = [item for item in all_findings if item[1]["code"] != "TL000"]
        rng = random.Random(args.seed)
        chosen = rng.sample(candidates, min(args.sample, len(candidates)))
        print(f"\n## {len(chosen)} random findings (seed {args.seed})\n")
        for number, (requirement, finding) in enumerate(chosen, start=1):
            relative = Path(finding["filename"]).relative_to(REPO / "corpus")
            print(f"{number}. {relative}:{finding['location']['row']}:{finding['location']['column']} "
                  f"{finding['code']} {finding['message']}")
            print(f"       {source_line(finding)}")
            for step in finding["evidence"]:
                print(f"       evidence: {step['message']} (line {step['location']['row']})")


def _rule_codes() -> list[str]:
    sys.path.insert(0, str(REPO))
    from torchlint.rules import all_rules

    return list(all_rules())


if __name__ == "__main__":
    main()
