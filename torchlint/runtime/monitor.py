"""The monitor: runs user code under real torch and judges each watched finding.

This module runs inside a sandboxed job (it imports torch); the entry point is
``run_job(payload)``.  A payload names the code to run (a file run whole, a user's
entry point, or one function called with synthesized arguments) and the findings to
watch ("sites").  While the code runs, five instruments record what torch does:

- saved-tensor hooks see every tensor autograd saves for backward, and check it again
  when backward unpacks it;
- a dispatch mode sees every in-place write (the schema's ``alias_info.is_write``)
  and every allocation;
- a function mode sees the Python-level calls: ``.data`` get/set, ``detach_``,
  ``numpy()``, ``torch.tensor(t)``, the dropout functions of a TL419 site (the mode of the
  module whose method calls them, and what they dropped), and every use of a tensor as an
  argument;
- a line tracer (only in the watched files) counts which lines ran, and inspects
  values after a statement (a loss total's graph, two tensors' storages);
- an optimizer step pre-hook (only with a TL407 site) compares each parameter's
  ``.grad`` at a step with what it held at the previous one plus what backward added
  since (a hook on the parameter sees each gradient arrive).

Every event is attributed to the innermost frame in a watched file, with the column
span of the instruction (``co_positions``), and matched to the findings it overlaps.
At the end each site gets a verdict with evidence a user can read.

Two facts shape the saved-tensor hooks.  While any hooks are active, autograd no longer
checks the version counter of saved tensors, nor whether one was ``detach_()``-ed:
both checks are re-implemented in ``unpack``.  And a pack hook that keeps a strong
reference to an output tensor makes an uncollectable cycle (output -> grad_fn ->
saved -> output), so outputs are kept as a detached alias plus a weak reference.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import itertools
import linecache
import math
import os
import random
import re
import sys
import time
import traceback
import types
import unittest
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchlint.analysis import torch_facts
from torchlint.framework.verdicts import (
    CONFIRMED, COULD_NOT_RUN, LATENT, NOT_REPRODUCED, Observation, Verdict, quote, where as where_is,
)
from torchlint.rules import all_rules
from torchlint.rules.device_mismatch import DEVICE_ERRORS
from torchlint.runtime import made_inputs, stand_ins, synthetic


SNAPSHOT_ELEMENTS = 1 << 16  # saved tensors up to this size are copied when saved
GRAPH_NODE_CAP = 100_000
ALIAS_RULES = ("TL301", "TL303", "TL304")
EMPTY_OPS = ("empty.memory_format", "empty_strided.default", "new_empty.default", "empty.names")
# Ops that write their destination without reading it: a sentinel in it is not "read".
OVERWRITE_OPS = {
    "copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_",
    "cauchy_", "geometric_", "log_normal_", "set_", "resize_", "index_put_", "masked_fill_",
}
VIEW_OPS = {
    "view", "_unsafe_view", "select", "slice", "as_strided", "t", "transpose", "expand", "unsqueeze", "squeeze",
    "permute", "detach", "alias", "_reshape_alias", "lift_fresh", "unbind", "split", "split_with_sizes",
    "narrow", "diagonal", "unfold", "view_as_real", "view_as_complex", "chunk", "movedim",
}
# How a tensor leaves the graph or torch (TL410's sites), by the name the function mode sees.
GRAPH_EXITS = {
    "detach": ".detach()", "__get__": ".data", "numpy": ".numpy()", "item": ".item()", "tolist": ".tolist()",
    "__float__": "float()", "__int__": "int()", "__index__": "int()", "__array__": "numpy", "tensor": "torch.tensor()",
}
SENTINELS = {
    torch.float32: (torch.int32, 0x7FDEAD00),
    torch.float64: (torch.int64, 0x7FFDEAD0DEAD0000),
    torch.float16: (torch.int16, 0x7E5A),
    torch.bfloat16: (torch.int16, 0x7FDA),
    torch.int64: (torch.int64, 0x5A5A5A5A5A5A5A5A),
    torch.int32: (torch.int32, 0x5A5A5A5A),
    torch.int16: (torch.int16, 0x5A5A),
}


# --- where things happen ---------------------------------------------------------------


# Findings whose error is raised where their value is used, on a line their finding names as
# related, not on their own (TL220's quotient fails as an index).
RAISED_WHERE_USED = frozenset(code for code, rule in all_rules().items() if rule.raised_where_used)


@dataclass
class Site:
    """A finding to judge: its rule, its span (1-based lines and columns, end exclusive)
    and the first line of its statement (the line the tracer sees)."""

    id: int
    code: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    stmt_line: int
    related_lines: tuple = ()  # where the alias was made (the finding's related notes)
    probe: Optional[str] = None  # an expression to inspect after the statement
    hits: int = 0
    uses: int = 0  # runs of its related lines, for a rule whose error comes where the value is used
    events: list = field(default_factory=list)  # (kind, details) in order
    # A probe of an object's attribute (`self.sum` in a meter's `update`) follows one object:
    # the first whose value holds a graph; ``samples`` counts the probes of it.
    owner: Optional[int] = None
    samples: int = 0
    # TL401: the total its statement last wrote in place (`stats.get("loss").add_(loss)`),
    # inspected when the probe is an expression the monitor does not evaluate (a call).
    written: Optional[weakref.ref] = None

    @property
    def seen_enough(self) -> bool:
        """Run often enough to be judged; one whose error comes where its value is used
        (``RAISED_WHERE_USED``) also once it reached a line where it is used; a probe of an
        object's attribute once that object was probed often enough."""
        if self.owner is not None and self.samples < ENOUGH_HITS:
            return False
        if self.code in AWAITED_EVENTS and not self.has(AWAITED_EVENTS[self.code]) or self.code in AWAITED_RAISE:
            return False
        return self.hits >= ENOUGH_HITS and (self.uses > 0 or self.code not in RAISED_WHERE_USED
                                             or not self.related_lines)

    @classmethod
    def of(cls, id: int, planned: dict) -> "Site":
        """The site of ``plan.FilePlan.site``'s dict (JSON, so its lists are lists)."""
        return cls(id=id, **{k: (tuple(v) if k == "related_lines" else v) for k, v in planned.items()})

    def add(self, event: str, **details) -> None:
        self.events.append((event, details))

    def has(self, *kinds: str) -> bool:
        return any(kind in kinds for kind, _ in self.events)

    def first(self, *kinds: str) -> Optional[dict]:
        return next((details for kind, details in self.events if kind in kinds), None)


@dataclass(frozen=True)
class Position:
    path: str
    line: int
    col: int  # 1-based character columns, end exclusive
    end_line: int
    end_col: int

    def overlaps(self, site: Site) -> bool:
        # An instruction that starts before the site's statement is a compound statement's
        # header (a `for` loop's FOR_ITER spans its whole body): not the site's code.
        return (self.line, self.col) < (site.end_line, site.end_col) and \
            (site.line, site.col) < (self.end_line, self.end_col) and self.line >= site.stmt_line

    @property
    def text(self) -> str:
        """The source of the instruction's span (its first line), for evidence."""
        line = linecache.getline(self.path, self.line).rstrip("\n")
        end = self.end_col - 1 if self.end_line == self.line else len(line)
        return line[self.col - 1:end].strip() or line.strip()


def _char_column(path: str, line: int, byte_offset: Optional[int]) -> int:
    if byte_offset is None:
        return 1
    text = linecache.getline(path, line).encode("utf-8")
    return len(text[:byte_offset].decode("utf-8", "replace")) + 1


class Locator:
    """Attributes events to the innermost frame in a watched file."""

    def __init__(self, sites: list[Site]):
        self.sites_by_path: dict[str, list[Site]] = {}
        for site in sites:
            self.sites_by_path.setdefault(site.path, []).append(site)
        self._real: dict[str, Optional[str]] = {}
        self._positions: dict[Any, list] = {}

    def watched(self, filename: str) -> Optional[str]:
        real = self._real.get(filename, "")
        if real == "":
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            real = path if path in self.sites_by_path else None
            self._real[filename] = real
        return real

    def position_of(self, code, lasti: int, path: str) -> Position:
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = list(code.co_positions())
        line, end_line, col, end_col = positions[max(lasti, 0) // 2] if positions else (None,) * 4
        line = line or 1
        end_line = end_line or line
        return Position(path, line, _char_column(path, line, col), end_line, _char_column(path, end_line, end_col))

    def here(self) -> Optional[Position]:
        frame = sys._getframe(1)
        while frame is not None:
            path = self.watched(frame.f_code.co_filename)
            if path is not None:
                return self.position_of(frame.f_code, frame.f_lasti, path)
            frame = frame.f_back
        return None

    def callers(self) -> list[Position]:
        """Where the watched frames of the stack are, innermost first: a write inside
        ``update(optimizer, loss)`` happens at the call's line of the caller too."""
        found = []
        frame = sys._getframe(1)
        while frame is not None:
            path = self.watched(frame.f_code.co_filename)
            if path is not None:
                found.append(self.position_of(frame.f_code, frame.f_lasti, path))
            frame = frame.f_back
        return found

    def in_traceback(self, tb) -> Optional[Position]:
        found = None
        while tb is not None:
            path = self.watched(tb.tb_frame.f_code.co_filename)
            if path is not None:
                found = self.position_of(tb.tb_frame.f_code, tb.tb_lasti, path)
            tb = tb.tb_next
        return found

    def sites_at(self, position: Optional[Position], *codes: str) -> list[Site]:
        if position is None:
            return []
        return [site for site in self.sites_by_path.get(position.path, ())
                if (not codes or site.code in codes) and position.overlaps(site)]

    def sites_failing_at(self, position: Optional[Position]) -> list[Site]:
        """The sites whose error comes where their value is used (``RAISED_WHERE_USED``), on one of
        the lines their finding names as related."""
        if position is None:
            return []
        return [site for site in self.sites_by_path.get(position.path, ())
                if site.code in RAISED_WHERE_USED and position.line in site.related_lines]


# --- values in evidence ------------------------------------------------------------------


def fmt(value: Any, limit: int = 6) -> str:
    """A short, readable rendering of a tensor's values: ``[2, 4, 6]``."""
    if isinstance(value, torch.Tensor):
        with _internal():
            flat = value.detach().reshape(-1)
            items = flat[:limit].tolist()
            more = flat.numel() > limit
            if value.dim() == 0:
                return _number(items[0])
        return "[" + ", ".join(_number(item) for item in items) + (", ..." if more else "") + "]"
    return repr(value)


def _number(item: Any) -> str:
    if isinstance(item, float):
        if math.isnan(item):
            return "nan"
        return f"{item:.4g}"
    return str(item)


def extent(t: torch.Tensor) -> tuple[int, int, int]:
    """(storage pointer, first byte, end byte) of the memory a tensor covers."""
    storage = t.untyped_storage().data_ptr()
    if t.numel() == 0:
        return storage, t.data_ptr(), t.data_ptr()
    span = sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride())) + 1
    return storage, t.data_ptr(), t.data_ptr() + span * t.element_size()


def _proportional(a: torch.Tensor, b: torch.Tensor) -> bool:
    """``a`` is ``b`` times a positive number (1 without a scaler, `1 / scale` after
    `GradScaler.unscale_`)."""
    a, b = a.double(), b.double()
    norm = float((b * b).sum())
    if norm == 0.0:
        return False
    factor = float((a * b).sum()) / norm
    return factor > 0 and torch.allclose(a, b * factor, rtol=1e-4, atol=1e-7 * max(abs(factor), 1.0))


def _tensors_in(args, kwargs):
    """The tensors an operation is given, also inside a list or tuple (`torch.cat([a, b])`)."""
    for value in itertools.chain(args, kwargs.values()):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, torch.Tensor))


def _marks_of(table: dict, tensor: torch.Tensor) -> set[int]:
    """The site ids ``table`` (id(tensor) -> (weak reference, site ids)) holds for ``tensor``."""
    entry = table.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else set()


