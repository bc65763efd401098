"""Does a finding hold when the code around it is written another way?

    python scripts/metamorphic.py [--rewrites main,rename,split,library] [--jobs N] [CASE ...]

Takes the bad programs of the thread corpus's `dev` split that torchlint catches (on a line
that must change, by a code of the case's kind) and rewrites each in ways that keep what it
does and where the bug is, then asks again:

    main    the script's statements go into `def main():`, called at the end
    rename  every name the program binds (variables, parameters; not functions, classes,
            attributes or keywords of other libraries' calls) becomes `v0_`, `v1_`, ...
    split   the module classes (and the functions written before them) go to models.py,
            which the program imports: `from models import Net`, as most projects do
    library every class and function the script defines goes to utils.py, which the
            program imports: its own statements stay (a training script over a package)

A rewrite counts when the rewritten program still shows the bug under torch (it is run, as
`thread_corpus.py verify` runs cases); the finding holds when a code of the kind is reported
on the line the labelled line became. A rule that loses findings under `rename` reads names;
under `split`, an analysis stops at the file's edge. Rewritten programs are written under
--work (default: a temporary folder) for reading. Only `dev` cases are rewritten: held-out
ones stay unseen.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import io
import json
import subprocess
import sys
import tempfile
import tokenize
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import thread_corpus  # noqa: E402

# A rewrite: the new files (name -> text, the program is bad.py) and where each line of the
# old bad.py went (file name, line), or None where it cannot be done.
Rewritten = Optional[tuple[dict[str, str], Callable[[int], tuple[str, int]]]]

_HEADER = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def into_main(text: str) -> Rewritten:
    """The script's statements (from the first one that is not an import, a definition, a
    docstring, a constant or `manual_seed`) go into `def main():`, called at the end."""
    start = None
    for statement in ast.parse(text).body:
        if isinstance(statement, _HEADER) or _constant(statement) or _seeds(statement):
            continue
        start = statement.lineno
        break
    if start is None:
        return None
    lines = text.splitlines()
    body = [("    " + line) if line.strip() else line for line in lines[start - 1:]]
    new = lines[:start - 1] + ["def main():"] + body + ["", "", "main()"]
    return {"bad.py": "\n".join(new) + "\n"}, lambda line: ("bad.py", line + 1 if line >= start else line)


def renamed(text: str) -> Rewritten:
    """Every name the program binds becomes `v<n>_`, except functions and classes, names also
    used as attributes (`self.model = model`), imports, builtins, and keywords given to
    callables that are not the program's own."""
    tree = ast.parse(text)
    bound: set[str] = set()
    kept = set(dir(builtins)) | {"self", "cls"}
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            kept.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            kept.add(node.name)
        elif isinstance(node, ast.Attribute):
            kept.add(node.attr)
        elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in own):
            kept.update(keyword.arg for keyword in node.keywords if keyword.arg)
    names = {name: f"v{index}_" for index, name in enumerate(sorted(bound - kept))}
    tokens, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string in names and not (previous and previous.string == "."):
            token = token._replace(string=names[token.string])
        tokens.append(token)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    return {"bad.py": tokenize.untokenize(tokens)}, lambda line: ("bad.py", line)


def split_models(text: str) -> Rewritten:
    """The module classes (a base written `nn.Module`, `nn.Sequential`, ...) and the functions
    written before the first of them go to models.py, with the imports and the constants
    they may read; bad.py imports them by name."""
    tree = ast.parse(text)
    moved = [statement for statement in tree.body if isinstance(statement, ast.ClassDef) and any(
        "Module" in ast.unparse(base) or "nn." in ast.unparse(base) for base in statement.bases)]
    if not moved:
        return None
    helpers = [statement for statement in tree.body
               if isinstance(statement, ast.FunctionDef) and statement.lineno < moved[0].lineno]
    return _moved_to(text, tree, moved + helpers, "models")


def into_library(text: str) -> Rewritten:
    """Every class and function the script defines goes to utils.py, with the imports and the
    constants they may read; bad.py keeps its statements and imports the definitions by name."""
    tree = ast.parse(text)
    moved = [statement for statement in tree.body if isinstance(statement, (ast.ClassDef, ast.FunctionDef))]
    if not moved:
        return None
    return _moved_to(text, tree, moved, "utils")


