#!/usr/bin/env python3
"""Hostile repositories against torchlint's doors: what a cloned repository can make it read,
print, write or run outside itself.

`scripts/fuzz.py` damages file *contents*; this sibling builds whole hostile worlds and
checks the promises of docs/reliability.md's threat model, door by door. Each world is a
temporary folder holding

    outside/   what must stay out of reach: a secret file and folder (with a random canary
               string), another project with a finding, and the folder where the trap
               modules below leave a marker if anything imports them
    repo/      the repository being linted, run from its own folder as CI runs it, with the
               installed `torchlint` command (never `python -m`, which puts the folder on
               sys.path): `torchlint.py`, `click.py`, `tokenize.py`, `torchlint/__main__.py`
               and `sitecustomize.py` traps beside the code

and every run of a world is judged on:

  crash           an exit status other than 0, 1 and 2, a traceback, "internal error", a
                  machine format that does not parse, exit 2 without a reason
  hang            the run outlives --timeout
  leak            the canary (a secret's content) on stdout or stderr, or in a file the run
                  left inside the repository (the cache); a secret's path in the output
  escape          anything outside the repository created, changed or removed; a trap
                  module ran
  injection       a raw control character (C0 but tab and newline, DEL, C1) in terminal
                  output or on stderr; a line that starts a CI workflow command (`::`,
                  `##vso[`, `##[`) other than the github/azure formats' own, well-formed ones
  disagreement    the files linted differ from what `git` says a .gitignore leaves (the
                  patterns door), or a cache made the findings differ from a run without it

The doors:

  links      symbolic links to the secrets (files named .py/.pyi/.ipynb, folders, chains
             of links, relative and absolute, at any depth), to the other project, a
             linked cache folder; linted by folder and by name, in several formats, with
             --fix/--unsafe-fixes, --diff, the cache, and (full campaign) --runtime with a
             file that reads through the links and raises what it read
  names      file and folder names carrying terminal escapes, CR/LF, forged workflow
             commands; source whose string literals carry the same (shown in evidence)
  patterns   random .gitignore lines (git's odd ones included: `!`, `\\`, `[z-a]`) checked
             against `git ls-files --others --exclude-standard`, catastrophic-backtracking
             patterns, random `exclude`/`per-file-ignores` in pyproject.toml
  cache      cache entries flipped, truncated, swapped, replaced by links to the secret,
             the cache folder and its CACHEDIR.TAG linked outside, and entries forged by an
             attacker who knows the algorithm but not the user's key
  lsp        hostile documents sent to `torchlint server` (over the size limit, deep,
             escape-laden, star imports of a slow package); every later small document must
             still get its diagnostics in time, and the server must exit when its client
             goes away

    python scripts/fuzz_doors.py --quick          # the CI configuration (tests/test_fuzz.py)
    python scripts/fuzz_doors.py                  # the full campaign
    python scripts/fuzz_doors.py --doors links,names --worlds 200 --seed 3

A failure's world (the repo/ and outside/ folders and the command) is saved under --keep.
Only the standard library is used (plus the torchlint it tests); the same --seed gives the
same worlds. The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz import Run, Runner, judge  # noqa: E402  (the sibling campaign's runner and crash judge)

REPO = Path(__file__).resolve().parent.parent
FINDING = "import torch\nx = torch.zeros(3)\ny = x.data\n"  # one TL101
TRAPS = ("torchlint.py", "click.py", "tokenize.py", "sitecustomize.py", "torchlint/__main__.py",
         "torchlint/__init__.py", "pathspec.py", "libcst.py")
TERMINAL_FORMATS = ("full", "concise", "grouped", "pylint")
STRUCTURED_FORMATS = ("json", "json-lines", "sarif", "gitlab", "rdjson", "junit")
ALL_FORMATS = TERMINAL_FORMATS + STRUCTURED_FORMATS + ("github", "azure")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_WORKFLOW = re.compile(r"^\s*(::|##vso\[|##\[)")
_GITHUB_LINE = re.compile(r"^::(error|warning|notice)( [^:\r\n]*)?::[^\r\n]*$")
_AZURE_LINE = re.compile(r"^##vso\[task\.logissue [^\]\r\n]*\][^\r\n]*$")


# ======================================================================================
# A world

@dataclass
class World:
    root: Path
    canary: str
    rng: random.Random
    commands: list[str] = field(default_factory=list)
    # Secrets the repository itself holds (a token in its .git/config): never printed, but
    # they may stay where they are.
    inside_secrets: list[str] = field(default_factory=list)

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def markers(self) -> Path:
        return self.outside / "markers"

    def write(self, relative: str, text: str | bytes) -> Path:
        path = self.repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
        return path

    def link(self, relative: str, target: str) -> None:
        path = self.repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):
            return
        os.symlink(target, path)


def make_world(parent: Path, rng: random.Random) -> World:
    root = Path(tempfile.mkdtemp(prefix="world-", dir=parent))
    world = World(root, f"CANARY-{uuid.UUID(int=rng.getrandbits(128)).hex}", rng)
    outside, repo = world.outside, world.repo
    (outside / "secret_dir" / ".ssh").mkdir(parents=True)
    (outside / "other_project").mkdir()
    world.markers.mkdir()
    repo.mkdir()
    (outside / "secret.txt").write_text(f"password: {world.canary} !\n")
    (outside / ".git-credentials").write_text(f"https://user:{world.canary}@example.invalid\n")
    (outside / "secret_dir" / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{world.canary}\n")
    (outside / "secret_dir" / "model.py").write_text(f"# {world.canary}\n" + FINDING)
    (outside / "secret_dir" / "notes.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": [
        f"# {world.canary}\n", FINDING], "metadata": {}, "outputs": [], "execution_count": None}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (outside / "other_project" / "model.py").write_text(f"# {world.canary}\n" + FINDING)
    for trap in TRAPS:
        marker = world.markers / trap.replace("/", "_")
        world.write(trap, f"open({str(marker)!r}, 'w').write('imported')\n")
    world.write("good.py", FINDING)
    return world


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (links not followed) with its kind, mode and content digest."""
    found: dict[str, str] = {}
    for base, folders, files in os.walk(folder, followlinks=False):
        for name in folders + files:
            path = os.path.join(base, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, folder)
            if stat.S_ISLNK(info.st_mode):
                found[relative] = "link:" + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    found[relative] = f"file:{oct(info.st_mode)}:{hashlib.sha256(handle.read()).hexdigest()}"
            else:
                found[relative] = f"other:{oct(info.st_mode)}"
    return found


