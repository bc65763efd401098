"""The thread corpus: bugs as people hit them while writing PyTorch (eval/threads/).

Each case is a public issue or forum thread in which a person's code had a bug, turned into a
small runnable program in the shape of their code (`bad.py`, written for this corpus, never
copied) and a fixed twin that applies the thread's fix (`fixed.py`), with `case.toml` saying
where the thread is, what kind of bug it is, how the bad program shows it and which lines of
`bad.py` must change.  See eval/threads/README.md for the format.

    python scripts/thread_corpus.py check            # metadata, reserved threads, duplicates
    python scripts/thread_corpus.py verify [CASE..]  # run both programs under torch: bad shows the bug, fixed does not
    python scripts/thread_corpus.py score [--runtime] [--split dev|held-out|all] [--misses]
    python scripts/thread_corpus.py reserve          # refresh reserved.sha256 from ../shared/reserved

Cases are split in two halves by a hash of their URL: rules are developed on `dev` and the
result is reported on `held-out` as well, so that what is tuned on one half is measured on
code it was not tuned on.  Threads reserved for independent evaluation, and the threads of
reserved repositories, are refused by the hash of their normalized URL or repository
(reserved.sha256); the names themselves are not kept here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the project depends on tomli there
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
THREADS = REPO / "eval" / "threads"
CASES = THREADS / "cases"
KINDS = THREADS / "kinds.toml"
RESERVED_HASHES = THREADS / "reserved.sha256"
RESERVED_SOURCE = REPO.parent / "shared" / "reserved" / "threads.txt"
RESERVED_REPOSITORIES = REPO.parent / "shared" / "reserved" / "repos.txt"
SHOWS = ("raises", "warns", "wrong-value")
FIELDS = {"url", "title", "kind", "shows", "expect", "lines"}
OPTIONAL = {"note", "fixed_ok", "source"}
RUN_TIMEOUT = 120
# On a fixed twin, a finding of the kind's own rules or of the aliasing and graph families says
# the bug is still there: wrong unless the case marks it `fixed_ok`.  Other findings are the
# legacy idioms the twin keeps from the person's code (`.data`, `Variable`, `torch.Tensor(..)`),
# listed for review with --kept.
BUG_FAMILIES = ("TL3", "TL4")


def normalized_url(url: str) -> str:
    """The form two spellings of one thread share: no scheme, query, fragment, trailing
    slash or post number (`/t/title/123/4` is thread 123), lower case."""
    url = url.strip().split("#")[0].split("?")[0].rstrip("/").lower()
    for prefix in ("https://", "http://"):
        if url.startswith(prefix):
            url = url[len(prefix):]
    url = url.removeprefix("www.")
    parts = url.split("/")
    if parts[0].startswith("discuss.") and len(parts) >= 4 and parts[1] == "t":
        # discuss.pytorch.org/t/<slug>/<id>[/<post>]: the id names the thread
        ids = [p for p in parts[2:] if p.isdigit()]
        if ids:
            url = f"{parts[0]}/t/{ids[0]}"
    if parts[0] == "stackoverflow.com" and len(parts) >= 3 and parts[1] in ("questions", "q"):
        url = f"stackoverflow.com/questions/{parts[2]}"
    if parts[0] == "github.com" and len(parts) >= 5 and parts[3] in ("issues", "pull", "discussions"):
        url = "/".join(parts[:5])
    return url


def url_hash(url: str) -> str:
    return hashlib.sha256(normalized_url(url).encode()).hexdigest()


def repository_hash(url: str) -> Optional[str]:
    """The hash of the GitHub repository a thread is in (``github.com/owner/name``), if it is
    one: a thread of a repository reserved for independent evaluation is reserved too."""
    parts = normalized_url(url).split("/")
    if parts[0] != "github.com" or len(parts) < 3:
        return None
    return hashlib.sha256("/".join(parts[:3]).encode()).hexdigest()


def reserved_hashes() -> set[str]:
    if not RESERVED_HASHES.exists():
        return set()
    return {line.strip() for line in RESERVED_HASHES.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def split_of(url: str) -> str:
    return "dev" if int(url_hash(url)[-1], 16) % 2 == 0 else "held-out"


@dataclass
class Case:
    name: str
    folder: Path
    url: str
    title: str
    kind: str
    shows: str
    expect: str
    lines: list[int]
    note: str
    fixed_ok: list[str]

    @property
    def split(self) -> str:
        return split_of(self.url)

    @property
    def bad(self) -> Path:
        return self.folder / "bad.py"

    @property
    def fixed(self) -> Path:
        return self.folder / "fixed.py"


def kinds() -> dict[str, dict]:
    return tomllib.loads(KINDS.read_text(encoding="utf-8"))


def load_cases(names: Optional[list[str]] = None) -> list[Case]:
    """Every case, checked: a malformed one stops the script with its name."""
    known_kinds = kinds()
    reserved = reserved_hashes()
    cases, seen = [], {}
    folders = sorted(p for p in CASES.iterdir() if p.is_dir()) if CASES.is_dir() else []
    for folder in folders:
        if names and folder.name not in names:
            continue
        meta_path = folder / "case.toml"
        if not meta_path.exists():
            raise SystemExit(f"{folder.name}: no case.toml")
        try:
            meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise SystemExit(f"{folder.name}/case.toml: {error}") from None
        missing, unknown = FIELDS - set(meta), set(meta) - FIELDS - OPTIONAL
        if missing or unknown:
            raise SystemExit(f"{folder.name}/case.toml: missing {sorted(missing)}, unknown {sorted(unknown)}")
        if meta["kind"] not in known_kinds:
            raise SystemExit(f"{folder.name}: kind {meta['kind']!r} is not in {KINDS.name}")
        if meta["shows"] not in SHOWS:
            raise SystemExit(f"{folder.name}: shows must be one of {SHOWS}")
        digest = url_hash(meta["url"])
        if digest in reserved or repository_hash(meta["url"]) in reserved:
            raise SystemExit(f"{folder.name}: {meta['url']} is reserved for independent evaluation")
        if digest in seen:
            raise SystemExit(f"{folder.name}: the same thread as {seen[digest]}")
        seen[digest] = folder.name
        for file in ("bad.py", "fixed.py"):
            if not (folder / file).exists():
                raise SystemExit(f"{folder.name}: no {file}")
        bad_lines = (folder / "bad.py").read_text(encoding="utf-8").splitlines()
        lines = meta["lines"]
        if not lines or not all(isinstance(n, int) and 1 <= n <= len(bad_lines) and bad_lines[n - 1].strip()
                                for n in lines):
            raise SystemExit(f"{folder.name}: lines {lines} must be non-empty lines of bad.py")
        cases.append(Case(folder.name, folder, meta["url"], meta["title"], meta["kind"], meta["shows"],
                          meta["expect"], list(lines), meta.get("note", ""), list(meta.get("fixed_ok", []))))
    if names:
        missing_names = set(names) - {case.name for case in cases}
        if missing_names:
            raise SystemExit(f"no such case: {', '.join(sorted(missing_names))}")
    return cases


# -- verify: the programs under real torch ---------------------------------------------------

@dataclass
class RunResult:
    returncode: Optional[int]
    stdout: str
    stderr: str


def run_program(path: Path, python: str) -> RunResult:
    """``path`` run whole in an empty temporary folder, one thread, no GPU."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_NUM_THREADS": "1",
           "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "default",
           "HOME": tempfile.gettempdir()}
    with tempfile.TemporaryDirectory(prefix="torchlint-thread-") as cwd:
        try:
            done = subprocess.run([python, str(path)], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=RUN_TIMEOUT, errors="replace")
        except subprocess.TimeoutExpired:
            return RunResult(None, "", f"timed out after {RUN_TIMEOUT} s")
    return RunResult(done.returncode, done.stdout, done.stderr)


