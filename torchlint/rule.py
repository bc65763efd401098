"""The rule framework: what a rule module defines and what the engine gives it.

A rule is a class with metadata (code, name, message, docs, bad and good examples,
fix applicability) and ``visit_<Node>`` / ``leave_<Node>`` methods named after libcst
node classes.  The engine creates one instance per file and calls those methods
during a single walk; the rule asks ``self.ctx`` what an expression is and calls
``self.report(node, ...)`` when it finds something.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Optional

import libcst as cst

from torchlint.values import Step, Value

if TYPE_CHECKING:
    from torchlint.context import FileContext


class Applicability(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, eq=False)
class Edit:
    """Replace the source of ``node`` with ``content``; with ``position`` "before" or
    "after", insert ``content`` at the node's start or end instead.  The engine turns
    nodes into character offsets (see torchlint/edits.py for the helpers rules use)."""

    node: cst.CSTNode
    content: str
    position: str = "replace"
    end_node: Optional[cst.CSTNode] = None  # replace from ``node``'s start to this node's end


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` (character offsets) with ``content``."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    """A rewrite that resolves a finding.  ``message`` says what it does ("Replace
    `.data` with `.detach()`"); its edits are applied together or not at all."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass
class Finding:
    """What a rule reports, before the engine has computed positions."""

    rule: "type[Rule]"
    node: cst.CSTNode
    message: str
    evidence: tuple[Step, ...] = ()
    fix: Optional[Fix] = None
    related: tuple[tuple[cst.CSTNode, str], ...] = ()


@dataclass(frozen=True)
class Example:
    """A code sample from a rule's docs; bad examples name the lines that must be reported."""

    code: str

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `torchlint rules` and the README table
    message: ClassVar[str]  # str.format template; report() fills it
    docs: ClassVar[str]  # markdown: what it does, why it is bad, what to do instead
    bad: ClassVar[tuple[str, ...]] = ()
    good: ClassVar[tuple[str, ...]] = ()
    fix: ClassVar[Optional[Applicability]] = None  # the best fix this rule can offer
    default_enabled: ClassVar[bool] = True

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx

    def report(
        self,
        node: cst.CSTNode,
        message: Optional[str] = None,
        *,
        evidence: Optional[Value | tuple[Step, ...]] = None,
        fix: Optional[Fix] = None,
        related: tuple[tuple[cst.CSTNode, str], ...] = (),
        **values: Any,
    ) -> None:
        """Report ``node``. Node values in ``values`` are shown as (shortened) source code."""
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
        self.ctx.findings.append(Finding(type(self), node, text, steps, fix, related))

    @classmethod
    def documentation(cls) -> str:
        """The rule's full documentation, as markdown."""
        parts = [f"# {cls.code} {cls.name}", "", cls.summary, "", textwrap.dedent(cls.docs).strip()]
        if cls.bad:
            parts += ["", "## Examples of code this rule reports", ""]
            for example in cls.bad:
                parts += ["```python", Example(example).source.rstrip(), "```", ""]
        if cls.good:
            parts += ["", "## Code it leaves alone", ""]
            for example in cls.good:
                parts += ["```python", Example(example).source.rstrip(), "```", ""]
        fix = cls.fix.value if cls.fix is not None else "none"
        parts += ["", f"Fix: {fix}. Enabled by default: {'yes' if cls.default_enabled else 'no'}."]
        return "\n".join(parts).rstrip() + "\n"


@dataclass(frozen=True)
class EngineRule:
    """Diagnostics the engine itself emits (not selectable, not suppressible)."""

    code: str
    name: str
    summary: str
    docs: str
    fix: Optional[Applicability] = None
    default_enabled: bool = True

    def documentation(self) -> str:
        return f"# {self.code} {self.name}\n\n{self.summary}\n\n{textwrap.dedent(self.docs).strip()}\n"


UNLINTABLE_FILE = EngineRule(
    code="TL000",
    name="unlintable-file",
    summary="a file could not be read, decoded or parsed, so it was not linted",
    docs="""
    torchlint reports this instead of crashing when a file does not parse, is not valid
    in its declared encoding (UTF-8 unless a PEP 263 coding cookie or a BOM says
    otherwise), is binary, is too large, cannot be read, or disappears while torchlint
    runs. The message names the reason; every other file is still linted.

    It cannot be deselected or suppressed with `# noqa`: a file torchlint cannot read
    is a file nobody has checked. Exclude the file instead (`exclude` or
    `extend-exclude` in `[tool.torchlint]`).
    """,
)


_registry: Optional[dict[str, type[Rule]]] = None


def all_rules() -> dict[str, type[Rule]]:
    """Every rule shipped in ``torchlint.rules``, by code, in code order."""
    global _registry
    if _registry is None:
        import torchlint.rules as package

        found: dict[str, type[Rule]] = {}
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                    if obj.code in found:
                        raise RuntimeError(f"two rules share the code {obj.code}")
                    found[obj.code] = obj
        _registry = dict(sorted(found.items()))
    return _registry


def rule_by_name_or_code(key: str) -> Optional[type[Rule]]:
    rules = all_rules()
    if key.upper() in rules:
        return rules[key.upper()]
    for rule in rules.values():
        if rule.name == key:
            return rule
    return None
