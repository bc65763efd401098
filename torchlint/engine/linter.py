"""Lint one file: parse once, build the semantic model, run every selected rule in one
walk, then position and filter what they found.

    source text ─ parse ─ SemanticModel ─ rules (one walk) ─ positions ─ noqa ─ diagnostics

Everything that can go wrong with a file (unreadable, undecodable, unparsable, or a
bug in a rule) becomes a diagnostic or an internal-error note on that file's report;
it never stops the run.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
import traceback
from typing import Callable, Iterator, Optional, Sequence

from torchlint.syntax import cst, legacy, parsing
from torchlint.syntax.legacy import Repair
from torchlint.syntax.source import LineIndex, SourceText
from torchlint.syntax.walk import walk
from torchlint.analysis.module_analysis import ModuleAnalysis
from torchlint.analysis.project import Project
from torchlint.analysis.values import Step
from torchlint.framework.context import FileContext
from torchlint.framework.catalogue import RULES
from torchlint.framework.diagnostics import (
    Applicability, Diagnostic, FileReport, Fix, Note, TextEdit, file_note, rows_phrase, unlintable,
)
from torchlint.framework.noqa import parse_directives
from torchlint.framework.rule import MAX_FINDINGS_PER_FILE, Edit, Rule

# Deeply nested expressions are walked iteratively, but the inference recurses.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))


def lint_text(text: str, display_path: str = "<string>", rules: Optional[Sequence[type[Rule]]] = None) -> FileReport:
    """Lint source text with the given rules (all default rules when None)."""
    if rules is None:
        from torchlint.rules import all_rules

        rules = [rule for rule in all_rules().values() if rule.default_enabled]
    return lint_source(SourceText(text, "utf-8", text.encode("utf-8")), display_path, rules)


def lint_source(source: SourceText, display_path: str, rules: Sequence[type[Rule]],
                file_path: Optional[Path] = None, project: Optional[Project] = None) -> FileReport:
    """Lint decoded source.  With ``file_path`` and ``project``, names imported from the
    user's other modules are looked up there (see project.py)."""
    report = FileReport(display_path, source=source)
    report.diagnostics = _lint(source, display_path, rules, file_path, project, report)
    report.keep_shown_lines(source.text)
    return report


def _lint(source: SourceText, display_path: str, rules: Sequence[type[Rule]],
          file_path: Optional[Path], project: Optional[Project], report: FileReport) -> list[Diagnostic]:
    """The diagnostics of one file (an internal error is noted on ``report``)."""
    selected = rules
    known: dict = {}  # what the text gave, per pattern and literal (Rule.may_match)
    by_text = [rule for rule in rules if rule.may_match(source.text, known)]
    # Rules whose torch name may come from the user's other modules under another name.
    by_import = [rule for rule in rules if rule not in by_text and (rule.requires_may_be_imported
                                                                    or rule.may_match_with_imports(source.text))]
    if by_import and not _imports_own_module(source.text, file_path, project):
        by_import = []
    active = [rule for rule in rules if rule in by_text or rule in by_import]
    if rules and not active:
        # Nothing to look for: check that the file is Python, without building its tree.
        problem = _python_syntax_error(source.text, parser_of(project))
        if problem is None:
            return []
        repaired = legacy.repair(source.text)  # Python 2 or `async=`: say so, as a full run would
        if repaired is not None:
            return _read_through_repairs(display_path, source.text, [], repaired[1])
        return [unlintable(display_path, *problem)]
    rules = active
    try:
        module, repairs = parsing.parse_reading_legacy(source.text, parser_of(project))
    except cst.ParserSyntaxError as error:
        return [unlintable(display_path, *syntax_error_reason(error))]
    except Exception as error:  # a bug in the tree's construction must not stop the run
        return [unlintable(display_path, f"cannot parse: {type(error).__name__}: {error}")]
    if not rules:
        return []
    try:
        analysis = ModuleAnalysis(module, display_path, file_path, project if file_path is not None else None)
        context = FileContext(analysis)
        if by_import and not analysis.renames_torch():
            rules = [rule for rule in rules if rule in by_text or bool(rule.requires_may_be_in_imports)]
        _run_rules(context, rules)
        directives = parse_directives(source.text)
        diagnostics = _diagnostics(context, source.text, directives)
        readers = [rule for rule in rules if getattr(rule, "reads_directives", False)]
        if readers and directives.named:
            diagnostics = sorted(diagnostics + _directive_findings(readers, selected, directives, source.text,
                                                                   display_path), key=lambda d: d.sort_key)
        if repairs:
            diagnostics = _read_through_repairs(display_path, source.text, diagnostics, repairs)
        if context.findings_over_limit:
            diagnostics.insert(0, _over_limit(display_path, context.findings_over_limit))
        # Nothing else refers to this analysis (other files that import this one get
        # their own, from the project), so its memory can go now rather than whenever
        # the cycle collector next runs a full pass.
        analysis.dispose()
    except Exception as error:
        culprit = _rule_in_traceback(error)
        where = f" in rule {culprit}" if culprit else ""
        report.internal_error = (
            f"internal error{where} while linting {display_path}: {type(error).__name__}: {error}\n"
            + "".join(traceback.format_exception(type(error), error, error.__traceback__)[-3:])
        )
        return [
            unlintable(display_path, f"internal error{where}: {type(error).__name__}: {error} (please report this)")
        ]
    return diagnostics