def regular_files_holding(folder: Path, needle: bytes) -> list[str]:
    """Regular files under ``folder`` (links never followed) whose bytes hold ``needle``."""
    holding = []
    for base, _, files in os.walk(folder, followlinks=False):
        for name in files:
            path = os.path.join(base, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                with open(path, "rb") as handle:
                    if needle in handle.read(64 << 20):
                        holding.append(os.path.relpath(path, folder))
            except OSError:
                continue
    return holding


# ======================================================================================
# Running and judging

@dataclass
class Finding:
    door: str
    kind: str
    detail: str
    world: Optional[Path] = None
    command: str = ""


class DoorRunner(Runner):
    """fuzz.Runner, run from the repository itself with the installed console script."""

    def __init__(self, args, work: Path):
        super().__init__(args, work)
        script = Path(sys.executable).with_name("torchlint")
        if not script.exists():
            sys.exit(f"fuzz_doors: no `torchlint` command beside {sys.executable}: run this script with the Python "
                     "of the environment torchlint is installed in")
        self.command = [str(script)]

    def in_world(self, world: World, *args: str, timeout: Optional[float] = None, env: Optional[dict] = None,
                 cwd: Optional[Path] = None) -> Run:
        saved_env, saved_cwd = self.env, self.neutral
        self.env = {**self.env, "HOME": str(world.root / "home"), **(env or {})}
        self.env.pop("TORCHLINT_CACHE_DIR", None)
        (world.root / "home").mkdir(exist_ok=True)
        self.neutral = cwd or world.repo
        try:
            world.commands.append(" ".join(["torchlint", *args]))
            return self.run([*self.command, *args], timeout or self.timeout)
        finally:
            self.env, self.neutral = saved_env, saved_cwd


def judge_world(world: World, run: Run, output_format: str, before: dict[str, str], door: str,
                expect_finding: bool) -> list[Finding]:
    """Everything a hostile repository must not get out of one run; ``expect_finding``: the run
    lints good.py without fixing it, so its TL101 must be reported (the run really linted)."""
    command = world.commands[-1] if world.commands else ""
    found: list[Finding] = []

    def fail(kind: str, detail: str) -> None:
        found.append(Finding(door, kind, detail, world.root, command))

    if run.timed_out:
        fail("hang", f"no result within {run.seconds:.0f} s")
        return found
    if run.returncode not in (0, 1, 2):
        fail("crash", f"exit {run.returncode}: {run.stderr[-2000:]}")
    if "Traceback (most recent call last)" in run.stderr or "internal error" in run.stdout + run.stderr:
        fail("crash", f"traceback or internal error: {run.stderr[-3000:]}")
    if run.returncode == 2 and not run.stderr.strip():
        fail("crash", "exit 2 without a reason on stderr")
    if expect_finding and run.returncode != 1:
        fail("lost neighbour", f"exit {run.returncode}, but good.py has a finding: {run.stderr[-1500:]!r}")
    elif expect_finding and "good.py" not in run.stdout:
        fail("lost neighbour", f"good.py's finding is missing from the {output_format} output: {run.stdout[:600]!r}")
    both = run.stdout + "\n" + run.stderr
    for secret in (world.canary, *world.inside_secrets):
        if secret in both:
            fail("leak", "a secret was printed: " + _around(both, secret))
    for secret_path in (str(world.outside / "secret_dir"), str(world.outside / "secret.txt"),
                        str(world.outside / ".git-credentials")):
        if secret_path in both:
            fail("leak", "a secret's path was printed: " + _around(both, secret_path))
    holding = regular_files_holding(world.repo, world.canary.encode())
    if holding:
        fail("leak", f"the canary was written inside the repository: {holding}")
    after = snapshot(world.outside)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))
        fail("escape", f"outside the repository changed: {changed[:10]}")
    for line in both.splitlines():
        if _CONTROL.search(line):
            fail("injection", f"a raw control character in {output_format} output or on stderr: {line[:300]!r}")
            break
    found.extend(Finding(door, kind, detail, world.root, command)
                 for kind, detail in workflow_problems(run, output_format))
    if output_format in STRUCTURED_FORMATS and run.returncode in (0, 1):
        problem = structured_problem(run.stdout, output_format)
        if problem:
            fail("crash", f"{output_format} output does not parse: {problem}; stdout {run.stdout[:300]!r}; stderr {run.stderr[-1500:]!r}")
    return found


