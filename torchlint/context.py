"""What a rule sees of the file it is checking."""

from __future__ import annotations

import io
import os
import re
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from torchlint import cst
from torchlint.inference import Inference
from torchlint.project import NOT_PROJECT_ROOTS, module_identity
from torchlint.rule import Finding
from torchlint.semantic import BindingKind, SemanticModel
from torchlint.source import LineIndex, line_start
from torchlint.values import Step, Value
from torchlint.walk import iter_nodes

if TYPE_CHECKING:
    from torchlint.project import Project

_WHITESPACE = re.compile(r"\s+")
SNIPPET_LENGTH = 60


class FileContext:
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
        self.model.context = self
        roots = project.roots_for(file_path) if project is not None and file_path is not None else ()
        self.inference = Inference(self.model, project, roots)
        self.findings: list[Finding] = []
        self.findings_over_limit = 0  # reported after rule.MAX_FINDINGS_PER_FILE, not kept
        # Per-file memo space for helpers shared by several rules.
        self.cache: dict[str, Any] = {}
        self._line_index: Optional[LineIndex] = None

    def dispose(self) -> None:
        """Break the reference cycles of this analysis (the tree's parent links, scopes
        and their bindings, the model and this context, the inference and its memos) so
        that reference counting frees the tree at once.  The context is unusable afterwards."""
        model = self.model
        for node in iter_nodes(self.module):
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

    def render(self, step: Step) -> str:
        """A step of this file's evidence as text for another file: "... (pkg/mod.py:12)"."""
        where = self.path
        if self.file_path is not None and self.root is not None:
            where = self.file_path.relative_to(self.root).as_posix()
        line = f":{self.line_index.position(step.node.start)[0]}"
        return f"{step.text.replace('{code}', self.snippet(step.node))} ({where}{line})"

    # --- what an expression is -----------------------------------------------------

    def tensor(self, node: cst.CSTNode) -> Optional[Value]:
        """Evidence that ``node`` evaluates to a tensor, or None when there is none."""
        return self.inference.tensor(node)

    def infer(self, node: cst.CSTNode) -> Optional[Value]:
        return self.inference.infer(node)

    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        """The imported object ``node`` names, e.g. ``torch.autograd.Variable``."""
        return self.inference.qualname(node)

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
        parent = node.parent
        while parent is not None:
            yield parent
            parent = parent.parent

    def grad_disabled(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The ``with torch.no_grad():`` block or ``@torch.no_grad()`` decorator that
        ``node`` runs under, if any (only within the innermost function)."""
        return self.inference.grad_disabled(node)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor
        return None

    # --- positions and source text ----------------------------------------------------

    @property
    def text(self) -> str:
        """The file's source."""
        return self.module.code

    @property
    def newline(self) -> str:
        """The file's line break (the first one it uses)."""
        return self.module.default_newline

    @property
    def indent_unit(self) -> str:
        """One level of the file's indentation (its first indented block's)."""
        return self.module.default_indent

    @staticmethod
    def span(node: cst.CSTNode) -> tuple[int, int]:
        """``(start, end)`` character offsets of ``node`` in ``text``, without the
        parentheses around it (those of ``(a + b)``), from its first token to its last
        (for a compound statement, to the end of its last line)."""
        return node.start, node.end

    @staticmethod
    def outer_span(node: cst.CSTNode) -> tuple[int, int]:
        """Like ``span``, with the node's own parentheses."""
        if isinstance(node, cst.BaseExpression):
            return node.outer_start, node.outer_end
        return node.start, node.end

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
        if self._line_index is None:
            self._line_index = LineIndex(self.text)
        return self._line_index

    def code(self, node: cst.CSTNode) -> str:
        """The exact source of ``node``, with its own parentheses."""
        start, end = self.outer_span(node)
        return self.text[start:end]

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
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        return text

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