def _mark(table: dict, tensor: torch.Tensor, site_ids: set[int]) -> None:
    """Add ``site_ids`` to what ``table`` holds for ``tensor``; the entry goes with the tensor."""
    key = id(tensor)
    entry = table.get(key)
    if entry is None or entry[0]() is not tensor:
        table[key] = (weakref.ref(tensor, lambda _r, k=key: table.pop(k, None)), set(site_ids))
    else:
        entry[1].update(site_ids)


def _overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


_INTERNAL = [0]
MONITOR: list = [None]  # the running job's monitor


@contextlib.contextmanager
def _internal():
    """The monitor's own torch calls are not events."""
    _INTERNAL[0] += 1
    try:
        yield
    finally:
        _INTERNAL[0] -= 1


# --- the monitor ---------------------------------------------------------------------------


class Saved:
    """A tensor autograd saved for backward, as the pack hook returns it."""

    __slots__ = ("tensor", "original", "base", "version", "had_grad_fn", "extent", "snapshot", "where",
                 "writes", "swapped_at", "__weakref__")


# Runs of a site's statement after which nothing new is learnt: the first saw the write, the
# second the backward that read what it wrote (a loop's next iteration).
ENOUGH_HITS = 3
# Sites whose bug shows only in an event a later part of the run brings: a TL419 dropout
# runs in a training loop first and shows its bug only once the module is in eval mode.
AWAITED_EVENTS = {"TL419": "dropout-eval"}
# Sites whose bug is an error a later run of the line may raise: a loop over a state_dict's
# entries passes the float ones and raises on the int64 `num_batches_tracked`.  They are never
# seen enough; the run goes on to its end or its deadline.
AWAITED_RAISE = frozenset({"TL413"})
# Frames of code nested in a statement's line: a comprehension (before Python 3.12), or a
# lambda (`reduce(lambda x, y: x + y, parts)`), whose every call is a line event of the
# statement's line.  A statement is never inside a lambda, so its frame is not one of these.
_NESTED_FRAMES = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<lambda>"})
GENERATOR_ITEMS = 3  # items taken from a called generator: a few batches, as from a loader


class SeenEnough(BaseException):
    """Every site has run ENOUGH_HITS times: the rest of the run would show nothing new.
    A BaseException, so that the user's ``except Exception`` lets it through."""


class RunOutOfTime(BaseException):
    """The run's share of the time limit is spent: stop it and judge what it reached."""


