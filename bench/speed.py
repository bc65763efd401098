"""How fast torchlint lints real code, next to TorchFix, ruff and what Python needs just to read and parse.

    python bench/speed.py [--packages timm==1.0.11,transformers==4.46.0] [--rounds 3] [--jobs N]
                          [--work DIR] [--json OUT] [--skip torchfix,...] [--torchfix-on timm | --torchfix-all]

The packages come from PyPI through scripts/pypi_corpus.py (a pinned release, checked by sha256,
its .py files unpacked under corpus/).  TorchFix 0.7.0 and ruff are installed once into a venv of
their own (DIR/tools, DIR defaulting to bench/.work) and reused.

Each round runs every command once, one after another, each as its own process; the table shows
the median over rounds.  Commands, per package:

    read              a Python process that reads every .py file (the floor)
    ast-parse         a Python process that ast.parses every .py file (the floor)
    torchlint-cold    torchlint check --select ALL with a fresh, empty --cache-dir
    torchlint-warm    the same command again, with the cache the cold run just filled
    torchlint-serial  torchlint-cold with --jobs 1
    ruff-cold         ruff check --select ALL --no-cache --isolated
    ruff-warm         the same with a --cache-dir filled by one untimed run just before
    torchfix          torchfix --select=ALL (by default on timm only: --torchfix-on, --torchfix-all)

Wall time is time.perf_counter() around the process.  Peak memory is the largest sum of PSS
(proportional set size: a page shared by a parent and its forked workers counts once) over the
process and all its descendants, sampled from /proc every 20 ms; the kernel's own maximum
(ru_maxrss of the process tree, from wait4) is the largest single process, a cross-check.

--skip takes commands or groups (torchlint, ruff, floor), each optionally for one package only:
`--skip torchfix,transformers:ruff-warm`.  The exit status is 1 when a command fails (a crash, a
traceback, an unexpected exit status), not when a tool reports findings.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import pypi_corpus  # noqa: E402  (scripts/ is not a package)

DEFAULT_PACKAGES = "timm==1.0.11,transformers==4.46.0"
TOOLS_REQUIREMENTS = ["torchfix==0.7.0", "ruff"]
COMMANDS = ["read", "ast-parse", "torchlint-cold", "torchlint-warm", "torchlint-serial",
            "ruff-cold", "ruff-warm", "torchfix"]
GROUPS = {"torchlint": ["torchlint-cold", "torchlint-warm", "torchlint-serial"],
          "ruff": ["ruff-cold", "ruff-warm"], "floor": ["read", "ast-parse"]}
LABELS = {"read": "floor: read", "ast-parse": "floor: ast.parse", "torchlint-cold": "torchlint cold",
          "torchlint-warm": "torchlint warm", "torchlint-serial": "torchlint cold, --jobs 1",
          "ruff-cold": "ruff cold", "ruff-warm": "ruff warm", "torchfix": "torchfix"}
SAMPLE_SECONDS = 0.02
MIB = 1 << 20
ENV = dict(os.environ)  # what every command runs with; main() sets the bytecode cache

FLOOR = r'''
import ast, sys
mode, listing = sys.argv[1], sys.argv[2]
with open(listing, encoding="utf-8") as handle:
    paths = handle.read().splitlines()
for path in paths:
    with open(path, "rb") as handle:
        data = handle.read()
    if mode == "ast-parse":
        try:
            ast.parse(data, filename=path)
        except (SyntaxError, ValueError) as error:
            print(f"{path}: {error}", file=sys.stderr)
'''

VERSIONS = r'''
import json, importlib.metadata as m
print(json.dumps({name: m.version(name) for name in ("torchfix", "ruff", "libcst")}))
'''


# --- running one command -------------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    """Child pids of every thread of ``pid`` (the /proc children file is per thread)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                children.extend(int(child) for child in handle.read().split())
        except OSError:
            pass
    return children


