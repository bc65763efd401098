"""What a rule says about its finding once the code has run under real torch.

The runtime monitor (torchlint/runtime/monitor.py) records, for each finding it watches,
what torch did at the finding's span: events such as a write into a tensor saved for
backward, a warning, an exception, the graph size behind a running total.  It then asks
the finding's rule to judge that record (``Rule.judge``), so each rule's runtime
signature is written beside the rule.  Nothing here imports torch: a record's events are
plain dicts, and a position only needs ``line`` and ``text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

CONFIRMED = "CONFIRMED"  # the run showed the bug
LATENT = "LATENT"  # the run did the harmful thing, but nothing used its result
NOT_REPRODUCED = "NOT REPRODUCED"  # the finding's code ran and nothing went wrong
COULD_NOT_RUN = "COULD NOT RUN"  # the finding's code did not run
VERDICTS = (CONFIRMED, LATENT, NOT_REPRODUCED, COULD_NOT_RUN)
# How a verdict's evidence names the file whose absence stopped its run:
# "FileNotFoundError: [Errno 2] No such file or directory: 'data/x.npy'".
MISSING_FILE = re.compile(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # one of VERDICTS
    evidence: str  # what the run showed, for a reader

    def as_dict(self) -> dict[str, str]:
        return {"verdict": self.verdict, "evidence": self.evidence}


class SourcePosition(Protocol):
    line: int

    @property
    def text(self) -> str: ...


@dataclass
class Observation:
    """What one run recorded at one finding, in the order it happened.

    ``events`` are (kind, details) pairs; the kinds and their details are the monitor's
    (its module docstring lists the instruments).  ``raised`` is the exception the
    finding's code raised, if any; ``graph_sizes`` the autograd graph sizes behind
    ``probe`` (a running total) after each iteration; ``write_awaiting_read`` is true when
    a write through an alias was seen and the other side was never read afterwards."""

    events: list[tuple[str, dict]] = field(default_factory=list)
    raised: Optional[dict] = None
    probe: Optional[str] = None
    graph_sizes: list[int] = field(default_factory=list)
    write_awaiting_read: bool = False

    def has(self, *kinds: str) -> bool:
        return any(kind in kinds for kind, _ in self.events)

    def first(self, *kinds: str) -> Optional[dict[str, Any]]:
        return next((details for kind, details in self.events if kind in kinds), None)

    def every(self, *kinds: str) -> list[dict[str, Any]]:
        """The details of each event of ``kinds``, in the order they happened."""
        return [details for kind, details in self.events if kind in kinds]

    def warning(self, fragment: str) -> Optional[dict[str, Any]]:
        """The first warning torch gave here, when its message holds ``fragment``."""
        warning = self.first("warning")
        return warning if warning is not None and fragment in warning["message"] else None

    def warned(self, fragment: str, source: str = "torch") -> Optional["Verdict"]:
        """CONFIRMED, quoting the warning, when the first warning given here holds ``fragment``
        (the signature of a deprecated API); None otherwise."""
        warning = self.warning(fragment)
        return Verdict(CONFIRMED, f"{source} warned \"{warning['message']}\"") if warning is not None else None

    def warned_or(self, fragment: str, otherwise: str, source: str = "torch") -> "Verdict":
        """The verdict of a rule whose only signature is a warning: CONFIRMED as ``warned``
        says, else NOT_REPRODUCED, saying ``otherwise``."""
        return self.warned(fragment, source) or Verdict(NOT_REPRODUCED, otherwise)

    def raised_or(self, kind: str, fragment: str, otherwise: str) -> "Verdict":
        """CONFIRMED, quoting the exception, when the code raised ``kind`` with ``fragment`` in
        its message (the signature of the bug); else NOT_REPRODUCED, saying ``otherwise``."""
        raised = self.raised
        if raised is not None and raised["type"] == kind and fragment in raised["message"]:
            return Verdict(CONFIRMED, f"{kind}: {raised['message']}")
        return Verdict(NOT_REPRODUCED, otherwise)


def where(position: Optional[SourcePosition]) -> str:
    """``line N``, or "torch code" when the event happened outside the user's files."""
    return f"line {position.line}" if position is not None else "torch code"


def quote(position: Optional[SourcePosition]) -> str:
    """The source at ``position`` and its line, as evidence shows them."""
    return f"`{position.text}` ({where(position)})" if position is not None else "torch code"


def uninitialized_read(run: Observation, what: str) -> Optional[Verdict]:
    """The verdict of an uninitialized allocation (``what``: "this constructor"): the monitor
    filled it with a NaN sentinel and saw it read (CONFIRMED), or saw it allocated and every
    value written first (NOT_REPRODUCED); None when the allocation was not seen."""
    read = run.first("uninitialized-read")
    if read is not None:
        how = f" (`{read['how']}`)" if read.get("how") else ""
        return Verdict(CONFIRMED, f"{quote(read['where'])}{how} read {read['count']} of {read['total']} values "
                                  f"{what} left uninitialized (torchlint filled them with a NaN sentinel; a plain "
                                  "run reads whatever was in memory)")
    allocated = run.first("allocated")
    if allocated is not None:
        return Verdict(NOT_REPRODUCED, f"{allocated['numel']} uninitialized {allocated['dtype']} values, all "
                                       "written before they were read")
    return None
