"""torchlint's tree from libcst's own parser: the reference, and the fallback.

torchlint's fast tree (cst.py) is built from CPython's ``ast``, so it can only be built
for syntax the running Python knows: Python 3.10 cannot build it for a file that uses
``except*`` or PEP 695 generics, which libcst parses on any Python.  This module parses
with libcst and gives the rules the same tree: each libcst node becomes the cst.py node
of the same class name, with the same fields, and with libcst's own ranges as character
offsets (libcst writes the source back exactly, so counting characters while it
generates the code gives every node's range in one pass).

Parsing this way costs about ten times what the fast tree costs, so it is used only
where the fast tree cannot be built (parsing.py) or when asked (``--parser libcst``).
"""

from __future__ import annotations

import bisect
import faulthandler
import json
import os
import re
import resource
import signal
import time
from contextlib import contextmanager
from typing import Iterator, Optional

import libcst
from libcst._nodes.internal import CodegenState

from torchlint.syntax import cst

# libcst's sentinel for "absent" (`MaybeSentinel.DEFAULT`): None in torchlint's tree.
_ABSENT = libcst.MaybeSentinel


# libcst parses 100 KB of ordinary code in well under a second; a file it needs far
# longer for is one of the pathological ones _trial_parse guards against.
LIBCST_SECONDS = 3.0  # and a second per 50,000 characters
LIBCST_MEMORY = 1 << 30  # bytes of address space it may add
_OUT_OF_MEMORY = 3  # the trial parse's exit status when it failed in another way
_REFUSED = 4  # ... when libcst refused the text (its error is in the pipe)


def _address_space() -> int:
    """This process's virtual memory size in bytes (what RLIMIT_AS counts)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


class Unsupported(Exception):
    """libcst parsed the text, but into a node torchlint's tree has no class for."""


def check(text: str) -> None:
    """``cst.ParserSyntaxError`` unless libcst parses ``text`` (no tree is built)."""
    text, _ = _without_form_feed_indents(text)
    problem = _trial_parse(text)
    if problem is not None:
        raise problem
    if not hasattr(os, "fork"):  # no trial: the parse itself
        _libcst_parse(text)


def parse_module(text: str) -> cst.Module:
    """Parse ``text`` with libcst into torchlint's tree; ``cst.ParserSyntaxError`` when
    libcst cannot parse it, or when its tree cannot be mirrored exactly."""
    given, removed = _without_form_feed_indents(text)
    problem = _trial_parse(given)
    if problem is not None:
        raise problem
    theirs = _libcst_parse(given)
    state = _OffsetState(theirs)
    try:
        theirs._codegen(state)
    except RecursionError as error:
        raise _too_deep(error) from None
    written = "".join(state.tokens)
    if written != given and written != given + theirs.default_newline:
        # libcst drops some whitespace it does not model; its offsets would be off.
        raise cst.ParserSyntaxError("libcst's tree does not reproduce the text", syntax=False)
    found, outer = (state.found, state.outer) if not removed else \
        (_shifted(state.found, removed), _shifted(state.outer, removed))
    try:
        return _Mirror(text, found, outer).module(theirs)
    except RecursionError as error:
        raise _too_deep(error) from None
    except Unsupported as error:
        raise cst.ParserSyntaxError(f"libcst node {error} has no counterpart in torchlint's tree",
                                    syntax=False) from None


# Python counts a line's indentation from after the last form feed in it; libcst's tokenizer
# miscounts such lines, and its code generation drops a form feed that starts one.
_FORM_FEED_INDENT = re.compile(r"^[ \t\f]*\f", re.MULTILINE)


def _without_form_feed_indents(text: str) -> tuple[str, list[int]]:
    """``text`` without what comes up to the last form feed of each line's indentation (the
    same code to Python), and where characters were left out, as offsets of what is left."""
    if "\f" not in text:
        return text, []
    pieces, removed, taken, kept = [], [], 0, 0
    for match in _FORM_FEED_INDENT.finditer(text):
        pieces.append(text[taken:match.start()])
        kept += match.start() - taken
        removed.extend([kept] * (match.end() - match.start()))
        taken = match.end()
    pieces.append(text[taken:])
    return "".join(pieces), removed