def _field_kib(path: str, key: str) -> int | None:
    """The value of ``key:`` (in KiB) in a /proc file, or None."""
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _rss(pid: int) -> int:
    """The process's proportional set size (PSS: each shared page counted once across the
    processes that share it, so forked workers do not count their parent's pages again),
    or its VmRSS where the kernel has no smaps_rollup; 0 when it is gone."""
    kib = _field_kib(f"/proc/{pid}/smaps_rollup", "Pss:")
    if kib is None:
        kib = _field_kib(f"/proc/{pid}/status", "VmRSS:")
    return (kib or 0) * 1024


def tree_rss(root: int) -> int:
    """The sum of PSS (see _rss) over ``root`` and all its descendants, in bytes."""
    total, pending, seen = 0, [root], set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss(pid)
        pending.extend(_children(pid))
    return total


class PeakSampler(threading.Thread):
    """Samples tree_rss(pid) every SAMPLE_SECONDS until stopped; keeps the largest value."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.samples = pid, 0, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self.samples += 1
            self._stop_event.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


@dataclass
class Run:
    command: str
    round: int
    wall: float
    returncode: int
    peak_rss: int          # bytes: the largest sum of PSS over the process tree
    kernel_maxrss: int     # bytes: ru_maxrss from wait4, the largest single process of the tree
    samples: int
    stdout_lines: int
    stderr_tail: str
    failure: str = ""      # why this run does not count; empty when it does


def measure(command: str, round_: int, argv: list[str], scratch: Path) -> Run:
    stdout_path, stderr_path = scratch / f"{command}.out", scratch / f"{command}.err"
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=REPO, env=ENV)
        sampler = PeakSampler(process.pid)
        sampler.start()
        # wait4 instead of Popen.wait: its rusage is this process tree's own, not every child's so far.
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        sampler.stop()
    process.returncode = os.waitstatus_to_exitcode(status)
    with open(stdout_path, "rb") as handle:
        stdout_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    stderr = stderr_path.read_bytes().decode("utf-8", "replace")
    return Run(command, round_, wall, process.returncode, sampler.peak, usage.ru_maxrss * 1024, sampler.samples,
               stdout_lines, stderr[-3000:], failure=_failure(command, process.returncode, stderr))


def _failure(command: str, returncode: int, stderr: str) -> str:
    if returncode < 0:
        return f"killed by signal {-returncode}"
    if "Traceback (most recent call last)" in stderr:
        return f"traceback (exit status {returncode})"
    # TorchFix exits 1 when libcst failed on a file (its stderr is silenced, so nothing says which).
    allowed = (0, 1) if command == "torchfix" else (0,)
    if returncode not in allowed:
        return f"exit status {returncode}"
    return ""


# --- what is measured ----------------------------------------------------------------------------

@dataclass
class Package:
    requirement: str
    name: str
    version: str
    folder: Path
    files: list[Path]
    lines: dict[Path, int]
    commands: list[str]                        # what runs, in order
    not_run: dict[str, str]                    # command -> why not
    argv: dict[str, list[str]] = field(default_factory=dict)
    file_sets: dict[str, list[Path]] = field(default_factory=dict)  # command -> files it reads
    runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def python_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.py") if path.is_file())


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def torchfix_files(files: list[Path]) -> list[Path]:
    """The files TorchFix parses: it skips every file without the string "torch" on some line."""
    chosen = []
    for path in files:
        with open(path, errors="replace") as handle:
            if any("torch" in line for line in handle):
                chosen.append(path)
    return chosen


def listed_files(argv: list[str]) -> list[Path] | None:
    """The files a tool would lint, from its --show-files; None when that fails."""
    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=ENV)
    if result.returncode != 0:
        return None
    return sorted((REPO / line.strip()).resolve() for line in result.stdout.splitlines() if line.strip())


def torchlint_argv(folder: Path, cache: Path, jobs: int | None) -> list[str]:
    argv = [sys.executable, "-m", "torchlint", "check", "--select", "ALL", "--output-format", "concise",
            "--exit-zero", "-q", "--cache-dir", str(cache)]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    return argv + [str(folder)]


def ruff_argv(tools: Path, folder: Path, cache: Path | None) -> list[str]:
    argv = [str(tools / "bin" / "ruff"), "check", "--select", "ALL", "--isolated", "--output-format", "concise",
            "--exit-zero", "-q"]
    argv += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    return argv + [str(folder)]


def one_round(package: Package, round_: int, args, tools: Path, scratch: Path) -> None:
    scratch = scratch / package.folder.name / f"round{round_}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    folder, listing = package.folder, scratch / "files.txt"
    listing.write_text("".join(f"{path}\n" for path in package.files), encoding="utf-8")
    done: dict[str, Run] = {}

    def timed(command: str, argv: list[str]) -> None:
        if command not in package.commands or command in package.not_run:
            return
        package.argv[command] = argv
        run = measure(command, round_, argv, scratch)
        package.runs.append(run)
        done[command] = run
        state = f"FAILED: {run.failure}" if run.failure else f"{run.peak_rss / MIB:.0f} MiB"
        print(f"  {package.name} round {round_}: {LABELS[command]}: {run.wall:.2f} s, {state}", file=sys.stderr)
        if run.failure:
            package.not_run[command] = f"failed in round {round_}"
            print(_indent(run.stderr_tail[-1500:]), file=sys.stderr)
        elif command == "torchfix":
            _check_torchfix_count(package, run)

    timed("read", [sys.executable, "-c", FLOOR, "read", str(listing)])
    timed("ast-parse", [sys.executable, "-c", FLOOR, "ast-parse", str(listing)])
    cold = scratch / "torchlint-cache"
    cold.mkdir()
    timed("torchlint-cold", torchlint_argv(folder, cold, args.jobs))
    if "torchlint-cold" in done and not done["torchlint-cold"].failure:
        timed("torchlint-warm", torchlint_argv(folder, cold, args.jobs))
    elif "torchlint-warm" in package.commands and "torchlint-warm" not in package.not_run:
        package.not_run["torchlint-warm"] = "needs the cache of a successful torchlint cold run"
    serial = scratch / "torchlint-serial-cache"
    serial.mkdir()
    timed("torchlint-serial", torchlint_argv(folder, serial, 1))
    timed("ruff-cold", ruff_argv(tools, folder, None))
    if "ruff-warm" in package.commands and "ruff-warm" not in package.not_run:
        cache = scratch / "ruff-cache"
        fill = measure("ruff-warm", round_, ruff_argv(tools, folder, cache), scratch)  # untimed: fills the cache
        if fill.failure:
            package.runs.append(fill)
            package.not_run["ruff-warm"] = f"the run filling its cache failed in round {round_}"
            print(f"  ruff warm: filling the cache failed: {fill.failure}\n{_indent(fill.stderr_tail)}",
                  file=sys.stderr)
        else:
            timed("ruff-warm", ruff_argv(tools, folder, cache))
    timed("torchfix", [str(tools / "bin" / "torchfix"), "--select=ALL", str(folder)])
    shutil.rmtree(scratch, ignore_errors=True)


def _check_torchfix_count(package: Package, run: Run) -> None:
    match = re.search(r"Finished checking (\d+) files", run.stderr_tail)
    expected = len(package.file_sets["torchfix"])
    if match and int(match.group(1)) != expected:
        note = f"TorchFix says it checked {match.group(1)} files; {expected} contain the string 'torch'"
        if note not in package.notes:
            package.notes.append(note)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())


# --- setup ---------------------------------------------------------------------------------------

def tools_venv(path: Path) -> dict[str, str]:
    """A venv with TorchFix and ruff, created once; returns the versions installed in it."""
    python = path / "bin" / "python"
    marker = path / ".installed"
    if not marker.exists():
        print(f"installing {' '.join(TOOLS_REQUIREMENTS)} into {path}", file=sys.stderr)
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *TOOLS_REQUIREMENTS], check=True)
        marker.write_text(" ".join(TOOLS_REQUIREMENTS) + "\n")
    result = subprocess.run([str(python), "-c", VERSIONS], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def parse_skips(values: list[str], packages: list[str]) -> dict[str | None, set[str]]:
    """--skip entries -> {package name or None for all: commands}."""
    skips: dict[str | None, set[str]] = {}
    for value in values:
        for entry in filter(None, (part.strip() for part in value.split(","))):
            scope, _, name = entry.rpartition(":")
            scope = pypi_corpus._normalize(scope) if scope else None
            if scope is not None and scope not in packages:
                raise SystemExit(f"--skip {entry}: no package {scope!r} among {', '.join(packages)}")
            if name not in COMMANDS and name not in GROUPS:
                raise SystemExit(f"--skip {entry}: {name!r} is none of {', '.join(COMMANDS + list(GROUPS))}")
            skips.setdefault(scope, set()).update(GROUPS.get(name, [name]))
    return skips


def prepare(requirement: str, args, skips: dict[str | None, set[str]], tools: Path, scratch: Path) -> Package:
    folder = pypi_corpus.download(requirement)
    name, version = requirement.split("==")
    name = pypi_corpus._normalize(name)
    files = [path.resolve() for path in python_files(folder)]
    if not files:
        raise SystemExit(f"{requirement}: no .py files under {folder}")
    package = Package(requirement, name, version, folder.resolve(), files,
                      lines={path: count_lines(path) for path in files}, commands=[], not_run={})
    skipped = skips.get(None, set()) | skips.get(name, set())
    for command in COMMANDS:
        if command in skipped:
            package.not_run[command] = "--skip"
        elif command == "torchfix" and not args.torchfix_all and name not in args.torchfix_on:
            package.not_run[command] = f"TorchFix runs on {', '.join(sorted(args.torchfix_on)) or 'no package'} only " \
                                       "(--torchfix-on, --torchfix-all)"
        else:
            package.commands.append(command)

    # Which files each tool reads, so that files/s and lines/s are per file it really lints.
    everything = package.files
    for command in ("read", "ast-parse"):
        package.file_sets[command] = everything
    for tool, command in (("torchlint", [sys.executable, "-m", "torchlint", "check", "--show-files", str(folder)]),
                          ("ruff", [str(tools / "bin" / "ruff"), "check", "--isolated", "--show-files", str(folder)])):
        listed = listed_files(command)
        if listed is None:
            package.notes.append(f"{tool} --show-files failed; counting every .py file for {tool}")
            listed = everything
        elif listed != everything:
            package.notes.append(f"{tool} lints {len(listed)} files, the floor reads {len(everything)}")
        for name in GROUPS[tool]:
            package.file_sets[name] = listed
    package.file_sets["torchfix"] = torchfix_files(everything)
    for path in set().union(*package.file_sets.values()) - package.lines.keys():
        package.lines[path] = count_lines(path)

    # Untimed: compiles every tool's own .pyc files and puts the package in the page cache, so
    # that round 1 is not the only one paying for either.
    first, warm_up = everything[0], scratch / "warm-up"
    with_torch = (package.file_sets["torchfix"] or everything)[0]  # TorchFix returns early on other files
    for argv in (torchlint_argv(first, warm_up / "torchlint", args.jobs),
                 [str(tools / "bin" / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero", "-q", str(first)],
                 [str(tools / "bin" / "torchfix"), str(with_torch)]):
        subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    shutil.rmtree(warm_up, ignore_errors=True)
    for path in everything:
        path.read_bytes()
    return package


# --- report --------------------------------------------------------------------------------------

def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"cpu_count": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)), "cpu": model,
            "memory_gib": round(memory / (1 << 30), 1), "python": platform.python_version(),
            "platform": platform.platform(), "load_average": os.getloadavg()}


def versions(tools: dict[str, str]) -> dict:
    from importlib import metadata

    def git(*argv: str) -> str:
        result = subprocess.run(["git", "-C", str(REPO), *argv], capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "--", "torchlint"):
        commit += " with uncommitted changes"
    return {"torchlint": metadata.version("torchlint"), "torchlint_commit": commit,
            "torchlint_source_sha256": torchlint_source(),
            "libcst (torchlint)": metadata.version("libcst"), "torchfix": tools["torchfix"], "ruff": tools["ruff"],
            "libcst (torchfix)": tools["libcst"]}


def torchlint_source() -> str:
    """A digest of torchlint's own code: if it changes during a run, the rounds mix versions."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "torchlint").rglob("*.py")):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class Row:
    command: str
    files: int
    lines: int
    rounds: int
    wall: float
    low: float
    high: float
    peak: float
    kernel: float


