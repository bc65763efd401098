"""Helpers that rules use to build the edits of a fix.

An edit names a node of the parsed file and the text that replaces it (or goes before
or after it); the engine turns nodes into offsets, applies the edits, and re-parses and
compiles the result before anything is written, so a helper here only has to produce
text that is right where it lands.  New code is made of slices of the file's own source,
with its indentation and newline, so a rewritten statement looks like its neighbours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from torchlint.syntax import cst
from torchlint.syntax.source import LINE_BREAK, line_start
from torchlint.syntax.walk import iter_nodes
from torchlint.analysis.semantic import BindingKind
from torchlint.framework.noqa import is_noqa_comment
from torchlint.framework.rule import Edit

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext


def replace(node: cst.CSTNode, content: str) -> Edit:
    return Edit(node, content)


def insert_before(node: cst.CSTNode, content: str) -> Edit:
    return Edit(node, content, "before")


def insert_after(node: cst.CSTNode, content: str) -> Edit:
    return Edit(node, content, "after")


def method_call(ctx: "FileContext", receiver: cst.BaseExpression, call: str) -> str:
    """``receiver.call`` with the receiver parenthesized when needed: ``(a + b).detach()``."""
    return f"{ctx.receiver_code(receiver)}.{call}"


# --- torch itself ------------------------------------------------------------------


def torch_name(ctx: "FileContext") -> tuple[str, tuple[Edit, ...]]:
    """How this file refers to the torch module (``torch``, or ``T`` after ``import torch
    as T``), and the edit that adds ``import torch`` when nothing binds it."""
    for name, bindings in ctx.model.module_scope.bindings.items():
        for binding in bindings:
            if binding.kind is BindingKind.IMPORT and binding.qualname == "torch" and \
                    not _rebound(ctx, name):
                return name, ()
    if "torch" in ctx.model.module_scope.bindings:
        return "torch", ()  # bound to something else: leave it to the person, the check will fail
    return "torch", (_import_edit(ctx, "import torch"),)


def _rebound(ctx: "FileContext", name: str) -> bool:
    """``name`` is also bound at module level by something other than an import."""
    return any(b.kind is not BindingKind.IMPORT for b in ctx.model.module_scope.bindings.get(name, ()))


def _import_edit(ctx: "FileContext", statement: str) -> Edit:
    """Insert ``statement`` as a new top-level line after the docstring and any
    ``from __future__`` imports."""
    module, newline = ctx.module, ctx.newline
    body = list(module.body)
    index = 0
    if body and _is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_future_import(body[index]):
        index += 1
    if index < len(body):
        return insert_before(body[index], statement + newline)
    if body:
        return insert_after(body[-1], newline + statement)
    return insert_before(module, statement + newline)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _is_future_import(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine)
            and any(isinstance(s, cst.ImportFrom) and s.module is not None
                    and isinstance(s.module, cst.Name) and s.module.value == "__future__"
                    for s in statement.body))


# --- statements --------------------------------------------------------------------


def own_line(ctx: "FileContext", node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement line that holds ``node`` when it is the only statement on it and
    sits in an indented block or at module level (so it can be wrapped in a block)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            parent = ctx.parent(ancestor)
            if len(ancestor.body) == 1 and isinstance(parent, (cst.IndentedBlock, cst.Module)):
                return ancestor
            return None
        if isinstance(ancestor, (cst.BaseCompoundStatement, cst.SimpleStatementSuite, cst.Lambda)):
            return None
    return None


def trailing_comment(ctx: "FileContext", line: cst.SimpleStatementLine) -> Optional[str]:
    """The comment after the statement(s) of ``line`` (``# noqa``), if there is one."""
    text = ctx.text
    end = ctx.span(line)[1]
    line_end = LINE_BREAK.search(text, end)
    stop = line_end.start() if line_end else len(text)
    start = text.find("#", end, stop)  # only `;` and blanks can come before it
    return text[start:stop] if start >= 0 else None


def list_items(ctx: "FileContext", nodes: Sequence[cst.CSTNode], end: int) -> list[list[str]]:
    """``[source, separator]`` for each of ``nodes``, the items of a comma-separated list
    that ends at offset ``end``: the separator runs from the item to the next one (its
    comma, spaces, comments), the last one's up to ``end``."""
    spans = [ctx.outer_span(node) for node in nodes]
    nexts = [start for start, _ in spans[1:]] + [end]
    return [[ctx.text[start:stop], ctx.text[stop:following]] for (start, stop), following in zip(spans, nexts)]


def items_without(ctx: "FileContext", nodes: Sequence[cst.CSTNode], end: int, dropped) -> Optional[str]:
    """The text from the first of ``nodes`` (the items of a comma-separated list that ends
    at offset ``end``) to ``end``, without the items for which ``dropped(node)`` is true;
    None when none is left.  A kept item keeps the separator after it (its comma, spaces,
    comments) and the last one kept takes what ended the list (a trailing comma), so the
    list keeps its layout: the arguments of a call, the names of an import, the elements
    of a tuple."""
    items = list_items(ctx, nodes, end)
    kept = [item for item, node in zip(items, nodes) if not dropped(node)]
    if not kept:
        return None
    kept[-1][1] = items[-1][1]
    return "".join(source + separator for source, separator in kept)


def call_text(ctx: "FileContext", call: cst.Call, dropped=lambda arg: False, added: str = "") -> str:
    """The source of ``call`` (what ``replace(call, ..)`` replaces: not the parentheses
    around it) without the arguments for which ``dropped(arg)`` is true, and with ``added``
    (``name=value, ...``) after the last one kept; the arguments kept keep their layout
    (items_without)."""
    start, end = ctx.span(call)
    close = end - 1  # the call's `)`
    opening = ctx.span(call.args[0])[0] if call.args else close
    arguments = (items_without(ctx, call.args, close, dropped) or "") if call.args else ""
    if added:
        body = arguments.rstrip()
        arguments = f"{body}{'' if not body or body.endswith(',') else ','}{' ' if body else ''}{added}"
    return ctx.text[start:opening] + arguments + ctx.text[close:end]


def has_noqa(ctx: "FileContext", line: cst.SimpleStatementLine) -> bool:
    """Whether ``line`` ends in a ``# noqa`` comment: its findings are kept as they are,
    so no fix (its own or a neighbour's) may rewrite it."""
    return is_noqa_comment(trailing_comment(ctx, line))


# The most statements one block groups: each finding of a run carries its block's fix,
# so without a bound 3,000 consecutive `x.data.add_(..)` made 3,000 fixes of 3,000 lines.
MAX_STATEMENT_RUN = 50


def statement_run(ctx: "FileContext", line: cst.SimpleStatementLine, belongs) -> list[cst.SimpleStatementLine]:
    """``line`` and the neighbouring statement lines of its block for which ``belongs(line)``
    is true, so that consecutive statements get one block rather than one each.  A run
    longer than ``MAX_STATEMENT_RUN`` is cut into blocks of that many statements from its
    first one (the same cut whichever member asks)."""
    parent = ctx.parent(line)
    body = parent.body if isinstance(parent, (cst.IndentedBlock, cst.Module)) else [line]
    index = next(i for i, statement in enumerate(body) if statement is line)
    first = last = index
    while first > 0 and _single(body[first - 1]) and belongs(body[first - 1]):
        first -= 1
    start = index - (index - first) % MAX_STATEMENT_RUN
    end = start + MAX_STATEMENT_RUN
    while last + 1 < min(len(body), end) and _single(body[last + 1]) and belongs(body[last + 1]):
        last += 1
    return list(body[start:last + 1])


def _single(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1


# A node of the file, and its new text or the node whose source takes its place.
Replacement = tuple[cst.CSTNode, Union[str, cst.CSTNode]]


def wrap_in_no_grad(ctx: "FileContext", lines: Sequence[cst.SimpleStatementLine],
                    replacements: Sequence[Replacement] = ()) -> tuple[Edit, ...]:
    """Edits that put consecutive statement ``lines`` inside one ``with torch.no_grad():``
    (importing torch when needed), with ``replacements`` made inside.  Comments and blank
    lines between the statements move into the block with them."""
    torch, imports = torch_name(ctx)
    start, end = ctx.span(lines[0])[0], ctx.span(lines[-1])[1]
    # A compound statement (a loop the block goes around) ends after its last line break:
    # that break stays after the block, or the next statement would be indented into it.
    closing = ctx.text[start:end][len(ctx.text[start:end].rstrip("\r\n")):]
    end -= len(closing)
    strings = [ctx.span(node) for line in lines for node in iter_nodes(line)
               if isinstance(node, (cst.SimpleString, cst.FormattedString))]
    pieces = _pieces(ctx, start, end, replacements)
    text, strings = _assemble(ctx, pieces, strings)
    indent = ctx.line_indent(lines[0])
    body = _indented(text, strings, indent, ctx.indent_unit)
    code = f"with {torch}.no_grad():{ctx.newline}{indent}{ctx.indent_unit}{body}{closing}"
    end_node = lines[-1] if len(lines) > 1 else None
    return (Edit(lines[0], code, end_node=end_node), *imports)


def _pieces(ctx: "FileContext", start: int, end: int,
            replacements: Sequence[Replacement]) -> list[tuple[int, int, Optional[str]]]:
    """``ctx.text[start:end]`` as ``(start, end, None)`` for the source kept as it is and
    ``(start, end, text)`` for a replaced range.  Of nested replacements the outer one
    wins: it was made from the original source."""
    spans = sorted((ctx.outer_span(old), new if isinstance(new, str) else ctx.code(new))
                   for old, new in replacements)
    pieces, offset = [], start
    for (old_start, old_end), new in spans:
        if old_start < offset or old_end > end:
            continue
        pieces += [(offset, old_start, None), (old_start, old_end, new)]
        offset = old_end
    pieces.append((offset, end, None))
    return pieces


def _assemble(ctx: "FileContext", pieces: list[tuple[int, int, Optional[str]]],
              strings: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """The text of ``pieces``, and where the string literals at ``strings`` (source
    offsets) are in it: moved with the source around them, or found again in the text
    that replaced them."""
    parts: list[str] = []
    moved = []
    length = 0
    for start, end, new in pieces:
        inside = sorted(span for span in strings if start <= span[0] and span[1] <= end)
        if new is None:
            moved += [(s - start + length, e - start + length) for s, e in inside]
            parts.append(ctx.text[start:end])
        else:
            found = 0
            for s, e in inside:
                at = new.find(ctx.text[s:e], found)
                if at >= 0:
                    found = at + e - s
                    moved.append((length + at, length + found))
            parts.append(new)
        length += len(parts[-1])
    return "".join(parts), moved


def _indented(text: str, strings: list[tuple[int, int]], indent: str, unit: str) -> str:
    """``text`` (source that starts at a statement indented by ``indent``) one ``unit``
    deeper: every line that starts with ``indent`` gets ``unit`` after it (at module
    level every line, blank ones too), except lines that start inside a string literal
    or continue the line before after a backslash, which stay exactly as they are."""
    parts, kept = [], 0
    for newline in LINE_BREAK.finditer(text):
        line_start = newline.end()
        if _in_string(strings, newline.start()) or _continued(text, newline.start(), strings) or \
                not text.startswith(indent, line_start):
            continue
        parts += [text[kept:line_start + len(indent)], unit]
        kept = line_start + len(indent)
    parts.append(text[kept:])
    return "".join(parts)


def _in_string(strings: list[tuple[int, int]], offset: int) -> bool:
    return any(start <= offset < end for start, end in strings)


def _continued(text: str, newline: int, strings: list[tuple[int, int]]) -> bool:
    """The line break at ``newline`` follows a backslash that joins the next line to this
    one (not one at the end of a comment)."""
    if not text.endswith("\\", 0, newline):
        return False
    start = line_start(text, newline)
    return not any(char == "#" and not _in_string(strings, offset)
                   for offset, char in enumerate(text[start:newline], start))