class Monitor:
    def __init__(self, sites: list[Site]):
        self.sites = sites
        self.locator = Locator(sites)
        self.codes = {site.code for site in sites}
        self.mode_reads: list = []  # TL414: (frame, site) of the forwards whose module was read in training mode
        self.saved: dict[int, weakref.WeakSet] = {}  # storage pointer -> live Saved records
        self.live: dict[int, dict[int, weakref.ref]] = {}  # storage pointer -> id(tensor) -> tensor
        self.tags: dict[int, tuple[weakref.ref, set[int]]] = {}  # id(tensor) -> sites it is an alias of
        # TL416: id(tensor) -> the sites whose factory made it, or made what it was computed from
        # (on the device the factory chose), so that a device error raised deep in a layer that
        # it reaches is told to the site that made it.
        self.made_by: dict[int, tuple[weakref.ref, set[int]]] = {}
        self.watches: list[dict] = []  # writes whose other side we wait to see read
        self.allocations: list[dict] = []  # sentinel-filled legacy constructor results
        self.arrays: list[tuple[weakref.ref, tuple, Optional[Site]]] = []  # numpy sides of `.numpy()`
        self.numpy_pairs: list[tuple[weakref.ref, Any]] = []  # (tensor, array) of `.numpy()`/`from_numpy`
        self.before: dict[int, list] = {}  # site id -> array bytes before its statement
        self.detach_calls: dict[int, Position] = {}
        self.pending: dict[Any, list[Site]] = {}  # frame -> sites whose statement just ran
        self.graph_sizes: dict[int, list[int]] = {}
        self.python_targets: list[int] = []  # the tensor a Python-level in-place call writes (`x[0] = v`)
        self._tracers: dict[str, Any] = {}
        self.seen_errors: set[int] = set()
        self.raised_at_use: set[tuple[int, int]] = set()  # (id(error), site id) already told
        # A training loop runs far longer than its findings need: the run is stopped once
        # every site has run ENOUGH_HITS times, or when its time is up (``deadline``).
        self.deadline: Optional[float] = None
        self.budget: float = 0.0
        self.stop_when_seen = False
        self.lines_run = 0  # line events in the watched files
        self.grads: dict[int, dict] = {}  # id(parameter) -> its `.grad` at the last step, and what came since
        # Layers built on a flagged line (TL409's `nn.Dropout(p, inplace=True)`): id -> (the layer, its
        # sites), and the layers whose forward runs now, innermost last.
        self.module_sites: dict[int, tuple[weakref.ref, list[Site]]] = {}
        self.module_stack: list[int] = []
        self.layer_holders: list[tuple[Site, Any, str]] = []  # TL418: (site, the module, its attribute)
        # TL419: id of each function that drops at random -> its qualified name (the facts table's).
        self.dropouts: dict[int, str] = _dropout_functions() if "TL419" in self.codes else {}

    # -- saved tensors ------------------------------------------------------------------

    def pack(self, t: torch.Tensor) -> Saved:
        with _internal():
            record = Saved()
            leaf = t.grad_fn is None
            record.tensor = t if leaf else t.detach()
            record.original = weakref.ref(t)
            record.base = weakref.ref(t._base) if t._base is not None else None  # a view: its counter is the base's
            record.version = t._version
            record.had_grad_fn = not leaf
            record.extent = extent(t)
            record.snapshot = t.detach().clone() if t.numel() <= SNAPSHOT_ELEMENTS else None
            record.where = self.locator.here()
            record.writes = []
            record.swapped_at = None
            self.saved.setdefault(record.extent[0], weakref.WeakSet()).add(record)
        return record

    def unpack(self, record: Saved) -> torch.Tensor:
        with _internal():
            tensor = record.tensor
            original = record.original()
            where = record.where
            if original is not None and record.had_grad_fn and original.grad_fn is None and not original.requires_grad:
                sites = self._detach_sites(original)
                for site in sites:
                    site.add("corrupted", kind="detach_", saved_at=where)
                raise RuntimeError(
                    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_(). "
                    "(torchlint's monitor re-implements this check of autograd's)")
            if tensor._version != record.version:
                for write in record.writes:
                    for site in write["sites"]:
                        site.add("corrupted", kind="version", saved_at=where, write=write)
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{tensor.type()} {list(tensor.shape)}] is at version {tensor._version}; "
                    f"expected version {record.version} instead. "
                    "(torchlint's monitor re-implements this check of autograd's)")
            if record.swapped_at is not None:
                for site in record.swapped_at:
                    site.add("corrupted", kind="swap", saved_at=where,
                             before=fmt(record.snapshot) if record.snapshot is not None else None, after=fmt(tensor))
            elif record.snapshot is not None and not _same_bits(record.snapshot, tensor):
                for write in record.writes:
                    for site in write["sites"]:
                        site.add("corrupted", kind="bytes", saved_at=where, write=write,
                                 before=fmt(record.snapshot), after=fmt(tensor))
                for site in self._numpy_writers(record):
                    site.add("corrupted", kind="bytes", saved_at=where, write=None,
                             before=fmt(record.snapshot), after=fmt(tensor))
        # The original, while it lives, keeps its grad_fn: double backward (create_graph=True)
        # differentiates through it.
        if original is not None and record.had_grad_fn and original.grad_fn is not None:
            return original
        return tensor

    def _detach_sites(self, original: torch.Tensor) -> list[Site]:
        return self.locator.sites_at(self.detach_calls.get(id(original)), "TL302")

    def _numpy_writers(self, record: Saved) -> list[Site]:
        """The TL304 sites whose numpy-side writes reached the memory of ``record``: through
        an array from ``.numpy()``, or the array a ``torch.from_numpy`` tensor shares."""
        sites = [site for ref, span, site in self.arrays if _overlap(span, record.extent) and ref() is not None
                 and site.code == "TL304" and site.has("numpy-write")]
        sites += [site for site in self.sites if site.code == "TL304" and site not in sites and any(
            kind == "numpy-write" and details.get("span") is not None and _overlap(details["span"], record.extent)
            for kind, details in site.events)]
        return sites

    # -- writes, allocations, reads (dispatch) --------------------------------------------

    def on_dispatch(self, func, args, kwargs):
        schema = func._schema
        name = schema.name.split("::")[-1] + ("." + schema.overload_name if schema.overload_name else ".default")
        written, destinations = [], []
        for index, argument in enumerate(schema.arguments):
            if argument.alias_info is not None and argument.alias_info.is_write:
                value = args[index] if index < len(args) else kwargs.get(argument.name)
                if isinstance(value, torch.Tensor):
                    written.append(value)
                    if argument.is_out:  # `torch.add(a, b, out=buf)`: buf is written, not read
                        destinations.append(value)
        base = schema.name.split("::")[-1]
        if self.allocations:
            self._check_sentinel_reads(base, args, kwargs, written, destinations)
        before = []
        for target in written:
            span = extent(target)
            # Views of one base share its version counter (`z1, z2 = z[:, :c], z[:, c:]`): a
            # write to one moves the version autograd checks on the other, though their bytes
            # do not overlap.  (The counter moves above this dispatch level, after the write.)
            viewed = target._base if target._base is not None else target
            shared = []
            for record in list(self.saved.get(span[0], ())):
                if not _overlap(span, record.extent):
                    if record.base is not None and record.base() is viewed:
                        shared.append(record)
                elif record.snapshot is None:
                    with _internal():
                        record.snapshot = record.tensor.detach().clone()
            before.append((target, span, target._version, shared))
        try:
            out = func(*args, **kwargs)
        except RuntimeError as error:
            if self.made_by:
                self._device_error(error, args, kwargs)
            raise
        if "TL416" in self.codes:
            self._follow_made(name, args, kwargs, out)
        if written:
            where = self.locator.here()
            for target, span, version, shared in before:
                self._on_write(target, span, version, where, name, shared)
        if self.codes & {"TL301", "TL303", "TL304", "TL101"}:
            self._register_outputs(out)
        if self.codes & {"TL204", "TL412"} and name in EMPTY_OPS and isinstance(out, torch.Tensor):
            self._maybe_fill(out)
        return out

    def _on_write(self, target, span, version, where: Optional[Position], op: str, shared=()) -> None:
        # A `.data` read (TL101) is written only through the alias it made (its tag): in
        # `p.data.add_(p.grad.data)` the statement overlaps the read, but the write goes to `p`.
        sites = [site for site in self.locator.sites_at(where) if site.code != "TL101"]
        if "TL409" in self.codes:
            # An optimizer step in a function this file calls (`update(opt, loss)`) is reported
            # at the call: the write happens there as well.
            for outer in self.locator.callers()[1:]:
                sites += [site for site in self.locator.sites_at(outer, "TL409") if site not in sites]
        if self.module_stack:  # a write inside a flagged layer's forward is that layer's
            layer = self.module_sites.get(self.module_stack[-1])
            if layer is not None and layer[0]() is not None:
                sites += [site for site in layer[1] if site not in sites]
        tagged = set(self._tags_of(target))
        for python_target in self.python_targets:
            entry = self.tags.get(python_target)
            if entry is not None and entry[0]() is not None:
                tagged |= entry[1]
        sites += [self._site(i) for i in sorted(tagged) if self._site(i) not in sites]
        write = {"where": where, "op": op, "sites": sites, "bumped": target._version != version}
        for site in sites:
            if site.code == "TL401":
                site.written = weakref.ref(target)
        for record in list(self.saved.get(span[0], ())):
            if _overlap(span, record.extent) or record in shared:
                record.writes.append(write)
                for site in sites:
                    site.add("saved-write", write=write, saved_at=record.where)
        for site in sites:
            site.add("write", write=write)
            if site.code in ALIAS_RULES or site.code == "TL101":
                others = self._others(target, span)
                if others:
                    self.watches.append({"site": site, "span": span, "others": others, "write": write})
                else:
                    site.add("unshared", write=write)

    def _others(self, target, span) -> set[int]:
        mine = {id(target), *self.python_targets}
        others = {i for i, ref in self.live.get(span[0], {}).items()
                  if i not in mine and ref() is not None and _overlap(span, extent(ref()))}
        others |= {id(ref()) for ref, array_span, _site in self.arrays if ref() is not None and _overlap(span, array_span)}
        return others

    def _live_on(self, span) -> set[int]:
        """The live tensors on the storage of ``span`` (numpy writes change whole arrays)."""
        return {i for i, ref in self.live.get(span[0], {}).items() if ref() is not None}

    # -- TL416: where a tensor was made, and the device errors it meets -------------------

    def _made_sites(self, tensor: torch.Tensor) -> set[int]:
        return _marks_of(self.made_by, tensor)

    def _mark_made(self, out, site_ids: set[int]) -> None:
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                _mark(self.made_by, t, site_ids)

    def _follow_made(self, name: str, args, kwargs, out) -> None:
        """A tensor made by a flagged factory (no tensor input: `torch.zeros(n, h)`) is marked
        with its site; so is what an operation computes from a marked tensor on its device, and
        the tensor a flagged move leaves behind (`t.to(device)` whose copy is dropped)."""
        inputs = list(_tensors_in(args, kwargs))
        if name == "_to_copy.default" and isinstance(out, torch.Tensor) and inputs and inputs[0].device != out.device:
            site_ids = {site.id for site in self.locator.sites_at(self.locator.here(), "TL416")}
            if site_ids:
                self._mark_made(inputs[0], site_ids)
            return
        if not inputs or (len(inputs) == 1 and inputs[0] is out):  # `torch.tensor(..)` lifts a new tensor
            site_ids = {site.id for site in self.locator.sites_at(self.locator.here(), "TL416")}
        elif not self.made_by:
            return  # nothing marked yet: nothing to follow
        else:
            # Only on the device it was made on: a marked tensor moved elsewhere (`h.to(device)`)
            # is no longer what the finding is about.
            device = out.device if isinstance(out, torch.Tensor) else None
            site_ids = set()
            for tensor in inputs:
                if device is None or tensor.device == device:
                    site_ids |= self._made_sites(tensor)
        if site_ids:
            self._mark_made(out, site_ids)

    def _device_error(self, error: RuntimeError, args, kwargs) -> None:
        """A device error raised by an operation given a tensor a flagged factory made: the
        error is that site's, wherever the operation runs (in a layer the tensor reaches)."""
        message = str(error).split("\n")[0][:300]
        if not any(signature in message for signature in DEVICE_ERRORS):
            return
        where = self.locator.here()
        for tensor in _tensors_in(args, kwargs):
            for site_id in sorted(self._made_sites(tensor)):
                site = self._site(site_id)
                if not site.has("raised"):
                    at = f" (raised at {where_is(where)}, by an operation given a tensor this line made or left " \
                         "where it was)" if where else ""
                    site.add("raised", type=type(error).__name__, message=message + at)

    def _register_outputs(self, out) -> None:
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.layout == torch.strided:
                key = id(t)
                storage = t.untyped_storage().data_ptr()
                table = self.live.setdefault(storage, {})
                table[key] = weakref.ref(t, lambda _r, s=storage, k=key: self.live.get(s, {}).pop(k, None))

    def _maybe_fill(self, out: torch.Tensor) -> None:
        where = self.locator.here()
        sites = self.locator.sites_at(where, "TL204", "TL412")
        if not sites or out.dtype not in SENTINELS:
            return
        int_dtype, pattern = SENTINELS[out.dtype]
        with _internal():
            out.view(int_dtype).fill_(pattern)
        self.allocations.append({"tensor": weakref.ref(out), "extent": extent(out), "sites": sites,
                                 "dtype": out.dtype, "numel": out.numel(), "where": where})
        for site in sites:
            site.add("allocated", numel=out.numel(), dtype=str(out.dtype).replace("torch.", ""))

    def _check_sentinel_reads(self, base: str, args, kwargs, written, destinations=()) -> None:
        if base in VIEW_OPS:
            return  # a view reads no values
        inputs = [a for a in itertools.chain(args, kwargs.values()) if isinstance(a, torch.Tensor)]
        for destination in destinations:  # once as `out=` (in `add(a, b, out=a)`, `a` is read too)
            inputs.pop(next(i for i, a in reversed(list(enumerate(inputs))) if a is destination))
        if base in OVERWRITE_OPS:
            inputs = [a for a in inputs if not any(a is w for w in written)]
        for tensor in inputs:
            self._sentinel_read(tensor)

    def _sentinel_read(self, tensor: torch.Tensor, how: Optional[str] = None) -> None:
        if not self.allocations or tensor.dtype not in SENTINELS:
            return
        span = extent(tensor)
        for allocation in self.allocations:
            if allocation.get("read") or not _overlap(span, allocation["extent"]):
                continue
            int_dtype, pattern = SENTINELS[tensor.dtype]
            with _internal():
                count = int((tensor.detach().view(int_dtype) == pattern).sum()) if tensor.is_contiguous() or \
                    tensor.dim() == 0 else int((tensor.detach().contiguous().view(int_dtype) == pattern).sum())
            if count:
                allocation["read"] = True
                where = self.locator.here()
                for site in allocation["sites"]:
                    site.add("uninitialized-read", count=count, total=tensor.numel(), where=where, how=how)

    # -- Python-level calls (function mode) -------------------------------------------------

    def on_function(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        owner = getattr(func, "__self__", None)
        if name == "__set__" and owner is torch._C.TensorBase.data and args:
            self._on_data_set(args[0], args[1] if len(args) > 1 else None)
        elif name == "detach_" and args:
            self.detach_calls[id(args[0])] = self.locator.here()
        tensors = [a for a in itertools.chain(args, kwargs.values()) if isinstance(a, torch.Tensor)]
        if self.watches:
            self._check_other_side_reads(tensors, name)
        if self.allocations and name in ("tolist", "item", "numpy", "__repr__", "__str__", "__format__",
                                         "__bool__", "__float__", "__int__"):
            for t in tensors:
                self._sentinel_read(t, name)
        if self.mode_reads and name in _TRAINING_FUNCTIONALS:
            self._functional_mode(name, args, kwargs)
        if "TL410" in self.codes and name in GRAPH_EXITS and args and isinstance(args[0], torch.Tensor):
            self._on_graph_exit(func, name, owner, args[0])
        elif "TL410" in self.codes and name == "tensor" and args and isinstance(args[0], (list, tuple)):
            # `torch.tensor(losses)` of a list of tensors: the values of each leave the graph
            listed = [item for item in args[0] if isinstance(item, torch.Tensor)]
            with _internal():
                attached = [item for item in listed if item.requires_grad]
            if attached or listed:
                self._on_graph_exit(func, name, owner, (attached or listed)[0])
        elif "TL410" in self.codes and func is torch.autograd.grad and not kwargs.get("create_graph"):
            # gradients taken without `create_graph=True` are constants: the outputs' graph stops there
            outputs = args[0] if args else kwargs.get("outputs")
            outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or ())
            given = [item for item in outputs if isinstance(item, torch.Tensor)]
            if given:
                self._on_graph_exit(func, name, owner, given[0], how="torch.autograd.grad() without create_graph")
        writes = args and isinstance(args[0], torch.Tensor) and (
            name == "__setitem__" or (name.endswith("_") and not name.startswith("__")) or name.startswith("__i"))
        dropout = self._dropout_before(func, args, kwargs) if self.dropouts and id(func) in self.dropouts else None
        if writes:
            self.python_targets.append(id(args[0]))
        try:
            result = func(*args, **kwargs)
        finally:
            if writes:
                self.python_targets.pop()
        if dropout is not None:
            self._dropout_after(dropout, result)
        if name == "__get__" and owner is torch._C.TensorBase.data and isinstance(result, torch.Tensor):
            for site in self.locator.sites_at(self.locator.here(), "TL101"):
                self._tag(result, site.id)
        elif name == "numpy" and "TL304" in self.codes and isinstance(result, __import__("numpy").ndarray) \
                and tensors:
            # Only where a numpy-sharing finding is watched: the tracked array is a subclass,
            # which code checking `type(a) is np.ndarray` (a test suite) would notice.
            result = self._on_numpy(tensors[0], result)
        elif func is torch.tensor and args and isinstance(args[0], torch.Tensor):
            for site in self.locator.sites_at(self.locator.here(), "TL403"):
                site.add("copy-construct", requires_grad=args[0].requires_grad,
                         result_requires_grad=isinstance(result, torch.Tensor) and result.requires_grad)
        elif func in (torch.tensor, torch.as_tensor) and args and isinstance(args[0], (list, tuple)) \
                and isinstance(result, torch.Tensor):
            given = [item for item in args[0] if isinstance(item, torch.Tensor)]
            for site in self.locator.sites_at(self.locator.here(), "TL403"):
                site.add("copy-construct", requires_grad=any(item.requires_grad for item in given),
                         result_requires_grad=result.requires_grad, new_leaf=result.grad_fn is None)
        if isinstance(result, torch.Tensor) and self.tags:
            self._propagate_tags(tensors, result)
        return result

    def _on_graph_exit(self, func, name: str, owner, tensor: torch.Tensor, how: Optional[str] = None) -> None:
        """TL410: at a gradient-cut site a tensor is detached or its values leave torch; was it
        part of the autograd graph (a grad_fn, or a leaf that requires grad) when they did?"""
        if name == "__get__" and owner is not torch._C.TensorBase.data or name == "tensor" and func is not torch.tensor:
            return  # another descriptor than `.data`, another function called `tensor`
        where = self.locator.here()
        sites = self.locator.sites_at(where, "TL410")
        if sites:
            with _internal():
                grad_fn = tensor.grad_fn
                requires_grad = tensor.requires_grad
            for site in sites:
                site.add("graph-left", how=how or GRAPH_EXITS[name], requires_grad=requires_grad, where=where,
                         grad_fn=type(grad_fn).__name__ if grad_fn is not None else None)

    def _on_data_set(self, target: torch.Tensor, value) -> None:
        where = self.locator.here()
        sites = self.locator.sites_at(where, "TL103")
        if not sites:
            return
        old_shape = tuple(target.shape)
        new_shape = tuple(value.shape) if isinstance(value, torch.Tensor) else None
        saved = [record for records in self.saved.values() for record in records
                 if record.original() is target]
        for record in saved:
            record.swapped_at = sites
        for site in sites:
            site.add("swap", saved=[record.where for record in saved], old_shape=old_shape, new_shape=new_shape)

    def _on_numpy(self, tensor: torch.Tensor, array):
        where = self.locator.here()
        sites = self.locator.sites_at(where, "TL304")
        for site in sites:
            site.add("numpy-alias")
        tracked = array.view(_MonitoredArray)
        tracked._torchlint = (self, sites, extent(tensor))
        self.arrays.append((weakref.ref(tracked), extent(tensor), sites[0] if sites else None))
        self.numpy_pairs.append((weakref.ref(tensor), tracked))
        return tracked

    def on_from_numpy(self, array, tensor: torch.Tensor) -> None:
        self.numpy_pairs.append((weakref.ref(tensor), array))
        self._register_outputs(tensor)

    def _numpy_state(self) -> list:
        return [(ref, array, array.tobytes()) for ref, array in self.numpy_pairs if ref() is not None]

    def _numpy_written(self, site: Site, before: list) -> None:
        """After a TL304 statement: which shared arrays did numpy change?"""
        for ref, array, data in before:
            tensor = ref()
            if tensor is None or array.tobytes() == data:
                continue
            span = extent(tensor)
            where = Position(site.path, site.line, site.col, site.end_line, site.end_col)
            site.add("numpy-write", where=where, span=span)
            others = self._live_on(span)
            self.watches.append({"site": site, "span": span, "others": others | {id(tensor)},
                                 "write": {"where": where, "op": "numpy", "sites": [site]}})

    def on_numpy_ufunc(self, array, sites, span, writes: bool) -> None:
        where = self.locator.here()
        if writes:
            for site in self.locator.sites_at(where, "TL304"):
                site.add("numpy-write", where=where)
                others = self._live_on(span)
                if others:
                    self.watches.append({"site": site, "span": span, "others": others,
                                         "write": {"where": where, "op": "numpy", "sites": [site]}})
        else:
            self._check_other_side_reads([array], "numpy")

    def _check_other_side_reads(self, values, name: str, returned: bool = False) -> None:
        ids = {id(value) for value in values}
        where = None
        for watch in self.watches:
            if watch.get("read") is None and ids & watch["others"]:
                where = where or self.locator.here()
                written_at = watch["write"]["where"]
                if not returned and (where is None or (written_at is not None and where.line == written_at.line)):
                    continue  # the write's own statement (`a.data *= 3` stores back into `a.data`)
                # Whether the read is one autograd tracks: grad mode on and a tensor read that requires
                # grad (`nn.init` functions read and write under no_grad; `param.data` reads no values).
                # The first read is kept; an untracked one keeps the watch on for a tracked one.
                tracked = torch.is_grad_enabled() and name not in ("__get__", "return") and any(
                    isinstance(value, torch.Tensor) and value.requires_grad for value in values)
                if not tracked and watch.get("untracked_read"):
                    continue
                watch["read" if tracked else "untracked_read"] = where
                watch["site"].add("other-read", where=where, write=watch["write"], how=name, tracked=tracked)

    def _tag(self, tensor: torch.Tensor, site_id: int) -> None:
        _mark(self.tags, tensor, {site_id})

    def _tags_of(self, tensor: torch.Tensor) -> set[int]:
        return _marks_of(self.tags, tensor)

    def _propagate_tags(self, inputs, result: torch.Tensor) -> None:
        for tensor in inputs:
            tags = self._tags_of(tensor)
            if tags and result.layout == torch.strided and tensor.layout == torch.strided \
                    and result.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr():
                for site_id in tags:
                    self._tag(result, site_id)

    def _site(self, site_id: int) -> Site:
        return self.sites[site_id]

    # -- optimizer steps (TL407) --------------------------------------------------------------

    def on_optimizer_step(self, optimizer, args, kwargs) -> None:
        """Before a step at a TL407 site: how many parameters' `.grad` still held the previous
        step's gradient, with what backward added since on top (nothing cleared it)?"""
        where = self.locator.here()
        sites = self.locator.sites_at(where, "TL407")
        if not sites:
            return
        with _internal():
            kept = sum(self._grad_kept(p) for group in optimizer.param_groups for p in group["params"])
        for site in sites:
            site.add("optimizer-step", where=where, kept=kept)

    def _grad_kept(self, p: torch.Tensor) -> bool:
        record = self.grads.get(id(p))
        if record is None or record["param"]() is not p:
            record = self.grads[id(p)] = {"param": weakref.ref(p), "previous": None, "added": None}
            if p.requires_grad:
                p.register_hook(lambda grad, record=record: self._grad_arrived(record, grad))
        grad, previous, added = p.grad, record["previous"], record["added"]
        usable = grad is not None and grad.layout == torch.strided
        # A GradScaler's `unscale_` multiplies `.grad` in place after backward: what is left
        # from the previous step shows as `.grad` proportional to it plus the new gradient.
        kept = usable and previous is not None and added is not None and bool(previous.any()) and \
            bool(added.any()) and (
                (torch.allclose(grad, previous + added) and not torch.allclose(grad, added))
                # a single number is a multiple of any other: only the exact sum says anything
                or (grad.numel() > 1 and _proportional(grad, previous + added) and not _proportional(grad, added)))
        record["previous"], record["added"] = (grad.detach().clone() if usable else None), None
        return kept

    def _grad_arrived(self, record: dict, grad: torch.Tensor) -> None:
        """A parameter's hook: one backward's gradient for it, before it goes into `.grad`."""
        if grad.layout == torch.strided:
            with _internal():
                record["added"] = grad.detach().clone() if record["added"] is None else record["added"] + grad

    # -- Variable, warnings ----------------------------------------------------------------

    def on_variable(self, args, kwargs, result) -> None:
        where = self.locator.here()
        for site in self.locator.sites_at(where, "TL201"):
            data = args[0] if args else kwargs.get("data")
            site.add("variable", input_requires_grad=isinstance(data, torch.Tensor) and data.requires_grad,
                     result_requires_grad=result.requires_grad, requires_grad_arg=kwargs.get("requires_grad"))

    def on_warning(self, message, category) -> None:
        where = self.locator.here()
        text = str(message)
        # A finding whose symptom shows where its value is used (TL404 on a conversion, whose
        # `.grad` read warns) also gets the warnings given on the lines it names as related.
        sites = self.locator.sites_at(where)
        for site in sites + [site for site in self.locator.sites_failing_at(where) if site not in sites]:
            site.add("warning", message=text, category=getattr(category, "__name__", str(category)),
                     grad_enabled=torch.is_grad_enabled())

    # -- the line tracer --------------------------------------------------------------------

    def tracer(self, frame, event, arg):
        path = self.locator.watched(frame.f_code.co_filename)
        if path is None:
            return None
        local = self._tracers.get(path)
        if local is None:
            local = self._tracers[path] = self._local_tracer(path)
        return local

    def _local_tracer(self, path: str):
        sites_by_line: dict[int, list[Site]] = {}
        used_by_line: dict[int, list[Site]] = {}
        for site in self.locator.sites_by_path[path]:
            sites_by_line.setdefault(site.stmt_line, []).append(site)
            if site.code in RAISED_WHERE_USED:
                for line in site.related_lines:
                    used_by_line.setdefault(line, []).append(site)

        def local(frame, event, arg):
            if event == "exception":
                self._on_exception(frame, path, arg[1])
            waiting = self.pending.pop(frame, None)
            if waiting:
                for site in waiting:
                    self._probe(site, frame)
            if event == "line":
                self.lines_run += 1
                # Every 16 lines: a training step's lines can each take a good part of a second.
                if self.deadline is not None and not self.lines_run % 16 and time.monotonic() > self.deadline:
                    self.deadline = time.monotonic() + 1.0  # once more a second later if the code swallowed it
                    raise RunOutOfTime(f"the run was stopped after {self.budget:g} s, its share of the time limit")
                for site in used_by_line.get(frame.f_lineno, ()):
                    # A use before the flagged line ever ran is another value's (`plt.plot(x)`
                    # above the loop whose `history.append(err)` is flagged).
                    if site.hits:
                        site.uses += 1
                here = sites_by_line.get(frame.f_lineno)
                # The statement's own frame counts it once (see _NESTED_FRAMES).
                if here and frame.f_code.co_name not in _NESTED_FRAMES:
                    if self.stop_when_seen and all(site.seen_enough for site in self.sites) \
                            and (not self._saved_writes_unread() or all(site.hits >= ENOUGH_HITS * 10
                                                                        for site in self.sites)):
                        raise SeenEnough()
                    for site in here:
                        site.hits += 1
                    probed = [site for site in here if site.probe or site.code in ("TL304", "TL401")]
                    for site in probed:
                        if site.code == "TL304":
                            self.before[site.id] = self._numpy_state()
                        elif site.code == "TL220":  # the operands, before the statement changes them
                            self._quotient(site, frame)
                        elif site.code == "TL414":  # the module's mode as the forward starts
                            self._module_mode(site, frame)
                    probed = [site for site in probed if site.code not in ("TL220", "TL414")]
                    if probed:
                        self.pending[frame] = probed
            return local

        return local

    def _saved_writes_unread(self) -> bool:
        """A write changed a tensor saved for backward and no backward has read it yet: a
        loop that writes each parameter (`for p in model.parameters(): p.data.mul_(..)`)
        hits its line three times before the `loss.backward()` that shows the damage."""
        return any(site.has("saved-write") and not site.has("corrupted") for site in self.sites)

    def _on_exception(self, frame, path: str, error: BaseException) -> None:
        """An exception raised in a watched frame: seen even when the program (or pytest)
        catches it later."""
        where = self.locator.position_of(frame.f_code, frame.f_lasti, path)
        message = str(error).split("\n")[0][:300]
        if id(error) not in self.seen_errors:  # the innermost watched frame it is raised through
            self.seen_errors.add(id(error))
            for site in self.locator.sites_at(where):
                site.add("raised", type=type(error).__name__, message=message)
        # A finding whose error comes where its value is used: on any frame the error passes
        # through on its way out (the use may call the code that raises: `self.conv(h, adj)`).
        for site in self.locator.sites_failing_at(where):
            if (id(error), site.id) not in self.raised_at_use:
                self.raised_at_use.add((id(error), site.id))
                site.add("raised", type=type(error).__name__, message=message, line=where.line)

    def _quotient(self, site: Site, frame) -> None:
        """A TL220 division's operands: where the dividend holds integers, what true division
        gives next to what PyTorch 1.4's integer division gave."""
        left, _, right = (site.probe or "").partition("|")
        dividend = _evaluate(left, frame)
        divisor = int(right) if right.isdigit() else _evaluate(right, frame)
        if not isinstance(dividend, torch.Tensor):
            return
        with _internal():
            integer = not (dividend.is_floating_point() or dividend.is_complex() or dividend.dtype == torch.bool)
            details = {"dividend": left, "dtype": str(dividend.dtype).replace("torch.", ""), "integer": integer}
            if integer and (isinstance(divisor, int) and not isinstance(divisor, bool) and divisor != 0
                            or isinstance(divisor, torch.Tensor) and not divisor.is_floating_point()
                            and not divisor.is_complex() and bool((divisor != 0).all())):
                true = torch.true_divide(dividend, divisor)
                old = torch.div(dividend, divisor, rounding_mode="trunc")
                details.update(fractional=not torch.equal(true, old.to(true.dtype)), true=fmt(true), old=fmt(old))
        site.add("quotient", **details)

    def _module_mode(self, site: Site, frame) -> None:
        """TL414: the ``training`` flag of the module a flagged forward runs, and which of its
        Dropout/BatchNorm layers are in training mode (where they behave differently)."""
        if site.has("module-mode"):
            return
        for name in (site.probe or "").split("|"):  # the forward's module, or the model handed to a call
            module = _evaluate(name, frame)
            if isinstance(module, torch.nn.Module):
                break
        else:
            return
        with _internal():
            layers = [name or type(layer).__name__ for name, layer in module.named_modules()
                      if layer.training and _mode_dependent(layer)]
        if module.training and not layers and len(self.mode_reads) < 64:
            self.mode_reads.append((frame, site))  # a functional dropout reading `self.training` may show it
        site.add("module-mode", model=name, training=module.training, count=len(layers),
                 layers=", ".join(f"`{name}`" for name in layers[:4]) + (" …" if len(layers) > 4 else ""))

    def _functional_mode(self, name: str, args, kwargs) -> None:
        """TL414: ``F.dropout(x, p, training=True)`` (or ``F.batch_norm`` with ``training=True``)
        running below a flagged statement whose module was read in training mode: the
        module's own forward passes ``self.training`` on, so it behaves as in training."""
        switch, rate = _TRAINING_FUNCTIONALS[name]
        training = _passed(switch, args, kwargs)
        if training is _MISSING:
            training = switch.default == "1"  # its default in the facts table: "1" or "0"
        p = _argument_value(rate, args, kwargs) if rate is not None else None
        if training is not True or rate is not None and not (isinstance(p, (int, float)) and p > 0):
            return
        stack = set()
        frame = sys._getframe(1)
        while frame is not None:
            stack.add(id(frame))
            frame = frame.f_back
        where = self.locator.here()
        for frame, site in self.mode_reads:
            if id(frame) in stack and site.stmt_line <= frame.f_lineno <= site.end_line \
                    and not site.has("functional-mode"):
                site.add("functional-mode", function=f"F.{name}", line=where.line if where is not None else None)

    def _dropout_before(self, func, args, kwargs) -> Optional[tuple]:
        """TL419: a dropout function called at a watched site from a module's method: the
        module's mode, the rate, and (in eval mode) the result the call gives switched off
        (its rate 0 where it has no switch), computed before the call draws its mask."""
        sites = self.locator.sites_at(self.locator.here(), "TL419")
        if not sites:
            return None
        frame = sys._getframe(1)
        while frame is not None and self.locator.watched(frame.f_code.co_filename) is None:
            frame = frame.f_back
        code = frame.f_code if frame is not None else None
        module = frame.f_locals.get(code.co_varnames[0]) if code is not None and code.co_argcount else None
        if not isinstance(module, torch.nn.Module):
            return None
        kind = "dropout-train" if module.training else "dropout-eval"
        sites = [site for site in sites if not site.has(kind)]
        if not sites:
            return None
        qualname = self.dropouts[id(func)]
        dropout = torch_facts.dropout(qualname)
        rate = _argument_value(dropout.rate, args, kwargs)
        details = {"function": qualname.replace("torch.nn.functional.", "F."), "module": type(module).__name__,
                   "rate": float(rate) if isinstance(rate, (int, float)) else 0.0}
        reference = None
        if kind == "dropout-eval" and torch_facts.fact(qualname).in_place == "none":
            off = dropout.switch if dropout.switch is not None else dropout.rate
            value = False if dropout.switch is not None else 0.0
            arguments, keywords = list(args), dict(kwargs)
            if off.name in keywords or off.position is None or off.position >= len(arguments):
                keywords[off.name] = value
            else:
                arguments[off.position] = value
            with _internal():
                try:
                    reference = func(*arguments, **keywords)
                except Exception:  # noqa: BLE001 - the user's call raises the same, unwatched
                    reference = None
        return sites, kind, details, reference

    def _dropout_after(self, dropout: tuple, result) -> None:
        sites, kind, details, reference = dropout
        if kind == "dropout-eval":
            first = result[0] if isinstance(result, (tuple, list)) and result else result
            known = isinstance(first, torch.Tensor) and isinstance(reference, torch.Tensor) \
                and first.shape == reference.shape
            with _internal():
                differ = int((first != reference).sum()) if known else 0
            details = {**details, "changed": differ > 0 if known else details["rate"] > 0, "differ": differ,
                       "total": first.numel() if isinstance(first, torch.Tensor) else 0}
        for site in sites:
            site.add(kind, **details)

    def check_layer_holders(self) -> None:
        """TL418, at the end of the run: the layers each flagged attribute holds (in lists,
        tuples and dicts, nested) whose parameters the module that holds them does not list."""
        for site, module, attribute in self.layer_holders:
            with _internal():
                registered = {id(parameter) for parameter in module.parameters()}
                layers = [layer for layer in _layers_in(getattr(module, attribute, None))
                          if any(True for _ in layer.parameters())]
                missing = [p for layer in layers for p in layer.parameters() if id(p) not in registered]
            if missing:
                site.add("unregistered", attribute=attribute, layers=len(layers), parameters=len(missing))

    def _probe_written(self, site: Site) -> None:
        """TL401 whose total is not a name to read (`stats.get("loss").add_(loss)`): the tensor
        the statement wrote in place, followed as one object from one run to the next."""
        value = site.written() if site.written is not None else None
        site.written = None
        if value is None:
            return
        if site.owner is None:
            site.owner = id(value)
        if site.owner == id(value):
            site.samples += 1
            self.graph_sizes.setdefault(site.id, []).append(_graph_size(value))

    def _probe(self, site: Site, frame) -> None:
        if site.code == "TL304":
            self._numpy_written(site, self.before.pop(site.id, []))
        elif site.code == "TL401":
            value = _evaluate(site.probe, frame) if site.probe else _MISSING
            if value is _MISSING:
                self._probe_written(site)
                return
            size = _graph_size(value)
            root, dot, _ = site.probe.partition(".")
            if dot:  # `self.sum`: the same object from one run of the statement to the next
                owner = id(_evaluate(root, frame))
                if site.owner is None and size:
                    site.owner = owner
                if site.owner is not None and site.owner != owner:
                    return
                site.samples += site.owner is not None
            self.graph_sizes.setdefault(site.id, []).append(size)
        elif site.code == "TL418":
            owner, _, attribute = site.probe.partition("|")
            value = _evaluate(owner, frame)
            if isinstance(value, torch.nn.Module):
                self.layer_holders.append((site, value, attribute))
        elif site.code == "TL305":
            left, _, right = site.probe.partition("|")
            a, b = _evaluate_detached(left, frame), _evaluate_detached(right, frame)
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
                shared = a.layout == b.layout == torch.strided and _overlap(extent(a), extent(b))
                site.add("ids", same_id=a is b, shared=shared, left=left, right=right)


