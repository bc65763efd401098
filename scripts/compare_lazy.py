"""Lint folders twice, with imported modules' function bodies lazy (as torchlint does) and
eager, and compare every report: findings, positions, messages, evidence, fixes.

    python scripts/compare_lazy.py corpus/*/

Each folder is linted file by file in this process with every rule (`ALL`), sharing one
project cache per folder, as a worker does.  Prints each file whose reports differ and a
summary; exits 1 when one does.  With the legacy packages, timm and transformers in
`corpus/` (scripts/pypi_corpus.py), docs/speed.md reports the outcome.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchlint.syntax import cst
from torchlint.analysis.project import Project  # noqa: E402
from torchlint.framework.diagnostics import report_to_data  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402
from torchlint.engine import batch  # noqa: E402


def lint_folder(folder: Path, lazy: bool) -> dict[str, str]:
    """Each file's report (as JSON text) with lazy or eager bodies in imported modules."""
    parse = cst.parse_module
    if not lazy:
        cst.parse_module = lambda text, lazy_bodies=False: parse(text)
    try:
        codes = tuple(sorted(all_rules()))
        project = Project()
        reports = {}
        for path in sorted(folder.rglob("*.py")):
            job = batch.Job(path.resolve(), str(path), codes, project.roots_for(path))
            report, _ = batch.lint_job(job, None, None, project)
            data = report_to_data(report)
            data["internal_error"] = report.internal_error
            reports[str(path)] = json.dumps(data, sort_keys=True)
        return reports
    finally:
        cst.parse_module = parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    files = findings = different = 0
    for folder in args.folders:
        lazy, eager = lint_folder(folder, lazy=True), lint_folder(folder, lazy=False)
        for path, report in lazy.items():
            files += 1
            findings += len(json.loads(report)["diagnostics"])
            if report != eager[path]:
                different += 1
                print(f"{path}: the reports differ\n  lazy:  {report}\n  eager: {eager[path]}")
        print(f"{folder}: {len(lazy)} files", file=sys.stderr)
    print(f"{files} files, {findings} findings; {different} files whose reports differ")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
