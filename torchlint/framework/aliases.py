"""Flow-aware aliasing: names bound to another tensor's memory, and the in-place writes
that reach through them.

``y = x.detach()``, ``y = x.data``, ``y = x.view(4)``, ``y = x[0]``, ``a = x.numpy()``,
``t = torch.from_numpy(a)`` make ``y`` share ``x``'s storage.  Within one scope, in the
order the code runs, this module finds the in-place writes to either side after the
alias was made (``y.zero_()``, ``x += 1``, ``y[0] = v``...) and the reads of the other
side after each write.  Rules decide which of those events are mistakes:

- TL102: any write through a ``.data`` alias;
- TL301: a write to either side of a ``.detach()`` (or ``.data``) alias, the other side
  read afterwards;
- TL303: a write to the base of a view, the view read afterwards; or a write through a
  ``reshape`` (which may or may not be a view) or a ``contiguous()`` / ``to()`` (which may
  or may not be the tensor itself), the base read afterwards;
- TL304: a write to either side of ``.numpy()`` / ``torch.from_numpy``, the other read
  afterwards.

What aliases and what copies is torch_facts' (generated from torch): views (``view``,
``t``, ``x.chunk(2)[0]``, ``a, b = x.split(2)``), maybe-views (``reshape``, ``flatten``: a
view or a copy, depending on the input) and maybe-self results (``contiguous``, ``to``,
``float``, ``cpu``: the input itself when nothing needs changing, else a copy).  Copies end
aliasing: ``x.detach().clone()``, and indexing with anything but integers, slices, ``...``
and ``None`` (advanced indexing copies).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from torchlint.syntax import cst
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import Binding, BindingKind, Scope
from torchlint.framework import edits
from torchlint.framework.rule import Applicability, Edit, Fix, Rule
from torchlint.framework.saved import SavedRead, has_backward, saved_read
from torchlint.framework.verdicts import CONFIRMED, LATENT, NOT_REPRODUCED, Observation, Verdict, quote
from torchlint.framework.writes import Write, basic_index as _basic_index, find_write

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext

# How an alias was made; the first kind in a chain that appears in this order wins
# (`x.detach().view(-1)` is a detach alias).  `reshape`: a view or a copy depending on the
# input's layout; `maybe_self`: the input itself or a copy (`contiguous`, `to`, `float`).
KINDS = ("data", "detach", "from_numpy", "numpy", "reshape", "maybe_self", "view")

# From torch_facts: methods giving a view, a tuple of views (`split`, `chunk`, `unbind`:
# an alias once indexed or unpacked), a view or a copy, the receiver or a copy.
_VIEW_METHODS = torch_api.TRACKED_VIEW_METHODS
_TUPLE_VIEW_METHODS = torch_facts.methods(aliasing="view", returns="tuple")
_MAYBE_VIEW_METHODS = torch_facts.methods(aliasing="maybe_view", returns="tensor")
_MAYBE_SELF_METHODS = torch_facts.methods(aliasing="maybe_self", returns="tensor")
_VIEW_ATTRIBUTES = torch_api.TRACKED_VIEW_ATTRIBUTES


@dataclass(frozen=True)
class Alias:
    binding: Binding  # `y` in `y = x.detach()`
    base: cst.Name  # `x`
    kind: str  # one of KINDS
    made_by: cst.BaseExpression  # `x.detach()`

    @property
    def name(self) -> str:
        return self.binding.name


@dataclass(frozen=True)
class AliasWrite:
    """An in-place write to one side of an alias, and the first later read of the other."""

    alias: Alias
    write: Write
    written: cst.Name  # the name written through
    through_alias: bool  # True: the alias was written; False: its base was
    reader: Optional[cst.Name]  # the first read of the other side after the write
    # With no such read: the other side was saved for backward and a backward after the
    # write reads it (saved.py).
    saved: Optional[SavedRead] = None

    @property
    def related(self) -> tuple[tuple[cst.CSTNode, str], ...]:
        """The related locations every alias finding shows: where the alias was made and read."""
        made = (self.alias.made_by, f"`{self.alias.name}` is made here")
        if self.reader is None and self.saved is not None:
            return (made, *self.saved.related())
        return made, (self.reader, "and read here, after the write")

    @property
    def other(self) -> str:
        """The name on the side that was not written."""
        return self.alias.base.value if self.through_alias else self.alias.name

    @property
    def fields(self) -> dict[str, object]:
        """Message fields shared by the alias rules."""
        return {"how": self.write.how, "alias": self.alias.name, "base": self.alias.base,
                "made": self.alias.made_by}


def alias_writes(ctx: "FileContext") -> list[AliasWrite]:
    """Every in-place write through an aliased name, and every in-place write to the base
    of an alias that the alias reads afterwards (computed once per file)."""
    if "alias_writes" not in ctx.cache:
        ctx.cache["alias_writes"] = [event for alias in _aliases(ctx) for event in _writes(ctx, alias)]
    return ctx.cache["alias_writes"]


def _alias_shape(ctx: "FileContext", node: cst.BaseExpression) -> Optional[tuple[cst.Name, str]]:
    """(base name, kind) when ``node`` is written as an alias of what a name holds:
    ``x.detach()``, ``x[0].view(-1)``, ``torch.from_numpy(a)``...; whether ``x`` is a tensor
    (or an array) is asked apart (``_aliases``)."""
    kinds: list[str] = []
    current = node
    while True:
        if isinstance(current, cst.Call):
            func = current.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method == "detach" and not current.args:
                    kinds.append("detach")
                elif method == "numpy":
                    kinds.append("numpy")
                elif method in _MAYBE_VIEW_METHODS:
                    if _inner_slice(func.value):
                        return None  # `x[:, 1:].reshape(b, -1)`: merging a cut dimension copies
                    kinds.append("reshape")
                elif method in _MAYBE_SELF_METHODS:
                    kinds.append("maybe_self")
                elif method in _VIEW_METHODS or method in _TUPLE_VIEW_METHODS:
                    kinds.append("view")  # a tuple of views: each element, and the tuple, alias
                elif method == "from_numpy" and ctx.qualname(func) == "torch.from_numpy" and current.args:
                    kinds.append("from_numpy")
                    current = current.args[0].value
                    continue
                else:
                    return None
                current = func.value
                continue
            if isinstance(func, cst.Name) and _may_name_from_numpy(ctx, func) \
                    and ctx.qualname(func) == "torch.from_numpy" and current.args:
                kinds.append("from_numpy")
                current = current.args[0].value
                continue
            return None
        if isinstance(current, cst.Attribute):
            if current.attr.value == "data":
                kinds.append("data")
            elif current.attr.value in _VIEW_ATTRIBUTES:
                kinds.append("view")
            else:
                return None
            current = current.value
            continue
        if isinstance(current, cst.Subscript):
            if not _basic_index(ctx, current):
                return None
            kinds.append("view")
            current = current.value
            continue
        break
    if not kinds or not isinstance(current, cst.Name):
        return None
    return current, next(k for k in KINDS if k in kinds)


def _may_name_from_numpy(ctx: "FileContext", func: cst.Name) -> bool:
    """``func`` is spelled `from_numpy` or imported under another name: only then is it asked
    what it is (``y = f(x)`` is no alias otherwise, and asking costs an inference)."""
    return func.value == "from_numpy" or any(binding.kind is BindingKind.IMPORT for binding in ctx.model.resolve(func))


def _inner_slice(node: cst.BaseExpression) -> bool:
    """``node`` cuts a dimension other than the first with a bounded slice (`x[:, 1:]`):
    its rows are no longer contiguous, and a reshape that merges that dimension with
    another makes a copy, not a view."""
    return isinstance(node, cst.Subscript) and any(
        isinstance(element.slice, cst.Slice) and (element.slice.lower is not None or element.slice.upper is not None)
        for element in node.slice[1:])


def view_source(ctx: "FileContext", node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The tensor expression ``node`` is a view of (``x[0]``, ``(a * 2).view(-1)``, ``x.t()``), if any."""
    if isinstance(node, cst.Subscript) and _basic_index(ctx, node):
        base = node.value
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _VIEW_METHODS | _MAYBE_VIEW_METHODS:
        base = node.func.value
    elif isinstance(node, cst.Attribute) and node.attr.value in _VIEW_ATTRIBUTES:
        base = node.value
    else:
        return None
    return base if ctx.tensor(base) is not None else None


