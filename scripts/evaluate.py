"""Precision and recall of torchlint on labelled code: legacy libraries from PyPI, and
training scripts, tutorials and paper code from GitHub (the script corpus).

The labelled set lives in eval/labels/<package>-<version>.csv (PyPI) and
eval/labels/<owner>+<name>.csv (a script repository of eval/script_corpus/, rebuilt by
scripts/script_corpus.py): one row per site,
`file,line,column,code,label,note`, where label is `true` (a real instance of the rule)
or `false` (a near miss: it looks like one but is not).  Recall needs every real
instance, not only what torchlint reports, so candidate sites are generated
syntactically, independently of torchlint's inference:

    python scripts/evaluate.py candidates            # write eval/candidates/*.csv to label
    python scripts/evaluate.py candidates owner/name # one script repository
    python scripts/evaluate.py score                 # precision/recall per rule (downloads packages)
    python scripts/evaluate.py score --corpus scripts  # on the script corpus only
    python scripts/evaluate.py score --corpus threads --runtime  # bugs as people hit them, per kind
    python scripts/evaluate.py score --unlabelled    # also list findings missing from the labels
    python scripts/evaluate.py sample                # draw findings on modern code to label

Candidates: every `.data` attribute (classified read/write/assign/[0] like TL101-TL203),
every `Variable` reference, every `volatile` argument or attribute, every call of a
`*Tensor` type, `.new(...)`, `.type(<*Tensor>)` and `set_default_tensor_type`; and, for
the other families, every `+=` in a loop (TL401), `.clone().detach()` (TL402),
`torch.tensor(<not a literal>)` (TL403), `.detach_()` (TL302), and every in-place write to
a name bound in the same function from `.detach()`, `.numpy()`, `from_numpy` or a view
(`TL3xx`: the labeller names the rule).  On the script corpus the labeller also reads
every line, and adds what no candidate found.  A label matches a finding on the same
file, line and code (the column only separates two on one line).

Modern code (timm, transformers) has too many findings to label them all, and too few
instances of a rule to measure recall, so `score` also prints a sampled check: the
findings per rule, and how many of a seeded random sample (eval/samples/, at most
SAMPLE_PER_RULE per rule and package) were judged correct.  Every finding of the
aliasing and graph rules (TL3xx, TL4xx) is in the sample, in every corpus package.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Optional

from torchlint.syntax import cst, parsing  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import random  # noqa: E402

import script_corpus  # noqa: E402
from pypi_corpus import LEGACY, MODERN, MORE_LEGACY, download  # noqa: E402
from torchlint.syntax.nodes import dotted  # noqa: E402
from torchlint.syntax.source import LineIndex  # noqa: E402
from torchlint.syntax.walk import walk  # noqa: E402
from torchlint.analysis.module_analysis import ModuleAnalysis  # noqa: E402
from torchlint.analysis.project import Project  # noqa: E402
from torchlint.analysis import torch_api  # noqa: E402
from torchlint.analysis.semantic import BindingKind  # noqa: E402
from torchlint.framework.context import FileContext  # noqa: E402
from torchlint.framework.data_attribute import DataUse, data_access  # noqa: E402

EVAL = REPO / "eval"
FIELDS = ["file", "line", "column", "code", "label", "note"]
LEGACY_TYPES = {
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "BFloat16Tensor",
}
RECALL_RULES = ("TL101", "TL102", "TL103", "TL201", "TL202", "TL203", "TL204")
SAMPLE_PER_RULE = 10
SAMPLE_SEED = 1
# Packages outside the labelled set in which the aliasing and graph rules fire, so their
# findings are checked too (all of them: these rules fire rarely).
GRAPH_RULE_EXTRAS = ["gpytorch==0.1.0rc1", "pyro-ppl==0.2.1", "pytorch-transformers==1.0.0"]


SCRIPTS = [entry["repo"] for entry in script_corpus.entries() if entry["kind"] == "script"]
MODERN_SCRIPTS = [entry["repo"] for entry in script_corpus.entries() if entry["kind"] == "modern"]
CORPORA = {
    "pypi": LEGACY + MORE_LEGACY,
    "scripts": SCRIPTS + MODERN_SCRIPTS,
    "threads": [],  # eval/threads/: scored per kind by scripts/thread_corpus.py
}
# Where the other families are counted for recall too (labelled by reading every line).
FAMILY_RECALL_RULES = ("TL205", "TL206", "TL207", "TL208", "TL209", "TL210", "TL301", "TL302", "TL303", "TL304", "TL305", "TL401", "TL402", "TL403", "TL404")
ALIAS_SOURCES = (".detach()", ".numpy()", "from_numpy(", ".view(", ".view_as(", ".reshape(", ".t()", ".transpose(",
                 ".permute(", ".expand(", ".squeeze(", ".unsqueeze(", ".narrow(", ".select(", ".data")


def package_root(requirement: str) -> Path:
    """The folder of a PyPI ``name==version`` or a script repository ``owner/name``."""
    if "==" not in requirement:
        return script_corpus.rebuild(script_corpus.entries([requirement])[0])
    return download(requirement)


def _in_loop(ctx: FileContext, node: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
    return False


def _literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.List, cst.Tuple, cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation,
                             cst.ListComp))


def _alias_names(ctx: FileContext, module: cst.Module) -> dict[int, set[str]]:
    """Per function (by id; 0: module level), the names assigned from an aliasing expression."""
    names: dict[int, set[str]] = defaultdict(set)

    def visit(node: cst.CSTNode, parent) -> None:
        if isinstance(node, cst.Assign) and any(source in ctx.code(node.value) for source in ALIAS_SOURCES):
            function = ctx.enclosing_function(node)
            for target in node.targets:
                for name in walk_names(target.target):
                    names[id(function) if function else 0].add(name)

    walk(module, visit)
    return names


def walk_names(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [name for element in node.elements for name in walk_names(element.value)]
    return []


_INPLACE_METHODS = None


def _inplace_methods() -> frozenset:
    global _INPLACE_METHODS
    if _INPLACE_METHODS is None:
        from torchlint.analysis import torch_facts

        _INPLACE_METHODS = torch_facts.methods(in_place="data")
    return _INPLACE_METHODS


def _written_name(node: cst.CSTNode) -> Optional[tuple[cst.CSTNode, str]]:
    """(the write, the name written) for an in-place write to a plain name or its items."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value in _inplace_methods():
        receiver = node.func.value
    elif isinstance(node, cst.AugAssign):
        receiver = node.target
    elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
        receiver = node.targets[0].target
    else:
        return None
    while isinstance(receiver, cst.Subscript):
        receiver = receiver.value
    return (node, receiver.value) if isinstance(receiver, cst.Name) else None


