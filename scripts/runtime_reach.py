#!/usr/bin/env python3
"""How far the runtime check reaches on real repositories (issue 19): run
``torchlint check --runtime .`` in each whole repository of corpus/runtime/ (rebuilt by
``python scripts/script_corpus.py --whole``: the tree a fresh clone has, less its data
files), with no ``--entry``, and count the verdicts.

    python scripts/runtime_reach.py                       # the 15 repositories of docs/runtime.md
    python scripts/runtime_reach.py --all                 # every repository of corpus/runtime/
    python scripts/runtime_reach.py owner+name ...        # some of them
    python scripts/runtime_reach.py --source /tmp/old     # another torchlint (a `git archive` of it)
    python scripts/runtime_reach.py --keep DIR            # keep each repository's JSON output
    python scripts/runtime_reach.py --list REPO           # every behaviour finding left COULD NOT RUN

Behaviour findings are those whose bug a run can show: TL102, TL103, TL203, TL204's
uninitialized-memory forms, TL3xx, TL401, TL403 and TL404 (the issue's target: at most 25 %
of them COULD NOT RUN).  Run it with torch and numpy and no other ML package installed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus" / "runtime"

# The 15 training-script repositories docs/runtime.md has measured since the issue was filed.
FIFTEEN = """1Konny+Beta-VAE abhiskk+fast-neural-style caogang+wgan-gp ethanfetaya+NRI gpleiss+temperature_scaling
kuc2477+pytorch-ewc martinarjovsky+WassersteinGAN vinhkhuc+PyTorch-Mini-Tutorials yunjey+stargan
znxlwm+pytorch-generative-model-collections ikostrikov+pytorch-ddpg-naf keon+seq2seq
kevinzakka+recurrent-visual-attention pclucas14+pytorch-glow moskomule+senet.pytorch""".split()

BEHAVIOUR = {"TL102", "TL103", "TL203", "TL401", "TL403", "TL404"}


def behaviour(finding: dict) -> bool:
    code = finding["code"]
    # TL204 findings get a verdict only in their uninitialized-memory (size) forms.
    return code in BEHAVIOUR or code.startswith("TL3") or (code == "TL204" and finding.get("runtime") is not None)


def reason(evidence: str) -> str:
    """The kind of obstacle a COULD NOT RUN names, for the table."""
    if "cannot parse the file" in evidence:
        return "Python 3 cannot parse the file"
    if "No module named" in evidence or "relative import" in evidence:
        return "an import failed"
    if "with synthesized arguments" in evidence:
        return "the synthesized call did not fit the function"
    if "never executed" in evidence and "the run stopped" in evidence:
        return "the run stopped before the line"
    if "never executed" in evidence:
        return "the line never ran"
    if "timed out" in evidence or "time limit" in evidence:
        return "time"
    return "other"


def run(repo: Path, source: Path, output: Path) -> float:
    start = time.monotonic()
    environment = dict(os.environ, PYTHONPATH=str(source))
    # Reach is measured without the default time budget of a run (600 s), as it was before
    # there was one: the process's own timeout bounds it.
    cli = source / "torchlint" / "integrations" / "cli.py"
    budget = ["--runtime-budget", "1700"] if "--runtime-budget" in cli.read_text() else []
    with open(output, "w") as out:
        subprocess.run([sys.executable, "-m", "torchlint", "check", "--runtime", "--no-cache", *budget,
                        "--output-format", "json", "."], cwd=repo, env=environment, stdout=out,
                       stderr=subprocess.DEVNULL, timeout=1800)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="*", help="owner+name folders of corpus/runtime/ (default: the 15)")
    parser.add_argument("--all", action="store_true", help="every repository of corpus/runtime/")
    parser.add_argument("--source", type=Path, default=REPO, help="the torchlint to run (a folder holding torchlint/)")
    parser.add_argument("--keep", type=Path, help="keep each repository's JSON output in this folder")
    parser.add_argument("--list", action="store_true", help="print each behaviour finding left COULD NOT RUN")
    args = parser.parse_args()
    names = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if args.all else (args.repos or FIFTEEN)
    missing = [name for name in names if not (CORPUS / name / ".complete").exists()]
    if missing:
        raise SystemExit(f"not in corpus/runtime/ (run scripts/script_corpus.py --whole): {', '.join(missing)}")
    keep = args.keep or Path(tempfile.mkdtemp(prefix="runtime-reach-"))
    keep.mkdir(parents=True, exist_ok=True)
    verdicts = collections.Counter()
    behaviour_verdicts = collections.Counter()
    reasons = collections.Counter()
    by_repo = collections.Counter()
    seconds = 0.0
    took: dict[str, float] = {}
    for name in names:
        output = keep / f"{name}.json"
        took[name] = run(CORPUS / name, args.source.resolve(), output)
        seconds += took[name]
        try:
            findings = json.loads(output.read_text() or "[]")
        except json.JSONDecodeError:
            print(f"{name}: no JSON output", file=sys.stderr)
            continue
        for finding in findings:
            runtime = finding.get("runtime")
            verdicts[runtime["verdict"] if runtime else "style, not run"] += 1
            if runtime is None or not behaviour(finding):
                continue
            behaviour_verdicts[runtime["verdict"]] += 1
            if runtime["verdict"] == "COULD NOT RUN":
                reasons[reason(runtime["evidence"])] += 1
                by_repo[name] += 1
                if args.list:
                    where = os.path.relpath(finding["filename"], CORPUS)
                    print(f"{where}:{finding['location']['row']} {finding['code']} {runtime['evidence'][:300]}")
    total = sum(verdicts.values())
    reached = sum(n for verdict, n in verdicts.items() if verdict in ("CONFIRMED", "LATENT", "NOT REPRODUCED"))
    share = behaviour_verdicts["COULD NOT RUN"] / max(sum(behaviour_verdicts.values()), 1)
    print(f"{len(names)} repositories, {total} findings, {seconds:.0f} s "
          f"({seconds / max(total, 1):.2f} s per finding, {seconds / max(reached, 1):.2f} s per finding reached)")
    for verdict in ("CONFIRMED", "LATENT", "NOT REPRODUCED", "COULD NOT RUN", "style, not run"):
        print(f"  {verdict:16} {verdicts[verdict]}")
    print(f"behaviour findings: {sum(behaviour_verdicts.values())}, COULD NOT RUN {behaviour_verdicts['COULD NOT RUN']} "
          f"({share:.0%}); {dict(behaviour_verdicts)}")
    for why, n in reasons.most_common():
        print(f"  {n:4}  {why}")
    print("by repository:", ", ".join(f"{name} {n}" for name, n in by_repo.most_common()))
    print("slowest:", ", ".join(f"{name} {took[name]:.0f} s" for name in sorted(took, key=took.get, reverse=True)[:5]))
    print(f"JSON output in {keep}")


if __name__ == "__main__":
    main()