def _tuple_of_views(node: cst.BaseExpression) -> bool:
    """``x.split(2)``, ``x.chunk(2)``, ``x.unbind()``: a tuple of views of ``x``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in _TUPLE_VIEW_METHODS


def _aliases(ctx: "FileContext") -> list[Alias]:
    aliases = []
    for scope in ctx.model.scopes:
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.kind is not BindingKind.ASSIGN or binding.value is None:
                    continue
                if binding.path and not (len(binding.path) == 1 and binding.path[0] is not None
                                         and _tuple_of_views(binding.value)):
                    continue  # `a, b = x.chunk(2)`: each name is a view of `x`
                found = _alias_shape(ctx, binding.value)
                if found is None or not _may_write(ctx, binding, found[0]):
                    continue
                base, kind = found
                if kind != "from_numpy" and ctx.tensor(base) is None:
                    continue
                aliases.append(Alias(binding, base, kind, binding.value))
    return aliases


def _may_write(ctx: "FileContext", binding: Binding, base: cst.Name) -> bool:
    """Whether ``_writes`` can find anything for this alias: an in-place write through it, or
    to its base in the same scope, while it is bound. Asked before what the base is, which is
    the costly question, and which most `y = x.view(..)` of a model's forward never need."""
    if binding.name == base.value:
        return False  # `x = x.permute(..)`: the old `x` can no longer be read
    base_scope = ctx.model.scope_of(base)
    if base_scope is None:
        return False
    alias_side = _Reads.of(ctx, binding.scope, binding.name)
    if alias_side.writing(alias_side.window(binding.seq)):
        return True
    if base_scope is not binding.scope:
        return False
    base_side = _Reads.of(ctx, base_scope, base.value)
    return bool(base_side.writing(base_side.window(binding.seq)))


