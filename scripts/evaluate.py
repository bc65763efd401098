"""Precision and recall of torchlint on labelled legacy code from PyPI.

The labelled set lives in eval/labels/<package>-<version>.csv: one row per site,
`file,line,column,code,label,note`, where label is `true` (a real instance of the rule)
or `false` (a near miss: it looks like one but is not).  Recall needs every real
instance, not only what torchlint reports, so candidate sites are generated
syntactically, independently of torchlint's inference:

    python scripts/evaluate.py candidates            # write eval/candidates/*.csv to label
    python scripts/evaluate.py score                 # precision/recall per rule (downloads packages)
    python scripts/evaluate.py score --unlabelled    # also list findings missing from the labels
    python scripts/evaluate.py sample                # draw findings on modern code to label

Candidates: every `.data` attribute (classified read/write/assign/[0] like TL101-TL203),
every `Variable` reference, every `volatile` argument or attribute, every call of a
`*Tensor` type, `.new(...)`, `.type(<*Tensor>)` and `set_default_tensor_type`.  Labels
for the other rules are added for the sites torchlint reports (`--unlabelled` lists them).

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

from torchlint.syntax import cst  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import random  # noqa: E402

from pypi_corpus import LEGACY, MODERN, MORE_LEGACY, download  # noqa: E402
from torchlint.syntax.nodes import dotted  # noqa: E402
from torchlint.syntax.source import LineIndex  # noqa: E402
from torchlint.syntax.walk import walk  # noqa: E402
from torchlint.analysis.module_analysis import ModuleAnalysis  # noqa: E402
from torchlint.analysis.project import Project  # noqa: E402
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


def package_root(requirement: str) -> Path:
    return download(requirement)


def _candidates_in(path: Path, root: Path, project: Project) -> list[dict]:
    try:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
    except Exception:
        return []
    # With the project, `kaiming_normal(w.data)` via a star import is classified as the
    # write it is; the candidate is still a `.data` site whatever the inference says.
    ctx = FileContext(ModuleAnalysis(module, str(path), path, project))
    found: list[tuple[cst.CSTNode, str, str]] = []

    def visit(node: cst.CSTNode, parent) -> None:
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
    for node, code, note in found:
        row, column = index.position(node.start)
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


def score(packages: list[str], show_unlabelled: bool, show_misses: bool) -> int:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "unlabelled": 0})
    unlabelled_rows = []
    misses = []
    for requirement in packages:
        labels = load_labels(requirement)
        reported = findings(requirement)
        for key in reported:
            code = key[3]
            if key in labels:
                totals[code]["tp" if labels[key][0] else "fp"] += 1
                if not labels[key][0]:
                    misses.append(f"FP {requirement} {key}")
            else:
                totals[code]["unlabelled"] += 1
                unlabelled_rows.append((requirement, key))
        for key, (truth, note) in labels.items():
            if truth and key not in reported:
                totals[key[3]]["fn"] += 1
                misses.append(f"FN {requirement} {key} {note}")
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
        recall_text = f"{recall:.1%}" if code in RECALL_RULES and real else "—"
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
            if _always_sampled(code) or requirement in MODERN:
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
            if requirement not in MODERN and not _always_sampled(code):
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
    cand.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY)
    sc = sub.add_parser("score")
    sc.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY)
    sc.add_argument("--unlabelled", action="store_true")
    sc.add_argument("--misses", action="store_true")
    sc.add_argument("--no-sampled", action="store_true", help="skip the sampled check of other packages")
    sm = sub.add_parser("sample")
    sm.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY + GRAPH_RULE_EXTRAS + MODERN)
    args = parser.parse_args()
    if args.command == "candidates":
        candidates(args.packages)
    elif args.command == "sample":
        sample(args.packages)
    else:
        failed = score(args.packages, args.unlabelled, args.misses)
        if not args.no_sampled:
            failed |= sampled_check(args.packages + GRAPH_RULE_EXTRAS + MODERN)
        sys.exit(failed)


if __name__ == "__main__":
    main()
