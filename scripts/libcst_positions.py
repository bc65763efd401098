"""libcst's ranges for every node of a module, as character offsets, for checking
torchlint's own tree (torchlint/cst.py) against libcst's (scripts/compare_cst.py,
tests/test_cst.py).

libcst round-trips source exactly, so generating the module's code while counting
characters gives the offsets of what each node writes (with its parentheses) and of
its syntactic range (libcst's PositionProvider, without them), in one pass.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState


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


def all_offsets(module: cst.Module) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """For every node: ``id -> (start, end)`` of its syntactic range (without its own
    parentheses), and ``id -> (start, end)`` of everything its code generation writes
    (with them; for statements also leading blank lines and the trailing newline)."""
    state = _OffsetState(module, None)
    module._codegen(state)
    return state.found, state.outer