class _Reads:
    """The reads of one name in one scope, in order, with what each resolves to and
    which of them write in place: shared by every alias of that name (a file with 4,000
    ``y_i = x.data`` asks about ``x``'s reads 4,000 times)."""

    def __init__(self, ctx: "FileContext", scope: Scope, name: str):
        self.ctx = ctx
        self.scope = scope
        self.name = name
        self.loads = sorted(scope.loads.get(name, ()), key=lambda load: load[0])
        self.seqs = [seq for seq, _ in self.loads]
        self._resolved: dict[int, frozenset[int]] = {}
        self._writing: Optional[list[int]] = None

    @classmethod
    def of(cls, ctx: "FileContext", scope: Scope, name: str) -> "_Reads":
        memo = ctx.cache.setdefault("alias_reads", {})
        key = (id(scope), name)
        if key not in memo:
            memo[key] = cls(ctx, scope, name)
        return memo[key]

    def window(self, start: int) -> range:
        """The positions of the reads after ``start`` and before the name is bound again."""
        end = None
        for binding in self.scope.bindings.get(self.name, ()):
            # `x += 1` on a tensor writes in place; it does not give `x` new memory.
            if binding.seq > start and binding.kind is not BindingKind.AUGASSIGN:
                end = binding.seq
                break
        low = bisect.bisect_right(self.seqs, start)
        high = bisect.bisect_left(self.seqs, end) if end is not None else len(self.seqs)
        return range(low, max(low, high))

    def resolves_to(self, position: int) -> frozenset[int]:
        node = self.loads[position][1]
        found = self._resolved.get(id(node))
        if found is None:
            found = self._resolved[id(node)] = frozenset(id(b) for b in self.ctx.model.resolve(node))
        return found

    def writing(self, positions: range) -> list[int]:
        """The positions in ``positions`` of reads that write in place (``x.add_(1)``)."""
        if self._writing is None:
            self._writing = [i for i, (_, node) in enumerate(self.loads) if find_write(self.ctx, node) is not None]
        low = bisect.bisect_left(self._writing, positions.start)
        high = bisect.bisect_left(self._writing, positions.stop)
        return self._writing[low:high]


