"""What a rule sees of the file it is checking: the module's analysis (tree, semantic
model, inference), the findings so far, and the helpers rules share."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import requires_grad_switch
from torchlint.syntax.walk import ancestors, iter_nodes
from torchlint.syntax.source import LineIndex, line_start
from torchlint.analysis import torch_api
from torchlint.analysis.module_analysis import SNIPPET_LENGTH, ModuleAnalysis
from torchlint.analysis.import_holders import ImportHolders, import_holders
from torchlint.analysis.semantic import BindingKind, instance_attribute_assignments
from torchlint.analysis.values import Step, Value
from torchlint.framework.rule import Finding

if TYPE_CHECKING:
    from torchlint.analysis.autograd import AutogradModel
    from torchlint.analysis.grad_flow import GradFlow
    from torchlint.analysis.train_mode import TrainModeModel
    from torchlint.analysis.inference import Inference
    from torchlint.analysis.placement import Placement
    from torchlint.analysis.semantic import SemanticModel


_VERSION_TEST = re.compile(r"version|VERSION|is_torch_|torch_greater|torch_less|hasattr\(\s*torch")
# Turning gradients off: `= False`, `requires_grad_(False)`, `requires_grad_(flag)`.
_FREEZES = re.compile(r"requires_grad\s*=\s*False|requires_grad_\(\s*(?!(?:requires_grad\s*=\s*)?True\b)\w")


class FileContext:
    def __init__(self, analysis: ModuleAnalysis):
        self.analysis = analysis
        self.findings: list[Finding] = []
        self.findings_over_limit = 0  # reported after rule.MAX_FINDINGS_PER_FILE, not kept
        # Per-file memo space for helpers shared by several rules.
        self.cache: dict[str, Any] = {}

    # --- the analysis ----------------------------------------------------------------

    @property
    def module(self) -> cst.Module:
        return self.analysis.module

    @property
    def model(self) -> "SemanticModel":
        return self.analysis.model

    @property
    def inference(self) -> "Inference":
        return self.analysis.inference

    @property
    def autograd(self) -> "AutogradModel":
        """What the code does to autograd graphs: forwards, optimizer steps, backwards."""
        return self.analysis.autograd

    @property
    def grad_flow(self) -> "GradFlow":
        """Which tensors require grad, and where the gradient comes from."""
        return self.analysis.grad_flow

    @property
    def placement(self) -> "Placement":
        """Where knowable, the dtype and device of tensors: float64 from numpy, tensors a move leaves behind."""
        return self.analysis.placement

    @property
    def train_mode(self) -> "TrainModeModel":
        """Where models with Dropout/BatchNorm are evaluated while in training mode."""
        return self.analysis.train_mode

    @property
    def path(self) -> str:
        """The file's name as shown in reports."""
        return self.analysis.path

    @property
    def file_path(self) -> Optional[Path]:
        return self.analysis.file_path

    def render(self, step: Step) -> str:
        return self.analysis.render(step)

    # --- what an expression is -----------------------------------------------------

    def tensor(self, node: cst.CSTNode) -> Optional[Value]:
        """Evidence that ``node`` evaluates to a tensor, or None when there is none."""
        return self.inference.tensor(node)

    def infer(self, node: cst.CSTNode) -> Optional[Value]:
        return self.inference.infer(node)

    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        """The imported object ``node`` names, e.g. ``torch.autograd.Variable``."""
        return self.inference.qualname(node)

    def alternatives(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The imported objects ``node`` may name when it is one of several (a switchable
        alias: ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``)."""
        return self.inference.alternatives(node)

    def binding_values(self, name: cst.Name) -> tuple[Optional[cst.BaseExpression], ...]:
        """What each binding of ``name`` that may reach here binds it to, one entry per
        binding: the value assigned, or None for a binding without one (a parameter, an
        import, a loop target...).  Empty when nothing of this file binds ``name`` (a builtin,
        or a global of another module)."""
        return tuple(binding.value for binding in self.model.resolve(name))

    def bound_values(self, name: cst.Name) -> tuple[Optional[Value], ...]:
        """What the inference knows of the value each binding of ``name`` that may reach here
        gives it (None for a binding it knows nothing of); empty when nothing of this file
        binds ``name``."""
        return tuple(self.inference.binding_value(binding) for binding in self.model.resolve(name))

    def single_assignment(self, name: cst.Name) -> Optional[tuple[cst.BaseExpression, cst.CSTNode]]:
        """The value and the statement of the one plain assignment (``name = value``) that
        binds ``name`` here, or None when it is bound otherwise or more than once."""
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                or bindings[0].value is None:
            return None
        return bindings[0].value, bindings[0].node

    def is_parameter(self, name: cst.Name) -> bool:
        """Some binding of ``name`` that reaches here is a parameter of its function."""
        return any(binding.kind is BindingKind.PARAM for binding in self.model.resolve(name))

    def attribute_used(self, name: cst.Name, attribute: str) -> bool:
        """``<name>.<attribute>`` is read anywhere in the scope of a binding of ``name`` that
        reaches here (``h.retain_grad()``, before or after)."""
        return any(used == attribute for binding in self.model.resolve(name)
                   for _seq, used, _node in binding.scope.attribute_uses.get(binding.name, ()))

    def same_bindings(self, first: cst.Name, second: cst.Name) -> bool:
        """The same bindings reach both reads: nothing rebinds the name between them."""
        return {id(b) for b in self.model.resolve(first)} == {id(b) for b in self.model.resolve(second)}

    def assigned_values(self, name: cst.Name) -> Optional[tuple[cst.BaseExpression, ...]]:
        """The values of the plain assignments (``name = value``) that may bind ``name`` here;
        None when one of its bindings is anything else (a parameter, an import, a loop
        target, an unpacking), about which a rule following the name cannot say anything."""
        return self.model.assigned_values(name)

    def assignment_sources(self, name: cst.Name) -> Optional[list[tuple[
            cst.BaseExpression, tuple[Optional[int], ...], Optional[int], tuple[cst.AugAssign, ...]]]]:
        """For each binding of ``name`` here: (the value of the plain assignment it comes from,
        the target's path in a tuple assignment, how many targets that tuple has (None without
        one), the augmented assignments applied since, `steps += 7`, last first); None when a
        binding is anything else (a parameter, a loop target, an iteration)."""
        bindings = self.model.resolve(name)
        if not bindings:
            return None
        found = []
        for binding in bindings:
            augmented: list[cst.AugAssign] = []
            while binding is not None and binding.kind is BindingKind.AUGASSIGN:
                statement = binding.node.parent
                if not isinstance(statement, cst.AugAssign):
                    return None
                augmented.append(statement)
                binding = self.model.prior_binding(binding)
            if binding is None or binding.kind is not BindingKind.ASSIGN or binding.value is None or binding.iterates:
                return None
            target = binding.node
            while target is not None and not isinstance(target, (cst.Tuple, cst.List)):
                target = target.parent
            width = len(target.elements) if binding.path and target is not None else None
            found.append((binding.value, binding.path, width, tuple(augmented)))
        return found

    def reads_of_value(self, name: str, value: cst.BaseExpression) -> list[cst.Name]:
        """The reads of ``name`` (in any scope) that may see the assignment whose value is ``value``."""
        return [load for scope in self.model.scopes_mentioning(name) for _seq, load in scope.loads.get(name, ())
                if any(binding.value is value for binding in self.model.resolve(load))]

    def read_anywhere(self, name: str) -> bool:
        """Some scope of the file reads a name spelled ``name``."""
        return any(name in scope.loads for scope in self.model.scopes)

    def binds_at_module_level(self, name: cst.Name) -> bool:
        """``name`` is a target that binds its name in the module's scope (not a function's)."""
        return any(binding.node is name for binding in self.model.module_scope.bindings.get(name.value, ()))

    def import_holders(self, qualname: str, name: str) -> "ImportHolders":
        """The names of this file that may hold the torch object ``qualname`` (analysis.import_holders)."""
        key = ("import_holders", qualname)
        if key not in self.cache:
            self.cache[key] = import_holders(self.analysis, qualname, name)
        return self.cache[key]

    def parameter_annotation(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The annotation of the parameter ``name`` is here (its one binding), if it has one."""
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        return bindings[0].annotation

    def instance_attribute_values(self, node: cst.Attribute) -> Optional[list[tuple[
            Optional[cst.BaseExpression], Optional[cst.BaseExpression]]]]:
        """For ``self.<attribute>`` read in a method: (value, annotation) of every plain
        ``self.<attribute> = ..`` of the class; None when ``self`` is not the method's instance,
        or the class body also binds the name to something other than None (a method, a
        property, a class attribute), or an assignment unpacks a tuple."""
        assignments = instance_attribute_assignments(self.model, node)
        if assignments is None:
            return None
        return [(assignment.value, assignment.annotation) for assignment in assignments]

    def origin(self, node: cst.BaseExpression, what: str) -> tuple[Step, ...]:
        """Evidence that ``node`` names the imported object ``what``: the import it comes
        from (``from torch.autograd import Variable as V``, ``import torch``, or a star import)."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        value = self.infer(node)
        # ``util.Tensor`` found to be ``torch.FloatTensor`` in the user's module ``pyprob.util``.
        through = value.qualname.rsplit(".", 1)[0] if value is not None and value.qualname \
            and value.qualname != what and self.inference.exported(value.qualname) == what else None
        if isinstance(root, cst.Name):
            for binding in self.model.resolve(root):
                if binding.qualname is not None:
                    name = self.snippet(node)
                    text = f"`{root.value}` is imported here" if name == what else \
                        f"`{name}` is `{what}`: `{root.value}` is imported here"
                    if through is not None:
                        text = f"`{name}` is `{what}`, as `{through}` defines it: `{root.value}` is imported here"
                    return (Step(binding.node, text),)
            star = self.model.star_import_of(root.value)
            if star is not None:
                return (Step(star[2], f"`{root.value}` is `{what}`, from `{{code}}`"),)
        return (Step(node, f"`{{code}}` is `{what}`"),)

    # --- the tree around a node ----------------------------------------------------

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return node.parent

    def ancestors(self, node: cst.CSTNode):
        return ancestors(node)

    def imported_aliases(self, qualnames) -> frozenset[str]:
        """The module-level names an import binds to one of ``qualnames``, under any name
        (``from torch import symeig as eigh``): calls of them need a look too."""
        return frozenset(name for name, bindings in self.model.module_scope.bindings.items()
                         if any(b.kind is BindingKind.IMPORT and b.qualname in qualnames for b in bindings))

    def binds_as_import(self, name: str, qualname: str) -> Optional[bool]:
        """Whether the file binds ``name`` (in any scope) only by imports of ``qualname``,
        one of them at module level: True; False when nothing binds ``name``; None when
        something else binds it somewhere (a local, a parameter, another import)."""
        bindings = [binding for scope in self.model.scopes_mentioning(name) for binding in scope.bindings.get(name, ())]
        if any(binding.kind is not BindingKind.IMPORT or binding.qualname != qualname for binding in bindings):
            return None
        return any(binding.scope is self.model.module_scope for binding in bindings)

    def imports_binding(self, name: cst.Name) -> tuple[str, ...]:
        """What every import that binds ``name``'s name, in the scopes of the bindings that
        reach here, imports: two for `try: from torch import vmap / except ImportError: from
        functorch import vmap`."""
        return tuple(other.qualname for binding in self.model.resolve(name)
                     for other in binding.scope.bindings.get(binding.name, ()) if other.kind is BindingKind.IMPORT)

    def reads_of_import(self, alias: cst.ImportAlias, name: str) -> Optional[list[cst.Name]]:
        """The names in the file that read the module-level binding the import ``alias``
        makes (as ``name``); None when one of them may read another binding as well (it
        could not be renamed alone)."""
        bindings = [b for bindings in self.model.module_scope.bindings.values() for b in bindings
                    if b.kind is BindingKind.IMPORT and (b.node is alias or b.node is alias.name)]
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        uses = []
        for node in iter_nodes(self.module):
            if isinstance(node, cst.Name) and node.value == name and node is not alias.name:
                resolved = self.model.resolve(node)
                if binding in resolved:
                    if len(resolved) != 1:
                        return None
                    uses.append(node)
        return uses

    def bound_only_here(self, name: cst.Name) -> bool:
        """Every binding of ``name`` that reaches here is an assignment (plain or augmented,
        not a loop's) or a parameter of the function that reads it: rebinding the name here
        changes nothing outside."""
        scope = self.model.scope_of(name)
        bindings = self.model.resolve(name)
        return bool(bindings) and all(
            binding.scope is scope and not binding.iterates
            and binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN, BindingKind.PARAM)
            for binding in bindings)

    def only_value(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The value of the one binding of ``name`` that reaches here, when it has one
        (an assignment, ``with .. as name``), not through unpacking or a loop."""
        bindings = self.model.resolve(name)
        if len(bindings) == 1 and bindings[0].value is not None and not bindings[0].path \
                and not bindings[0].iterates:
            return bindings[0].value
        return None

    def reads_since_binding(self, name: cst.Name) -> list[cst.Name]:
        """The reads of ``name``, in its scope, after its one binding and before this read;
        empty when more than one binding reaches here."""
        return self.model.reads_since_binding(name)

    def attribute_uses_after(self, name: cst.Name, attribute: str) -> list[cst.CSTNode]:
        """The uses of ``<anything>.<attribute>`` in ``name``'s scope after this read of it
        (``loss.backward()`` after ``h.detach_()``), in order."""
        reference = self.model.references.get(id(name))
        if reference is None:
            return []
        scope, seq = reference
        return [node for uses in scope.attribute_uses.values() for use_seq, used, node in uses
                if used == attribute and use_seq > seq]

    def names_only_imported_as(self, qualname: str) -> list[str]:
        """The module-level names every binding of which imports ``qualname`` (so they name
        it wherever they are read), in the order they are first bound."""
        return [name for name, bindings in self.model.module_scope.bindings.items()
                if bindings and all(b.kind is BindingKind.IMPORT and b.qualname == qualname for b in bindings)]

    def version_dispatched(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The test of an ``if`` that picks between torch versions, when ``node`` is in one
        of its branches: ``if version.parse(torch.__version__) >= version.parse("2.2"):``,
        ``if hasattr(torch, "vmap")``, ``if is_torch_greater_or_equal("2.4")``.  An old API
        there is the compatibility branch, kept on purpose."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test \
                    and _VERSION_TEST.search(self.snippet(ancestor.test, 400)):
                return ancestor.test
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return None
            child = ancestor
        return None

    def grad_disabled(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The ``with torch.no_grad():`` block or ``@torch.no_grad()`` decorator that
        ``node`` runs under, if any (only within the innermost function)."""
        return self.inference.grad_disabled(node)

    @property
    def freezes_parameters(self) -> bool:
        """The file turns gradients off somewhere (`p.requires_grad = False`,
        `requires_grad_(False)`, `requires_grad_(flag)`): which layers train is then not
        known from the text, and rules that rest on a layer training stay quiet."""
        return _FREEZES.search(self.text) is not None

    def freezes_parameters_besides(self, node: cst.CSTNode) -> bool:
        """``freezes_parameters``, not counting the statement that holds ``node``: a flag a rule
        questions (`target.requires_grad = False` on a layer's output) freezes no layer."""
        statement = self.statement_of(node)
        if statement is None:
            return self.freezes_parameters
        own = len(_FREEZES.findall(self.text[statement.start:statement.end]))
        return len(_FREEZES.findall(self.text)) > own

    def frozen_only_afterwards(self, target: cst.Name, write: cst.CSTNode) -> bool:
        """Every place the file may turn gradients off is ``target``'s own flag
        (``target.requires_grad = False``, ``target.requires_grad_(False)``), set by a
        statement after the one that holds ``write``, in the same block, with no loop
        around them: ``target`` still required grad when it was written (an "initialize,
        then freeze" helper that forgot ``no_grad``)."""
        freezes = len(_FREEZES.findall(self.text))
        statement = self.statement_of(write)
        if not freezes or statement is None:
            return False
        block = self.parent(statement)
        body = list(getattr(block, "body", ()))
        if statement not in body:
            return False
        for ancestor in self.ancestors(block):
            if isinstance(ancestor, (cst.For, cst.While)):
                return False
            if isinstance(ancestor, (cst.FunctionDef, cst.Module)):
                break
        bindings = {id(binding) for binding in self.model.resolve(target)}
        if not bindings:
            return False
        later = 0
        for following in body[body.index(statement) + 1:]:
            for node in iter_nodes(following):
                switch = requires_grad_switch(node)
                receiver = switch[0] if switch is not None and not switch[1] else None
                if isinstance(receiver, cst.Name) and receiver.value == target.value \
                        and {id(binding) for binding in self.model.resolve(receiver)} == bindings:
                    later += 1
        return later == freezes

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement (a line of simple statements, or a compound one) that holds ``node``."""
        for ancestor in (node, *self.ancestors(node)):
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return ancestor
        return None

    def is_module_forward(self, function) -> bool:
        """``function`` (a FunctionInfo) is the ``forward`` of an ``nn.Module`` subclass, not of
        an autograd Function (whose forward runs without a graph)."""
        if function is None or function.name != "forward" or function.cls is None or function.kind != "method":
            return False
        base = self.inference.torch_base(function.cls)
        return base is not None and torch_api.is_module_class(base)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor
        return None

    # --- positions and source text ----------------------------------------------------

    @property
    def text(self) -> str:
        """The file's source."""
        return self.analysis.text

    @property
    def newline(self) -> str:
        """The file's line break (the first one it uses)."""
        return self.module.default_newline

    @property
    def indent_unit(self) -> str:
        """One level of the file's indentation (its first indented block's), without a form
        feed the line may start with: after other whitespace one resets Python's column count."""
        return self.module.default_indent.replace("\f", "") or "    "

    @staticmethod
    def span(node: cst.CSTNode) -> tuple[int, int]:
        """``(start, end)`` character offsets of ``node`` in ``text``, without the
        parentheses around it (those of ``(a + b)``), from its first token to its last
        (for a compound statement, to the end of its last line)."""
        return node.start, node.end

    outer_span = staticmethod(ModuleAnalysis.outer_span)  # like ``span``, with the node's own parentheses

    def line_indent(self, node: cst.CSTNode) -> str:
        """The whitespace that starts the line on which ``node`` starts."""
        start = self.outer_span(node)[0]
        line = self.text[line_start(self.text, start):start]
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    def comment_count(self, node: cst.CSTNode) -> int:
        """How many ``#`` comments there are within ``node`` (with its parentheses)."""
        start, end = self.outer_span(node)
        return sum(1 for offset in self._comment_offsets() if start <= offset < end)

    def _comment_offsets(self) -> list[int]:
        offsets = self.cache.get("comment_offsets")
        if offsets is None:
            offsets = []
            index = self.line_index
            try:
                for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if token.type == tokenize.COMMENT:
                        offsets.append(index.offset(token.start[0], token.start[1] + 1))
            except (tokenize.TokenError, SyntaxError):
                pass
            self.cache["comment_offsets"] = offsets
        return offsets

    @property
    def line_index(self) -> LineIndex:
        return self.analysis.line_index

    def code(self, node: cst.CSTNode) -> str:
        """The exact source of ``node``, with its own parentheses."""
        start, end = self.outer_span(node)
        return self.text[start:end]

    def snippet(self, node: cst.CSTNode, limit: int = SNIPPET_LENGTH) -> str:
        """The node's source on one line, shortened for messages."""
        return self.analysis.snippet(node, limit)

    def receiver(self, node: cst.BaseExpression) -> str:
        """``node``'s snippet as the receiver of a method call: `(a - b)` in `(a - b).clone()`."""
        return self._as_receiver(node, self.snippet(node))

    def receiver_code(self, node: cst.BaseExpression) -> str:
        """Like ``receiver``, with the exact source, for the text of a fix."""
        return self._as_receiver(node, self.code(node))

    @staticmethod
    def _as_receiver(node: cst.BaseExpression, text: str) -> str:
        atomic = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict,
                  cst.SimpleString, cst.FormattedString)
        return text if isinstance(node, atomic) or node.lpar else f"({text})"
