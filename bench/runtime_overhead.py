"""What the runtime check costs: the monitor's overhead, and the fork server's saving.

    python bench/runtime_overhead.py [--repeats 5] [--findings 8] [--fresh-repeats 3]

(a) Monitor overhead.  A small training loop (a 2-layer MLP, 200 SGD steps on random data,
    written the pre-0.4 way so that torchlint flags two lines of it) is run in a fresh
    process either plainly (``exec`` of the script) or under the monitor
    (``torchlint.runtime.monitor.run_job`` with the sites of the script's findings, exactly
    what a sandboxed job does, minus the sandbox).  Only the run is timed, after ``import
    torch`` and a warm-up (``monitor.warm_up()`` too, as the fork server calls it before it
    forks); one thread in both (as in the sandbox).  Plain and monitored
    runs alternate; the medians are compared.

(b) Cost per finding.  The same N jobs (one per finding of the seed fixtures, each job
    running its file under the monitor) go through ``Sandbox()`` (a fork server that
    imported torch once, a fork per job) and ``Sandbox(fresh=True)`` (a new interpreter per
    job, importing torch each time), one job at a time.  Seconds per finding exclude the
    sandbox's own start, which is reported beside them.  The two kinds alternate.

Prints a Markdown table (copied into docs/runtime.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TRAINING = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
inputs = torch.randn(64, 32)
labels = torch.randint(0, 10, (64,))
lr = 0.05
total = 0.0
for step in range(STEPS):
    loss = F.cross_entropy(model(inputs), labels)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad.data, alpha=-lr)
    total += loss.item()
print(total / STEPS)
'''

CHILD = '''
import json, sys, time
import torch
torch.set_num_threads(1)
mode, path, sites = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
warm = torch.nn.Linear(8, 8)
warm(torch.randn(4, 8)).sum().backward()
source = open(path).read()
if mode == "monitor":
    # As the fork server does before it forks: the first use of a dispatch mode imports
    # torch._dynamo (seconds), a cost paid once per sandbox, not per job.
    from torchlint.runtime import monitor
    monitor.warm_up()
start = time.perf_counter()
if mode == "plain":
    exec(compile(source, path, "exec"), {"__name__": "__main__", "__file__": path})
else:
    from torchlint.runtime.monitor import run_job
    result = run_job({"path": path, "sites": sites, "sys_path": []})
    assert all(v["verdict"] != "COULD NOT RUN" for v in result["verdicts"]), result["verdicts"]
elapsed = time.perf_counter() - start
print("ELAPSED", elapsed)
'''


def training_sites(path: str, text: str) -> list[dict]:
    from torchlint.engine.linter import lint_text
    from torchlint.runtime.plan import FilePlan

    report = lint_text(text, path)
    plan = FilePlan(path, text)
    return [plan.site(d) for d in report.diagnostics]


def time_child(mode: str, path: str, sites: list[dict]) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", CHILD, mode, path, json.dumps(sites)], capture_output=True,
                            text=True, env=env, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{result.stderr}")
    return float(result.stdout.rsplit("ELAPSED", 1)[1])


def monitor_overhead(steps: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.realpath(os.path.join(folder, "train_loop.py"))
        text = TRAINING.replace("STEPS", str(steps))
        Path(path).write_text(text)
        sites = training_sites(path, text)
        times: dict[str, list[float]] = {"plain": [], "monitor": []}
        for _ in range(repeats):
            for mode in ("plain", "monitor"):
                times[mode].append(time_child(mode, path, sites))
    plain, monitored = statistics.median(times["plain"]), statistics.median(times["monitor"])
    return {"steps": steps, "sites": [f"{s['line']}:{s['col']} {s['code']}" for s in sites], "plain": plain,
            "monitor": monitored, "ratio": monitored / plain, "all": times}


def seed_jobs(count: int) -> list[tuple[str, dict]]:
    from torchlint.rules import all_rules
    from torchlint.engine.files import lint_path
    from torchlint.runtime.plan import FilePlan

    rules = [rule for rule in all_rules().values() if rule.default_enabled]
    jobs = []
    for path in sorted((REPO / "fixtures").glob("*/bad_seed_*.py")):
        real = os.path.realpath(path)
        report = lint_path(real, str(path), rules)
        plan = FilePlan(real, report.source.text)
        for diagnostic in report.diagnostics:
            jobs.append(("torchlint.runtime.monitor:run_job",
                         {"path": real, "sites": [plan.site(diagnostic)], "sys_path": [os.path.dirname(real)]}))
    # Spread the chosen jobs over the files.
    step = max(1, len(jobs) // count)
    return jobs[::step][:count]


def sandbox_cost(fresh: bool, jobs: list[tuple[str, dict]]) -> tuple[float, float]:
    from torchlint.runtime.sandbox import Limits, Sandbox

    start = time.perf_counter()
    with Sandbox(Limits(timeout=60), jobs=1, preload=("torch", "torchlint.runtime.monitor"), fresh=fresh,
                 sys_path=[str(REPO)]) as sandbox:
        started = time.perf_counter()
        results = list(sandbox.map(jobs))
        finished = time.perf_counter()
    bad = [r for r in results if r.status != "ok"]
    if bad:
        raise SystemExit(f"a job failed: {bad[0].status} {bad[0].detail}\n{bad[0].stderr}")
    return started - start, (finished - started) / len(jobs)


def per_finding(count: int, repeats: int, fresh_repeats: int) -> dict:
    jobs = seed_jobs(count)
    runs: dict[str, list[tuple[float, float]]] = {"fork": [], "fresh": []}
    for index in range(max(repeats, fresh_repeats)):
        if index < repeats:
            runs["fork"].append(sandbox_cost(False, jobs))
        if index < fresh_repeats:
            runs["fresh"].append(sandbox_cost(True, jobs))
    out = {"findings": len(jobs)}
    for kind, values in runs.items():
        out[kind] = {"start": statistics.median(v[0] for v in values),
                     "per_finding": statistics.median(v[1] for v in values), "runs": len(values)}
    out["ratio"] = out["fresh"]["per_finding"] / out["fork"]["per_finding"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--findings", type=int, default=8)
    parser.add_argument("--fresh-repeats", type=int, default=3)
    args = parser.parse_args()

    import torch

    overhead = monitor_overhead(args.steps, args.repeats)
    cost = per_finding(args.findings, args.repeats, args.fresh_repeats)
    print(f"torch {torch.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{platform.machine()}; one thread per run")
    print()
    print(f"(a) monitor overhead: {overhead['steps']} training steps, sites {', '.join(overhead['sites'])}, "
          f"median of {args.repeats} alternating runs")
    print()
    print("| run | seconds | ratio |")
    print("|---|---|---|")
    print(f"| plain | {overhead['plain']:.3f} | 1.00 |")
    print(f"| under the monitor | {overhead['monitor']:.3f} | {overhead['ratio']:.2f} |")
    print()
    print(f"(b) cost per finding: {cost['findings']} jobs (one per seed finding), one at a time, "
          f"median of {cost['fork']['runs']} fork-server and {cost['fresh']['runs']} fresh runs")
    print()
    print("| sandbox | start (s) | seconds per finding | ratio |")
    print("|---|---|---|---|")
    print(f"| fork server, `Sandbox()` | {cost['fork']['start']:.2f} | {cost['fork']['per_finding']:.3f} | 1.0 |")
    print(f"| fresh process, `Sandbox(fresh=True)` | {cost['fresh']['start']:.2f} | "
          f"{cost['fresh']['per_finding']:.3f} | {cost['ratio']:.1f} |")
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps({"overhead": overhead, "cost": cost}, indent=2))


if __name__ == "__main__":
    main()