def workflow_problems(run: Run, output_format: str) -> list[tuple[str, str]]:
    problems = []
    for stream, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        for line in text.splitlines():
            if not _WORKFLOW.match(line):
                continue
            own = stream == "stdout" and (output_format == "github" and _GITHUB_LINE.match(line)
                                          or output_format == "azure" and _AZURE_LINE.match(line))
            if not own or line.count("##vso[") > 1 or "##[" in line:
                problems.append(("injection", f"a workflow command on {stream} ({output_format}): {line[:300]!r}"))
                break
    return problems


def structured_problem(text: str, output_format: str) -> Optional[str]:
    try:
        if output_format == "junit":
            ElementTree.fromstring(text.encode("utf-8"))
        elif output_format == "json-lines":
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)
        else:
            json.loads(text)
    except (ValueError, ElementTree.ParseError) as error:
        return str(error)[:300]
    return None


def _around(text: str, needle: str) -> str:
    at = text.index(needle)
    return repr(text[max(0, at - 120): at + len(needle) + 60])


def reported(run: Run) -> Optional[dict[str, list[str]]]:
    """{filename: sorted codes} of a JSON run, or None when it did not parse."""
    try:
        items = json.loads(run.stdout)
    except ValueError:
        return None
    found: dict[str, list[str]] = {}
    for item in items:
        found.setdefault(item.get("filename", "?"), []).append(item.get("code", "?"))
    return {name: sorted(codes) for name, codes in found.items()}


# ======================================================================================
# The doors

class Door:
    name = ""

    def __init__(self, campaign: "Campaign"):
        self.campaign = campaign
        self.runner = campaign.runner

    def world(self) -> World:
        return make_world(self.campaign.work, random.Random(self.campaign.rng.getrandbits(64)))

    def run_and_judge(self, world: World, *args: str, output_format: str = "json",
                      timeout: Optional[float] = None, env: Optional[dict] = None,
                      cwd: Optional[Path] = None, expect_finding: bool = False) -> tuple[Run, list[Finding]]:
        before = snapshot(world.outside)
        run = self.runner.in_world(world, "check", "--output-format", output_format, *args, timeout=timeout,
                                   env=env, cwd=cwd)
        self.campaign.runs += 1
        return run, judge_world(world, run, output_format, before, self.name, expect_finding)

    def one(self, world: World) -> list[Finding]:  # pragma: no cover - each door has its own
        raise NotImplementedError


