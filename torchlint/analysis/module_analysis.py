"""One analysed module: its tree, its semantic model and the inference over it, knowing
nothing of rules.  The project keeps these for the modules a file imports; the linter
makes one for the file it lints and hands it to the rules inside a ``FileContext``."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.source import LineIndex
from torchlint.syntax.walk import iter_nodes
from torchlint.analysis.autograd import AutogradModel
from torchlint.analysis.grad_flow import GradFlow
from torchlint.analysis.inference import Inference
from torchlint.analysis.placement import Placement
from torchlint.analysis.module_names import NOT_PROJECT_ROOTS, module_identity
from torchlint.analysis.semantic import BindingKind, SemanticModel
from torchlint.analysis.train_mode import TrainModeModel
from torchlint.analysis.values import Step

if TYPE_CHECKING:
    from torchlint.analysis.project import Project

_WHITESPACE = re.compile(r"\s+")
SNIPPET_LENGTH = 60
# Tokens enough to cut code between them: names, numbers, strings (also cut short),
# two-character operators, any other character.
_TOKEN = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|[rbuRBUfF]*(?:'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?)"""
                    r"""|\*\*|//|->|==|!=|<=|>=|\s+|.""")
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def shortened(text: str, limit: int) -> str:
    """``text`` (one line of code) in at most ``limit`` characters: cut after an opening
    bracket, a comma or a whole operand, the brackets it leaves open closed after an
    ellipsis (`criterion(model.decoder.weight, …)`), never inside a name, a number, a
    string or an attribute chain."""
    if len(text) <= limit:
        return text
    open_brackets: list[str] = []
    cut, closing = 0, ""
    for token in _TOKEN.finditer(text):
        value = token.group()
        if value in _CLOSING:
            open_brackets.append(_CLOSING[value])
        elif value in (")", "]", "}") and open_brackets:
            open_brackets.pop()
        closers = "".join(reversed(open_brackets))
        if token.end() + 2 + len(closers) > limit:
            break
        following = text[token.end():token.end() + 1]
        if value in ("(", "[", "{", ",") or (  # an argument list opens or goes on
                (value[0].isalnum() or value[0] in "_'\")]}") and following not in (".", "(", "[")):
            cut, closing = token.end(), closers  # not inside `a.b`, `f(..)`, `x[..]`: a whole operand
    if cut == 0:
        return text[: limit - 1].rstrip() + "…"
    head = text[:cut].rstrip()
    return head + (" …" if head.endswith(",") else "…") + closing


