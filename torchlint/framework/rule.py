"""The rule framework: what a rule module defines and what the engine gives it.

A rule is a class with metadata (code, name, message, docs, bad and good examples,
fix applicability) and ``visit_<Node>`` / ``leave_<Node>`` methods named after libcst
node classes.  The engine creates one instance per file and calls those methods
during a single walk; the rule asks ``self.ctx`` what an expression is and calls
``self.report(node, ...)`` when it finds something.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from torchlint.syntax import cst
from torchlint.analysis.values import Step, Value
from torchlint.framework.diagnostics import Applicability, Fix
from torchlint.framework.required_text import RequiredPattern
from torchlint.framework.verdicts import NOT_REPRODUCED, Observation, Verdict

# Findings kept for one file; those past it are only counted (linter.py says how many).
MAX_FINDINGS_PER_FILE = 10_000

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext


@dataclass(frozen=True, eq=False)
class Edit:
    """Replace the source of ``node`` with ``content``; with ``position`` "before" or
    "after", insert ``content`` at the node's start or end instead.  The engine turns
    nodes into character offsets (see torchlint/framework/edits.py for the helpers rules use)."""

    node: cst.CSTNode
    content: str
    position: str = "replace"
    end_node: Optional[cst.CSTNode] = None  # replace from ``node``'s start to this node's end
    # Replace these character offsets instead, for ranges no node spans (a whole line with
    # its indentation and line break); ``node`` is then only what the edit is about.
    span: Optional[tuple[int, int]] = None


def earliest_release(releases) -> Optional[str]:
    """The earliest of torch releases such as "0.4.1" and "2.4"; None if one is None (a
    finding that holds on every release)."""
    releases = list(releases)
    if not releases or any(release is None for release in releases):
        return None
    return min(releases, key=lambda release: tuple(int(part) for part in release.split(".")))


@dataclass
class Finding:
    """What a rule reports, before the engine has computed positions."""

    rule: "type[Rule]"
    node: cst.CSTNode
    message: str
    evidence: tuple[Step, ...] = ()
    fix: Optional[Fix] = None
    related: tuple[tuple[cst.CSTNode, str], ...] = ()
    since: Optional[str] = None  # the torch release it holds from, where not the rule's ``since``


@dataclass(frozen=True)
class Example:
    """A code sample from a rule's docs, written indented inside the rule class."""

    code: str

    @property
    def source(self) -> str:
        return _dedent(self.code)

    @staticmethod
    def of(example: "str | Example") -> "Example":
        """``example`` as an Example: good examples are plain strings, bad ones are ``Bad``."""
        return example if isinstance(example, Example) else Example(example)


@dataclass(frozen=True)
class Bad(Example):
    """A bad example that is an exact test, as Fixit's ``Invalid`` is: ``reported`` is
    every finding of the rule in it, in order, as (1-based line, the source text of the
    reported range); ``fixed`` is the whole example once ``torchlint check --fix`` (with
    ``--unsafe-fixes`` when ``unsafe``) has run with only this rule selected, or None
    when the rule has no fix to apply there."""

    reported: tuple[tuple[int, str], ...]
    fixed: Optional[str] = None
    unsafe: bool = False

    @property
    def fixed_source(self) -> Optional[str]:
        return None if self.fixed is None else _dedent(self.fixed)