def _writes(ctx: "FileContext", alias: Alias) -> list[AliasWrite]:
    binding = alias.binding
    base_scope = ctx.model.scope_of(alias.base)
    if base_scope is None:
        return []
    if alias.name == alias.base.value:
        return []  # `x = x.permute(..)`: the old `x` can no longer be read
    alias_side = _Reads.of(ctx, binding.scope, alias.name)
    sides = [(alias_side, alias_side.window(binding.seq), None)]  # (reads, window, bindings they must resolve to)
    if base_scope is binding.scope:
        base_side = _Reads.of(ctx, base_scope, alias.base.value)
        sides.append((base_side, base_side.window(binding.seq),
                      frozenset(id(b) for b in ctx.model.resolve(alias.base))))
    events = []
    backward = has_backward(ctx, binding.scope)
    for index, (side, window, bindings) in enumerate(sides):
        other = sides[1 - index] if len(sides) == 2 else None
        through_alias = index == 0
        if not through_alias and not backward:
            # A write to the base matters only if the alias is read after it, by the code
            # or by a backward (no rule uses one without a reader): the writes after the
            # alias's last read are skipped, so a base written a thousand times costs
            # nothing for aliases never read.
            alias_window = sides[0][1]
            if not alias_window:
                continue
            last_read = alias_side.seqs[alias_window.stop - 1]
            window = range(window.start, min(window.stop, bisect.bisect_left(side.seqs, last_read)))
        for position in side.writing(window):
            if bindings is not None and not bindings & side.resolves_to(position):
                continue  # another `x`: a read of a name bound elsewhere
            node = side.loads[position][1]
            write = find_write(ctx, node)
            statement = _statement(ctx, write.node)
            reader = _first_reader(ctx, other, side.seqs[position], write, statement) if other else None
            saved = None
            if backward:
                other_bindings = ctx.model.resolve(alias.base) if through_alias else [binding]
                saved = saved_read(ctx, other_bindings, write.node, alias.base.value if through_alias else alias.name,
                                   through_base=not through_alias)
            if through_alias or reader is not None or saved is not None:
                events.append(AliasWrite(alias, write, node, through_alias, reader, saved))
    return events


def _first_reader(ctx: "FileContext", side: tuple, seq: int, write: Write,
                  statement: cst.CSTNode) -> Optional[cst.Name]:
    """The first read on the other ``side`` after ``seq`` that can see the write."""
    reads, window, bindings = side
    start = max(window.start, bisect.bisect_right(reads.seqs, seq))
    for position in range(start, window.stop):
        if bindings is not None and not bindings & reads.resolves_to(position):
            continue
        other = reads.loads[position][1]
        if not _inside(ctx, other, statement) and not ctx.model.exclusive(write.node, other):
            return other
    return None


def _statement(ctx: "FileContext", node: cst.CSTNode) -> cst.CSTNode:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ancestor
    return node


def _inside(ctx: "FileContext", node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(ancestor is container for ancestor in ctx.ancestors(node))


# --- fixes: make the alias a copy (TL301, TL303, TL304) ---------------------------------


def copy_at_alias(ctx: "FileContext", event: AliasWrite, events: list[AliasWrite],
                  reported: Callable[[AliasWrite], bool]) -> Optional[Edit]:
    """The edit that makes ``event``'s alias a copy where it is made (``.clone()``, or
    ``.copy()`` for a numpy array), or None when the alias is not made by a plain
    ``name = ...`` or when a copy would also cut sharing that the calling rule does not
    report (``reported`` says which events it reports) and that may be intended."""
    alias = event.alias
    made_by = alias.made_by
    statement = ctx.parent(made_by)
    if isinstance(statement, cst.Assign):
        if len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
            return None
    elif not (isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name)):
        return None
    for other in events:
        # Writes through the alias, and writes to the base that the alias sees later.
        if other.alias is alias and (other.through_alias or other.reader is not None) and not reported(other):
            return None
    return edits.insert_after(made_by, ".copy()" if _makes_array(ctx, made_by) else ".clone()")


def copy_fix(ctx: "FileContext", event: AliasWrite, copy: Edit) -> Fix:
    made = ctx.snippet(event.alias.made_by) + copy.content
    return Fix(Applicability.UNSAFE, f"Make `{event.alias.name}` a copy: `{event.alias.name} = {made}`", (copy,))