def _shifted(ranges: dict[int, tuple[int, int]], removed: list[int]) -> dict[int, tuple[int, int]]:
    """Node ranges in offsets of the text libcst was given, as offsets of the original text:
    a start where characters were left out comes after them, an end there before them."""
    return {key: (start + bisect.bisect_right(removed, start), end + bisect.bisect_left(removed, end))
            for key, (start, end) in ranges.items()}


def _libcst_parse(text: str) -> libcst.Module:
    try:
        return libcst.parse_module(text)
    except libcst.ParserSyntaxError as error:
        raise cst.ParserSyntaxError(_reason(error), *_position(error)) from None
    except RecursionError as error:
        raise _too_deep(error) from None


def _too_deep(error: RecursionError) -> cst.ParserSyntaxError:
    return cst.ParserSyntaxError(f"nested too deeply for libcst (RecursionError: {error})", syntax=False,
                                 too_deep=True)


def _trial_parse(text: str) -> Optional[cst.ParserSyntaxError]:
    """What is wrong with running libcst's native parser on ``text`` in this process: its
    refusal (a syntax error), or a reason it must not run here at all; None when it
    parses the text and may be run again here.

    The native parser recurses on the C stack, and a file nested deeply enough (2,000
    parentheses, 10,000 chained operators) overflows it: a segmentation fault, which no
    Python code can catch; on a long chain with a syntax error it can also run for
    minutes.  Python's own parser refuses such files (which is why they come here), so
    the parse is tried first in a forked child, within ``LIBCST_SECONDS`` (more for a
    long text) and ``LIBCST_MEMORY``; the child sends back libcst's syntax error, so a
    file libcst refuses is parsed once."""
    if not hasattr(os, "fork"):
        return None
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, report a refusal through the pipe, exit
        status = _OUT_OF_MEMORY
        try:
            os.close(reader)
            faulthandler.disable()
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash writes no core file
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            room = _address_space() + LIBCST_MEMORY
            if hard == resource.RLIM_INFINITY or room < hard:
                resource.setrlimit(resource.RLIMIT_AS, (room, hard))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                libcst.parse_module(text)
                status = 0
            except libcst.ParserSyntaxError as error:
                os.write(writer, json.dumps([_reason(error), *_position(error), True, False]).encode())
                status = _REFUSED
            except RecursionError as error:
                os.write(writer, json.dumps([_too_deep(error).message, 1, 1, False, True]).encode())
                status = _REFUSED
        finally:
            os._exit(status)
    os.close(writer)
    seconds = LIBCST_SECONDS + len(text) / 50_000
    deadline = time.monotonic() + seconds
    pause = 0.001
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return cst.ParserSyntaxError(f"libcst's parser took longer than {seconds:.0f} s on it", syntax=False)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        sent = os.read(reader, 1 << 16)
    except BaseException:  # the file's time limit (guard.py) while waiting
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(reader)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    if code == 0:
        return None
    if code == _REFUSED:
        message, row, column, syntax, too_deep = json.loads(sent)
        return cst.ParserSyntaxError(message, row, column, syntax=syntax, too_deep=too_deep)
    if code == _OUT_OF_MEMORY:
        return cst.ParserSyntaxError(f"libcst's parser needed more than {LIBCST_MEMORY >> 20} MiB of memory for it",
                                     syntax=False)
    return cst.ParserSyntaxError("nested too deeply for libcst's parser (it crashed on the file)", syntax=False,
                                 too_deep=True)


def _position(error: libcst.ParserSyntaxError) -> tuple[int, int]:
    """Where the error is, 1-based: the native parser's message has it ("error at 31:32",
    the column 0-based), while its line attributes may point at the line after."""
    found = re.search(r"error at (\d+):(\d+)", error.message)
    if found:
        return int(found.group(1)), int(found.group(2)) + 1
    return error.editor_line, error.editor_column