def summarize(package: Package) -> dict[str, Row]:
    rows = {}
    for command in package.commands:
        runs = [run for run in package.runs if run.command == command and not run.failure]
        if not runs or command in package.not_run:
            continue
        walls = [run.wall for run in runs]
        files = package.file_sets[command]
        rows[command] = Row(command, len(files), sum(package.lines[path] for path in files), len(runs),
                            statistics.median(walls), min(walls), max(walls),
                            statistics.median(run.peak_rss for run in runs) / MIB,
                            statistics.median(run.kernel_maxrss for run in runs) / MIB)
    return rows


def ratios(rows: dict[str, Row]) -> list[str]:
    def wall(command: str) -> float | None:
        return rows[command].wall if command in rows else None

    lines = []
    pairs = [
        ("torchfix", "torchlint-cold", "TorchFix / torchlint cold: torchlint is {r:.1f}x faster than TorchFix"),
        ("torchlint-warm", "ruff-warm", "torchlint warm / ruff warm: {r:.1f}"),
        ("torchlint-cold", "ruff-cold", "torchlint cold / ruff cold: {r:.1f}"),
        ("torchlint-cold", "ast-parse", "torchlint cold / floor (ast.parse): {r:.1f}"),
        ("torchlint-serial", "torchlint-cold", "torchlint --jobs 1 / torchlint cold (parallel speedup): {r:.2f}"),
        ("torchlint-cold", "torchlint-warm", "torchlint cold / torchlint warm (what the cache saves): {r:.1f}"),
    ]
    for top, bottom, text in pairs:
        if wall(top) is not None and wall(bottom):
            lines.append(f"- {text.format(r=wall(top) / wall(bottom))} "
                         f"({wall(top):.2f} s / {wall(bottom):.2f} s)")
    return lines


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def markdown(package: Package, rounds: int) -> str:
    rows = summarize(package)
    total_lines = sum(package.lines[path] for path in package.files)
    out = [f"### {package.name} {package.version}", "",
           f"{len(package.files)} .py files, {total_lines:,} lines; median of {rounds} round{'s' * (rounds != 1)}, "
           f"the commands alternating round by round.", "",
           "| tool | files | lines | wall s (median) | files/s | lines/s | peak MiB | largest process MiB "
           "| wall s (min-max) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for command, row in rows.items():
        out.append(f"| {LABELS[command]} | {row.files:,} | {row.lines:,} | {row.wall:.2f} | "
                   f"{_rate(row.files / row.wall)} | {_rate(row.lines / row.wall)} | {row.peak:,.0f} | "
                   f"{row.kernel:,.0f} | {row.low:.2f}-{row.high:.2f} |")
    out.append("")
    out += ratios(rows)
    printed = {}
    for command in ("torchlint-cold", "torchlint-warm", "torchlint-serial", "ruff-cold", "ruff-warm", "torchfix"):
        counts = {run.stdout_lines for run in package.runs if run.command == command and not run.failure}
        if counts:
            printed[LABELS[command]] = "/".join(f"{count:,}" for count in sorted(counts))
    if printed:
        out.append("- findings printed (lines of output): "
                   + ", ".join(f"{label} {count}" for label, count in printed.items()))
    for command, why in package.not_run.items():
        out.append(f"- not in the table: {LABELS[command]}: {why}")
    for note in package.notes:
        out.append(f"- note: {note}")
    failed = [run for run in package.runs if run.failure]
    for run in failed:
        out += ["", f"**{LABELS[run.command]} failed** in round {run.round}: {run.failure}; "
                    f"`{' '.join(package.argv.get(run.command, []))}`; the end of its standard error:", "",
                "```", run.stderr_tail[-2000:].rstrip(), "```"]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 1)[1])
    parser.add_argument("--packages", default=DEFAULT_PACKAGES, help="comma-separated name==version")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per package; the table shows medians")
    parser.add_argument("--jobs", type=int, default=None, help="torchlint --jobs for the cold and warm runs")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / ".work",
                        help="the tools venv and scratch space (default: bench/.work)")
    parser.add_argument("--json", type=Path, default=None, help="write every run's raw numbers here")
    parser.add_argument("--skip", action="append", default=[], metavar="[PACKAGE:]COMMAND,...",
                        help="commands (or groups: torchlint, ruff, floor) to leave out, everywhere or for one package")
    parser.add_argument("--torchfix-on", default="timm", metavar="NAMES",
                        help="comma-separated packages TorchFix runs on (default: timm; it needs about 15 minutes "
                             "per round on transformers)")
    parser.add_argument("--torchfix-all", action="store_true", help="run TorchFix on every package")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    requirements = [part.strip() for part in args.packages.split(",") if part.strip()]
    if not requirements or any(part.count("==") != 1 for part in requirements):
        parser.error("--packages takes name==version, comma-separated")
    skips = parse_skips(args.skip, [pypi_corpus._normalize(r.split("==")[0]) for r in requirements])
    args.torchfix_on = {pypi_corpus._normalize(part.strip()) for part in args.torchfix_on.split(",") if part.strip()}

    work = args.work.resolve()
    # As on a normal installation, .pyc files are written (here, outside the source trees) and
    # reused; the warm-up run before round 1 fills that cache.  Output is unbuffered: TorchFix prints
    # from its worker processes, which exit without flushing, so buffered findings get lost.
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    ENV["PYTHONUNBUFFERED"] = "1"
    tools = work / "tools"
    tool_versions = tools_venv(tools)
    started = datetime.datetime.now(datetime.timezone.utc)
    info = {"date": started.isoformat(timespec="seconds"), "machine": machine(), "versions": versions(tool_versions),
            "rounds": args.rounds, "jobs": args.jobs}
    scratch = work / "scratch"
    packages = [prepare(requirement, args, skips, tools, scratch) for requirement in requirements]
    source = torchlint_source()
    for package in packages:
        print(f"{package.requirement}: {len(package.files)} files under {package.folder}", file=sys.stderr)
        for round_ in range(1, args.rounds + 1):
            one_round(package, round_, args, tools, scratch)
            if torchlint_source() != source:
                source = torchlint_source()
                package.notes.append(f"torchlint's code (torchlint/) changed during round {round_}: "
                                     "the rounds mix versions, and a warm run may have found its cache stale")
    shutil.rmtree(scratch, ignore_errors=True)
    info["load_average_after"] = os.getloadavg()

    m, v = info["machine"], info["versions"]
    print(f"## Speed, {started:%Y-%m-%d}")
    print()
    print(f"{m['cpu_count']} CPUs ({m['usable_cpus']} usable; {m['cpu'] or 'unknown model'}), {m['memory_gib']} GiB, "
          f"Python {m['python']}, {m['platform']}; load average {m['load_average'][0]:.2f} before, "
          f"{info['load_average_after'][0]:.2f} after.")
    print(f"torchlint {v['torchlint']} ({v['torchlint_commit']}, libcst {v['libcst (torchlint)']}, "
          f"--jobs {args.jobs or 'default'}), TorchFix {v['torchfix']} (libcst {v['libcst (torchfix)']}), "
          f"ruff {v['ruff']}.")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak MiB: the largest sum of PSS (shared pages counted once) over a command's processes, sampled every "
          f"{SAMPLE_SECONDS * 1000:.0f} ms. largest process MiB: the kernel's ru_maxrss for the command, a "
          f"cross-check; it is never below this script's own {own:.0f} MiB, which a child starts as a copy of.")
    for package in packages:
        print()
        print(markdown(package, args.rounds))

    if args.json:
        info["packages"] = [{
            "requirement": p.requirement, "folder": str(p.folder), "files": len(p.files),
            "lines": sum(p.lines[path] for path in p.files),
            "files_per_command": {c: len(files) for c, files in p.file_sets.items()},
            "argv": p.argv, "not_run": p.not_run, "notes": p.notes,
            "summary": {c: asdict(row) for c, row in summarize(p).items()},
            "runs": [asdict(run) for run in p.runs]} for p in packages]
        args.json.write_text(json.dumps(info, indent=2) + "\n")
    sys.exit(1 if any(run.failure for p in packages for run in p.runs) else 0)


if __name__ == "__main__":
    main()