def shows_bug(case: Case, result: RunResult) -> bool:
    if case.shows == "raises":
        return result.returncode not in (0, None) and case.expect in result.stderr
    if case.shows == "warns":
        return case.expect in result.stderr
    return result.returncode == 0 and case.expect in result.stdout


def verify_case(case: Case, python: str) -> list[str]:
    """What is wrong with ``case`` as a reproduction (empty when the bad program shows the
    bug and the fixed one runs clean without it)."""
    problems = []
    bad, fixed = run_program(case.bad, python), run_program(case.fixed, python)
    if not shows_bug(case, bad):
        problems.append(f"bad.py does not show the bug ({case.shows} {case.expect!r}): "
                        f"exit {bad.returncode}\n{_tail(bad)}")
    if fixed.returncode != 0:
        problems.append(f"fixed.py exits {fixed.returncode}\n{_tail(fixed)}")
    elif case.expect in fixed.stdout or case.expect in fixed.stderr:
        problems.append(f"fixed.py still shows {case.expect!r}\n{_tail(fixed)}")
    return problems


def _tail(result: RunResult) -> str:
    text = (result.stdout[-600:] + "\n" + result.stderr[-1200:]).strip()
    return "    " + text.replace("\n", "\n    ")


def verify(cases: list[Case], python: str, jobs: int) -> int:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(lambda case: (case, verify_case(case, python)), cases))
    failed = 0
    for case, problems in outcomes:
        if problems:
            failed += 1
            print(f"FAIL {case.name}")
            for problem in problems:
                print(f"  {problem}")
    print(f"{len(cases) - failed} of {len(cases)} cases verified ({python})")
    return 1 if failed else 0