def _reason(error: libcst.ParserSyntaxError) -> str:
    """libcst's message, on one line and short: "expected one of ), *, **, ... (libcst)"."""
    message = " ".join(error.message.split()) or "invalid syntax"
    message = re.sub(r"^parser error: (error at \d+:\d+: )?", "", message)
    if len(message) > 120:
        message = message[:119].rstrip(" ,") + "…"
    return f"{message} (libcst)"


class _Mirror:
    """Builds cst.py nodes from libcst nodes, with their offsets."""

    def __init__(self, text: str, found: dict[int, tuple[int, int]], outer: dict[int, tuple[int, int]]):
        self.text = text
        self.found = found
        self.outer = outer
        self.size = len(text)

    def module(self, theirs: libcst.Module) -> cst.Module:
        body = [self.node(statement) for statement in theirs.body]
        return cst.Module(body, self.text, theirs.default_indent, theirs.default_newline,
                          self.text.endswith(("\n", "\r")), 0, self.size)

    def row_column(self, offset: int) -> tuple[int, int]:
        line_start = max(self.text.rfind("\n", 0, offset), self.text.rfind("\r", 0, offset)) + 1
        return self.text.count("\n", 0, offset) + 1, offset - line_start + 1

    def range(self, theirs: libcst.CSTNode) -> tuple[int, int]:
        # Without a final line break libcst writes one (and counts it): clamp.
        start, end = self.found.get(id(theirs)) or self.outer[id(theirs)]
        return min(start, self.size), min(end, self.size)

    def node(self, theirs: libcst.CSTNode):
        name = type(theirs).__name__
        if name in ("ExceptHandler", "ExceptStarHandler") and isinstance(theirs.type, libcst.Tuple) \
                and not theirs.type.lpar:
            # `except A, B:` (Python 3.14, PEP 758); in Python 2 code it meant `except A as B`.
            row, column = self.row_column(self.range(theirs.type)[0])
            raise cst.ParserSyntaxError("multiple exception types must be parenthesized (Python 3.14 syntax; "
                                        "torchlint lints Python up to 3.13)", row, column)
        ours = getattr(cst, name, None)
        if not (isinstance(ours, type) and issubclass(ours, cst.CSTNode)):
            raise Unsupported(name)
        values = [self.value(name, field, getattr(theirs, field, None)) for field in ours._init_fields]
        node = ours(*values, *self.range(theirs))
        if isinstance(node, cst._Parenthesized):
            # libcst's parenthesis nodes hold the whitespace inside them: ours are one character.
            node.lpar = tuple(cst.LeftParen(start, start + 1) for start, _ in map(self.range, theirs.lpar))
            node.rpar = tuple(cst.RightParen(end - 1, end) for _, end in map(self.range, theirs.rpar))
        return node

    def value(self, owner: str, field: str, value):
        if isinstance(value, libcst.CSTNode):
            return self.node(value)
        if isinstance(value, (list, tuple)):
            return [self.node(item) for item in value if isinstance(item, libcst.CSTNode)]
        if isinstance(value, _ABSENT):
            return "" if field == "star" else None
        if owner == "Module" and field == "code":
            return self.text
        return value


class _OffsetState(CodegenState):
    """libcst's code generation, counting the characters written before each node."""

    def __init__(self, module: libcst.Module):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.found: dict[int, tuple[int, int]] = {}
        self.outer: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def before_codegen(self, node: libcst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: libcst.CSTNode) -> None:
        self.outer[id(node)] = (self._starts.pop(), self.offset)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    @contextmanager
    def record_syntactic_position(self, node: libcst.CSTNode, *, start_node: Optional[libcst.CSTNode] = None,
                                  end_node: Optional[libcst.CSTNode] = None) -> Iterator[None]:
        start = self.offset
        yield
        self.found[id(node)] = (start, self.offset)


def all_offsets(module: libcst.Module) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """For every node: ``id -> (start, end)`` of its syntactic range (libcst's
    ``PositionProvider``: without its own parentheses), and ``id -> (start, end)`` of
    everything its code generation writes (with them; for statements also leading blank
    lines and the trailing newline)."""
    state = _OffsetState(module)
    module._codegen(state)
    return state.found, state.outer
