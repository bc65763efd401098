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
    def __init__(self, module: cst.Module, wanted: set[int]):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.wanted = wanted
        self.found: dict[int, tuple[int, int]] = {}

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
        if id(node) not in self.wanted:
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