class Links(Door):
    """Symbolic links out of the repository: nothing behind them is read, written or shown."""

    name = "links"
    KINDS = ("file", "file-abs", "folder", "folder-abs", "chain", "deep", "ipynb", "pyi", "other-project",
             "parent-folder", "cache", "inside")

    def one(self, world: World) -> list[Finding]:
        rng = world.rng
        outside = world.outside
        rel_up = os.path.relpath(outside, world.repo)
        kinds = rng.sample(self.KINDS, rng.randint(1, 4))
        named: list[str] = []
        for number, kind in enumerate(kinds):
            name = f"l{number}"
            if kind == "file":
                world.link(f"{name}.py", f"{rel_up}/secret.txt")
                named.append(f"{name}.py")
            elif kind == "file-abs":
                world.link(f"{name}.py", str(outside / ".git-credentials"))
                named.append(f"{name}.py")
            elif kind == "folder":
                world.link(name, f"{rel_up}/secret_dir")
                named.append(f"{name}/model.py")
            elif kind == "folder-abs":
                world.link(name, str(outside / "secret_dir"))
            elif kind == "chain":
                world.link(f"{name}_hop.txt", f"{rel_up}/secret.txt")
                world.link(f"{name}.py", f"{name}_hop.txt")
                named.append(f"{name}.py")
            elif kind == "deep":
                world.link(f"pkg/sub/{name}.py", f"../../{rel_up}/secret_dir/model.py")
                world.write("pkg/__init__.py", "")
                world.write("pkg/sub/__init__.py", "")
            elif kind == "ipynb":
                world.link(f"{name}.ipynb", f"{rel_up}/secret_dir/notes.ipynb")
                named.append(f"{name}.ipynb")
            elif kind == "pyi":
                world.link(f"{name}.pyi", f"{rel_up}/secret_dir/.ssh/id_rsa")
            elif kind == "other-project":
                world.link(f"{name}_innocent.py", f"{rel_up}/other_project/model.py")
                named.append(f"{name}_innocent.py")
            elif kind == "parent-folder":
                world.link(f"{name}_up", "..")
            elif kind == "cache":
                (outside / "cache_target").mkdir(exist_ok=True)
                world.link(".torchlint_cache", f"{rel_up}/cache_target")
            elif kind == "inside":
                world.write(f"real/{name}.py", FINDING)
                world.link(f"{name}_alias.py", f"real/{name}.py")
        mode = rng.choice(["folder", "folder", "named", "fix", "diff", "cache", "format"])
        if mode == "folder":
            return self.run_and_judge(world, "--no-cache", ".", output_format=rng.choice(["full", "json"]),
                                      expect_finding=True)[1]
        if mode == "named":
            targets = named + ["good.py"]
            return self.run_and_judge(world, "--no-cache", *targets, output_format=rng.choice(["full", "json"]),
                                      expect_finding=True)[1]
        if mode == "fix":
            return self.run_and_judge(world, "--fix", "--unsafe-fixes", "--no-cache", *(["."] + named[:2]))[1]
        if mode == "diff":
            return self.run_and_judge(world, "--diff", "--unsafe-fixes", "--no-cache", ".", output_format="full",
                                      expect_finding=True)[1]
        if mode == "cache":
            first = self.run_and_judge(world, ".", expect_finding=True)[1]
            return first + self.run_and_judge(world, ".", output_format="full", expect_finding=True)[1]
        return self.run_and_judge(world, "--no-cache", ".", output_format=rng.choice(ALL_FORMATS),
                                  expect_finding=True)[1]


class RuntimeLinks(Door):
    """--runtime with a file that reads through the links and raises what it read."""

    name = "runtime-links"

    def one(self, world: World) -> list[Finding]:
        rel_up = os.path.relpath(world.outside, world.repo)
        world.link("secret_link.txt", f"{rel_up}/secret.txt")
        world.link("home_link", f"{rel_up}/secret_dir")
        world.write("reader.py", (
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = x * 2\n"
            "x.data *= 10\n"
            "found = []\n"
            "for candidate in ['secret_link.txt', 'home_link/.ssh/id_rsa', 'home_link/model.py', "
            f"{str(world.outside / 'secret.txt')!r}, '../outside/secret.txt', '/proc/1/cmdline', "
            "'.git/config']:\n"
            "    try:\n"
            "        found.append(open(candidate).read())\n"
            "    except OSError as error:\n"
            "        pass\n"
            "raise RuntimeError('read: ' + repr(found))\n"))
        token = f"TOKEN-{world.rng.getrandbits(64):016x}"
        world.inside_secrets.append(token)
        world.write(".git/config", f"[http]\n\textraheader = AUTHORIZATION: basic {token}\n")
        return self.run_and_judge(world, "--runtime", "--no-cache", "reader.py", output_format="full",
                                  timeout=max(self.campaign.args.timeout, 120))[1]


