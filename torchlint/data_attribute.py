"""How a ``.data`` attribute is used: read, written through, assigned, or indexed with 0.

TL101, TL102, TL103 and TL203 each take one of these uses, so every ``x.data`` is
reported by exactly one of them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from torchlint.writes import Write, find_write, is_store_target

if TYPE_CHECKING:
    from torchlint.context import FileContext


class DataUse(enum.Enum):
    READ = "read"
    WRITE = "write"  # in place, through .data or a view of it (TL102)
    ASSIGN = "assign"  # x.data = y (TL103)
    INDEX_ZERO = "index zero"  # x.data[0] read (TL203 when x is 0-dim, else a read)


@dataclass(frozen=True)
class DataAccess:
    use: DataUse
    write: Optional[Write] = None
    subscript: Optional[cst.Subscript] = None


def data_access(ctx: "FileContext", node: cst.Attribute) -> DataAccess:
    """Classify the ``.data`` attribute ``node`` (memoised per file)."""
    cache = ctx.cache.setdefault("data_access", {})
    key = id(node)
    if key not in cache:
        cache[key] = _classify(ctx, node)
    return cache[key]


def _classify(ctx: "FileContext", node: cst.Attribute) -> DataAccess:
    if is_store_target(ctx, node):
        return DataAccess(DataUse.ASSIGN)
    write = find_write(ctx, node)
    if write is not None:
        return DataAccess(DataUse.WRITE, write)
    parent = ctx.parent(node)
    if isinstance(parent, cst.Subscript) and parent.value is node and _is_index_zero(parent):
        return DataAccess(DataUse.INDEX_ZERO, subscript=parent)
    return DataAccess(DataUse.READ)


def _is_index_zero(node: cst.Subscript) -> bool:
    if len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) \
        and index.value.value == "0"