_MISSING = object()


# The functionals that act as in training mode when given `training=True`: their `training`
# argument, and their drop probability (None: none). The dropouts are the facts table's with
# a `training` switch (`F.alpha_dropout` drops only when asked: its default is off).
_TRAINING_FUNCTIONALS = {
    **{qualname.rpartition(".")[2]: (torch_facts.dropout(qualname).switch, torch_facts.dropout(qualname).rate)
       for qualname in sorted(torch_facts.mode_switched_dropouts())},
    "batch_norm": (torch_facts.Argument("training", 5, "0"), None),
}


def _dropout_functions() -> dict[int, str]:
    """id -> qualified name of the functions that drop at random (the facts table's)."""
    found = {}
    for qualname in torch_facts.dropouts():
        owner_name, _, name = qualname.rpartition(".")
        owner = {"torch": torch, "torch.nn.functional": torch.nn.functional}.get(owner_name)
        function = getattr(owner, name, None) if owner is not None else None
        if function is not None:
            found[id(function)] = qualname
    return found


def _passed(argument, args, kwargs) -> Any:
    """The value a call passes for the facts table's ``argument``, or _MISSING."""
    if argument.name in kwargs:
        return kwargs[argument.name]
    if argument.position is not None and argument.position < len(args):
        return args[argument.position]
    return _MISSING


