"""Precision and recall of torchlint on labelled legacy code from PyPI.

The labelled set lives in eval/labels/<package>-<version>.csv: one row per site,
`file,line,column,code,label,note`, where label is `true` (a real instance of the rule)
or `false` (a near miss: it looks like one but is not).  Recall needs every real
instance, not only what torchlint reports, so candidate sites are generated
syntactically, independently of torchlint's inference:

    python scripts/evaluate.py candidates            # write eval/candidates/*.csv to label
    python scripts/evaluate.py score                 # precision/recall per rule (downloads packages)
    python scripts/evaluate.py score --unlabelled    # also list findings missing from the labels

Candidates: every `.data` attribute (classified read/write/assign/[0] like TL101-TL203),
every `Variable` reference, every `volatile` argument or attribute, every call of a
`*Tensor` type, `.new(...)`, `.type(<*Tensor>)` and `set_default_tensor_type`.  Labels
for the other rules are added for the sites torchlint reports (`--unlabelled` lists them).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import libcst as cst

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from pypi_corpus import LEGACY, MORE_LEGACY, download  # noqa: E402
from torchlint.context import FileContext  # noqa: E402
from torchlint.data_attribute import DataUse, data_access  # noqa: E402
from torchlint.nodes import dotted  # noqa: E402
from torchlint.positions import LineIndex, node_offsets  # noqa: E402
from torchlint.project import Project  # noqa: E402
from torchlint.semantic import BindingKind  # noqa: E402
from torchlint.walk import walk  # noqa: E402

EVAL = REPO / "eval"
FIELDS = ["file", "line", "column", "code", "label", "note"]
LEGACY_TYPES = {
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "BFloat16Tensor",
}
RECALL_RULES = ("TL101", "TL102", "TL103", "TL201", "TL202", "TL203", "TL204")


def package_root(requirement: str) -> Path:
    return download(requirement)


def _candidates_in(path: Path, root: Path, project: Project) -> list[dict]:
    try:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
    except Exception:
        return []
    # With the project, `kaiming_normal(w.data)` via a star import is classified as the
    # write it is; the candidate is still a `.data` site whatever the inference says.
    ctx = FileContext(module, str(path), path, project)
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
    offsets = node_offsets(module, [node for node, _, _ in found])
    index = LineIndex(module.code)
    rows = []
    for node, code, note in found:
        row, column = index.position(offsets[id(node)][0])
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


def findings(requirement: str) -> set[tuple[str, int, int, str]]:
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
    return result


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
    for code in sorted(totals):
        t = totals[code]
        reported_count = t["tp"] + t["fp"] + t["unlabelled"]
        judged = t["tp"] + t["fp"]
        precision = t["tp"] / judged if judged else float("nan")
        real = t["tp"] + t["fn"]
        recall = t["tp"] / real if real else float("nan")
        recall_text = f"{recall:.1%}" if code in RECALL_RULES and real else "—"
        print(f"| {code} | {reported_count} | {t['tp']} | {t['fp']} | {t['fn']} | {t['unlabelled']} | "
              f"{precision:.1%} | {recall_text} |")
        if judged and precision < 0.95:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cand = sub.add_parser("candidates")
    cand.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY)
    sc = sub.add_parser("score")
    sc.add_argument("packages", nargs="*", default=LEGACY + MORE_LEGACY)
    sc.add_argument("--unlabelled", action="store_true")
    sc.add_argument("--misses", action="store_true")
    args = parser.parse_args()
    if args.command == "candidates":
        candidates(args.packages)
    else:
        sys.exit(score(args.packages, args.unlabelled, args.misses))


if __name__ == "__main__":
    main()