def _candidates_in(path: Path, root: Path, project: Project) -> list[dict]:
    try:
        # Python 2, `async=`: read as torchlint reads it.
        module = parsing.parse_reading_legacy(path.read_text(encoding="utf-8"), "fast")[0]
    except cst.ParserSyntaxError as error:
        print(f"{path}: not a candidate source: {error}", file=sys.stderr)
        return []
    # With the project, `kaiming_normal(w.data)` via a star import is classified as the
    # write it is; the candidate is still a `.data` site whatever the inference says.
    ctx = FileContext(ModuleAnalysis(module, str(path), path, project))
    found: list[tuple[cst.CSTNode, str, str]] = []
    alias_names = _alias_names(ctx, module)

    def visit(node: cst.CSTNode, parent) -> None:
        written = _written_name(node)
        if written is not None:
            function = ctx.enclosing_function(node)
            if written[1] in alias_names.get(id(function) if function else 0, ()):
                found.append((node, "TL3xx", ""))
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and \
                not isinstance(node.value, (cst.Integer, cst.Float)) and _in_loop(ctx, node):
            found.append((node, "TL401", ""))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            inner = node.func.value
            if method == "detach" and isinstance(inner, cst.Call) and dotted(inner.func).rsplit(".", 1)[-1] == "clone":
                found.append((node, "TL402", ""))
            elif method == "detach_":
                found.append((node, "TL302", ""))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in torch_api.SCALAR_FIRST_OVERLOADS and not any(a.star for a in node.args):
            method = dotted(node.func.value) != "torch"
            positional = sum(1 for a in node.args if a.keyword is None)
            if any(len(s) - method == positional for s in torch_api.SCALAR_FIRST_OVERLOADS[node.func.attr.value]):
                found.append((node, "TL210", ""))
        if isinstance(node, cst.Call) and dotted(node.func) == "torch.tensor" and node.args and \
                node.args[0].keyword is None and not _literal(node.args[0].value):
            found.append((node, "TL403", ""))
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            use = data_access(ctx, node).use
            code = {DataUse.READ: "TL101", DataUse.WRITE: "TL102", DataUse.ASSIGN: "TL103",
                    DataUse.INDEX_ZERO: "TL101/TL203"}[use]
            note = ""
            base = node.value
            while isinstance(base, cst.Attribute):
                base = base.value
            if isinstance(base, cst.Name) and any(
                b.kind is BindingKind.IMPORT for b in ctx.model.resolve(base)
            ):
                note = "module path (auto)"
            found.append((node, code, note))
        elif isinstance(node, cst.Name) and node.value == "Variable" and id(node) in ctx.model.references:
            call = ctx.parent(node)
            found.append((call if isinstance(call, cst.Call) and call.func is node else node, "TL201", ""))
        elif isinstance(node, cst.Attribute) and node.attr.value == "Variable":
            call = ctx.parent(node)
            found.append((call if isinstance(call, cst.Call) and call.func is node else node, "TL201", ""))
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if dotted(alias.name) == "Variable":
                    found.append((alias, "TL201", ""))
        elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "volatile":
            found.append((node, "TL202", ""))
        elif isinstance(node, cst.Arg) and node.keyword is not None and ctx.code(node.keyword) == "async":
            found.append((node.keyword, "TL205", ""))
        elif isinstance(node, cst.Attribute) and node.attr.value == "volatile":
            found.append((node, "TL202", ""))
        elif isinstance(node, cst.Call):
            name = dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if last in LEGACY_TYPES or last == "set_default_tensor_type":
                found.append((node, "TL204", ""))
            elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "new":
                found.append((node, "TL204", ""))
            elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "type" and node.args \
                    and dotted(node.args[0].value).rsplit(".", 1)[-1] in LEGACY_TYPES:
                found.append((node, "TL204", ""))

    walk(module, visit)
    if not found:
        return []
    index = LineIndex(ctx.text)
    rows = []
    seen = set()
    for node, code, note in found:
        row, column = index.position(node.start)
        if (row, column, code) in seen:  # `x.data.data`: one site, as the scorer keys it
            continue
        seen.add((row, column, code))
        rows.append({
            "file": path.relative_to(root).as_posix(), "line": row, "column": column, "code": code,
            "label": "false" if note else "", "note": note or index.line(row).strip()[:100],
        })
    return rows