def _read_through_repairs(display_path: str, text: str, diagnostics: list[Diagnostic],
                          repairs: tuple[Repair, ...]) -> list[Diagnostic]:
    """The findings of a file whose legacy syntax was rewritten to build its tree
    (legacy.py).  When a fix of TL205 covers every rewrite (``async=`` only), the file's
    fixes stand: applied together they give Python 3.  Otherwise no fix can make the file
    parse, so none is offered, and a TL000 note says which constructs Python 3 refuses."""
    index = LineIndex(text)
    fixed_here = {(d.row, d.column) for d in diagnostics if d.code == "TL205" and d.text_edits}
    left = [r for r in repairs if index.position(r.start) not in fixed_here]
    if not left:
        return diagnostics
    kinds: dict[str, list[int]] = {}
    for found in left:
        kinds.setdefault(found.construct, []).append(index.position(found.start)[0])
    described = "; ".join(f"{construct} ({rows_phrase(rows)})" for construct, rows in kinds.items())
    row, column = index.position(left[0].start)
    note = file_note(display_path, f"{display_path} has syntax that Python 3 refuses: {described}. torchlint "
                                   "read it as Python 3 to lint it; its findings are shown, without fixes", row, column)
    unfixed = [dataclasses.replace(d, fix=None, text_edits=[], fix_edits=[]) for d in diagnostics]
    return [note, *unfixed]


def _over_limit(display_path: str, dropped: int) -> Diagnostic:
    message = (f"{display_path}: only its first {MAX_FINDINGS_PER_FILE:,} findings are reported, "
               f"{dropped:,} more were found (a generated file? exclude it with `extend-exclude`)")
    return file_note(display_path, message)


def _imports_own_module(text: str, file_path: Optional[Path], project: Optional[Project]) -> bool:
    """Whether the file imports from a module of its own project (found the way the
    inference finds them), where a torch name may have been given another name."""
    if file_path is None or project is None:
        return False
    return project.imports_own_module(text, file_path)


def parser_of(project: Optional[Project]) -> str:
    """The parser that builds the trees of ``project`` (parsing.py)."""
    return project.parser if project is not None else "auto"


def _python_syntax_error(text: str, parser: str) -> Optional[tuple[str, int, int]]:
    """Why and where ``text`` is not Python; None when it parses."""
    try:
        parsing.check_syntax(text, parser)
    except cst.ParserSyntaxError as error:
        return syntax_error_reason(error)
    return None