def _moved_to(text: str, tree: ast.Module, statements: list[ast.stmt], module: str) -> Rewritten:
    """``statements`` of ``tree`` go to ``module``.py (after the imports of the script and its
    constants written before the last of them); the script imports them by name."""
    lines = text.splitlines()
    taken_statements = sorted(statements, key=lambda statement: statement.lineno)
    imports = [statement for statement in tree.body if isinstance(statement, (ast.Import, ast.ImportFrom))]
    where: dict[int, tuple[str, int]] = {}
    written: list[str] = []
    for statement in imports:
        first, last = _span(statement)
        written += lines[first - 1:last]
    written.append("")
    for statement in tree.body:
        if _constant(statement) and statement.lineno < taken_statements[-1].lineno:
            first, last = _span(statement)
            written += lines[first - 1:last]
    written += ["", ""]
    for statement in taken_statements:
        first, last = _span(statement)
        for line in range(first, last + 1):
            where[line] = (f"{module}.py", len(written) + 1 + line - first)
        written += lines[first - 1:last] + ["", ""]
    taken = {line for statement in taken_statements for line in range(_span(statement)[0], _span(statement)[1] + 1)}
    last_import = max((_span(statement)[1] for statement in imports), default=0)
    program: list[str] = []
    for number, line in enumerate(lines, 1):
        if number in taken:
            continue
        program.append(line)
        where[number] = ("bad.py", len(program))
        if number == last_import:
            program.append(f"from {module} import " + ", ".join(statement.name for statement in taken_statements))
    if not last_import:
        return None
    return {"bad.py": "\n".join(program) + "\n", f"{module}.py": "\n".join(written) + "\n"}, where.__getitem__


REWRITES: dict[str, Callable[[str], Rewritten]] = {
    "main": into_main, "rename": renamed, "split": split_models, "library": into_library,
}


def _span(statement: ast.stmt) -> tuple[int, int]:
    first = min([statement.lineno] + [decorator.lineno for decorator in getattr(statement, "decorator_list", [])])
    return first, statement.end_lineno or statement.lineno


def _constant(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.Expr, ast.Assign)) and isinstance(statement.value, ast.Constant)


def _seeds(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
        "manual_seed" in ast.unparse(statement.value.func)


def findings(path: Path) -> list[tuple[str, int, str]]:
    """(file name, line, code) of torchlint's findings on a file or folder."""
    done = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--select", "ALL",
                           "--output-format", "json", "--exit-zero", str(path)],
                          capture_output=True, text=True, cwd=thread_corpus.REPO)
    if done.returncode != 0:
        raise SystemExit(f"torchlint failed on {path}:\n{done.stderr[-2000:]}")
    return [(Path(item["filename"]).name, item["location"]["row"], item["code"]) for item in json.loads(done.stdout)]


def judge(case: thread_corpus.Case, rewrite: str, work: Path, python: str) -> str:
    """"kept", "LOST", "n/a" (the rewrite does not apply) or "no-bug" (the rewritten program
    no longer shows the bug)."""
    done = REWRITES[rewrite](case.bad.read_text(encoding="utf-8"))
    if done is None:
        return "n/a"
    files, where = done
    folder = work / rewrite / case.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    if not thread_corpus.shows_bug(case, thread_corpus.run_program(folder / "bad.py", python)):
        return "no-bug"
    codes = set(thread_corpus.kinds()[case.kind]["codes"])
    targets = {where(line) for line in case.lines}
    return "kept" if any(code in codes and (name, line) in targets for name, line, code in findings(folder)) \
        else "LOST"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", help="case folder names (default: every dev case)")
    parser.add_argument("--rewrites", default=",".join(REWRITES))
    parser.add_argument("--work", type=Path, default=None, help="where the rewritten programs are written")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--python", default=sys.executable, help="the Python (with torch) that runs the programs")
    args = parser.parse_intermixed_args()
    rewrites = [name for name in args.rewrites.split(",") if name]
    unknown = [name for name in rewrites if name not in REWRITES]
    if unknown:
        parser.error(f"unknown rewrite {unknown[0]!r}: choose from {', '.join(REWRITES)}")
    cases = [case for case in thread_corpus.load_cases(args.cases or None) if case.split == "dev"]
    if args.cases and len(cases) != len(args.cases):
        parser.error("only dev cases are rewritten (held-out cases stay unseen)")
    kinds = thread_corpus.kinds()
    caught = {case.bad.resolve() for case in cases}
    found = thread_corpus.torchlint_findings(sorted(caught), runtime=False)
    cases = [case for case in cases if any(
        item["code"] in kinds[case.kind]["codes"] and item["location"]["row"] in case.lines
        for item in found.get(case.bad.resolve(), []))]
    work = args.work or Path(tempfile.mkdtemp(prefix="torchlint-metamorphic-"))
    jobs = [(case, rewrite) for case in cases for rewrite in rewrites]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        verdicts = list(pool.map(lambda job: judge(job[0], job[1], work, args.python), jobs))
    tally = Counter()
    for (case, rewrite), verdict in zip(jobs, verdicts):
        tally[rewrite, verdict] += 1
        if verdict == "LOST":
            print(f"LOST {rewrite}: {case.name}")
    print(f"\n{len(cases)} caught dev cases, rewritten in {work}")
    print("| rewrite | kept | lost | bug gone | n/a |\n|---|---|---|---|---|")
    for rewrite in rewrites:
        print(f"| {rewrite} | {tally[rewrite, 'kept']} | {tally[rewrite, 'LOST']} | {tally[rewrite, 'no-bug']} | "
              f"{tally[rewrite, 'n/a']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