def _dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `torchlint rules` and the README table
    message: ClassVar[str]  # str.format template; report() fills it
    docs: ClassVar[str]  # markdown: what it does, why it is bad, what to do instead
    bad: ClassVar[tuple[Bad, ...]] = ()  # each one an exact test of what is reported and fixed
    good: ClassVar[tuple[str, ...]] = ()  # code no rule reports
    fix: ClassVar[Optional[Applicability]] = None  # the best fix this rule can offer
    default_enabled: ClassVar[bool] = True
    # The TorchFix codes this rule does the work of (``("TOR102",)``): accepted wherever a
    # code is (``--select``, ``# noqa``, config), see framework/torchfix.py.
    torchfix: ClassVar[tuple[str, ...]] = ()
    # The torch release from which the finding holds (the API was deprecated or removed, or
    # the behaviour changed, there): with an older ``target-torch`` the rule does not run.
    # None: on every release.
    since: ClassVar[Optional[str]] = None
    # The oldest torch release that has what the rule's fixes write (``weights_only=``:
    # 1.13): with an older ``target-torch`` its fixes are only shown.  None: any release
    # the finding holds on.
    fix_since: ClassVar[Optional[str]] = None
    # Regular expressions that must all occur in a file's text for the rule to have
    # anything to report there (e.g. r"volatile"); a file no selected rule may match is
    # not parsed.  Empty: the rule looks at every file.
    requires: ClassVar[tuple[str, ...]] = ()
    # True when what ``requires`` looks for is a torch name that the user's own modules
    # can hand over under another name (``from .compat import V`` after
    # ``from torch.autograd import Variable as V`` there): then a file that imports from
    # its own project is looked at whatever its text.
    requires_may_be_imported: ClassVar[bool] = False
    # The patterns of ``requires`` whose text may be written in the user's module the file
    # imports rather than in the file (the Dropout of a model class `from models import Net`,
    # TL414): a file that imports from its own project and has the other patterns is looked at.
    requires_may_be_in_imports: ClassVar[tuple[str, ...]] = ()
    # False for a rule no run can show wrong (a style rule): its ``judge`` then speaks
    # without looking at whether the finding's code ran.
    runtime_signature: ClassVar[bool] = True
    # True where the error that shows the bug is raised where the flagged value is used, on
    # a line the finding names as related, not on its own (TL220's quotient fails as an index).
    raised_where_used: ClassVar[bool] = False
    # Where a reader can check what the docs say: (title, URL) of torch's documentation,
    # the release notes, an issue that shows the bug in real code.
    references: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx

    @classmethod
    def required_patterns(cls) -> tuple[RequiredPattern, ...]:
        """``requires``, ready to be looked for, once per rule class, in its order."""
        patterns = cls.__dict__.get("_required_patterns")
        if patterns is None:
            # A leading `\b` only narrows what the rule looks at: without it the pattern
            # matches a little more, which the rule's own checks narrow again.
            patterns = tuple(RequiredPattern(pattern.removeprefix(r"\b")) for pattern in cls.requires)
            cls._required_patterns = patterns
        return patterns

    @classmethod
    def may_match(cls, text: str, known: Optional[dict] = None) -> bool:
        """False when ``text`` lacks something the rule needs (see ``requires``).  ``known``
        keeps, per pattern, what ``text`` gave (and per literal, see ``may_contain``): rules
        that share a pattern search once."""
        known = {} if known is None else known
        required = cls.required_patterns()
        # The plain-string checks of every pattern first: most files fail one of them.
        for pattern in required:
            key = pattern.pattern.pattern
            if known.get(key) is False or not pattern.may_be_in(text, known):
                known[key] = False
                return False
        for pattern in required:
            key = pattern.pattern.pattern
            if key not in known:
                known[key] = pattern.found_in(text, known)
            if not known[key]:
                return False
        return True

    @classmethod
    def may_match_with_imports(cls, text: str) -> bool:
        """False when ``text`` lacks something the rule needs that the modules it imports
        cannot hold (see ``requires_may_be_in_imports``)."""
        if not cls.requires_may_be_in_imports:
            return False
        return all(required.may_be_in(text) and required.found_in(text)
                   for pattern, required in zip(cls.requires, cls.required_patterns())
                   if pattern not in cls.requires_may_be_in_imports)

    def report(
        self,
        node: cst.CSTNode,
        message: Optional[str] = None,
        *,
        evidence: Optional[Value | tuple[Step, ...]] = None,
        fix: Optional[Fix] = None,
        related: tuple[tuple[cst.CSTNode, str], ...] = (),
        holds_from: Optional[str] = None,
        **values: Any,
    ) -> None:
        """Report ``node``. Node values in ``values`` are shown as (shortened) source code.
        ``holds_from`` is the torch release from which this finding holds, for a rule whose
        findings hold from different releases (a project with an older ``target-torch``
        does not see it)."""
        if len(self.ctx.findings) >= MAX_FINDINGS_PER_FILE:  # a generated file: memory stays bounded
            self.ctx.findings_over_limit += 1
            return
        template = message if message is not None else self.message
        rendered = {
            key: self.ctx.snippet(value) if isinstance(value, cst.CSTNode) else value
            for key, value in values.items()
        }
        text = template.format(**rendered) if rendered else template
        steps: tuple[Step, ...] = ()
        if isinstance(evidence, Value):
            steps = evidence.why
        elif evidence:
            steps = tuple(evidence)
        self.ctx.findings.append(Finding(type(self), node, text, steps, fix, related, holds_from))

    @classmethod
    def runs(cls, diagnostic) -> bool:
        """Whether running the code can show this finding's bug (``--runtime`` runs only
        those): False for a style rule, or a form of a finding that only modernizes."""
        return cls.runtime_signature

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        """The ``--runtime`` verdict on one finding of this rule whose code ran, from what
        the run recorded there (torchlint/framework/verdicts.py).  A write into a tensor
        that backward then used is CONFIRMED for every rule before this is asked."""
        return Verdict(NOT_REPRODUCED, "no runtime signature for this rule")

    @classmethod
    def documentation(cls) -> str:
        """The rule's full documentation, as markdown."""
        parts = [f"# {cls.code} {cls.name}", "", cls.summary, "", textwrap.dedent(cls.docs).strip()]
        if cls.bad:
            parts += ["", "## Examples of code this rule reports", ""]
            for example in cls.bad:
                parts += _code_block(example.source)
                if example.fixed is not None:
                    parts += ["Fixed" + (" (with `--unsafe-fixes`)" if example.unsafe else "") + ":", ""]
                    parts += _code_block(example.fixed_source)
        if cls.good:
            parts += ["", "## Code it leaves alone", ""]
            for example in cls.good:
                parts += _code_block(Example(example).source)
        fix = cls.fix.value if cls.fix is not None else "none"
        parts += ["", f"Fix: {fix}. Enabled by default: {'yes' if cls.default_enabled else 'no'}."]
        if cls.since is not None or cls.fix_since is not None:
            holds = f"Holds from torch {cls.since} on" if cls.since else "Holds on every torch release"
            needs = f"; its fix needs torch {cls.fix_since} or later" if cls.fix_since else ""
            parts += ["", f"{holds}{needs} (see `target-torch`)."]
        if cls.references:
            parts += ["", "## References", ""]
            parts += [f"- [{title}]({url})" for title, url in cls.references]
        return "\n".join(parts).rstrip() + "\n"


def _code_block(source: str) -> list[str]:
    return ["```python", source.rstrip(), "```", ""]