def syntax_error_reason(error: cst.ParserSyntaxError) -> tuple[str, int, int]:
    """Why and where (row, column) a text does not parse."""
    return error.reason, error.editor_line, error.editor_column


_hook_cache: dict[type, list[tuple[str, type, str]]] = {}


def _hooks(rule: type[Rule]) -> list[tuple[str, type, str]]:
    """(``"visit"``/``"leave"``, node class, method name) for a rule class."""
    hooks = _hook_cache.get(rule)
    if hooks is None:
        hooks = []
        for attribute in dir(rule):
            for prefix in ("visit_", "leave_"):
                if attribute.startswith(prefix):
                    node_class = getattr(cst, attribute[len(prefix):], None)
                    if not isinstance(node_class, type) or not issubclass(node_class, cst.CSTNode):
                        raise TypeError(f"{rule.__name__}.{attribute}: no node class {attribute[len(prefix):]}")
                    hooks.append((prefix[:-1], node_class, attribute))
        _hook_cache[rule] = hooks
    return hooks


def _run_rules(context: FileContext, rules: Sequence[type[Rule]]) -> None:
    enter_table: dict[type, list[Callable]] = {}
    leave_table: dict[type, list[Callable]] = {}
    for rule_class in rules:
        instance = rule_class(context)
        for phase, node_class, method in _hooks(rule_class):
            table = enter_table if phase == "visit" else leave_table
            table.setdefault(node_class, []).append(getattr(instance, method))

    if not leave_table:
        # Without `leave_` hooks the visit is the walk's order of entering nodes: the list of
        # nodes the analyses share, read once more rather than the tree walked again.
        get = enter_table.get
        for node in context.analysis.all_nodes():
            handlers = get(type(node))
            if handlers:
                for handler in handlers:
                    handler(node)
        return

    def enter(node: cst.CSTNode, parent) -> None:
        handlers = enter_table.get(type(node))
        if handlers:
            for handler in handlers:
                handler(node)

    def leave(node: cst.CSTNode) -> None:
        handlers = leave_table.get(type(node))
        if handlers:
            for handler in handlers:
                handler(node)

    walk(context.module, enter, leave)


def _directive_findings(readers: Sequence[type[Rule]], selected: Sequence[type[Rule]], directives,
                        text: str, display_path: str) -> list[Diagnostic]:
    """The findings of the rules that judge the file's ``# noqa`` directives (TL901),
    once every other rule's findings were suppressed or not."""
    index = LineIndex(text)
    line_starts = [index.offset(row, 1) for row in range(1, text.count("\n") + 2)]
    judged = frozenset(rule.code for rule in selected)
    found = []
    for rule in readers:
        for directive, message, edit in rule.unused(directives, judged, frozenset(RULES), text, line_starts):
            row, column = directive.row, directive.column + 1
            if directives.suppresses(rule.code, (row,)):
                continue
            found.append(Diagnostic(
                code=rule.code, name=rule.name, message=message, path=display_path,
                row=row, column=column, end_row=row, end_column=column + len(directive.text),
                fix=Fix(Applicability.SAFE, "Remove the unused codes"), text_edits=[edit],
                fix_edits=[index.position(edit.start) + index.position(edit.end) + (edit.content,)]))
    return found