class ModuleAnalysis:
    def __init__(self, module: cst.Module, path: str, file_path: Optional[Path] = None,
                 project: Optional["Project"] = None):
        self.module = module
        self.path = path  # as shown in reports
        module_name, is_package, root = "", False, None
        if file_path is not None:
            module_name, is_package, root = module_identity(file_path)
        self.root = root  # where the file's imports start (its top package's parent)
        self.file_path = Path(os.path.abspath(file_path)) if file_path is not None else None
        self.model = SemanticModel(module, module_name, is_package)
        self.model.analysis = self
        roots = project.roots_for(file_path) if project is not None and file_path is not None else ()
        self.inference = Inference(self.model, project, roots)
        self._line_index: Optional[LineIndex] = None
        self._autograd: Optional[AutogradModel] = None
        self._grad_flow: Optional[GradFlow] = None
        self._placement: Optional[Placement] = None
        self._train_mode: Optional[TrainModeModel] = None
        self._nodes: Optional[list] = None
        self._nodes_whole = False
        self._nodes_by_type: dict[tuple, list] = {}
        self._nodes_by_class: Optional[defaultdict[type, list[cst.CSTNode]]] = None
        self._appends: Optional[dict[str, list[cst.Call]]] = None  # name -> its `name.append(v)` calls
        self._project_calls: Optional[dict[tuple[Path, str], list[cst.Call]]] = None
        self._callers_elsewhere: dict[str, list[tuple["ModuleAnalysis", cst.Call]]] = {}

    def all_nodes(self) -> list:
        """Every node of the module in evaluation order (the order ``walk`` enters them): one
        walk of the tree per file, shared by the rules' visitors and the analyses."""
        if self._nodes is None:
            self._nodes_whole = not self.model.lazy_functions  # no body left to build later
            # The semantic model's walk saw every node of a tree built whole, in this order
            # (its list is emptied when the parse left bodies lazy).
            self._nodes = self.model.walked_nodes if self._nodes_whole and self.model.walked_nodes \
                else iter_nodes(self.module)
        return self._nodes

    def nodes_of(self, *types: type) -> list:
        """Every node of the module of one of ``types``, in evaluation order, shared by the
        analyses and rules that look at all calls or writes."""
        self.all_nodes()
        found = self._nodes_by_type.get(types)
        if found is None:
            if self._nodes_by_class is None:
                # One pass sorts the nodes by their class; a query then reads the classes it asks for.
                self._nodes_by_class = defaultdict(list)
                by_class = self._nodes_by_class
                for node in self._nodes:
                    by_class[type(node)].append(node)
            classes = [cls for cls in self._nodes_by_class if issubclass(cls, types)]
            if len(classes) == 1:
                found = self._nodes_by_class[classes[0]]
            else:  # several classes, in the order of the walk
                wanted = set(classes)
                found = [node for node in self._nodes if type(node) in wanted] if wanted else []
            self._nodes_by_type[types] = found
        return found

    @property
    def autograd(self) -> AutogradModel:
        """The autograd model of this module (built on first use)."""
        if self._autograd is None:
            self._autograd = AutogradModel(self)
        return self._autograd

    @property
    def grad_flow(self) -> GradFlow:
        """Which tensors require grad, and why (built on first use)."""
        if self._grad_flow is None:
            self._grad_flow = GradFlow(self)
        return self._grad_flow

    @property
    def placement(self) -> Placement:
        """Where knowable, the dtype and device of tensors (built on first use)."""
        if self._placement is None:
            self._placement = Placement(self)
        return self._placement

    @property
    def train_mode(self) -> TrainModeModel:
        """Where models are evaluated in training mode (built on first use)."""
        if self._train_mode is None:
            self._train_mode = TrainModeModel(self)
        return self._train_mode

    def dispose(self) -> None:
        """Break the reference cycles of this analysis (the tree's parent links, scopes
        and their bindings, the model and this analysis, the inference and its memos) so
        that reference counting frees the tree at once.  Unusable afterwards."""
        model = self.model
        # The shared walk of `nodes_of` has every node of a tree built whole (no lazy bodies
        # built since): reuse it rather than walk the tree a second time.
        nodes = self._nodes if self._nodes is not None and self._nodes_whole else iter_nodes(self.module)
        for node in nodes:
            node.parent = None
            node.walked_in = None  # the list of nodes, emptied below
        for node in model.unwalked_children:
            node.parent = None
        for holder in (*model.scopes, *model.functions.values(), *model.classes.values()):
            for slot in type(holder).__slots__:
                setattr(holder, slot, None)
        for owner in (model, self.inference, self):
            for name, value in list(vars(owner).items()):
                if isinstance(value, (dict, list, set)):
                    value.clear()
                elif not isinstance(value, (str, bool, int, type(None))):
                    setattr(owner, name, None)

    # --- the text --------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The file's source."""
        return self.module.code

    @property
    def line_index(self) -> LineIndex:
        if self._line_index is None:
            self._line_index = LineIndex(self.text)
        return self._line_index

    @staticmethod
    def outer_span(node: cst.CSTNode) -> tuple[int, int]:
        """``(start, end)`` character offsets of ``node`` with its own parentheses."""
        if isinstance(node, cst.BaseExpression):
            return node.outer_start, node.outer_end
        return node.start, node.end

    def snippet(self, node: cst.CSTNode, limit: int = SNIPPET_LENGTH) -> str:
        """The node's source on one line, shortened for messages."""
        start, end = self.outer_span(node)
        # Collapsing the whitespace of a prefix of the source gives a prefix of the whole
        # result, so a huge expression is read only as far as the limit needs.
        size = 2 * limit
        while True:
            text = _WHITESPACE.sub(" ", self.text[start:min(end, start + size)]).strip()
            if len(text) > limit or start + size >= end:
                break
            size *= 4
        return shortened(text, limit)

    def render(self, step: Step) -> str:
        """A step of this file's evidence as text for another file: "... (pkg/mod.py:12)"."""
        return f"{step.text.replace('{code}', self.snippet(step.node))} ({self.location(step.node)})"

    def location(self, node: cst.CSTNode) -> str:
        """Where ``node`` is, for another file: "pkg/mod.py:12"."""
        where = self.path
        if self.file_path is not None and self.root is not None:
            where = self.file_path.relative_to(self.root).as_posix()
        return f"{where}:{self.line_index.position(node.start)[0]}"

    def appended_to(self, binding) -> list:
        """The arguments of the ``name.append(value)`` calls on the list ``binding`` binds."""
        if self._appends is None:  # one walk of the calls per file: asked for every list a file writes out
            self._appends = {}
            for call in self.nodes_of(cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1 \
                        and isinstance(func.value, cst.Name) and not call.args[0].star:
                    self._appends.setdefault(func.value.value, []).append(call)
        return [call.args[0] for call in self._appends.get(binding.name, ())
                if binding in self.model.resolve(call.func.value)]

    def defining(self, info) -> Optional["ModuleAnalysis"]:
        """The analysis of the other module of the project that defines ``info`` (a function
        or a class), or None when this module defines it or it has none."""
        other = getattr(info.model, "analysis", None)
        return other if other is not self else None

    # --- the scripts that import it ---------------------------------------------------

    def callers_elsewhere(self, function) -> list[tuple["ModuleAnalysis", cst.Call]]:
        """The calls of ``function`` (of this module, module-level or a method of a
        module-level class) in the scripts of the project that import from this module
        (``train_step(model, opt, x, y)``, ``Evaluator(model, data)`` for ``__init__``,
        ``meter.update(out)`` after ``from utils import train_step, Evaluator, Meter`` in
        train.py beside utils.py), each with the script's analysis: its call sites beyond this
        file. Only scripts are read (a module of a package is no entry point), and only for a
        module that scripts sit by (``script_folder``)."""
        project, path = self.inference.project, self.file_path
        cls = function.cls
        if function.model is not self.model or project is None or path is None or cls is not None and (
                not any(statement is cls.node for statement in self.module.body) or _run_unseen(function)):
            return []
        key = f"{cls.name}.{function.name}" if cls is not None else function.name
        found = self._callers_elsewhere.get(key)
        if found is None:
            found = self._callers_elsewhere[key] = []
            for other_path in project.importing_scripts(path, consumer=path):
                other = project.analysis(other_path, consumer=path)
                if other is not None:
                    found += [(other, call) for call in other.project_calls().get((path, key), ())]
        return found

    def project_calls(self) -> dict[tuple[Path, str], list[cst.Call]]:
        """This file's calls of the functions and methods of other modules of the project,
        by (the file that defines the function, its name: ``f``, or ``Cls.m`` for a method,
        ``Cls.__init__`` for a construction): ``f(..)``, ``Cls(..)``, ``obj.m(..)`` on an
        instance of the class (the method found where the class inherits it)."""
        if self._project_calls is None:
            self._project_calls = {}
            for call in self.nodes_of(cst.Call):
                function = self.inference.project_callee(call.func) \
                    if isinstance(call.func, (cst.Name, cst.Attribute)) else None
                defining = self.defining(function) if function is not None else None
                if defining is not None and defining.file_path is not None:
                    name = f"{function.cls.name}.{function.name}" if function.cls is not None else function.name
                    self._project_calls.setdefault((defining.file_path, name), []).append(call)
        return self._project_calls

    # --- its imports -----------------------------------------------------------------

    def renames_torch(self) -> bool:
        """Whether a name this file imports from its own project is another name for a
        torch object (``from .compat import V`` after ``Variable as V`` there), so that
        rules looking for torch names must look here whatever the text says."""
        project, roots = self.inference.project, self.inference.roots
        if project is None or not roots:
            return False
        consumer = self.file_path
        for module, _seq, _node in self.model.star_imports:
            if module.split(".")[0] not in NOT_PROJECT_ROOTS and project.find_module(module, roots, consumer) is not None:
                return True
        for scope in self.model.scopes:
            for bindings in scope.bindings.values():
                for binding in bindings:
                    if binding.kind is BindingKind.IMPORT and binding.qualname \
                            and binding.qualname.split(".")[0] not in NOT_PROJECT_ROOTS \
                            and project.renames_torch(binding.qualname, roots, consumer):
                        return True
        return False


def _run_unseen(method) -> bool:
    """Python runs the method ``method`` where no call names it: a special method (but
    ``__init__``, named by the class), or the ``forward`` of a module (``model(x)``)."""
    name = method.name
    return name.startswith("__") and name.endswith("__") and name != "__init__" or \
        name == "forward" and bool(method.cls.node.bases)