def _argument_value(argument, args, kwargs) -> Any:
    """The value a call gives the facts table's ``argument`` (its default where left out)."""
    passed = _passed(argument, args, kwargs)
    if passed is not _MISSING:
        return passed
    try:
        return float(argument.default) if argument.default is not None else None
    except ValueError:
        return None


def _mode_dependent(layer: torch.nn.Module) -> bool:
    """A layer whose forward differs in training mode: dropout with p > 0, BatchNorm keeping
    running statistics, attention and recurrent layers with dropout."""
    if isinstance(layer, torch.nn.modules.dropout._DropoutNd):
        return layer.p > 0
    if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm):
        return layer.track_running_stats
    if isinstance(layer, (torch.nn.MultiheadAttention, torch.nn.RNNBase)):
        return float(getattr(layer, "dropout", 0) or 0) > 0
    return False


def _layers_in(value: Any, depth: int = 0) -> list:
    """The ``nn.Module`` instances in a plain list, tuple or dict (nested a few levels)."""
    if isinstance(value, torch.nn.Module):
        return [value]
    if depth > 3:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return [layer for item in items for layer in _layers_in(item, depth + 1)]


def _evaluate_detached(expression: str, frame) -> Any:
    """``_evaluate``, and for ``name.detach()`` torch's own ``Tensor.detach`` of the tensor
    the name holds (a user's class with a ``detach`` method is not called)."""
    if not expression.endswith(".detach()"):
        return _evaluate(expression, frame)
    value = _evaluate(expression[:-len(".detach()")], frame)
    if not isinstance(value, torch.Tensor):
        return _MISSING
    with _internal():
        return torch.Tensor.detach(value)


def _evaluate(expression: Optional[str], frame) -> Any:
    """The value of a dotted name in a frame (no calls: inspecting must not run user code)."""
    if not expression:
        return _MISSING
    first, *rest = expression.split(".")
    if first in frame.f_locals:
        value = frame.f_locals[first]
    elif first in frame.f_globals:
        value = frame.f_globals[first]
    else:
        return _MISSING
    for attribute in rest:
        try:
            value = object.__getattribute__(value, attribute) if not isinstance(value, torch.nn.Module) \
                else getattr(value, attribute)
        except AttributeError:
            return _MISSING
    return value


def _graph_size(value: Any) -> int:
    """The number of autograd nodes reachable from the tensors in ``value``."""
    roots = []
    stack = [value]
    while stack and len(roots) < 10_000:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            if item.grad_fn is not None:
                roots.append(item.grad_fn)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    seen: set[int] = set()
    while roots and len(seen) < GRAPH_NODE_CAP:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        roots.extend(parent for parent, _ in node.next_functions)
    return len(seen)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_meta or b.is_meta:
        return True  # no values to compare (the program's device stands in for a GPU): nothing seen to change
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a, b)) or bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() \
        else bool(torch.equal(a, b))


