"""Which names of a file may hold an imported object (``Variable``): its imports, the names
the file does not bind when a star import may bring them, and the aliases of those
(``V = ag.Variable``, ``Var = V if legacy else None``, a parameter's default).  Rules that
look for one torch object by name ask this once per file, so that not every name is inferred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.analysis import torch_api
from torchlint.analysis.module_names import NOT_PROJECT_ROOTS
from torchlint.analysis.semantic import BindingKind
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

# Packages whose imports are read by name: an import from one of these is the object itself.
_TORCH_ROOTS = frozenset({"torch", "numpy", "torchvision"})


@dataclass
class ImportHolders:
    """``may_hold``: the names that may hold the object; ``bound``: every name the file binds;
    ``unbound_may_hold``: a star import may bring names the file does not bind;
    ``project_imports``: names imported from the file's own project."""

    may_hold: set[str]
    bound: set[str] = field(default_factory=set)
    unbound_may_hold: bool = False
    project_imports: set[str] = field(default_factory=set)


def import_holders(analysis: "ModuleAnalysis", qualname: str, name: str) -> ImportHolders:
    """The names of ``analysis``'s file that may hold the torch object ``qualname`` (its
    usual name ``name`` always may, when imported by a star import or unbound)."""
    model, inference = analysis.model, analysis.inference
    found = ImportHolders({name}, unbound_may_hold=bool(model.star_imports))
    imported: set[str] = set()
    aliases: dict[str, list] = {}
    for scope in model.scopes:
        for bound, bindings in scope.bindings.items():
            found.bound.add(bound)
            for binding in bindings:
                if binding.kind is BindingKind.IMPORT:
                    imported.add(bound)
                    if (binding.qualname or "").split(".")[0] not in NOT_PROJECT_ROOTS:
                        found.project_imports.add(bound)
                    aliases.setdefault(bound, []).append(binding)
                elif _references(binding):
                    aliases.setdefault(bound, []).append(binding)
    # Names that may hold an imported object: imports, names the file does not bind
    # (builtins, star imports), and aliases of those (`V = ag.Variable`).
    external: dict[str, bool] = {each: True for each in imported}

    def may_be_external(each: str) -> bool:
        if each not in found.bound:
            return each not in ("None", "True", "False")
        if each not in external:
            external[each] = False  # until shown otherwise (alias cycles)
            external[each] = any(root is not None and may_be_external(root)
                                 for binding in aliases.get(each, ())
                                 for root in map(_root, _references(binding)))
        return external[each]

    def binds_object(binding) -> bool:
        if binding.kind is BindingKind.PARAM:
            return inference.qualname(binding.node.default) == qualname
        if binding.kind is BindingKind.IMPORT and (binding.qualname or "").split(".")[0] in _TORCH_ROOTS:
            return torch_api.normalize(binding.qualname) == qualname
        value = inference.binding_value(binding)
        return value is not None and value.kind is Kind.EXTERNAL and value.qualname is not None \
            and inference.exported(value.qualname) == qualname

    for each, bindings in aliases.items():
        if may_be_external(each) and each not in found.may_hold and any(binds_object(b) for b in bindings):
            found.may_hold.add(each)
    return found


def _references(binding) -> list[cst.BaseExpression]:
    """The bare references (`Variable`, `ag.Variable`, both sides of `A if c else B`) that
    an assignment or a parameter's default gives its name; [] for anything else."""
    if binding.kind is BindingKind.PARAM:
        value = getattr(binding.node, "default", None)
    elif binding.kind in (BindingKind.IMPORT, BindingKind.FUNCTION, BindingKind.CLASS):
        return []
    else:
        value = binding.value
    if value is None:
        return []
    found = _alternatives(value)
    return found if any(isinstance(node, (cst.Name, cst.Attribute)) for node in found) else []


def _alternatives(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expressions whose value ``node`` may take (both sides of `A if c else B`), in
    source order; iterative, for chains of thousands of `or`."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.IfExp):
            stack += (current.orelse, current.body)
        elif isinstance(current, cst.BooleanOperation):
            stack += (current.right, current.left)
        else:
            found.append(current)
    return found


def _root(node: cst.BaseExpression) -> Optional[str]:
    """`a` for `a.b.c`; None for anything but a dotted name."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None