def candidates(packages: list[str]) -> None:
    folder = EVAL / "candidates"
    folder.mkdir(parents=True, exist_ok=True)
    for requirement in packages:
        root = package_root(requirement)
        rows = []
        project = Project()
        for path in sorted(root.rglob("*.py")):
            rows.extend(_candidates_in(path, root, project))
        target = folder / f"{root.name}.csv"
        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        print(f"{requirement}: {len(rows)} candidates -> {target.relative_to(REPO)}")


def load_labels(requirement: str) -> dict[tuple[str, int, int, str], tuple[bool, str]]:
    root = package_root(requirement)
    path = EVAL / "labels" / f"{root.name}.csv"
    labels = {}
    if not path.exists():
        return labels
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["label"] not in ("true", "false"):
                raise SystemExit(f"{path}: unlabelled row {row}")
            key = (row["file"], int(row["line"]), int(row["column"]), row["code"])
            labels[key] = (row["label"] == "true", row["note"])
    return labels


@functools.lru_cache(maxsize=None)
def findings(requirement: str) -> frozenset[tuple[str, int, int, str]]:
    root = package_root(requirement)
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--isolated", "--select", "ALL",
         "--output-format", "json", str(root)],
        capture_output=True, text=True, cwd=REPO,
    )
    if completed.returncode not in (0, 1):
        raise SystemExit(f"torchlint failed on {requirement}:\n{completed.stderr}")
    result = set()
    for item in json.loads(completed.stdout):
        if item["code"] == "TL000":
            continue
        relative = Path(item["filename"]).resolve().relative_to(root.resolve()).as_posix()
        result.add((relative, item["location"]["row"], item["location"]["column"], item["code"]))
    return frozenset(result)