class Names(Door):
    """File and folder names, and source text, that try to drive a terminal or a CI log."""

    name = "names"
    PIECES = ("\x1b[60A", "\x1b[J", "\x1b]0;pwned\x07", "\r", "\n", "\n::error file=forged.py,line=1::forged",
              "::add-mask::secret", "\n##vso[task.complete result=Succeeded;]done", "##[error]x", "\x9b31m",
              "\x07", "%0A", "%25", "\t", "\x7f", "ok", "é", " ", ";", "]", ",", ":")

    def hostile(self, rng: random.Random) -> str:
        return "".join(rng.choice(self.PIECES) for _ in range(rng.randint(1, 4)))

    def one(self, world: World) -> list[Finding]:
        rng = world.rng
        for number in range(rng.randint(1, 3)):
            name = f"{self.hostile(rng)}{number}.py"
            folder = self.hostile(rng) + f"d{number}" if rng.random() < 0.4 else ""
            source = FINDING
            if rng.random() < 0.5:
                source = ("import torch\n"
                          f"x = torch.tensor([1.0], requires_grad=bool({self.hostile(rng).replace(chr(10), '')!r}))\n"
                          "y = x.data\n")
            world.write(f"{folder}/{name}" if folder else name, source)
        output_format = rng.choice(ALL_FORMATS)
        extra = ["--statistics"] if output_format in ("full", "concise") and rng.random() < 0.3 else []
        return self.run_and_judge(world, "--no-cache", *extra, ".", output_format=output_format,
                                  expect_finding=not extra)[1]


class Patterns(Door):
    """.gitignore lines and configured patterns: git's answer, in polynomial time, never an internal error."""

    name = "patterns"
    NAMES = ("a", "b", "ab", "aa", "x", "a.b", "[a]", "!a", "#a", "a b", " a", "a\\b", "*")
    PIECES = ("*", "**", "?", "[a-b]", "[!a]", "[z-a]", "[", "]", "\\", "!", "/", "a", "b", ".py", " ", "#",
              "\\ ", "\\!", "\\#", "[[:alpha:]]", "**/", "/**")

    def pattern(self, rng: random.Random) -> str:
        if rng.random() < 0.05:
            return "a*" * rng.randint(8, 20) + "b"
        return "".join(rng.choice(self.PIECES) for _ in range(rng.randint(1, 5)))

    @staticmethod
    def git_is_an_oracle(lines: list[str]) -> bool:
        """Whether the git here answers these lines as git 2.52 does: before 2.41 its wildmatch
        backtracks on `a*a*...b` (minutes), and before 2.52 `foo**/bar` matched `foobar`."""
        return not any("a*a*a*a*" in line or re.search(r"[^/]\*\*", line) for line in lines)

    def one(self, world: World) -> list[Finding]:
        rng = world.rng
        for trap in TRAPS:  # this door compares file sets: the traps stay out of the way
            (world.repo / trap).unlink(missing_ok=True)
        shutil.rmtree(world.repo / "torchlint", ignore_errors=True)
        (world.repo / "good.py").unlink()
        files = set()
        for _ in range(rng.randint(3, 12)):
            parts = [rng.choice(self.NAMES) for _ in range(rng.randint(0, 2))]
            relative = "/".join(parts + [rng.choice(self.NAMES) + ".py"])
            try:
                world.write(relative, FINDING)
                files.add(relative)
            except OSError:
                continue
        if rng.random() < 0.2:
            world.write("a" * 60 + ".py", FINDING)
        folders = {""} | {str(Path(f).parent) for f in files if "/" in f}
        every_line: list[str] = []
        for folder in rng.sample(sorted(folders), min(len(folders), rng.randint(1, 3))):
            lines = [self.pattern(rng) for _ in range(rng.randint(1, 6))]
            every_line += lines
            (world.repo / folder / ".gitignore").write_text("\n".join(lines) + "\n")
        configured = rng.random() < 0.4
        if configured:
            patterns = [self.pattern(rng) for _ in range(rng.randint(1, 3))]
            table = "exclude" if rng.random() < 0.5 else "per-file-ignores"
            value = (json.dumps(patterns) if table == "exclude"
                     else "{" + ", ".join(f"{json.dumps(p)} = [\"TL101\"]" for p in patterns) + "}")
            (world.repo / "pyproject.toml").write_text(f"[tool.torchlint]\n{table} = {value}\n")
        subprocess.run(["git", "init", "-q", str(world.repo)], check=True, capture_output=True)
        run, found = self.run_and_judge(world, "--no-cache", ".", timeout=self.campaign.args.pattern_timeout)
        if run.timed_out or found:
            return found
        if run.seconds > self.campaign.args.pattern_timeout / 2:
            found.append(Finding(self.name, "hang", f"{run.seconds:.1f} s for {len(files)} files", world.root,
                                 world.commands[-1]))
        if configured or not self.git_is_an_oracle(every_line):
            return found  # torchlint's own exclude semantics: no oracle but "no crash, no hang"
        linted = {os.path.relpath(name, world.repo) for name in (reported(run) or {})}
        listed = subprocess.run(["git", "-c", "core.quotepath=off", "ls-files", "-z", "--others",
                                 "--exclude-standard"], cwd=world.repo, capture_output=True, timeout=60)
        expected = {name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
                    if name.endswith(".py")}
        if linted != expected:
            found.append(Finding(self.name, "disagreement",
                                 f"linted {sorted(linted ^ expected)} differently from git "
                                 f"(torchlint only: {sorted(linted - expected)}, git only: {sorted(expected - linted)})",
                                 world.root, world.commands[-1]))
        return found