# -- score: what torchlint finds ------------------------------------------------------------

def torchlint_findings(paths: list[Path], runtime: bool) -> dict[Path, list[dict]]:
    """torchlint's findings per file, every rule, through the real command line."""
    argv = [sys.executable, "-m", "torchlint", "check", "--isolated", "--select", "ALL",
            "--output-format", "json", "--exit-zero"]
    if runtime:
        argv += ["--runtime"]
    found: dict[Path, list[dict]] = defaultdict(list)
    for start in range(0, len(paths), 200):
        done = subprocess.run(argv + [str(p) for p in paths[start:start + 200]],
                              capture_output=True, text=True, cwd=REPO)
        if done.returncode != 0:
            raise SystemExit(f"torchlint failed:\n{done.stderr[-3000:]}")
        for item in json.loads(done.stdout):
            if item["code"] != "TL000":
                found[Path(item["filename"]).resolve()].append(item)
    return found


def score(cases: list[Case], runtime: bool, show_misses: bool, show_kept: bool = False,
          show_unconfirmed: bool = False) -> dict:
    known_kinds = kinds()
    paths = [p for case in cases for p in (case.bad, case.fixed)]
    found = torchlint_findings(paths, runtime)
    per_kind: dict[str, Counter] = defaultdict(Counter)
    misses, wrong_on_fixed, confirmed_fixed, kept_on_fixed, unconfirmed = [], [], [], [], []
    for case in cases:
        fitting = set(known_kinds[case.kind]["codes"])
        row = per_kind[case.kind]
        row["cases"] += 1
        catches = [d for d in found.get(case.bad.resolve(), [])
                   if d["code"] in fitting and d["location"]["row"] in case.lines]
        if catches:
            row["caught"] += 1
            if runtime:
                verdicts = {(d.get("runtime") or {}).get("verdict") for d in catches}
                row["confirmed"] += "CONFIRMED" in verdicts
                if "CONFIRMED" not in verdicts:
                    unconfirmed.append((case, catches))
        else:
            misses.append(case)
        for d in found.get(case.fixed.resolve(), []):
            confirmed = (d.get("runtime") or {}).get("verdict") == "CONFIRMED"
            # A legacy idiom the twin keeps (a deprecation torch warns about) is confirmed
            # rightly; a confirmed finding of the bug's rule or family on a twin is not.
            if confirmed and d["code"] not in case.fixed_ok and (d["code"] in fitting or
                                                                  d["code"].startswith(BUG_FAMILIES)):
                confirmed_fixed.append((case, d))
            if d["code"] in case.fixed_ok:
                continue
            if d["code"] in fitting or d["code"].startswith(BUG_FAMILIES):
                wrong_on_fixed.append((case, d))
            else:
                kept_on_fixed.append((case, d))
    twins_wrong = len({case.name for case, _ in wrong_on_fixed})
    total = Counter()
    for row in per_kind.values():
        total.update(row)
    header = "| kind | cases | caught |" + (" confirmed |" if runtime else "")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for kind in sorted(per_kind, key=lambda k: (-per_kind[k]["cases"], k)):
        row = per_kind[kind]
        extra = f" {row['confirmed']} |" if runtime else ""
        print(f"| {kind} | {row['cases']} | {row['caught']} |{extra}")
    extra = f" {total['confirmed']} |" if runtime else ""
    print(f"| **all** | {total['cases']} | {total['caught']} ({_percent(total['caught'], total['cases'])}) |{extra}")
    print(f"\nfixed twins with a finding not marked fixed_ok: {twins_wrong} of {len(cases)}"
          f" ({_percent(twins_wrong, len(cases))})")
    for case, d in wrong_on_fixed:
        verdict = f" [{d['runtime']['verdict']}]" if d.get("runtime") else ""
        print(f"  {case.name}/fixed.py:{d['location']['row']}: {d['code']} {d['message']}{verdict}")
    if runtime:
        print(f"caught ones CONFIRMED: {total['confirmed']} of {total['caught']}"
              f" ({_percent(total['confirmed'], total['caught'])}); fixed twins with a bug finding CONFIRMED: "
              f"{len(confirmed_fixed)}")
        for case, d in confirmed_fixed:
            print(f"  {case.name}/fixed.py:{d['location']['row']}: {d['code']} {d['message'][:100]}")
    print(f"other findings on fixed twins (legacy idioms they keep; --kept lists them): {len(kept_on_fixed)}")
    if show_kept:
        for case, d in kept_on_fixed:
            print(f"  {case.name}/fixed.py:{d['location']['row']}: {d['code']} {d['message'][:120]}")
    if show_unconfirmed:
        print("\ncaught, not CONFIRMED:")
        for case, catches in unconfirmed:
            for d in catches:
                run = d.get("runtime") or {}
                print(f"  {case.name} line {d['location']['row']} {d['code']}: {run.get('verdict')}: "
                      f"{(run.get('evidence') or '')[:200]}")
    if show_misses:
        print("\nmissed:")
        for case in misses:
            print(f"  {case.name} [{case.kind}] lines {case.lines}: {case.title}")
    return {"cases": total["cases"], "caught": total["caught"], "fixed_wrong": twins_wrong,
            "confirmed": total["confirmed"], "fixed_confirmed": len(confirmed_fixed),
            "per_kind": {kind: dict(row) for kind, row in per_kind.items()}}


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def reserve() -> int:
    if not RESERVED_SOURCE.exists():
        raise SystemExit(f"{RESERVED_SOURCE} not found")
    urls = [line.strip() for line in RESERVED_SOURCE.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    repositories = [line.strip() for line in RESERVED_REPOSITORIES.read_text().splitlines()
                    if line.strip() and not line.startswith("#")] if RESERVED_REPOSITORIES.exists() else []
    digests = {url_hash(u) for u in urls} | {repository_hash(f"https://github.com/{r}") for r in repositories}
    RESERVED_HASHES.write_text(
        "# sha256 of the normalized URLs of the threads, and of the GitHub repositories, reserved for\n"
        "# independent evaluation (scripts/thread_corpus.py reserve); a case from one of them is refused\n"
        + "".join(f"{digest}\n" for digest in sorted(digests)))
    print(f"{len(urls)} reserved threads, {len(repositories)} repositories -> {RESERVED_HASHES.relative_to(REPO)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="check every case's metadata")
    ver = commands.add_parser("verify", help="run bad.py and fixed.py of each case under torch")
    ver.add_argument("cases", nargs="*")
    ver.add_argument("--python", default=sys.executable, help="the interpreter with torch (default: this one)")
    ver.add_argument("--jobs", type=int, default=2)
    sc = commands.add_parser("score", help="what torchlint catches, per kind")
    sc.add_argument("cases", nargs="*")
    sc.add_argument("--runtime", action="store_true", help="also run torchlint --runtime and count verdicts")
    sc.add_argument("--split", choices=("dev", "held-out", "all"), default="all")
    sc.add_argument("--misses", action="store_true", help="list the cases not caught")
    sc.add_argument("--unconfirmed", action="store_true",
                    help="with --runtime, list the caught cases no finding of which was CONFIRMED, with the verdicts")
    sc.add_argument("--kept", action="store_true", help="list the legacy-idiom findings on fixed twins")
    sc.add_argument("--json", type=Path, help="write the totals here")
    commands.add_parser("reserve", help="refresh reserved.sha256 from ../shared/reserved/threads.txt")
    args = parser.parse_args()
    if args.command == "reserve":
        return reserve()
    cases = load_cases(getattr(args, "cases", None) or None)
    if args.command == "check":
        by_kind = Counter(case.kind for case in cases)
        splits = Counter(case.split for case in cases)
        print(f"{len(cases)} cases, {len(by_kind)} kinds ({splits['dev']} dev, {splits['held-out']} held-out)")
        for kind, count in by_kind.most_common():
            print(f"  {kind}: {count}")
        return 0
    if args.command == "verify":
        return verify(cases, args.python, args.jobs)
    if args.split != "all":
        cases = [case for case in cases if case.split == args.split]
    totals = score(cases, args.runtime, args.misses, args.kept, args.unconfirmed)
    if args.json:
        args.json.write_text(json.dumps(totals, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
