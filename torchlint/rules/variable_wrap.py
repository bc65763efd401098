"""TL201 variable-wrap: ``torch.autograd.Variable``, deprecated since PyTorch 0.4: at most a
``.detach()``."""

import ast
import re
from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, LINE_BREAK, NOT_REPRODUCED, Applicability, Bad, Edit, Fix,
    Observation, Rule, Step, Verdict, cst, edits, is_false, is_true, iter_nodes, keyword, line_start,
    repair_legacy_syntax, torch_api,
)

_FINAL_LINE_BREAK = re.compile(r"(?:\r\n?|\n)\Z")

# Methods whose result never requires grad (torch_facts): `long()`, `argmax()`, `eq()`...
_NOT_DIFFERENTIABLE_METHODS = torch_api.NOT_DIFFERENTIABLE_METHODS
# Expressions whose source can stand anywhere without parentheses.
_ATOMS = (cst.Name, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp,
          cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float,
          cst.Imaginary, cst.Ellipsis)
# Where any expression (but a bare generator, walrus or yield) fits without parentheses.
_OPEN_CONTEXTS = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)


class VariableWrap(Rule):
    code = "TL201"
    name = "variable-wrap"
    summary = ("`Variable(t)`, `isinstance(x, Variable)` and its import: deprecated since PyTorch 0.4, at most a "
               "`.detach()`")
    message = ("`Variable(...)` is deprecated since PyTorch 0.4: tensors track gradients themselves, and it only "
               "returns its argument detached from the graph; use the tensor directly")
    fix = Applicability.SAFE
    since = "0.4"
    requires = (r"Variable",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
    )
    requires_may_be_imported = True
    docs = """
    ## What it does
    Flags every use of `torch.autograd.Variable`: calls (`Variable(t)`,
    `Variable(t, requires_grad=True)`), type checks (`isinstance(x, Variable)`), other
    references (annotations, base classes) and its import. Only the `Variable` of
    `torch.autograd` is reported, however it was imported (`from torch.autograd
    import Variable as V`, `import torch.autograd as ag`, `from torch.autograd import *`);
    the `Variable` of TensorFlow, SymPy or your own code is not.

    ## Why is this bad?
    Since PyTorch 0.4, `Variable` and `Tensor` are the same class: `Variable(t)`
    returns `t.detach()` (a tensor sharing `t`'s data, outside its graph), and
    `isinstance(x, Variable)` is `isinstance(x, torch.Tensor)`. On a tensor that
    requires no grad the wrapper does nothing but suggests that it does; on one that
    requires grad it silently cuts the gradient. Its extra argument `volatile` is
    ignored (TL202).

    ## What to do instead
    Use the tensor directly; `Variable(t, requires_grad=True)` becomes
    `t.requires_grad_()`, and `isinstance(x, Variable)` becomes
    `isinstance(x, torch.Tensor)`. Drop the import once nothing uses it.

    ## Fix (safe)
    `Variable(t)` is not quite the identity: it returns `t.detach()`, a new tensor
    that shares `t`'s data but not its graph. The fix keeps that where it matters:

    - `Variable(t)` becomes `t` when `t` is known not to require grad (a new tensor
      from `torch.zeros(..)`, `x.data`, `x.new(..)`, `x.detach()`), and
      `t.detach()` when it is known to require grad (a parameter, a model output);
      both are safe. When nothing is known about `t`, unwrapping is unsafe: it
      stops detaching `t` if `t` can require grad.
    - `Variable(t, requires_grad=True)` becomes `t.requires_grad_()` (safe on a new
      tensor; unsafe on a name, since the flag then changes on `t` itself) or
      `t.detach().requires_grad_()` when `t` requires grad; `requires_grad=False` is
      dropped.
    - `isinstance(x, Variable)` becomes `isinstance(x, torch.Tensor)`, in tuples too
      (safe: that is how `Variable` answers `isinstance`), and so do annotations.
      `issubclass(C, Variable)` becomes `issubclass(C, torch.Tensor)` as an unsafe
      fix: `Variable` answers `issubclass` for its own subclasses only. `import torch`
      is added when the file has no import of torch.
    - The import of `Variable` is removed once nothing in the file uses it (the
      whole line, or just that name of `from torch.autograd import Variable, grad`);
      not in an `__init__.py`, which may re-export it, nor when the name appears in
      a string other than an entry of `__all__` (`getattr(m, "Variable")`). The
      removal is unsafe, with the reason, when another module may take `Variable`
      from this one: a module of the package imports it (`from .compat import
      Variable`), star-imports this module (`from .compat import *`, directly or
      through other star imports) and mentions the word `Variable`, or imports this
      module (`from . import compat`, `import pkg` after `from .compat import *` in
      `pkg/__init__.py`) and mentions the word; or when `__all__` lists it (the fix
      then takes it out of `__all__` too) or is computed. A star importer that never
      mentions `Variable` cannot use it, so it leaves the removal safe, and so does
      a literal `__all__` without it (a star import then does not bring it). The
      package is the tree of the module's top-level package (or its folder, for a
      script) and its subpackages; scripts beside the package are not looked at.

    No fix is offered for `Variable()` with no data or `*args`, unknown keyword
    arguments, other references to `Variable` (base classes, `type(x) is Variable`),
    or star imports. With `volatile=True` (TL202) the unwrapping is only shown,
    never applied: fix the `volatile` first.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.autograd import Variable

            x = Variable(torch.ones(2, 2), requires_grad=True)
            """,
            reported=(
                (2, "Variable"),
                (4, "Variable(torch.ones(2, 2), requires_grad=True)"),
            ),
            fixed="""
            import torch

            x = torch.ones(2, 2).requires_grad_()
            """,
        ),
        Bad(
            """
            import torch.autograd as ag

            def is_variable(x):
                return isinstance(x, ag.Variable)
            """,
            reported=((4, "ag.Variable"),),
            fixed="""
            import torch
            import torch.autograd as ag

            def is_variable(x):
                return isinstance(x, torch.Tensor)
            """,
        ),
        Bad(
            """
            import torch
            from torch.autograd import Variable

            batch = Variable(torch.cat([torch.ones(2),
                                        torch.zeros(2)]))
            """,
            reported=((2, "Variable"), (4, "Variable(torch.cat([torch.ones(2),\n                            torch.zeros(2)]))")),
            fixed="""
            import torch

            batch = torch.cat([torch.ones(2),
                               torch.zeros(2)])
            """,
        ),
    )
    good = (
        """
        import torch

        x = torch.ones(2, 2, requires_grad=True)
        """,
        """
        import tensorflow as tf
        from sympy import Variable

        v = tf.Variable(0.0)
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = self.ctx.code(node.module)
        for alias in node.names:
            qualname = torch_api.normalize(f"{module}.{self.ctx.code(alias.name)}")
            if qualname == torch_api.VARIABLE:
                self.report(
                    alias,
                    "`torch.autograd.Variable` is deprecated: tensors track gradients themselves since "
                    "PyTorch 0.4; use `torch.Tensor`",
                    evidence=(Step(alias, f"`{{code}}` is imported from `{module}`"),),
                    fix=self._import_fix(node, alias),
                )

    def visit_Name(self, node: cst.Name) -> None:
        if self._may_hold is None:
            self._find_candidates()
        name = node.value
        if name in self._may_hold or self._unbound_may_hold and name not in self._bound \
                and id(node) in self.ctx.model.references:
            self._reference(node)

    _may_hold: Optional[set[str]] = None

    def _find_candidates(self) -> None:
        """The names that can hold `Variable`, so that not every name in the file is
        inferred: those bound to it somewhere, and after a star import the names the
        file does not bind (the star import may bring them)."""
        holders = self.ctx.import_holders(torch_api.VARIABLE, "Variable")
        self._may_hold, self._bound = holders.may_hold, holders.bound
        self._unbound_may_hold, self._project_imports = holders.unbound_may_hold, holders.project_imports

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "Variable":
            self._reference(node)
        elif isinstance(node.value, cst.Name):
            # `compat.V`: a module of the project may give `Variable` another name.
            if self._may_hold is None:
                self._find_candidates()
            if node.value.value in self._project_imports:
                self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        if self.ctx.qualname(node) != torch_api.VARIABLE:
            return
        evidence = self.ctx.origin(node, torch_api.VARIABLE)
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            self._call(parent, evidence)
            return
        check = self._type_check(node)
        if check is not None:
            applicability = Applicability.SAFE if check == "builtins.isinstance" else Applicability.UNSAFE
            self.report(
                node,
                "`{ref}` is `torch.Tensor` since PyTorch 0.4; check against `torch.Tensor`",
                evidence=evidence,
                fix=self._tensor_fix(node, applicability),
                ref=node,
            )
        else:
            in_annotation = any(isinstance(a, cst.Annotation) for a in self.ctx.ancestors(node))
            self.report(
                node,
                "`{ref}` is deprecated since PyTorch 0.4 and is the same as `torch.Tensor`; use `torch.Tensor`",
                evidence=evidence,
                fix=self._tensor_fix(node, Applicability.SAFE) if in_annotation else None,
                ref=node,
            )

    def _call(self, call: cst.Call, evidence) -> None:
        wrapped = call.args[0].value if call.args and call.args[0].keyword is None else None
        if wrapped is not None and is_true(keyword(call, "requires_grad")):
            unwrap = self._unwrap(call)
            self.report(
                call,
                "`Variable(..., requires_grad=True)` is deprecated since PyTorch 0.4; use `{replacement}`",
                evidence=evidence,
                fix=self._call_fix(call),
                replacement=_one_line(unwrap[0]) if unwrap else f"{self.ctx.receiver(wrapped)}.requires_grad_()",
            )
        else:
            self.report(call, evidence=evidence, fix=self._call_fix(call))

    def _type_check(self, node: cst.BaseExpression) -> Optional[str]:
        """``builtins.isinstance`` / ``builtins.issubclass`` when ``node`` is (in) the
        class argument of one."""
        current = node
        parent = self.ctx.parent(current)
        while isinstance(parent, (cst.Element, cst.Tuple)):
            current, parent = parent, self.ctx.parent(parent)
        if not isinstance(parent, cst.Arg):
            return None
        call = self.ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return None
        qualname = self.ctx.qualname(call.func)
        return qualname if qualname in ("builtins.isinstance", "builtins.issubclass") else None

    # --- fixes -----------------------------------------------------------------------

    def _tensor_fix(self, node: cst.BaseExpression, applicability: Applicability) -> Fix:
        torch, imports = edits.torch_name(self.ctx)
        tensor = f"{torch}.Tensor"
        message = f"Replace with `{tensor}`"
        element = self.ctx.parent(node)
        group = self.ctx.parent(element) if isinstance(element, cst.Element) else None
        if isinstance(group, cst.Tuple):
            # `(torch.Tensor, Variable)`: one `torch.Tensor` is enough.
            items = edits.list_items(self.ctx, [item.value for item in group.elements], self.ctx.span(group)[1])
            kept, seen = [], False
            for item, (value, comma) in zip(group.elements, items):
                if self._is_tensor_class(item.value):
                    if seen:
                        continue
                    seen = True
                    value = tensor
                kept.append([value, comma])
            if len(kept) < len(items):
                if len(kept) == 1:  # the whole class argument, parentheses and all
                    return Fix(applicability, message, (edits.replace(self.ctx.parent(group), tensor), *imports))
                kept[-1][1] = items[-1][1]  # what ends the last element (a trailing comma) stays last
                text = "".join(value + comma for value, comma in kept)  # the group's range has no parentheses
                return Fix(applicability, f"Replace with `({_one_line(text)})`", (edits.replace(group, text), *imports))
        return Fix(applicability, message, (edits.replace(node, tensor), *imports))

    def _is_tensor_class(self, node: cst.BaseExpression) -> bool:
        if self.ctx.qualname(node) == "torch.Tensor":
            return True
        return self.ctx.qualname(node) == torch_api.VARIABLE

    def _call_fix(self, call: cst.Call) -> Optional[Fix]:
        unwrap = self._unwrap(call)
        if unwrap is None:
            return None
        text, applicability, message = unwrap
        if applicability is not Applicability.DISPLAY_ONLY:
            deletion = self._self_assignment(call)
            if deletion is not None:
                return deletion
        return Fix(applicability, message, (edits.replace(call, text),))

    def _unwrap(self, call: cst.Call) -> Optional[tuple[str, Applicability, str]]:
        """What replaces ``Variable(t, requires_grad=..)``, how safely, and the fix's message.
        ``Variable`` returned ``t.detach()`` with ``requires_grad`` set as asked; the
        replacement keeps that wherever ``t`` might require grad."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        wrapped = call.args[0].value
        requires_grad: Optional[cst.BaseExpression] = None
        volatile = False
        for arg in call.args[1:]:
            if arg.star or arg.keyword is None:
                return None
            if arg.keyword.value == "requires_grad":
                requires_grad = None if is_false(arg.value) else arg.value
            elif arg.keyword.value == "volatile":
                volatile = volatile or not is_false(arg.value)  # volatile=False does nothing
            else:
                return None
        value = self.ctx.tensor(wrapped)
        attached = value.attached if value is not None else None
        if attached is False and self._grad_from_arguments(wrapped):
            attached = None
        if attached is None and _unattached(wrapped):
            attached = False
        if attached:
            text = edits.method_call(self.ctx, wrapped, "detach()")
            if requires_grad is not None:
                text += f".{_requires_grad_call(self.ctx, requires_grad)}"
        elif requires_grad is not None:
            text = edits.method_call(self.ctx, wrapped, _requires_grad_call(self.ctx, requires_grad))
        else:
            text = self._unwrapped(call, wrapped)
        if "\n" in text and not call.lpar and not _bracketed(self.ctx, wrapped):
            text = f"({text})"  # a line break that only the call's parentheses allowed
        text = self._realigned(call, wrapped, text)
        message = f"Replace with `{_one_line(text)}`"
        if volatile:
            return text, Applicability.DISPLAY_ONLY, f"{message} once `volatile` is dealt with (TL202)"
        if attached is None:
            return text, Applicability.UNSAFE, (
                f"{message}; `Variable` detached `{self.ctx.snippet(wrapped)}`: "
                "keep `.detach()` if it can require grad")
        if requires_grad is not None and not attached and not self._fresh(wrapped):
            return text, Applicability.UNSAFE, (
                f"{message}; this sets `requires_grad` on `{self.ctx.snippet(wrapped)}` itself, not on a copy")
        return text, Applicability.SAFE, message

    def _realigned(self, call: cst.Call, wrapped: cst.BaseExpression, text: str) -> str:
        """``text`` (``wrapped``'s code where ``call`` stood) with its continuation lines
        moved left as far as the code moved, so those aligned under an opening bracket
        stay aligned: `Variable(torch.cat([a,` / `b]))` gives `torch.cat([a,` / `b])` with
        `b` under `a`.  A line indented less than the code's start (a hanging indent) and
        the inside of a multi-line string stay as they are."""
        if "\n" not in text:
            return text
        if any(isinstance(node, (cst.SimpleString, cst.FormattedString)) and "\n" in self.ctx.code(node)
               for node in iter_nodes(wrapped)):
            return text
        index = self.ctx.analysis.line_index
        call_column = index.position(self.ctx.outer_span(call)[0])[1]
        wrapped_column = index.position(self.ctx.outer_span(wrapped)[0])[1]
        shift = wrapped_column - (call_column + text.index(self.ctx.code(wrapped)[:1] or text[:1]))
        if shift <= 0:
            return text
        first, *rest = text.split("\n")
        moved = [line[shift:] if len(line) - len(line.lstrip(" ")) >= wrapped_column - 1 and line[:shift].isspace()
                 else line for line in rest]
        return "\n".join([first, *moved])

    def _unwrapped(self, call: cst.Call, wrapped: cst.BaseExpression) -> str:
        """``wrapped``'s source where ``call`` stood, in parentheses when it needs them there."""
        code = self.ctx.code(wrapped)
        if wrapped.lpar or call.lpar or isinstance(wrapped, _ATOMS):
            return code
        if isinstance(wrapped, (cst.Call, cst.Subscript, cst.Attribute)):
            return code
        if isinstance(self.ctx.parent(call), _OPEN_CONTEXTS) and \
                not isinstance(wrapped, (cst.GeneratorExp, cst.NamedExpr, cst.Yield)):
            return code
        return f"({code})"

    def _grad_from_arguments(self, node: cst.BaseExpression) -> bool:
        """A method call in ``node`` takes a tensor argument that may require grad
        (``t.mm(w)``): the inference follows only the receiver of a method."""
        for call in iter_nodes(node):
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                    call.func.attr.value not in torch_api.VARIABLE_SHAPING_METHODS | torch_api.NEW_TENSOR_METHODS and \
                    self.ctx.qualname(call.func) is None:
                for arg in call.args:
                    value = self.ctx.tensor(arg.value)
                    if value is not None and value.attached is not False:
                        return True
        return False

    def _fresh(self, node: cst.BaseExpression) -> bool:
        """``node`` evaluates to a tensor object that nothing else refers to: what a
        function or an operator returns, ``x.data``, ``x.new(..)``, ``x.detach()``, and
        methods on those (only on those: ``t.float()`` may return ``t`` itself)."""
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if self.ctx.qualname(node.func) is not None or node.func.attr.value in torch_api.NEW_TENSOR_METHODS:
                return True  # `torch.zeros(..)`, `x.new(..)`
            node = node.func.value
        if isinstance(node, cst.Attribute):
            return node.attr.value == "data"
        return not isinstance(node, (cst.Name, cst.Subscript))

    def _self_assignment(self, call: cst.Call) -> Optional[Fix]:
        """``x = Variable(x)`` (or ``a, b = Variable(a), Variable(b)``) unwraps to ``x = x``:
        remove the statement instead, as safely as the least safe of its unwraps."""
        assign = self.ctx.parent(call)
        if isinstance(assign, cst.Element):
            assign = self.ctx.parent(self.ctx.parent(assign))
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target, value = assign.targets[0].target, assign.value
        pairs = [(target, value)]
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            if len(target.elements) != len(value.elements):
                return None
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        applicability = Applicability.SAFE
        for name, expression in pairs:
            if not isinstance(name, cst.Name) or isinstance(expression, cst.Name) and expression.value == name.value:
                continue
            if not isinstance(expression, cst.Call) or self.ctx.qualname(expression.func) != torch_api.VARIABLE:
                return None
            unwrap = self._unwrap(expression)
            if unwrap is None or unwrap[0] != name.value or unwrap[1] is Applicability.DISPLAY_ONLY:
                return None
            if unwrap[1] is Applicability.UNSAFE:
                applicability = Applicability.UNSAFE
        if not all(isinstance(name, cst.Name) for name, _ in pairs):
            return None
        line = self.ctx.parent(assign)
        removal = _remove_statement(self.ctx, line) if isinstance(line, cst.SimpleStatementLine) else None
        if removal is None:
            return None
        return Fix(applicability, f"Remove `{self.ctx.snippet(assign)}`: without `Variable` it assigns "
                                  "the names to themselves", removal)

    def _import_fix(self, statement: cst.ImportFrom, alias: cst.ImportAlias) -> Optional[Fix]:
        """Remove ``alias`` from its import when nothing in the file uses it any more."""
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
            else self.ctx.code(alias.name)
        line = self.ctx.parent(statement)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        if edits.has_noqa(self.ctx, line):
            return None  # `# noqa: F401`: kept on purpose, a re-export
        if self.ctx.path.endswith("__init__.py") or self.ctx.read_anywhere(local):
            return None
        listed, computed = self._dunder_all(local)
        if self._used(local, {id(string) for _, string in listed}):
            return None
        if len(statement.names) > 1:
            removal = (edits.replace(statement, self._without(statement, alias)),)
        else:
            removal = _remove_statement(self.ctx, line)
            if removal is None:
                return None
        # Other modules may take the name from this one: through `__all__`, or by
        # importing it (`from .torch_imports import *` and then `Variable(x)`).
        risks = []
        if listed:
            risks.append(f"`__all__` lists `{local}` (line {self._row(listed[0][1])}): it is exported, and "
                         "code elsewhere may import it from here; the fix takes it out of `__all__` too")
            containers = list({id(container): container for container, _ in listed}.values())
            removal = (*removal, *(self._without_strings(container, local) for container in containers))
        if computed is not None:
            risks.append(f"`__all__` is computed (line {self._row(computed)}) and may list `{local}`")
        project = self.ctx.inference.project
        if project is not None and self.ctx.file_path is not None:
            # A star import brings the name unless `__all__` (all literal) leaves it out.
            star = not local.startswith("_") and (bool(listed) or computed is not None or not self._has_all)
            risk = project.removal_risk(self.ctx.file_path, local, star, consumer=self.ctx.file_path)
            if risk is not None:
                if not _only_unwrapped_calls(project.texts_mentioning(self.ctx.file_path, local, self.ctx.file_path),
                                             local):
                    # Another module takes the name from here and keeps using it after its own
                    # fixes (NRI's `from utils import *`, then `Variable(x, volatile=True)`):
                    # removing it would be a NameError there, so only say so.
                    return Fix(Applicability.DISPLAY_ONLY, f"Remove the unused import of `{local}` once no "
                                                           f"other module takes it from here: {risk}")
                risks.append(risk)
        message = f"Remove the unused import of `{local}`"
        if risks:
            return Fix(Applicability.UNSAFE, f"{message}; " + "; ".join(risks), removal)
        return Fix(Applicability.SAFE, message, removal)

    _has_all = False

    def _dunder_all(self, name: str) -> tuple[list[tuple[cst.BaseExpression, cst.SimpleString]], Optional[cst.CSTNode]]:
        """How the module's ``__all__`` may list ``name``: the plain strings ``name`` in the
        literal lists and tuples it is given (``__all__ = [..]``, ``+= [..]``,
        ``.extend([..])``), each with its list or tuple, and the first place where it gets
        something else (a computed value, a name, an import), or None."""
        listed: list[tuple[cst.BaseExpression, cst.SimpleString]] = []
        computed: Optional[cst.CSTNode] = None
        self._has_all = False
        references = self.ctx.model.references
        for node in iter_nodes(self.ctx.module):
            if not isinstance(node, cst.Name) or node.value != "__all__":
                continue
            parent = self.ctx.parent(node)
            values: list[cst.BaseExpression] = []
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is node:
                if not self.ctx.binds_at_module_level(node):
                    continue  # a function's own variable
                value = self.ctx.parent(parent).value if isinstance(parent, cst.AssignTarget) else parent.value
                values = [value] if value is not None else []  # `__all__: list[str]` alone binds nothing
            elif isinstance(parent, cst.Attribute) and parent.value is node:
                call = self.ctx.parent(parent)
                method = parent.attr.value
                if method in ("extend", "__iadd__", "append", "insert"):
                    if not isinstance(call, cst.Call) or call.func is not parent or \
                            any(arg.star or arg.keyword is not None for arg in call.args):
                        computed = computed or node
                        continue
                    args = [arg.value for arg in call.args][1 if method == "insert" else 0:]
                    if method in ("append", "insert"):
                        # A single string: listed, but not in a list the fix can edit.
                        if len(args) != 1 or not isinstance(args[0], cst.SimpleString):
                            computed = computed or node
                        continue
                    values = args
                else:
                    continue  # `__all__.remove(..)`, `__all__.index(..)`: it lists no more
            elif id(node) in references or isinstance(parent, (cst.NameItem, cst.Del)):
                continue  # read (`for n in __all__`), declared `global`, deleted
            else:
                computed = computed or node  # `from .core import __all__`, `for __all__ in ..`
                continue
            if values and self._unconditional(node):
                self._has_all = True  # star imports take only what it lists
            for value in values:
                strings = _strings(value)
                if strings is None:
                    computed = computed or value
                    continue
                listed += [(value, string) for string in strings if string.raw_value == name]
        return listed, computed

    def _unconditional(self, node: cst.CSTNode) -> bool:
        """``node`` is in a statement of the module's own body (not in a function, a class,
        an `if` or a `try`): it runs whenever the module is imported."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.SimpleStatementLine):
                return isinstance(self.ctx.parent(ancestor), cst.Module)
        return False

    def _without_strings(self, container: cst.BaseExpression, name: str) -> Edit:
        """The edit that takes the strings ``name`` out of the list or tuple ``container``."""
        values = [element.value for element in container.elements]
        start, end = self.ctx.span(container)
        rest = edits.items_without(self.ctx, values, end, lambda value: value.raw_value == name)
        if rest is None:
            return edits.replace(container, "[]" if isinstance(container, cst.List) else
                                 "" if container.lpar else "()")
        if isinstance(container, cst.Tuple) and sum(value.raw_value != name for value in values) == 1 \
                and not edits.list_items(self.ctx, values, end)[-1][1].lstrip().startswith(","):
            rest += ","  # `("a",)` stays a tuple
        head = self.ctx.text[start:self.ctx.outer_span(values[0])[0]]
        return edits.replace(container, head + rest)

    def _row(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]

    def _without(self, statement: cst.ImportFrom, alias: cst.ImportAlias) -> str:
        """The source of ``statement`` without the name ``alias``."""
        start, end = self.ctx.span(statement)
        head = self.ctx.text[start:self.ctx.span(statement.names[0])[0]]
        return head + edits.items_without(self.ctx, statement.names, end, lambda other: other is alias)

    def _used(self, name: str, exported: set[int] = frozenset()) -> bool:
        """``name`` is read anywhere in the file, is a string (``getattr(m, "Variable")``)
        other than the ``exported`` ones (ids of strings in ``__all__``), or is mentioned
        in a string annotation."""
        if self.ctx.read_anywhere(name):
            return True
        word = re.compile(rf"\b{re.escape(name)}\b")
        for node in iter_nodes(self.ctx.module):
            if isinstance(node, cst.SimpleString) and (
                    node.raw_value == name and id(node) not in exported
                    or word.search(node.raw_value) and any(isinstance(a, cst.Annotation)
                                                           for a in self.ctx.ancestors(node))):
                return True
        return False

    @classmethod
    def runs(cls, diagnostic) -> bool:
        # Only a call can do something (cut a gradient); the import and the name used as a
        # type (`isinstance(x, Variable)`) only modernize.
        return diagnostic.message.startswith("`Variable(")

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        call = run.first("variable")
        if call is None:
            return Verdict(NOT_REPRODUCED, "`Variable` is an alias of `torch.Tensor`: nothing happens here")
        if call["input_requires_grad"] and not call["result_requires_grad"]:
            return Verdict(CONFIRMED, "`Variable(t)` returned a tensor detached from `t`, which requires grad: the "
                                      "gradient is cut here")
        return Verdict(NOT_REPRODUCED, "`Variable(t)` returned an equivalent tensor: a no-op")


def _strings(node: cst.BaseExpression) -> Optional[list[cst.SimpleString]]:
    """The strings of a list or tuple of plain strings (``["a", "b"]``); None for anything else."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    strings = []
    for element in node.elements:
        if not isinstance(element, cst.Element) or not isinstance(element.value, cst.SimpleString) \
                or "b" in element.value.prefix:
            return None
        strings.append(element.value)
    return strings


def _line_end(ctx, node: cst.CSTNode) -> int:
    """The offset after the line break that ends ``node``'s last line (the range of a
    compound statement already runs to it)."""
    match = LINE_BREAK.search(ctx.text, ctx.span(node)[1] - 1)
    return match.end() if match else len(ctx.text)


def _only_unwrapped_calls(texts: list[tuple[object, str]], name: str) -> bool:
    """Whether the modules that may take ``name`` from here only use it as a plain
    ``Variable(x)``, which this rule's safe fix unwraps in the same run, so that no use is
    left once the whole package is fixed.  A module with its own ``from torch.autograd
    import Variable`` does not take it from here.  (Read with ``ast``: other modules' trees
    are not built here.)"""
    for _path, text in texts:
        tree = _parsed(text)
        if tree is None:
            return False
        if any(isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level
               and any((alias.asname or alias.name) == name for alias in node.names) for node in tree.body):
            continue  # its own `from torch.autograd import Variable`
        unwrapped = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Name) and node.func.id == name and len(node.args) == 1
                     and not node.keywords and not isinstance(node.args[0], ast.Starred)}
        if any(isinstance(node, ast.Name) and node.id == name and id(node) not in unwrapped
               for node in ast.walk(tree)):
            return False
    return True