class Cache(Door):
    """A cache the repository ships or links: never trusted, never a way out."""

    name = "cache"
    MUTATIONS = ("flip", "truncate", "swap", "link-secret", "link-folder", "tag-link", "forge", "fifo")

    def one(self, world: World) -> list[Finding]:
        rng = world.rng
        world.write("bad1.py", FINDING)
        world.write("bad2.py", "import torch\nw = torch.ones(2, requires_grad=True)\nw.data.add_(1)\n")
        clean, found = self.run_and_judge(world, "--no-cache", ".", expect_finding=True)
        expected = reported(clean)
        found += self.run_and_judge(world, ".", expect_finding=True)[1]  # fills .torchlint_cache
        mutation = rng.choice(self.MUTATIONS)
        cache = world.repo / ".torchlint_cache"
        entries = sorted(p for p in cache.rglob("*") if p.is_file() and p.parent != cache)
        rel_up = os.path.relpath(world.outside, world.repo)
        if mutation in ("flip", "truncate", "swap", "link-secret", "fifo") and entries:
            entry = rng.choice(entries)
            data = entry.read_bytes()
            if mutation == "flip" and data:
                at = rng.randrange(len(data))
                entry.write_bytes(data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:])
            elif mutation == "truncate":
                entry.write_bytes(data[: rng.randrange(len(data) + 1)])
            elif mutation == "swap" and len(entries) > 1:
                other = rng.choice([e for e in entries if e != entry])
                other_data = other.read_bytes()
                other.write_bytes(data)
                entry.write_bytes(other_data)
            elif mutation == "link-secret":
                entry.unlink()
                os.symlink(str(world.outside / "secret.txt"), entry)
            elif mutation == "fifo":
                entry.unlink()
                os.mkfifo(entry)
        elif mutation == "link-folder":
            shutil.rmtree(cache)
            (world.outside / "cache_target").mkdir(exist_ok=True)
            os.symlink(f"{rel_up}/cache_target", cache)
        elif mutation == "tag-link":
            for marker in ("CACHEDIR.TAG", ".gitignore"):
                (cache / marker).unlink(missing_ok=True)
                os.symlink(f"../{rel_up}/secret.txt", cache / marker)
            for entry in entries:
                entry.unlink()
        elif mutation == "forge":
            problem = self.forge(world)
            if problem:
                self.campaign.note(f"cache forge skipped: {problem}")
        run, more = self.run_and_judge(world, ".", expect_finding=True)
        found += more
        if not more and reported(run) != expected:
            found.append(Finding(self.name, "disagreement",
                                 f"after `{mutation}` the cache gave {reported(run)}, without it {expected}",
                                 world.root, world.commands[-1]))
        return found

    def forge(self, world: World) -> Optional[str]:
        """Rewrite every entry as an attacker would who knows torchlint's algorithm but has
        another user's key: the reports emptied, the digests recomputed with the attacker's key."""
        code = (
            "import json, sys\nfrom pathlib import Path\nfrom torchlint.engine import cache\n"
            "for entry in Path(sys.argv[1]).rglob('*'):\n"
            "    if not entry.is_file() or entry.parent == Path(sys.argv[1]):\n"
            "        continue\n"
            "    check, _, payload = entry.read_bytes().partition(b'\\n')\n"
            "    data = json.loads(payload)\n"
            "    data['report']['diagnostics'] = []\n"
            "    payload = json.dumps(data, separators=(',', ':')).encode()\n"
            "    entry.write_bytes(cache._check(entry.name, payload).encode() + b'\\n' + payload)\n")
        attacker = world.root / "attacker_home"
        attacker.mkdir(exist_ok=True)
        env = {**os.environ, "HOME": str(attacker), "XDG_CACHE_HOME": str(attacker / ".cache")}
        done = subprocess.run([sys.executable, "-I", "-c", code, str(world.repo / ".torchlint_cache")], env=env,
                              capture_output=True, text=True, timeout=60, cwd=world.root)
        return None if done.returncode == 0 else done.stderr.strip().splitlines()[-1:]


