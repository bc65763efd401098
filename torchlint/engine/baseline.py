"""``check --baseline FILE``: the findings a repository has today, recorded once, fail no
later run; new ones do.

An entry names a file (relative to the baseline's folder), a rule and the finding's
fingerprint: the rule, its source line with whitespace normalized and how many earlier
findings of the file share both (``diagnostics.fingerprints``, SARIF's). Lines can move,
be indented or get neighbours, and the entry still matches; an edited line is a new
finding. The baseline only shrinks: an entry whose finding is gone (fixed, or its line
rewritten) is removed when a run that looked for it finds nothing, so the finding cannot
come back unnoticed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from torchlint.framework.diagnostics import UNLINTABLE_FILE, FileReport, fingerprints
from torchlint.engine.atomic import replace_file

FORMAT = 1
_KEY = "torchlint-baseline"


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names it."""


Key = tuple[str, str, str]  # (file, code, fingerprint)


@dataclass
class Baseline:
    path: Path
    entries: dict[Key, dict] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "Baseline":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise BaselineError(f"{path}: cannot read the baseline: {error}")
        if not isinstance(data, dict) or data.get(_KEY) != FORMAT or not isinstance(data.get("findings"), list):
            raise BaselineError(f"{path}: not a torchlint baseline (format {FORMAT}); delete it to record a new one")
        baseline = cls(path)
        for entry in data["findings"]:
            if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("file", "code",
                                                                                          "fingerprint"))):
                raise BaselineError(f"{path}: malformed entry {entry!r}")
            baseline.entries[(entry["file"], entry["code"], entry["fingerprint"])] = entry
        return baseline

    def _file(self, report: FileReport) -> str:
        """The report's file as the baseline names it: relative to the baseline's folder."""
        folder = self.path.resolve().parent
        filename = Path(os.path.abspath(report.filename))
        try:
            return filename.relative_to(folder).as_posix()
        except ValueError:
            return filename.as_posix()

    def _keyed(self, report: FileReport) -> list[tuple[Key, int]]:
        name = self._file(report)
        return [((name, d.code, fingerprint), index)
                for index, (d, fingerprint) in enumerate(zip(report.diagnostics, fingerprints(report)))
                if d.code != UNLINTABLE_FILE]

    def record(self, reports: list[FileReport]) -> int:
        """Take every finding of ``reports`` in (a file that cannot be read is not a finding
        to keep), hide them, and write the file. The number recorded."""
        keyed = [(report, self._keyed(report)) for report in reports]
        for report, keys in keyed:
            for key, index in keys:
                d = report.diagnostics[index]
                self.entries[key] = {"file": key[0], "code": key[1], "fingerprint": key[2], "line": d.row,
                                     "message": d.message}
        self._hide(keyed)
        self.write()
        return len(self.entries)

    def apply(self, reports: list[FileReport], codes_for: Callable[[Path], frozenset[str]]) -> tuple[int, int]:
        """Hide the findings the baseline has, and drop its entries that a run of the same
        rules on the same file no longer finds. (hidden, dropped)."""
        keyed = [(report, self._keyed(report)) for report in reports]
        present: set[Key] = set()
        looked: dict[str, frozenset[str]] = {}
        for report, keys in keyed:
            if any(d.code == UNLINTABLE_FILE for d in report.diagnostics) or report.internal_error:
                continue  # nothing can be said of what this file no longer has
            looked[self._file(report)] = codes_for(Path(report.filename))
            present.update(key for key, _ in keys)
        hidden = self._hide(keyed)
        gone = [key for key in self.entries if key[0] in looked and key[1] in looked[key[0]] and key not in present]
        for key in gone:
            del self.entries[key]
        if gone:
            self.write()
        return hidden, len(gone)

    def _hide(self, keyed: list[tuple[FileReport, list[tuple[Key, int]]]]) -> int:
        """Take the findings the baseline has out of each report (``keyed``: each report with
        its findings' keys, computed once). The number taken out."""
        hidden = 0
        for report, keys in keyed:
            kept_indices = {index for key, index in keys if key not in self.entries}
            kept = [d for index, d in enumerate(report.diagnostics)
                    if index in kept_indices or d.code == UNLINTABLE_FILE]
            hidden += len(report.diagnostics) - len(kept)
            report.diagnostics = kept
        return hidden

    def write(self) -> None:
        findings = sorted(self.entries.values(), key=lambda e: (e["file"], e.get("line", 0), e["code"], e["fingerprint"]))
        text = json.dumps({_KEY: FORMAT, "findings": findings}, indent=1, ensure_ascii=False) + "\n"
        try:
            mode = os.stat(self.path).st_mode & 0o777 if self.path.exists() else 0o644
            replace_file(str(self.path), text.encode("utf-8"), mode)
        except OSError as error:
            raise BaselineError(f"{self.path}: cannot write the baseline: {error.strerror or error}")