class _MonitoredArray(__import__("numpy").ndarray):
    """The array ``t.numpy()`` returns, so that numpy-side writes and reads are seen."""

    _torchlint = None

    def __array_finalize__(self, obj):
        self._torchlint = getattr(obj, "_torchlint", None)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        np = __import__("numpy")
        monitor_info = self._torchlint
        plain_inputs = tuple(x.view(np.ndarray) if isinstance(x, _MonitoredArray) else x for x in inputs)
        plain_out = None
        if out is not None:
            plain_out = tuple(x.view(np.ndarray) if isinstance(x, _MonitoredArray) else x for x in out)
            kwargs["out"] = plain_out
        if monitor_info is not None:
            monitor, sites, span = monitor_info
            writes = out is not None and any(isinstance(x, _MonitoredArray) for x in out)
            monitor.on_numpy_ufunc(self, sites, span, writes)
        result = getattr(ufunc, method)(*plain_inputs, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return result

    def __setitem__(self, key, value):
        if self._torchlint is not None:
            monitor, sites, span = self._torchlint
            monitor.on_numpy_ufunc(self, sites, span, True)
        super().__setitem__(key, value)

    def _read(self):
        if self._torchlint is not None:
            monitor, sites, span = self._torchlint
            monitor.on_numpy_ufunc(self, sites, span, False)

    def __repr__(self):
        self._read()
        return repr(self.view(__import__("numpy").ndarray))

    def __str__(self):
        self._read()
        return str(self.view(__import__("numpy").ndarray))

    def tolist(self):
        self._read()
        return self.view(__import__("numpy").ndarray).tolist()

    def __getitem__(self, key):
        self._read()
        return super().__getitem__(key)


class _Dispatch(TorchDispatchMode):
    def __init__(self, monitor: Monitor):
        super().__init__()
        self.monitor = monitor

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _INTERNAL[0]:
            return func(*args, **kwargs)
        return self.monitor.on_dispatch(func, args, kwargs)


class _Functions(TorchFunctionMode):
    def __init__(self, monitor: Monitor):
        super().__init__()
        self.monitor = monitor

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _INTERNAL[0]:
            return func(*args, **kwargs)
        return self.monitor.on_function(func, args, kwargs)


# --- verdicts ------------------------------------------------------------------------------


def judge(site: Site, monitor: Monitor, stopped: Optional[dict]) -> dict:
    """The verdict for one site, with evidence: COULD NOT RUN when its code did not run,
    CONFIRMED when a write it made corrupted what backward used; else its rule judges
    what the run recorded there (each rule's ``judge``, beside the rule)."""
    rule = all_rules()[site.code]
    if not rule.runtime_signature:
        return rule.judge(Observation()).as_dict()
    raised = stopped if stopped and stopped.get("sites") and site.id in stopped["sites"] else site.first("raised")
    stopped_before = stopped is not None and raised is None and not site.events and stopped.get("line") and \
        site.stmt_line <= stopped["line"] <= site.end_line and (stopped["line"], stopped["col"]) < (site.line, site.col)
    if (site.hits == 0 or stopped_before) and not site.events and raised is None:
        reason = f"line {site.stmt_line} never executed" if not stopped_before else \
            f"line {site.line} stopped before reaching column {site.col}"
        if stopped:
            reason += f" (the run stopped at {stopped['at']} with {stopped['type']}: {stopped['message']})"
        return Verdict(COULD_NOT_RUN, reason).as_dict()
    corrupted = site.first("corrupted")
    if corrupted is not None:
        return Verdict(CONFIRMED, _corruption_evidence(site, corrupted)).as_dict()
    observation = Observation(events=site.events, raised=raised, probe=site.probe,
                              graph_sizes=monitor.graph_sizes.get(site.id, []),
                              write_awaiting_read=any(watch["site"] is site for watch in monitor.watches))
    return rule.judge(observation).as_dict()


def _corruption_evidence(site: Site, event: dict) -> str:
    saved_at = event.get("saved_at")
    saved = f"a tensor saved for backward at {quote(saved_at)}" if saved_at else "a tensor saved for backward"
    kind = event["kind"]
    if kind == "version":
        write = event["write"]
        return (f"{quote(write['where'])} wrote in place into {saved}; backward raised \"one of the variables "
                "needed for gradient computation has been modified by an inplace operation\"")
    if kind == "detach_":
        return f"`detach_()` was called on {saved}; backward raised \"Trying to use a saved tensor that has been " \
               "detached in-place\""
    if kind == "swap":
        change = f": it held {event['before']}, backward used {event['after']}" if event.get("before") else ""
        return f"`.data =` swapped the storage of {saved}{change} -- a silently wrong gradient"
    write = event.get("write")
    how = f"{quote(write['where'])} changed" if write else "a numpy-side write changed"
    via = " without bumping its version (autograd could not notice)" if write and not write["bumped"] else ""
    return (f"{how} {saved}{via}: it held {event['before']} when saved, backward used {event['after']} "
            "-- a silently wrong gradient")


# --- running code ----------------------------------------------------------------------------


def _patch_variable(monitor: Monitor):
    from torch.autograd import variable as variable_module

    original = variable_module.Variable

    class Variable(original):  # type: ignore[misc, valid-type]
        def __new__(cls, *args, **kwargs):
            result = original(*args, **kwargs)
            monitor.on_variable(args, kwargs, result)
            return result

    Variable.__module__ = original.__module__
    Variable.__qualname__ = original.__qualname__
    torch.autograd.Variable = Variable
    variable_module.Variable = Variable


def _patch_from_numpy(monitor: Monitor):
    original = torch.from_numpy

    def from_numpy(array):
        tensor = original(array)
        monitor.on_from_numpy(array, tensor)
        return tensor

    from_numpy.__doc__ = original.__doc__
    torch.from_numpy = from_numpy


def _seed(seed: int = 0) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass


@contextlib.contextmanager
def monitoring(monitor: Monitor):
    torch.set_warn_always(True)
    # Typed storages warn once per process by a flag of torch's own, which the call above
    # leaves alone (TL216 wants every site's warning).
    always_warn_typed_storage = getattr(torch.storage, "_set_always_warn_typed_storage_removal", None)
    if always_warn_typed_storage is not None:
        always_warn_typed_storage(True)
    _patch_variable(monitor)
    if "TL304" in monitor.codes:
        _patch_from_numpy(monitor)
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        monitor.on_warning(message, category)

    warnings.showwarning = showwarning
    hooks = torch.autograd.graph.saved_tensors_hooks(monitor.pack, monitor.unpack)
    from torch.optim.optimizer import register_optimizer_step_pre_hook  # torch.optim does not export it

    steps = register_optimizer_step_pre_hook(monitor.on_optimizer_step) if "TL407" in monitor.codes else None
    layers = _watch_layers(monitor) if "TL409" in monitor.codes else None
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = showwarning
        with hooks, _Dispatch(monitor), _Functions(monitor):
            sys.settrace(monitor.tracer)
            try:
                yield
            finally:
                sys.settrace(None)
                if steps is not None:
                    steps.remove()
                if layers is not None:
                    layers()
    warnings.showwarning = shown


def _watch_layers(monitor: Monitor):
    """An in-place layer (`nn.Dropout(p, inplace=True)`) writes inside torch's code, below
    the line that calls it: its writes are credited to the sites of the line that built it
    (where TL409 reports it).  Returns what undoes the watch."""
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    original = torch.nn.Module.__init__

    def init(module, *args, **kwargs):
        original(module, *args, **kwargs)
        sites = [site for site in monitor.locator.sites_at(monitor.locator.here()) if site.code == "TL409"]
        if sites:
            monitor.module_sites[id(module)] = (weakref.ref(module), sites)

    def entered(module, _inputs):
        monitor.module_stack.append(id(module))

    def left(module, _inputs, _output):
        if monitor.module_stack and monitor.module_stack[-1] == id(module):
            monitor.module_stack.pop()

    torch.nn.Module.__init__ = init
    before, after = register_module_forward_pre_hook(entered), register_module_forward_hook(left, always_call=True)

    def undo():
        torch.nn.Module.__init__ = original
        before.remove()
        after.remove()

    return undo


@contextlib.contextmanager
def _registered(program: types.ModuleType):
    """The program's namespace is the module ``sys.modules`` names it by, as when Python runs
    the file: pickle finds its classes there (``torch.save(model, path)`` of a model whose
    class the script defines)."""
    name = program.__name__
    previous = sys.modules.get(name)
    sys.modules[name] = program
    try:
        yield
    finally:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


@contextlib.contextmanager
def _loading_in_this_process():
    """DataLoaders load in the job's own process (``num_workers=0``): the monitor and its
    line tracer see only this process, so a flagged line of a ``Dataset.__getitem__`` run
    by a worker would go unseen, and a job's workers only slow it down. The batches are
    the same."""
    loader = torch.utils.data.DataLoader
    original = loader.__init__
    signature = inspect.signature(original)

    def __init__(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return original(self, *args, **kwargs)  # its own error, as without the monitor
        if bound.arguments.get("num_workers"):
            bound.arguments["num_workers"] = 0
            for worker_only in ("prefetch_factor", "persistent_workers", "multiprocessing_context"):
                bound.arguments.pop(worker_only, None)
        original(*bound.args, **bound.kwargs)

    loader.__init__ = __init__
    try:
        yield
    finally:
        loader.__init__ = original


@contextlib.contextmanager
def _cuda_on_cpu(used: list):
    """On a machine without CUDA, old code's unconditional `.cuda()` and
    `torch.cuda.FloatTensor(..)` would stop the run before any flagged line: they keep
    tensors and modules on the CPU instead, and ``used`` records that the run needed it
    (what autograd saves and writes in place is the same on either device)."""
    if torch.cuda.is_available():
        yield
        return

    def noted(value):
        stand_ins.record(used, stand_ins.CUDA_ON_CPU)
        return value

    def kept_here(self, *args, **kwargs):  # `Tensor.cuda` and `Module.cuda`
        return noted(self)

    class _CpuType(type):
        def __instancecheck__(cls, value):
            return False  # no tensor here is on a GPU

    replaced = {}
    for name in dir(torch.cuda):
        if name.endswith("Tensor") and isinstance(getattr(torch.cuda, name, None), type) \
                and hasattr(torch, name):
            cpu_type = getattr(torch, name)
            replaced[name] = getattr(torch.cuda, name)
            setattr(torch.cuda, name, _CpuType(name, (), {
                "__new__": lambda cls, *args, _cpu=cpu_type, **kwargs: noted(_cpu(*args, **kwargs))}))
    # `CUDA_MAJOR = int(torch.version.cuda.split('.')[0])` at import: the project reads a
    # version torch is built for; torch's own code still reads None.
    version = torch.version
    version_class = type(version)
    torch_folder = os.path.dirname(torch.__file__)

    class _VersionForTheProject(version_class):
        @property
        def cuda(self):
            if sys._getframe(1).f_code.co_filename.startswith(torch_folder):
                return None
            stand_ins.record(used, stand_ins.CUDA_VERSION)
            return stand_ins.ASSUMED_CUDA

    originals = (torch.Tensor.cuda, torch.nn.Module.cuda)
    torch.Tensor.cuda = torch.nn.Module.cuda = kept_here
    version.__class__ = _VersionForTheProject
    try:
        yield
    finally:
        version.__class__ = version_class
        torch.Tensor.cuda, torch.nn.Module.cuda = originals
        for name, original in replaced.items():
            setattr(torch.cuda, name, original)


def _stopped(error: BaseException, monitor: Monitor) -> dict:
    where = monitor.locator.in_traceback(error.__traceback__)
    message = str(error).split("\n")[0]
    sites = list(dict.fromkeys(site.id for site in [*monitor.locator.sites_at(where),
                                                    *monitor.locator.sites_failing_at(where)]))
    # Where it was raised, innermost last, in any file: a flagged line of another file may be
    # where it stopped (check.py reruns past it with that file fixed).
    frames = [[frame.f_code.co_filename, line] for frame, line in traceback.walk_tb(error.__traceback__)][-20:]
    return {"type": type(error).__name__, "message": message[:300], "at": where_is(where),
            "sites": sites, "line": where.line if where else None, "col": where.col if where else None,
            "frames": frames}


def run_job(payload: dict) -> dict:
    """Run the payload's code under the monitor; return a verdict per site."""
    sites = [Site.of(i, entry) for i, entry in enumerate(payload["sites"])]
    monitor = Monitor(sites)
    MONITOR[0] = monitor
    mode = payload.get("mode", "module")
    entry = payload.get("entry") or [""]
    if payload.get("budget") and entry[0] != "pytest":  # pytest would take either for a failing test
        monitor.budget = payload["budget"]
        monitor.deadline = time.monotonic() + payload["budget"]
        monitor.stop_when_seen = mode != "entry" and bool(sites)
    import tempfile
    tempfile.tempdir = None  # the fork server's cached choice is read-only in a job: use $TMPDIR
    path = payload["path"]
    source = payload.get("source")
    if source is None and mode != "entry":
        with open(path, encoding=payload.get("encoding", "utf-8")) as handle:
            source = handle.read()
    if source is not None:
        # Evidence quotes the code that ran (the fixed text in a rerun), not the file on disk.
        linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    sys.path[:0] = payload.get("sys_path", [os.path.dirname(path)])
    sys.argv = payload.get("argv") or [path]
    if payload.get("cwd"):
        try:
            os.chdir(payload["cwd"])  # where the user runs the program: `open("data.txt")` works
        except OSError:
            pass
    _seed()
    stopped = None
    outcome = {}
    # A called function's module is imported, not run: its `if __name__ == "__main__":` block stays out.
    name = "__torchlint_target__" if mode == "call" else "__main__"
    program = types.ModuleType(name)
    namespace = program.__dict__
    namespace.update({"__file__": path, "__builtins__": __builtins__})
    if payload.get("package"):
        namespace["__package__"] = payload["package"]  # as `python -m package.module` runs it
    if payload.get("ported"):
        namespace.update(stand_ins.PYTHON2_BUILTINS)
    folders = [*payload.get("sys_path", ()), payload.get("cwd") or ""]
    stood_in: list[str] = []
    written: dict[str, bytes] = {}  # what a script run to make a missing input wrote (made_inputs)
    try:
        with stand_ins.installed(folders, synthetic.module) as stood_in, _cuda_on_cpu(stood_in), \
                _loading_in_this_process(), stand_ins.numpy_aliases(stood_in), \
                stand_ins.output_folders(stood_in, made=bool(payload.get("make_folders"))), \
                stand_ins.climbing_imports(stood_in, folders), _registered(program), monitoring(monitor):
            if payload.get("ported"):
                stood_in.append(stand_ins.PORTED + payload["ported"])
            if mode == "entry":
                outcome = _run_entry(payload)  # the user's own command line
            else:
                porting = stand_ins.ported_imports(folders) if payload.get("ported") else contextlib.nullcontext()
                with stand_ins.required_options(stood_in, payload.get("options")), \
                        synthetic.missing_checkpoints(stood_in), porting, \
                        stand_ins.patched_imports(payload.get("patched") or {}), \
                        _made_inputs(payload, stood_in, namespace, written):
                    if mode == "call":
                        namespace["__torchlint_left_out__"] = stand_ins.recording_left_out(stood_in)
                    periodic = tuple(payload.get("periodic") or ())
                    if periodic:
                        namespace["__torchlint_first_pass__"] = stand_ins.first_passes(stood_in)
                    exec(stand_ins.compile_job(source, path, ported=bool(payload.get("ported")),
                                               imported=mode == "call", periodic=periodic), namespace)
                    if mode == "call":
                        outcome = _call(namespace, payload["call"])
    except SystemExit as error:
        if error.code not in (None, 0):
            stopped = {"type": "SystemExit", "message": str(error.code), "at": "exit", "sites": []}
    except SeenEnough as error:
        outcome["cut_short"] = f"every flagged line had run {ENOUGH_HITS} times"
        if hasattr(error, "torchlint_arguments"):
            outcome["arguments"] = error.torchlint_arguments
    except BaseException as error:  # the user's code may raise anything; it is a result here
        stopped = _stopped(error, monitor)
        if isinstance(error, RunOutOfTime):
            stopped.update(type="time limit", sites=[])  # no site raised it: it stopped the run there
        if hasattr(error, "torchlint_arguments"):
            outcome["arguments"] = error.torchlint_arguments
        outcome["ran_before"] = getattr(error, "torchlint_ran_before", [])
        outcome["traceback"] = "".join(traceback.format_exception(type(error), error, error.__traceback__)[-6:])
    monitor.check_layer_holders()
    verdicts = [judge(site, monitor, stopped) for site in sites]
    if mode == "call":
        ran_before = set(outcome.pop("ran_before", ()))
        verdicts = [_only_the_signature(verdict, stopped, outcome, payload["call"]["qualname"],
                                        built_first=site.id in ran_before)
                    for site, verdict in zip(sites, verdicts)]
    return {
        "verdicts": verdicts,
        "stopped": stopped,
        "grads": _gradients(namespace),
        "stand_ins": list(stood_in),
        "lines": monitor.lines_run,
        **({"written": made_inputs.encoded(written)} if payload.get("capture") else {}),
        **outcome,
    }


def _made_inputs(payload: dict, used: list[str], namespace: dict, written: dict[str, bytes]):
    """A run that reads the files a script of the project made (``made``), or the run of
    that script, its writes kept in ``written`` and its own loops cut short (``capture``)."""
    if payload.get("capture"):
        namespace["range"] = made_inputs.capped_range  # its own code's loops, not its libraries'
        return made_inputs.captured_writes(written, payload["capture"])
    if payload.get("made"):
        return made_inputs.reading_made(used, made_inputs.decoded(payload["made"]), payload.get("makers") or {})
    return contextlib.nullcontext()


def _only_the_signature(verdict: dict, stopped: Optional[dict], outcome: dict, qualname: str,
                        built_first: bool = False) -> dict:
    """With synthesized arguments only the rule's own signature counts: when the call
    failed any other way, the finding could not be run. A call stopped at its share of
    the time limit did not fail: what it reached is judged, as in a run of the file; so
    is a line that building the instance ran (``built_first``), a call that returned."""
    arguments = outcome.get("arguments", "")
    if built_first and stopped is not None and verdict["verdict"] != COULD_NOT_RUN:
        # Before the call: building its instance, or importing the script (its own top-level call of the function).
        during = f"while the instance was built: {arguments}" if "on a `" in arguments else \
            "while the file was imported for the call"
        return dict(verdict, evidence=f"{verdict['evidence']} (ran {during}; "
                                      f"`{qualname}()` itself then raised {stopped['type']})")
    if stopped is not None and stopped.get("type") == "time limit":
        stopped = None
    if verdict["verdict"] in (CONFIRMED, LATENT) or (stopped is None and verdict["verdict"] == NOT_REPRODUCED):
        return dict(verdict, evidence=f"{verdict['evidence']} (`{qualname}()` called with synthesized arguments: "
                                      f"{arguments})")
    if stopped is not None:
        return Verdict(COULD_NOT_RUN, f"calling `{qualname}()` with synthesized arguments ({arguments}) raised "
                                      f"{stopped['type']}: {stopped['message']}").as_dict()
    return verdict


def _call(namespace: dict, call: dict) -> dict:
    """Call the function ``call["qualname"]`` with arguments made from its parameters."""
    owner, _, name = call["qualname"].rpartition(".")
    built: dict = {}
    if owner:
        cls = namespace[owner]
        raw = cls.__dict__[name]
        if isinstance(raw, staticmethod):
            function, params = raw.__func__, call["params"]
        elif isinstance(raw, classmethod):
            function, params = getattr(cls, name), call["params"][1:]
        elif isinstance(cls, type) and issubclass(cls, unittest.TestCase):
            # A test runs as unittest runs it: the class's and the test's set-up first.
            cls.setUpClass()
            instance = cls(name)
            instance.setUp()
            function, params = getattr(instance, name), call["params"][1:]
        else:
            instance, built = _instance(cls, call.get("variant", 0), call.get("init"), call.get("settings"))
            function, params = getattr(instance, name), call["params"][1:]
    else:
        function, params = namespace[name], call["params"]
    positional, keywords, made = _arguments(params, call.get("variant", 0), call.get("gradients", ()),
                                            call.get("settings"), call.get("flip"),
                                            _class_count(call.get("classes"), function))
    shown = _shown(made) or "none"
    if owner and built:
        shown += f", on a `{owner}({_shown(built)})`"
    outcome = {"arguments": shown}
    # Flagged lines the instance's construction ran (an `__init__` that calls the method):
    # a whole call that returned, whatever the method's own call then does.
    ran_before = [site.id for site in MONITOR[0].sites if site.hits]
    try:
        returned = function(*positional, **keywords)
        if inspect.isgenerator(returned):
            # A generator's body runs only as its caller's `for` takes its items.
            shown = outcome["arguments"] = f"{shown}; then up to {GENERATOR_ITEMS} of its items taken, " \
                                           "as a `for` takes them"
            returned = list(itertools.islice(returned, GENERATOR_ITEMS))
    except BaseException as error:
        error.torchlint_arguments = shown
        error.torchlint_ran_before = ran_before
        raise
    # What the function returns is read by its caller.
    MONITOR[0]._check_other_side_reads(_flatten(returned), "return", returned=True)
    return outcome


def _instance(cls: type, variant: int, params: Optional[list] = None,
              settings: Optional[dict] = None) -> tuple[Any, dict]:
    """An instance to call a method on: ``cls()``, or, when its ``__init__`` takes
    arguments without defaults, one made with arguments synthesized the same way (a
    `model` is an `nn.Linear`, a `lr` a number...; no tensor requires grad). ``params``:
    the parameters of an ``__init__`` of the file, as the plan read them (with their uses).
    Also the arguments it was built with, by name."""
    if params is None:
        try:
            signature = inspect.signature(cls.__init__)
        except (TypeError, ValueError):
            return cls(), {}
        # The parameters as plan.FilePlan.parameters gives a function's (without `self`).
        params = [{"name": param.name,
                   "annotation": None if param.annotation is inspect.Parameter.empty else str(param.annotation),
                   "default": param.default is not inspect.Parameter.empty,
                   "keyword": param.kind is inspect.Parameter.KEYWORD_ONLY}
                  for param in list(signature.parameters.values())[1:]
                  if param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    positional, keywords, made = _arguments(params, variant, (), settings)
    try:
        return cls(*positional, **keywords), made
    except BaseException as error:  # the run stopped while the instance was built (SeenEnough too)
        error.torchlint_arguments = f"none, on a `{cls.__name__}({_shown(made)})` as it was built"
        raise


# A synthesized classification's classes, unless the function reads its own (``_class_count``).
CLASSES = 10


def _arguments(params: list[dict], variant: int, gradients, settings: Optional[dict] = None,
               flip: Optional[dict] = None, classes: int = CLASSES) -> tuple[list, dict, dict]:
    """Positional and keyword arguments synthesized for the parameters without a default,
    and every value made, by name (a later parameter may use an earlier one: an optimizer
    over the model). Only the parameters named in ``gradients`` may require grad; a
    parameter that holds the program's options gets the project's argparse defaults; one
    the project's own call fixes (``given``, call_sites) gets that call's value; one named
    in ``flip`` (with its default: plan.guarded_by_defaults) the other value."""
    made = _Made()
    positional, keywords = [], {}
    for param in params:
        if param["default"]:
            if "given" in param:  # the project's call passes it: so does this one
                keywords[param["name"]] = made.given(param)
            elif flip and param["name"] in flip:
                # The other value than the default that kept a flagged branch from running.
                default = flip[param["name"]]
                if default != "None":
                    keywords[param["name"]] = made[param["name"]] = default == "False"
                else:  # made as a required parameter is: `action_noise.noise()` gets the project's `OUNoise`
                    keywords[param["name"]] = _made_for(param, made, variant, (), settings, classes)
            continue
        if flip and flip.get(param["name"]) == "required":
            value = made[param["name"]] = None  # the branch a None takes (plan.guarded_by_defaults)
        else:
            value = _made_for(param, made, variant, gradients, settings, classes)
        if param["keyword"]:
            keywords[param["name"]] = value
        else:
            positional.append(value)
    return positional, keywords, made


def _class_count(expression: Optional[str], function: Any) -> int:
    """The class count the function itself reads (``voc.num_classes``, plan.class_count),
    evaluated where the function runs, so its synthesized classification has those classes
    (`assert outputs.size()[1] == voc.num_classes`); CLASSES where it reads none or it is no count."""
    namespace = getattr(inspect.unwrap(function), "__globals__", None)  # a bound method's is its function's
    if expression and namespace is not None:
        try:
            count = eval(expression, namespace)  # a name or an attribute of one: nothing is assigned
        except Exception:
            count = None
        if isinstance(count, int) and not isinstance(count, bool) and 2 <= count <= 100_000:
            return count
    return CLASSES


def _made_for(param: dict, made: "_Made", variant: int, gradients, settings: Optional[dict],
              classes: int = CLASSES) -> Any:
    """The value of a parameter without a default (``_arguments``), recorded in ``made``."""
    if param.get("use") == "settings" and settings is not None:
        value = made[param["name"]] = ProjectDefaults(**settings)
    else:
        value = made[param["name"]] = synthesize(param["name"], param["annotation"], made, variant,
                                                 gradients=param["name"] in gradients, use=param.get("use"),
                                                 classes=classes)
    if param.get("use") == "trained" and isinstance(value, torch.nn.Module):
        made.origins[param["name"]] = f"{_describe(value)} after one backward pass on a random batch"
    if "given" in param:
        # As the project's own call passes it (call_sites); but a size stays the one made
        # here, which the tensors made here fit (`input_size=256` with a [4, 4] input fails).
        if not (_is_number(ast.literal_eval(param["given"])) and _is_number(value)):
            value = made.given(param)
    elif "given_class" in param:
        built = _project_instance(param["given_class"], variant)
        if built is not None:
            value = made[param["name"]] = built
            made.origins[param["name"]] = f"a `{param['given_class']['name']}` of {param['given_class']['at']}"
    return value


def _project_instance(found: dict, variant: int) -> Any:
    """An instance of the project's class ``found`` (call_sites.project_class), built with
    arguments synthesized for its own parameters; None where it cannot be built."""
    import importlib

    if found["folder"] not in sys.path:
        sys.path.append(found["folder"])
    try:
        cls = getattr(importlib.import_module(found["module"]), found["name"])
        return _instance(cls, variant)[0]
    except (SeenEnough, RunOutOfTime):
        raise
    except BaseException:  # noqa: BLE001 - the project's code may raise anything; the plain argument is used then
        return None


class _Made(dict):
    """Arguments by name, and how those the project gave are shown: where its own call
    passes the value, or which of its classes the object is."""

    def __init__(self) -> None:
        super().__init__()
        self.origins: dict[str, str] = {}

    def given(self, param: dict) -> Any:
        """The value the project's own call gives ``param`` (call_sites), kept with where."""
        value = self[param["name"]] = ast.literal_eval(param["given"])
        self.origins[param["name"]] = f"{_clipped(param['given'])} as {param['given_at']} passes it"
        return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flatten(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [item for element in value for item in _flatten(element)]
    if isinstance(value, dict):
        return [item for element in value.values() for item in _flatten(element)]
    return [value]


# Shapes tried in turn, each first requiring grad (where the function works with the
# parameter's gradient) and then not: a matrix, a vector, a batch of 4-channel images,
# a batch of sequences (every size 4, as wide as the layers made here), a batch of RGB
# images; then token ids (integers below 4, for an embedding), which never require grad.
ARGUMENT_VARIANTS = (((4, 4), True), ((4, 4), False), ((4,), True), ((4,), False),
                     ((2, 4, 4, 4), True), ((2, 4, 4, 4), False), ((2, 4, 4), True), ((2, 4, 4), False),
                     ((2, 3, 32, 32), True), ((2, 3, 32, 32), False), ((2, 4), None), ((2, 4), None))


_INDEX_NAME = re.compile(r"(^|_)(index|idx|id)$")
# Numbers by name: `dropout`, `drop_prob`, `momentum`, `tau`, `std`, `temperature`, `beta1`,
# a gradient clipping bound (`clip`, `grad_clip`, `max_norm`)...
_RATE_NAME = re.compile(r"(^|_)(dropout|drop|prob|rate|momentum|gamma|tau|temperature|decay|beta\d?|margin|std|"
                        r"sigma|epsilon|ratio|coef|coeff|lambda|lamb|clip|threshold)$|^(max|clip)_norm$")


_SIZE_NAME = re.compile(r"(^|_)(num|n|nb|d)_|_(size|dim|dims|dimension|num|len|length|count|channels|units|features)$|"
                        r"^(channels|features)_(in|out)$|"
                        r"^(channels|width|height|layers|classes|features|units|hidden|ngpu|bptt)$|"
                        r"^n(token|tokens|hid|inp|layers?|heads?|out|class|classes|z|gf|df|c)$")


# The layers a function that tests its argument's type gets, one per variant (with 2-d and
# 1-d tensors, variants go 0, 2 where no gradient is involved): convolutions (the DCGAN
# `classname.find('Conv')`), batch norms, linear layers.
_LAYERS = (lambda: torch.nn.Conv2d(4, 4, 3), lambda: torch.nn.Linear(4, 4),
           lambda: torch.nn.BatchNorm2d(4), lambda: torch.nn.Linear(4, 4))


def synthesize(name: str, annotation: Optional[str], made: dict, variant: int = 0, gradients: bool = False,
               use: Optional[str] = None, classes: int = CLASSES) -> Any:
    """An argument for a parameter: from its annotation, else from how the function uses it
    (``use``: plan.parameter_uses), else from its name, else a small float tensor, which
    requires grad only where the function's code works with this parameter's gradient
    (``gradients``; most flagged functions take tensors). ``classes``: a classification's
    class count (the one the function reads, ``_class_count``)."""
    import numpy

    lowered = name.lower()
    hint = (annotation or "").rsplit(".", 1)[-1]
    if use == "layer" and not hint:
        # `weights_init(m)` branches on the layer's type: each variant reaches another branch.
        return _LAYERS[variant % len(_LAYERS)]()
    if use == "vgg" and not hint:
        return synthetic.vgg11()
    if _INDEX_NAME.search(lowered) and not hint:
        return 0  # `layer_index`, `filter_idx`: the first (a VGG's first layer is a convolution)
    if use and use.startswith("sizes:") and not hint:
        # `[x_dim, z_dim, h_dim] = dims`: sizes; in the next pair of variants the last is a
        # list of them (hidden layers' widths), in the pair after that all but the first are
        # (a ladder's latent sizes too).
        count = int(use.partition(":")[2])
        return ([4] * count, [4] * (count - 1) + [[4, 4]], [4] + [[4, 4]] * (count - 1))[variant // 2 % 3]
    if use and use.startswith("shape:") and not hint:
        # `prediction[:, :, 4]`, `[:, 5:5 + num_classes]`: the shape its indexing needs, in each variant.
        shape = tuple(int(size) for size in use.partition(":")[2].split(","))
        wants_grad = ARGUMENT_VARIANTS[variant % len(ARGUMENT_VARIANTS)][1]
        return torch.randn(*shape, requires_grad=bool(wants_grad and gradients))
    if use == "layers" and not hint:
        # `for m in net.modules(): if isinstance(m, nn.Conv2d): ...`: a layer of each usual kind.
        return torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                   torch.nn.ConvTranspose2d(4, 4, 3, padding=1), torch.nn.Linear(4, 4),
                                   torch.nn.BatchNorm1d(4), torch.nn.Embedding(4, 4))
    if use == "trained" and not hint:
        # `clip_gradients(model, clip)` reads each parameter's `.grad`: a module after one
        # backward pass on a random batch, as a training step leaves it.
        module = torch.nn.Linear(4, 4)
        module(torch.randn(2, 4)).sum().backward()
        return module
    if not hint and use is not None:
        # "settings" has nothing here: without the project's defaults (_arguments) it is a tensor too.
        hint = {"module": "Module", "optimizer": "Optimizer", "loader": "DataLoader", "number": "float",
                "flag": "bool", "array": "ndarray"}.get(use, "")
    if hint in ("int",) or lowered in ("n", "size", "dim", "batch_size", "bsz", "epochs", "steps", "k"):
        return 2
    if lowered == "depth":
        # A ResNet's (6n + 2) and a ResNeXt's (9n + 2) with the image shapes; a WideResNet's
        # (6n + 4) with the vector and sequence shapes, which only its construction needs.
        return 28 if variant // 2 in (1, 3) else 20
    if _SIZE_NAME.search(lowered) or lowered.endswith(("width", "cardinality", "groups")):
        # `hidden_size`, `input_dim`, `num_classes`, `in_channels`, `d_model`, `nhid`: as wide as the tensors made here
        return 4
    if hint == "float" or lowered in ("lr", "learning_rate", "alpha", "scale", "eps") or _RATE_NAME.search(lowered):
        return 0.5
    if hint == "bool":
        return True
    if hint == "str":
        return "x"
    if hint == "ndarray" or "array" in lowered or lowered in ("values_np", "np_values"):
        return numpy.ones(4, dtype=numpy.float32)
    # A training loop's model, criterion and batches: a regression (4 outputs, MSE, targets
    # like the outputs), then, in every other pair of variants, a classification (CLASSES classes,
    # cross-entropy, class indices as targets: `accuracy(output, target, topk=(1, 5))`).
    classes = classes if variant // 2 % 2 else 0
    if hint in ("Module", "Linear") or lowered in ("model", "net", "network", "module", "layer", "encoder",
                                                  "decoder", "classifier"):
        return torch.nn.Linear(4, classes or 4)
    if "optim" in lowered or hint == "Optimizer":
        model = next((v for v in made.values() if isinstance(v, torch.nn.Module)), torch.nn.Linear(4, 4))
        return torch.optim.SGD(model.parameters(), lr=0.1)
    if lowered in ("criterion", "loss_fn", "loss_function"):
        return torch.nn.CrossEntropyLoss() if classes else torch.nn.MSELoss()
    if lowered in ("loader", "data_loader", "dataloader", "batches", "dataset") or hint == "DataLoader":
        return [(torch.randn(2, 4), torch.randint(0, classes, (2,)) if classes else torch.randn(2, 4))
                for _ in range(3)]
    shape, wants_grad = ARGUMENT_VARIANTS[variant % len(ARGUMENT_VARIANTS)]
    if (lowered == "mask" or lowered.endswith("_mask") or lowered.startswith("mask_")) and not hint:
        # `x_mask`: which positions of a batch of sequences are padding (none), one per
        # position, without the features' dimension: a [2, 4] mask beside [2, 4, 4] inputs.
        return torch.zeros(shape[:-1] if len(shape) > 1 and wants_grad is not None else shape, dtype=torch.bool)
    # Most flagged code is about autograd, so tensors first require grad; plain ones suit
    # code that writes its arguments in place; 1-d ones code that reshapes them; 4-d and
    # 3-d ones code that indexes or unpacks their dimensions.
    if wants_grad is None:
        return torch.randint(0, 4, shape)
    wants_grad = wants_grad and gradients and lowered not in ("target", "targets", "labels", "y")
    return torch.randn(*shape, requires_grad=wants_grad)


class ProjectDefaults(argparse.Namespace):
    """What ``parser.parse_args([])`` gives: every option the project declares, at its default."""


def _shown(made: dict) -> str:
    """The arguments made, each from a project's call marked with where that call is."""
    origins = getattr(made, "origins", {})
    return ", ".join(f"{key}={origins[key]}" if key in origins else f"{key}={_describe(value)}"
                     for key, value in made.items())


def _clipped(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value: Any) -> str:
    if isinstance(value, ProjectDefaults):
        return "the project's argparse defaults"
    if isinstance(value, torch.Tensor):
        grad = ", requires_grad=True" if value.requires_grad else ""
        dtype = "" if value.is_floating_point() else f", dtype={str(value.dtype).replace('torch.', '')}"
        return f"tensor of shape {list(value.shape)}{dtype}{grad}"
    if isinstance(value, torch.nn.Module):
        first = repr(value).split("\n")[0]
        return f"{first}...)" if first.endswith("(") else first
    if isinstance(value, torch.optim.Optimizer):
        return type(value).__name__
    if isinstance(value, list) and all(isinstance(item, (int, list)) for item in value):
        return repr(value)  # sizes
    if isinstance(value, list):
        return f"a list of {len(value)} batches"
    return repr(value) if not hasattr(value, "shape") else f"array of shape {list(value.shape)}"


def _run_entry(payload: dict) -> dict:
    entry = payload["entry"]
    if entry[0] == "pytest":
        import pytest
        code = pytest.main([*entry[1:], "-q", "-p", "no:cacheprovider", "-x"], plugins=[_warnings_to_monitor(pytest)])
        return {"entry_status": int(code)}
    import runpy
    sys.argv = list(entry)
    sys.path.insert(0, os.path.dirname(entry[0]))  # as `python script.py` does
    runpy.run_path(entry[0], run_name="__main__")
    return {}


@contextlib.contextmanager
def recorded_warnings_to(monitor: Monitor):
    """Inside pytest's per-test ``catch_warnings(record=True)``, which keeps each test's
    warnings in a list of its own: let each reach ``monitor`` too, as it is issued (torch's
    `volatile` warning is TL202's evidence), then go on to that list."""
    original = warnings._showwarnmsg_impl  # what catch_warnings(record=True) replaced

    def seen(message: warnings.WarningMessage) -> None:
        monitor.on_warning(message.message, message.category)
        original(message)

    warnings._showwarnmsg_impl = seen
    try:
        yield
    finally:
        warnings._showwarnmsg_impl = original


def _warnings_to_monitor(pytest):
    """The pytest plugin of --entry 'pytest ...': every test's warnings reach the monitor."""

    class WarningsToMonitor:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            with recorded_warnings_to(MONITOR[0]):
                yield

    return WarningsToMonitor()


def _gradients(namespace: dict) -> dict:
    """Module-level leaf tensors' gradients at the end of a run, for the differential run."""
    grads = {}
    for name, value in list(namespace.items()):
        if isinstance(value, torch.Tensor) and value.is_leaf and value.grad is not None and not name.startswith("_"):
            with _internal():
                grads[name] = {"shown": fmt(value.grad), "values": value.grad.detach().reshape(-1)[:64].tolist()}
    return grads


_WARM_UP = """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
x.detach().numpy()
y.backward()
"""


def warm_up() -> None:
    """Run a tiny program under the monitor once.  Its first use imports torch._dynamo
    and other lazily loaded modules (about 3 s); the fork server calls this before it
    forks, so that every job starts warm."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "warm_up.py")
        with open(path, "w") as handle:
            handle.write(_WARM_UP)
        sites = [{"code": "TL304", "path": os.path.realpath(path), "line": 5, "col": 1, "end_line": 5,
                  "end_col": 20, "stmt_line": 5}]
        saved_path, saved_argv = list(sys.path), list(sys.argv)
        try:
            run_job({"path": os.path.realpath(path), "sites": sites, "sys_path": []})
        finally:
            sys.path[:], sys.argv[:] = saved_path, saved_argv