def _diagnostics(context: FileContext, text: str, directives) -> list[Diagnostic]:
    findings = context.findings
    if not findings:
        return []
    nodes: list[cst.CSTNode] = []
    for finding in findings:
        nodes.append(finding.node)
        nodes.extend(step.node for step in finding.evidence)
        nodes.extend(node for node, _ in finding.related)
        if finding.fix is not None:
            nodes.extend(edit.node for edit in finding.fix.edits)
            nodes.extend(edit.end_node for edit in finding.fix.edits if edit.end_node is not None)
    # Evidence can name nodes of another file of the project: those have no place here.
    own: Optional[set[int]] = None
    offsets = {}
    linked = {id(context.module): True}  # whether a node's parents lead up to this file's module
    for node in nodes:
        path = []
        top = node
        while id(top) not in linked and top.parent is not None:
            path.append(top)
            top = top.parent
        in_module = linked.get(id(top), False)
        for ancestor in path:
            linked[id(ancestor)] = in_module
        if not in_module:  # another tree, or a node the walk does not link (in an import)
            if own is None:
                own = {id(other) for other in _all_nodes(context.module)}
            if id(node) not in own:
                continue
        offsets[id(node)] = (node.start, node.end)
    index = LineIndex(text)
    diagnostics = []
    seen = set()
    for finding in findings:
        start, end = offsets[id(finding.node)]
        row, column = index.position(start)
        end_row, end_column = index.position(end)
        rule = finding.rule
        if directives.suppresses(rule.code, (row, end_row)):
            continue
        key = (rule.code, start, end)
        if key in seen:
            continue
        seen.add(key)
        text_edits = [_text_edit(edit, offsets) for edit in (finding.fix.edits if finding.fix else ())]
        diagnostics.append(
            Diagnostic(
                code=rule.code,
                name=rule.name,
                message=finding.message,
                path=context.path,
                row=row,
                column=column,
                end_row=end_row,
                end_column=end_column,
                # The edits hold parse-tree nodes; the report keeps them as text_edits.
                fix=Fix(finding.fix.applicability, finding.fix.message) if finding.fix else None,
                evidence=_render_steps(context, finding.evidence, offsets, index),
                related=[
                    _note(message, offsets[id(node)][0], index) for node, message in finding.related
                ],
                text_edits=text_edits,
                fix_edits=[
                    index.position(edit.start) + index.position(edit.end) + (edit.content,)
                    for edit in text_edits
                ],
                since=finding.since,
            )
        )
    diagnostics.sort(key=lambda d: d.sort_key)
    return diagnostics


def _all_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node of the tree, including those the walk skips (names in imports...)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for klass in type(node).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if slot in cst.WALK_SLOTS:
                    continue
                value = getattr(node, slot, None)
                if isinstance(value, cst.CSTNode):
                    stack.append(value)
                elif type(value) is tuple or type(value) is list:
                    stack.extend(item for item in value if isinstance(item, cst.CSTNode))


def _text_edit(edit: Edit, offsets: dict[int, tuple[int, int]]) -> TextEdit:
    if edit.span is not None:
        return TextEdit(*edit.span, edit.content)
    start, end = offsets[id(edit.node)]
    if edit.end_node is not None:
        end = offsets[id(edit.end_node)][1]
    if edit.position == "before":
        end = start
    elif edit.position == "after":
        start = end
    return TextEdit(start, end, edit.content)


def _note(message: str, offset: int, index: LineIndex) -> Note:
    row, column = index.position(offset)
    return Note(message, row, column)


def _render_steps(context: FileContext, steps: tuple[Step, ...], offsets, index: LineIndex) -> list[Note]:
    """Evidence sentences; "`w` = `{code}`" followed by "`{code}` returns a tensor" about the
    same node reads as one: "`w` = `torch.randn(3)`, which returns a tensor"."""
    notes: list[Note] = []
    i = 0
    while i < len(steps):
        step = steps[i]
        if id(step.node) not in offsets:
            i += 1
            continue
        text = step.text
        if (
            i + 1 < len(steps)
            and steps[i + 1].node is step.node
            and text.endswith("`{code}`")
            and steps[i + 1].text.startswith("`{code}` ")
        ):
            text = text + ", which " + steps[i + 1].text[len("`{code}` "):]
            i += 1
        if "{code}" in text:
            text = text.replace("{code}", context.snippet(step.node))
        notes.append(_note(text, offsets[id(step.node)][0], index))
        i += 1
    return notes


def _rule_in_traceback(error: BaseException) -> Optional[str]:
    tb = error.__traceback__
    culprit = None
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("self")
        if isinstance(candidate, Rule):
            culprit = type(candidate).code
        tb = tb.tb_next
    return culprit