def _parsed(text: str) -> Optional[ast.Module]:
    """``text`` parsed, read as torchlint reads legacy syntax (``async=``, ``print x``)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        repaired = repair_legacy_syntax(text)
    try:
        return ast.parse(repaired[0]) if repaired is not None else None
    except (SyntaxError, ValueError):
        return None


def _remove_statement(ctx, line: cst.SimpleStatementLine) -> Optional[tuple[Edit, ...]]:
    """Edits that delete the statement ``line`` (alone on its line) with its comment and
    line break; ``pass`` when it is the only statement of its block."""
    if len(line.body) != 1:
        return None
    block = ctx.parent(line)
    if not isinstance(block, (cst.Module, cst.IndentedBlock)):
        return None
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
        return (edits.replace(line.body[0], "pass"),)
    if isinstance(block, cst.Module):
        # The whole line: its indentation, the statement, a comment and the line break.
        start = line_start(ctx.text, ctx.span(line)[0])
        return (Edit(line, "", span=(start, _line_end(ctx, line))),)
    # In a block, a statement next to this one is written again over the range of both,
    # which takes the blank lines after the deleted one with it.
    index = next(i for i, statement in enumerate(block.body) if statement is line)
    if index + 1 < len(block.body):
        return (_rewrite_following(ctx, line, block.body[index + 1]),)
    # The last statement of its block: the previous one, written again, takes its place
    # without its own line break and keeps this line's.
    previous = block.body[index - 1]
    if edits.trailing_comment(ctx, line) is not None or "#" in ctx.text[_line_end(ctx, previous):ctx.span(line)[0]]:
        return None  # the comments would be lost
    kept = ctx.text[ctx.span(previous)[0]:_line_end(ctx, previous)]
    return (Edit(previous, _FINAL_LINE_BREAK.sub("", kept), end_node=line),)


def _rewrite_following(ctx, line: cst.SimpleStatementLine, following: cst.BaseStatement) -> Edit:
    """The edit that deletes ``line`` (in a block) by writing the statement after it,
    ``following``, over both; the blank lines between them go too."""
    text = ctx.text
    between = text[_line_end(ctx, line):ctx.span(following)[0]]  # lines before `following`, its indentation
    # The blank lines after the deleted one go with it, up to a comment.
    while (match := LINE_BREAK.search(between)) and not between[:match.start()].strip():
        between = between[match.end():]
    between = between.removeprefix(ctx.line_indent(following))  # that of `line` stays
    return Edit(line, between + text[slice(*ctx.span(following))], end_node=following)


def _requires_grad_call(ctx, requires_grad: cst.BaseExpression) -> str:
    return "requires_grad_()" if is_true(requires_grad) else f"requires_grad_({ctx.code(requires_grad)})"


def _unattached(node: cst.BaseExpression) -> bool:
    """``node`` never requires grad whatever its base is: ``x.data``, ``x.new(..)``,
    ``x.detach()``, and indexing and shaping methods on those (``x.data.new(3).zero_()``)."""
    while True:
        if isinstance(node, cst.Attribute):
            return node.attr.value == "data"
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method in torch_api.NEW_TENSOR_METHODS or method in _NOT_DIFFERENTIABLE_METHODS:
                return True
            if method not in torch_api.VARIABLE_SHAPING_METHODS:
                return False  # `x.data.mm(w)` requires grad when `w` does
            node = node.func.value
        else:
            return False


def _bracketed(ctx, node: cst.BaseExpression) -> bool:
    """Line breaks in ``node``'s source are all inside its own brackets."""
    if isinstance(node, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp)):
        return True
    if isinstance(node, cst.Call):
        return "\n" not in ctx.code(node.func)
    if isinstance(node, cst.Subscript):
        return "\n" not in ctx.code(node.value)
    return False


def _one_line(text: str) -> str:
    return " ".join(text.split())
