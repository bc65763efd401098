"""Parameters and buffers allocated with ``torch.empty`` that nothing in the file fills.

``torch.empty`` returns whatever was in the memory it got: a parameter or buffer made from it
holds garbage (zeros, huge numbers, NaN) until something writes it.  torch's own layers write
theirs in ``reset_parameters``; a module written by hand must do the same:

    self.weight = nn.Parameter(torch.empty(out_features, in_features))
    self.register_buffer("scales", torch.empty(out_features))

The holder (``self.weight``, ``self.scales``, or a name) is written when anything in the file
may write it: an ``nn.init.*_`` call or another call given it, an in-place method on it (also
through ``.data``), an indexed or augmented assignment, a new assignment, a loop over the
module's parameters or buffers, ``module.apply(fn)``, or a ``load_state_dict`` that must load
every key (``strict=False`` may leave it out).  Any of those keeps it quiet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted, is_false, is_true, keyword
from torchlint.syntax.walk import is_descendant, iter_nodes
from torchlint.analysis import torch_api

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

_EMPTY = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided"})
_HOLDERS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
_ITERATING = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "state_dict", "modules",
                        "named_modules", "children", "named_children"})

# A function of the project given each module or parameter in a loop may initialize it.
_INITIALIZING_NAME = re.compile(r"init|reset|fill|load|copy|normal|uniform|xavier|kaiming|zero|trunc", re.IGNORECASE)


@dataclass(frozen=True)
class Uninitialized:
    """``allocation`` (``torch.empty(..)``) becomes the parameter or buffer ``holder`` (as
    written: ``self.weight``) and nothing in the file writes it."""

    allocation: cst.Call
    holder: str
    kind: str  # "parameter" | "buffer"
    registered: cst.CSTNode  # the assignment or register_* call
    read: cst.CSTNode  # a read of it


def uninitialized(analysis: "ModuleAnalysis") -> list[Uninitialized]:
    text = analysis.text
    if "empty" not in text or not re.search(r"Parameter|register_buffer|requires_grad", text):
        return []
    inference = analysis.inference
    calls = analysis.nodes_of(cst.Call)
    candidates: list[tuple[cst.Call, str, str, cst.CSTNode]] = []
    for call in calls:
        found = _registration(call, inference)
        if found is not None:
            candidates.append((call, *found))
    if not candidates:
        return []
    attributes = analysis.nodes_of(cst.Attribute, cst.Name)
    writes = _written_names(analysis, calls)
    if writes is None:
        return []
    result = []
    for allocation, holder, kind, registered in candidates:
        name = holder.rsplit(".", 1)[-1]
        if name in writes:
            continue
        read = next((node for node in attributes if _names(node, name) and not is_descendant(node, registered)
                     and not _is_target(node)), None)
        if read is None:
            continue
        result.append(Uninitialized(allocation, holder, kind, registered, read))
    return result


def _registration(call: cst.Call, inference) -> Optional[tuple[str, str, cst.CSTNode]]:
    """(holder, kind, registration) when ``call`` is an uninitialized allocation kept as a
    parameter or buffer: ``nn.Parameter(torch.empty(..))`` assigned, ``register_buffer("n",
    torch.empty(..))``, ``register_parameter("n", nn.Parameter(torch.empty(..)))``."""
    if inference.qualname(call.func) not in _EMPTY or _meta_or_empty(call):
        return None
    parent = _parent_call(call)
    if parent is not None and torch_api.normalize(inference.qualname(parent.func) or "") == "torch.nn.Parameter" \
            and parent.args and parent.args[0].value is call:
        grand = _parent_call(parent)
        if grand is not None and _is_register(grand, "register_parameter") and len(grand.args) >= 2 \
                and grand.args[1].value is parent:
            name = _string(grand.args[0].value)
            return (f"{dotted(grand.func.value)}.{name}", "parameter", grand) if name else None
        assign = parent.parent
        if isinstance(assign, cst.Assign) and assign.value is parent and len(assign.targets) == 1 \
                and isinstance(assign.targets[0].target, (cst.Name, cst.Attribute)):
            holder = dotted(assign.targets[0].target)
            return (holder, "parameter", assign) if holder else None
        return None
    if parent is not None and _is_register(parent, "register_buffer") and len(parent.args) >= 2 \
            and parent.args[1].value is call:
        name = _string(parent.args[0].value)
        if name:
            return f"{dotted(parent.func.value)}.{name}", "buffer", parent
    assign = call.parent
    if parent is None and is_true(keyword(call, "requires_grad")) and isinstance(assign, cst.Assign) \
            and assign.value is call and len(assign.targets) == 1 \
            and isinstance(assign.targets[0].target, (cst.Name, cst.Attribute)):
        # `W = torch.empty(784, 10, requires_grad=True)`: a weight trained by hand.
        holder = dotted(assign.targets[0].target)
        return (holder, "parameter", assign) if holder else None
    return None


def _written_names(analysis: "ModuleAnalysis", calls: list[cst.Call]) -> Optional[set[str]]:
    """The attribute and variable names something in the file may write; None when anything
    may be written (a loop over parameters that writes, ``apply``, a strict load)."""
    inference = analysis.inference
    written: set[str] = set()
    assigned: dict[str, int] = {}
    for call in calls:
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if name == "apply" and call.args:
            return None
        if name == "load_state_dict":
            strict = keyword(call, "strict")
            if strict is None and len(call.args) < 2 or strict is not None and not is_false(strict):
                return None
        if name in _ITERATING and _loop_writes(call, inference):
            return None
        qualname = inference.qualname(func) or ""
        if isinstance(func, cst.Attribute) and torch_api.is_inplace_method(name or ""):
            written.update(_holder_names(func.value))
        if not qualname.startswith("torch.") or qualname.startswith("torch.nn.init."):
            for arg in call.args:  # handed to a function: it may fill it
                written.update(_holder_names(arg.value))
    for node in analysis.nodes_of(cst.Assign, cst.AugAssign):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, cst.Subscript):
                written.update(_holder_names(target.value))
            elif isinstance(node, cst.AugAssign):
                written.update(_holder_names(target))
            elif isinstance(target, (cst.Name, cst.Attribute)):
                last = target.attr.value if isinstance(target, cst.Attribute) else target.value
                if last == "data" and isinstance(target, cst.Attribute):
                    written.update(_holder_names(target.value))
                assigned[last] = assigned.get(last, 0) + 1
    written.update(name for name, count in assigned.items() if count > 1)
    return written


def _loop_writes(call: cst.Call, inference) -> bool:
    """``for p in self.parameters(): nn.init.normal_(p)`` (or an in-place write to, or an
    assignment through, the loop's variable): every parameter or buffer may be written."""
    node = call.parent
    while node is not None and not isinstance(node, (cst.For, cst.FunctionDef, cst.Module)):
        node = node.parent
    if not isinstance(node, cst.For):
        return False
    variables = {inner.value for inner in iter_nodes(node.target) if isinstance(inner, cst.Name)}
    for inner in iter_nodes(node.body):
        if isinstance(inner, cst.Call):
            func = inner.func
            if isinstance(func, cst.Attribute) and torch_api.is_inplace_method(func.attr.value) \
                    and _root(func.value) in variables:
                return True
            if any(_root(arg.value) in variables for arg in inner.args) and (
                    (inference.qualname(func) or "").startswith("torch.nn.init.")
                    or _INITIALIZING_NAME.search(dotted(func) or "")):
                return True
        if isinstance(inner, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in inner.targets] if isinstance(inner, cst.Assign) else [inner.target]
            if any(isinstance(t, (cst.Attribute, cst.Subscript)) and _root(t) in variables for t in targets):
                return True
    return False


def _root(node: cst.BaseExpression) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _holder_names(node: cst.BaseExpression) -> set[str]:
    """The last names of ``self.w``, ``self.w.data``, ``w[..]``: what a write through it writes."""
    while isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    if isinstance(node, cst.Attribute):
        return {node.attr.value}
    if isinstance(node, cst.Name):
        return {node.value}
    return set()


def _meta_or_empty(call: cst.Call) -> bool:
    device = keyword(call, "device")
    if isinstance(device, cst.SimpleString) and "meta" in device.value:
        return True
    sizes = [arg.value for arg in call.args if arg.keyword is None]
    return len(sizes) == 1 and isinstance(sizes[0], cst.Integer) and sizes[0].value == "0"


def _parent_call(node: cst.CSTNode) -> Optional[cst.Call]:
    parent = node.parent
    if isinstance(parent, cst.Arg):
        parent = parent.parent
    return parent if isinstance(parent, cst.Call) else None


def _is_register(call: cst.Call, method: str) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == method and bool(dotted(call.func.value))


def _string(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.value.strip("rbuRBU")
        return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else None
    return None


def _names(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Attribute):
        return node.attr.value == name
    return isinstance(node, cst.Name) and node.value == name \
        and not (isinstance(node.parent, cst.Attribute) and node.parent.attr is node)


def _is_target(node: cst.CSTNode) -> bool:
    parent = node.parent
    return isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Param)