def _matches(reported: frozenset, labels: dict) -> dict[tuple, tuple]:
    """Finding -> its label: the same file, line, column and code, else the same file,
    line and code (a label whose column differs), each label used once."""
    matched: dict[tuple, tuple] = {key: key for key in reported if key in labels}
    free: dict[tuple, list[tuple]] = defaultdict(list)
    for key in labels:
        if key not in matched.values():
            free[(key[0], key[1], key[3])].append(key)
    for key in sorted(reported):
        if key not in matched and free.get((key[0], key[1], key[3])):
            matched[key] = free[(key[0], key[1], key[3])].pop(0)
    return matched


def score(packages: list[str], show_unlabelled: bool, show_misses: bool, every_line_read: bool = False) -> int:
    """The table of precision and recall per rule over ``packages``.  Recall is shown for
    the rules whose every instance is labelled: the syntactic candidates' rules, and with
    ``every_line_read`` (the script corpus) the other families too."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "unlabelled": 0})
    unlabelled_rows = []
    misses = []
    for requirement in packages:
        labels = load_labels(requirement)
        reported = findings(requirement)
        matched = _matches(reported, labels)
        for key in reported:
            code = key[3]
            if key in matched:
                truth = labels[matched[key]][0]
                totals[code]["tp" if truth else "fp"] += 1
                if not truth:
                    misses.append(f"FP {requirement} {key} {labels[matched[key]][1]}")
            else:
                totals[code]["unlabelled"] += 1
                unlabelled_rows.append((requirement, key))
        used = set(matched.values())
        for key, (truth, note) in labels.items():
            if truth and key not in used:
                totals[key[3]]["fn"] += 1
                misses.append(f"FN {requirement} {key} {note}")
    recall_rules = RECALL_RULES + (FAMILY_RECALL_RULES if every_line_read else ())
    print("| rule | reported | true positives | false positives | missed | unlabelled | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    failed = 0
    from torchlint.rules import all_rules

    for code in sorted(set(totals) | set(all_rules())):
        t = totals[code]
        reported_count = t["tp"] + t["fp"] + t["unlabelled"]
        judged = t["tp"] + t["fp"]
        precision = t["tp"] / judged if judged else None
        real = t["tp"] + t["fn"]
        recall = t["tp"] / real if real else float("nan")
        recall_text = f"{recall:.1%}" if code in recall_rules and real else "—"
        precision_text = f"{precision:.1%}" if precision is not None else "—"
        print(f"| {code} | {reported_count} | {t['tp']} | {t['fp']} | {t['fn']} | {t['unlabelled']} | "
              f"{precision_text} | {recall_text} |")
        if precision is not None and precision < 0.95:
            failed = 1
        if code in RECALL_RULES and real and recall < 0.90:
            failed = 1
    if show_unlabelled and unlabelled_rows:
        print("\nUnlabelled findings:")
        for requirement, (file, line, column, code) in sorted(unlabelled_rows):
            print(f"{requirement},{file},{line},{column},{code}")
    if show_misses and misses:
        print("\nFalse positives and missed sites:")
        for line in sorted(misses):
            print(line)
    return failed


def _always_sampled(code: str) -> bool:
    return code.startswith(("TL3", "TL4"))


def sample(packages: list[str]) -> None:
    """Add newly drawn findings to eval/samples/<package>.csv, keeping the labels there."""
    folder = EVAL / "samples"
    folder.mkdir(parents=True, exist_ok=True)
    for requirement in packages:
        root = package_root(requirement)
        target = folder / f"{root.name}.csv"
        existing = _read_rows(target)
        by_code: dict[str, list] = defaultdict(list)
        for key in sorted(findings(requirement)):
            by_code[key[3]].append(key)
        rng = random.Random(SAMPLE_SEED)
        chosen = []
        for code, keys in sorted(by_code.items()):
            if _always_sampled(code) or requirement in MODERN + MODERN_SCRIPTS:
                chosen += keys if _always_sampled(code) else rng.sample(keys, min(SAMPLE_PER_RULE, len(keys)))
        rows = {_key(row): row for row in existing}
        for key in chosen:
            rows.setdefault(key, dict(zip(FIELDS, (*key, "", ""))))
        if not rows:
            continue
        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, FIELDS)
            writer.writeheader()
            writer.writerows(sorted(rows.values(), key=lambda row: _key(row)))
        print(f"{requirement}: {len(rows)} sampled findings -> {target.relative_to(REPO)}")


def _key(row: dict) -> tuple[str, int, int, str]:
    return (row["file"], int(row["line"]), int(row["column"]), row["code"])


def _read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def sampled_check(packages: list[str]) -> int:
    """Findings per rule on packages outside the labelled set, and the judged sample."""
    print("\n| package | rule | findings | sampled | correct |")
    print("|---|---|---:|---:|---:|")
    failed = 0
    for requirement in packages:
        root = package_root(requirement)
        labels = {_key(row): row["label"] for row in _read_rows(EVAL / "samples" / f"{root.name}.csv")}
        by_code: dict[str, list] = defaultdict(list)
        for key in findings(requirement):
            by_code[key[3]].append(key)
        for code, keys in sorted(by_code.items()):
            if requirement not in MODERN + MODERN_SCRIPTS and not _always_sampled(code):
                continue
            judged = [labels[key] for key in keys if labels.get(key) in ("true", "false")]
            missing = [key for key in keys if _always_sampled(code) and key not in labels]
            correct = judged.count("true")
            if missing or correct < len(judged):
                failed = 1
            note = f" ({len(missing)} not in the sample: run `sample`)" if missing else ""
            print(f"| {requirement} | {code} | {len(keys)} | {len(judged)} | {correct}{note} |")
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cand = sub.add_parser("candidates")
    cand.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY + SCRIPTS + MODERN_SCRIPTS)
    sc = sub.add_parser("score")
    sc.add_argument("packages", nargs="*", help="PyPI name==version or owner/name (default: the --corpus)")
    sc.add_argument("--corpus", choices=sorted(CORPORA), default="pypi", help="which labelled set (default pypi)")
    sc.add_argument("--unlabelled", action="store_true")
    sc.add_argument("--misses", action="store_true")
    sc.add_argument("--no-sampled", action="store_true", help="skip the sampled check of other packages")
    sc.add_argument("--runtime", action="store_true", help="threads: also count --runtime verdicts")
    sc.add_argument("--split", choices=("dev", "held-out", "all"), default="all", help="threads: which half")
    sm = sub.add_parser("sample")
    sm.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY + GRAPH_RULE_EXTRAS + MODERN)
    args = parser.parse_args()
    if args.command == "candidates":
        candidates(args.packages)
    elif args.command == "sample":
        sample(args.packages)
    elif args.corpus == "threads":
        import thread_corpus

        cases = [case for case in thread_corpus.load_cases(args.packages or None)
                 if args.split in ("all", case.split)]
        thread_corpus.score(cases, args.runtime, args.misses)
    else:
        packages = args.packages or CORPORA[args.corpus]
        failed = score(packages, args.unlabelled, args.misses,
                       every_line_read=all("==" not in package for package in packages))
        if not args.no_sampled:
            extras = GRAPH_RULE_EXTRAS + MODERN if args.corpus == "pypi" else []
            failed |= sampled_check(packages + extras)
        sys.exit(failed)


if __name__ == "__main__":
    main()
