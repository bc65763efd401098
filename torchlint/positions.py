"""Source positions for the few nodes that get reported.

libcst's PositionProvider records a range for every node of the module and costs
several times a parse.  We only need ranges for reported nodes and their evidence,
so this regenerates the code once, counting characters, and records offsets only
for the nodes asked for.  libcst round-trips source exactly, so the generated text
is the file's text and offsets map straight onto it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

from torchlint.source import LineIndex

class _OffsetState(CodegenState):
    def __init__(self, module: cst.Module, wanted: Optional[set[int]]):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.wanted = wanted  # None: every node
        self.found: dict[int, tuple[int, int]] = {}
        self.outer: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if self.wanted is None:
            self.outer[id(node)] = (start, self.offset)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        if self.wanted is not None and id(node) not in self.wanted:
            yield
            return
        start = self.offset
        yield
        self.found[id(node)] = (start, self.offset)


def node_offsets(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """``id(node) -> (start, end)`` character offsets for each of ``nodes``."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    state = _OffsetState(module, wanted)
    module._codegen(state)
    missing = wanted - state.found.keys()
    if missing:
        # Nodes without a syntactic position of their own (e.g. Param, Arg): fall back
        # to libcst's provider, which knows how to place every node.
        from libcst.metadata import MetadataWrapper, PositionProvider

        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        ranges = wrapper.resolve(PositionProvider)
        index = LineIndex(module.code)
        for node, code_range in ranges.items():
            if id(node) in missing:
                start = index.offset(code_range.start.line, code_range.start.column + 1)
                end = index.offset(code_range.end.line, code_range.end.column + 1)
                state.found[id(node)] = (start, end)
    return state.found


def all_offsets(module: cst.Module) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """For every node: ``id -> (start, end)`` of its syntactic range (without its own
    parentheses), and ``id -> (start, end)`` of everything its code generation writes
    (with them; for statements also leading blank lines and the trailing newline)."""
    state = _OffsetState(module, None)
    module._codegen(state)
    return state.found, state.outer