class AliasWriteRule(Rule):
    """A rule about in-place writes on one side of an alias that the other side reads
    afterwards (TL301 detach, TL303 views, TL304 numpy): the walk, the copy fix and the
    report are the same; a subclass says which writes it reports (``message_for``) and
    may offer another fix (``fix_for``) or more message fields (``fields_for``).  A write
    that nothing reads afterwards, or under ``torch.no_grad()``, is never reported."""

    def visit_Module(self, node: cst.Module) -> None:
        events = alias_writes(self.ctx)
        for event in events:
            message = self._message(event)
            if message is None:
                continue
            copy = copy_at_alias(self.ctx, event, events, lambda other: self._message(other) is not None)
            saved = _saved_fields(self.ctx, event) if message is SAVED_MESSAGE else {}
            self.report(event.write.node, message, evidence=self.ctx.tensor(event.alias.base),
                        related=event.related, fix=self.fix_for(event, copy),
                        **{**event.fields, **self.fields_for(event), **saved})

    # The alias kinds whose writes this rule reports when backward reads the other side
    # (``covers_saved``); None: the rule reports none.
    saved_kinds: Optional[tuple[str, ...]] = None

    def _message(self, event: AliasWrite) -> Optional[str]:
        if event.saved is not None and self.covers_saved(event):
            return SAVED_MESSAGE  # under no_grad too: the write still changes what was saved
        if event.reader is None or self.ctx.grad_disabled(event.write.node) is not None:
            return None
        return self.message_for(event)

    def covers_saved(self, event: AliasWrite) -> bool:
        """Whether this rule reports ``event`` for its backward read (``event.saved``)."""
        return self.saved_kinds is not None and event.alias.kind in self.saved_kinds

    def message_for(self, event: AliasWrite) -> Optional[str]:
        """The message template for ``event`` when this rule reports it, else None."""
        raise NotImplementedError

    def fix_for(self, event: AliasWrite, copy: Optional[Edit]) -> Optional[Fix]:
        """The fix for ``event``; ``copy`` makes the alias a copy where it is made (None
        when that would also cut sharing this rule does not report)."""
        return copy_fix(self.ctx, event, copy) if copy is not None else None

    def fields_for(self, event: AliasWrite) -> dict[str, object]:
        return {}

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        """CONFIRMED when the other side was read after the write and carried the changed
        values; LATENT when the write changed shared memory that nothing read afterwards."""
        read = run.first("other-read")
        if read is not None:
            write = read["write"]
            reader = f"{quote(read['where'])} read" if read["where"] is not None else "the function returned"
            return Verdict(CONFIRMED, f"{quote(write['where'])} wrote in place into memory another tensor shares, "
                                      f"and {reader} that other tensor afterwards: it carries the changed values")
        write = run.first("saved-write")
        if write is not None:
            return Verdict(LATENT, f"{quote(write['write']['where'])} changed a tensor saved for backward at "
                                   f"{quote(write['saved_at'])}, but no backward used it on this run")
        if run.has("numpy-write") or run.write_awaiting_read:
            return Verdict(LATENT, "the write changed memory another tensor (or array) shares, but nothing read "
                                   "the other side afterwards")
        if run.has("unshared"):
            return Verdict(NOT_REPRODUCED, "the write did not touch memory another live tensor shares (the alias "
                                           "was a copy)")
        return Verdict(NOT_REPRODUCED, "no write through the alias happened on this run")


SAVED_MESSAGE = (
    "In-place write ({how}) to `{written}` also changes `{other}` (the same memory: `{alias}` = `{made}`), "
    "which `{saver}` saved for backward; {backward} reads it after the write: {outcome}"
)


def _saved_fields(ctx: "FileContext", event: AliasWrite) -> dict[str, object]:
    saved = event.saved
    # A write torch sees through a view or a detached alias bumps the shared version
    # counter, which backward checks; one through numpy or `.data` does not.
    unseen = event.alias.kind in ("numpy", "from_numpy", "data")
    outcome = ("the gradient is silently wrong (autograd cannot see this write)" if unseen else
               "backward raises RuntimeError (\"modified by an inplace operation\")")
    return {"written": event.written.value, "other": event.other, "saver": ctx.snippet(saved.saver),
            "backward": saved.reader(ctx), "outcome": outcome}


def _makes_array(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """``node``, an alias chain (``t.detach().numpy()[0]``), ends in a numpy array."""
    current = node
    while True:
        if isinstance(current, cst.Call):
            if ctx.qualname(current.func) == "torch.from_numpy":
                return False
            if not isinstance(current.func, cst.Attribute):
                return False
            if current.func.attr.value == "numpy":
                return True
            current = current.func.value
        elif isinstance(current, cst.Attribute):
            current = current.value
        elif isinstance(current, cst.Subscript):
            current = current.value
        else:
            return False