class Lsp(Door):
    """Documents sent to the language server: it answers the next one in time and exits with its client."""

    name = "lsp"

    def documents(self, world: World) -> list[tuple[str, str]]:
        rng = world.rng
        world.write("slowpkg/__init__.py", "".join(
            f"try:\n    from .m{i} import *\nexcept ImportError:\n    from .n{i} import *\n" for i in range(6)))
        for i in range(6):
            world.write(f"slowpkg/m{i}.py", f"from . import *\nfrom torch.autograd import Variable\nv{i} = 1\n")
            world.write(f"slowpkg/n{i}.py", f"from .m{i} import *\n")
        candidates = [
            ("huge.py", "x = 1\n" * ((11 << 20) // 6)),
            ("deep.py", "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"),
            ("escapes.py", "import torch\nx = torch.tensor([1.0], requires_grad=bool('\x1b]0;t\x07'))\ny = x.data\n"),
            ("stars.py", "from slowpkg import *\nx = Variable(1)\n"),
            ("longline.py", "import torch\nx = torch.zeros(3)\ny = [" + "x.data, " * 50_000 + "]\n"),
            ("surrogate.py", "import torch\nx = torch.zeros(3)  # \ud83d\ude00\ny = x.data\n"),
        ]
        return rng.sample(candidates, len(candidates) if self.campaign.args.quick else rng.randint(2, len(candidates)))

    def one(self, world: World) -> list[Finding]:
        found: list[Finding] = []
        command = "torchlint server (documents: see the world's repo/)"
        world.commands.append(command)
        client = _LspClient(self.runner.command + ["server"], world.repo, {**self.runner.env, "HOME": str(world.root)})
        limit = self.campaign.args.lsp_seconds
        try:
            client.request("initialize", {"processId": os.getpid(), "rootUri": world.repo.as_uri(),
                                          "capabilities": {}}, limit)
            client.notify("initialized", {})
            for name, text in self.documents(world):
                started = time.monotonic()
                client.open(f"{world.repo.as_uri()}/{name}", text)
                answered = client.diagnostics_of(f"{world.repo.as_uri()}/{name}", limit)
                small = f"{world.repo.as_uri()}/after_{name}"
                client.open(small, FINDING)
                after = client.diagnostics_of(small, limit)
                if after is None:
                    found.append(Finding(self.name, "hang", f"no diagnostics for a small document within {limit:.0f} s "
                                         f"after {name} (answered {name}: {answered is not None})", world.root, command))
                    break
                codes = [d.get("code") for d in after]
                if "TL101" not in codes:
                    found.append(Finding(self.name, "crash", f"the small document after {name} got {codes}",
                                         world.root, command))
                self.campaign.note(f"lsp {name}: {time.monotonic() - started:.1f} s")
            client.close_stdin()
            if not client.exited_within(limit):
                found.append(Finding(self.name, "hang", f"the server still runs {limit:.0f} s after its client's "
                                     "input closed", world.root, command))
        except (OSError, queue.Empty, ValueError) as error:
            found.append(Finding(self.name, "crash", f"{type(error).__name__}: {error}; stderr: {client.stderr_tail()}",
                                 world.root, command))
        finally:
            client.kill()
        return found


class _LspClient:
    """JSON-RPC with Content-Length framing, enough to open documents and read diagnostics."""

    def __init__(self, argv: list[str], cwd: Path, env: dict):
        self.process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=True)
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        self.stderr_chunks: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.decode("ascii", "replace").strip()
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers.get("content-length", 0)))
            self.messages.put(json.loads(body.decode("utf-8")))

    def _drain(self) -> None:
        for chunk in iter(lambda: self.process.stderr.read(4096), b""):
            self.stderr_chunks = (self.stderr_chunks + [chunk])[-16:]

    def stderr_tail(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")[-2000:]

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict, seconds: float) -> object:
        self.next_id += 1
        number = self.next_id
        self.send({"id": number, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == number and "method" not in m, seconds)

    def wait(self, matches: Callable[[dict], bool], seconds: float) -> Optional[dict]:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            if matches(message):
                return message

    def open(self, uri: str, text: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": text}})

    def diagnostics_of(self, uri: str, seconds: float) -> Optional[list]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri, seconds)
        return None if message is None else message["params"]["diagnostics"]

    def close_stdin(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def exited_within(self, seconds: float) -> bool:
        try:
            self.process.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()


DOORS: dict[str, type[Door]] = {door.name: door for door in (Links, RuntimeLinks, Names, Patterns, Cache, Lsp)}


# ======================================================================================
# The campaign

class Campaign:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = Path(tempfile.mkdtemp(prefix="torchlint-doors-"))
        self.keep = Path(args.keep) if args.keep else self.work.with_name(self.work.name + "-keep")
        self.runner = DoorRunner(args, self.work)
        self.runs = 0
        self.worlds: dict[str, int] = {}
        self.findings: list[Finding] = []
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)
        if self.args.verbose:
            print(f"  {text}", flush=True)

    def run(self) -> int:
        started = time.monotonic()
        for name in self.args.doors:
            door = DOORS[name](self)
            count = self.args.worlds_per_door.get(name, self.args.worlds)
            for number in range(count):
                if time.monotonic() - started > self.args.seconds:
                    self.note(f"stopped by --seconds at {name} world {number}")
                    break
                world = door.world()
                try:
                    found = door.one(world)
                except OSError as error:  # a world this machine cannot build (a name the filesystem refuses)
                    self.note(f"{name}: world {number} not built: {error}")
                    found = []
                self.worlds[name] = self.worlds.get(name, 0) + 1
                for finding in found:
                    self.record(finding)
                if not found:
                    _remove(world.root)
            print(f"{name}: {self.worlds.get(name, 0)} worlds, "
                  f"{sum(1 for f in self.findings if f.door == name)} failures", flush=True)
        return self.report(time.monotonic() - started)

    def record(self, finding: Finding) -> None:
        self.findings.append(finding)
        number = len(self.findings)
        print(f"FAIL {finding.door} {finding.kind}: {finding.detail[:400]}", flush=True)
        if finding.world is None or number > self.args.keep_failures:
            return
        saved = self.keep / f"{number:04d}-{finding.door}-{finding.kind}"
        saved.mkdir(parents=True, exist_ok=True)
        shutil.copytree(finding.world, saved / "world", symlinks=True, dirs_exist_ok=True,
                        ignore_dangling_symlinks=True)
        (saved / "info.txt").write_text(f"door: {finding.door}\nkind: {finding.kind}\ncommand (from world/repo): "
                                        f"{finding.command}\n\n{finding.detail}\n", errors="replace")

    def report(self, seconds: float) -> int:
        kinds = ("crash", "hang", "leak", "escape", "injection", "disagreement")
        summary = {"worlds": self.worlds, "runs": self.runs, "seconds": round(seconds, 1),
                   "failures": {kind: sum(1 for f in self.findings if f.kind == kind) for kind in kinds},
                   "by_door": {name: sum(1 for f in self.findings if f.door == name) for name in self.worlds},
                   "notes": self.notes[-50:], "seed": self.args.seed}
        print(json.dumps(summary, indent=2))
        if self.findings:
            print(f"reproducers: {self.keep}")
        if self.args.summary_json:
            Path(self.args.summary_json).write_text(json.dumps(summary, indent=2))
        return 1 if self.findings else 0


def _remove(folder: Path) -> None:
    for base, folders, _ in os.walk(folder):  # a read-only folder a --fix test made must not stop the cleanup
        for name in folders:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    shutil.rmtree(folder, ignore_errors=True)


def parse_args(argv: Optional[list[str]] = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the CI configuration: a few worlds per door (about 2 min)")
    parser.add_argument("--doors", type=lambda text: text.split(","), default=list(DOORS),
                        help=f"which doors (default all: {','.join(DOORS)})")
    parser.add_argument("--worlds", type=int, help="worlds per door (default 150; --quick 8)")
    parser.add_argument("--seconds", type=float, help="start no world after this (default 5400; --quick 240)")
    parser.add_argument("--timeout", type=float, default=60.0, help="wall-clock limit of one torchlint run (default 60)")
    parser.add_argument("--pattern-timeout", type=float, default=20.0,
                        help="the limit of a patterns run; half of it is already a hang (default 20)")
    parser.add_argument("--lsp-seconds", type=float, default=15.0,
                        help="how long the server may take to answer a document or to exit (default 15)")
    parser.add_argument("--max-output-mb", type=int, default=64)
    parser.add_argument("--memory-mb", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", help="where failing worlds are saved (default: a new temp dir)")
    parser.add_argument("--keep-failures", type=int, default=30)
    parser.add_argument("--summary-json")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    unknown = [d for d in args.doors if d not in DOORS]
    if unknown:
        parser.error(f"unknown doors: {unknown} (known: {list(DOORS)})")
    if args.worlds is None:
        args.worlds = 8 if args.quick else 150
    if args.seconds is None:
        args.seconds = 240.0 if args.quick else 5400.0
    # The runtime door costs a sandboxed torch run per world; the language server one session per world.
    args.worlds_per_door = {"runtime-links": 1 if args.quick else max(1, args.worlds // 10),
                            "lsp": 1 if args.quick else max(1, args.worlds // 15)}
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    campaign = Campaign(args)
    try:
        return campaign.run()
    finally:
        _remove(campaign.work)


if __name__ == "__main__":
    sys.exit(main())
