"""The user's own modules, for evidence that crosses files.

``util.masked_softmax(x, mask).data`` is only a finding if ``masked_softmax`` returns a
tensor, which ``allennlp/nn/util.py`` says (``-> torch.Tensor``).  When the inference of
one file meets an imported name that is not torch's, it asks the ``Project``: the module
is found on disk the way Python would find it (from the file's package root, or its own
folder for scripts), parsed and analysed on demand, and the answer comes back with the
evidence summarised as one sentence that names the other file.

Modules are found by import name, not by what was passed on the command line, so a file
gets the same findings whether it is linted alone (pre-commit) or with its project.
Analysed modules are kept in a small cache bounded by their total source size.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import libcst as cst

from torchlint.source import UnreadableSource, decode, read_bytes

if TYPE_CHECKING:
    from torchlint.context import FileContext

# Roots whose names torchlint knows itself; never looked up on disk.
_KNOWN_ROOTS = frozenset({"torch", "numpy", "builtins", "torchvision", "timm", "tensorflow", "jax"})
_CACHE_CHARACTERS = 4_000_000
_MAX_FILE_BYTES = 2 * 1024 * 1024


def module_identity(path: Path) -> tuple[str, bool, Path]:
    """(dotted module name, is it a package ``__init__``, the folder imports start from)."""
    path = Path(os.path.abspath(path))
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    folder = path.parent
    while os.path.isfile(folder / "__init__.py"):
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts:  # a top-level __init__.py outside any package
        parts = [path.parent.name]
    return ".".join(parts), is_package, folder


_PROJECT_MARKERS = ("setup.py", "setup.cfg", "pyproject.toml", ".git")


class Project:
    def __init__(self, cache_characters: int = _CACHE_CHARACTERS):
        self._contexts: OrderedDict[Path, Optional["FileContext"]] = OrderedDict()
        self._sizes: dict[Path, int] = {}
        self._budget = cache_characters
        self._files: dict[tuple[Path, str], Optional[Path]] = {}
        self._project_roots: dict[Path, Optional[Path]] = {}

    # --- finding modules -------------------------------------------------------------

    def roots_for(self, path: Path) -> tuple[Path, ...]:
        """Where imports of the file at ``path`` are looked up: the folder its package
        starts from, its own folder, and the project's root (a test folder without an
        ``__init__.py`` imports the package by its absolute name, as pytest runs it)."""
        _, _, root = module_identity(path)
        folder = Path(os.path.abspath(path)).parent
        roots = [root] if folder == root else [root, folder]
        project_root = self._project_root(folder)
        if project_root is not None and project_root not in roots:
            roots.append(project_root)
        return tuple(roots)

    def _project_root(self, folder: Path) -> Optional[Path]:
        """The nearest folder above ``folder`` with a setup.py, setup.cfg, pyproject.toml or .git."""
        if folder not in self._project_roots:
            found = None
            for candidate in (folder, *folder.parents):
                if any(os.path.exists(candidate / marker) for marker in _PROJECT_MARKERS):
                    found = candidate
                    break
            self._project_roots[folder] = found
        return self._project_roots[folder]

    def find_module(self, dotted: str, roots: tuple[Path, ...]) -> Optional[Path]:
        if not dotted or dotted.split(".")[0] in _KNOWN_ROOTS or dotted.startswith("."):
            return None
        for root in roots:
            key = (root, dotted)
            if key not in self._files:
                base = root.joinpath(*dotted.split("."))
                found = None
                for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
                    if os.path.isfile(candidate):
                        found = candidate
                        break
                self._files[key] = found
            if self._files[key] is not None:
                return self._files[key]
        return None

    def split(self, qualname: str, roots: tuple[Path, ...]) -> Optional[tuple[Path, list[str]]]:
        """``pkg.mod.func`` -> (the file of ``pkg.mod``, ["func"]): the longest module prefix."""
        parts = qualname.split(".")
        for end in range(len(parts) - 1, 0, -1):
            path = self.find_module(".".join(parts[:end]), roots)
            if path is not None:
                return path, parts[end:]
        return None

    # --- analysed modules ------------------------------------------------------------

    def context(self, path: Path) -> Optional["FileContext"]:
        """The analysed module at ``path`` (parsed once, then cached), or None if unusable."""
        path = Path(os.path.abspath(path))
        if path in self._contexts:
            self._contexts.move_to_end(path)
            return self._contexts[path]
        context = None
        try:
            data = read_bytes(str(path))
            if len(data) <= _MAX_FILE_BYTES:
                text = decode(data).text
                context = self.analyse(path, cst.parse_module(text))
        except (UnreadableSource, cst.ParserSyntaxError, RecursionError, ValueError):
            context = None
        self.remember(path, context)
        return context

    def analyse(self, path: Path, module: cst.Module) -> "FileContext":
        from torchlint.context import FileContext

        return FileContext(module, str(path), file_path=path, project=self)

    def remember(self, path: Path, context: Optional["FileContext"]) -> None:
        """Keep ``context`` for later lookups (the file being linted registers itself)."""
        path = Path(os.path.abspath(path))
        size = len(context.module.code) if context is not None else 0
        if path in self._contexts:
            self._budget += self._sizes.pop(path)
            del self._contexts[path]
        self._contexts[path] = context
        self._sizes[path] = size
        self._budget -= size
        while self._budget < 0 and len(self._contexts) > 1:
            old, _ = self._contexts.popitem(last=False)
            self._budget += self._sizes.pop(old)

    def _through_star_imports(self, context, name, rest, path, depth):
        """``name`` brought into a project module by ``from <module> import *``."""
        from torchlint import torch_api
        from torchlint.values import Kind, Value

        for module, _seq, _node in reversed(context.model.star_imports):
            if name in torch_api.star_exports(module):
                return context, Value(Kind.EXTERNAL, qualname=torch_api.normalize(".".join([module, name, *rest])))
            found = self.resolve(".".join([module, name, *rest]), self.roots_for(path), depth + 1)
            if found is not None:
                return found
        return None

    def resolve(self, qualname: str, roots: tuple[Path, ...], depth: int = 0):
        """What an imported name refers to in the project: ``(context, value)`` where the
        value is that module's own inference of the name, or None when it is not a
        project name (or cannot be followed, e.g. an import cycle)."""
        if depth > 8:
            return None
        found = self.split(qualname, roots)
        if found is None:
            return None
        path, attributes = found
        context = self.context(path)
        if context is None:
            return None
        name, rest = attributes[0], attributes[1:]
        bindings = context.model.module_scope.bindings.get(name)
        if not bindings:
            found = self._through_star_imports(context, name, rest, path, depth)
            if found is not None:
                return found
            if context.model.is_package:
                # `import pkg.sub` style access: pkg.sub.thing
                return self.resolve(f"{context.model.module_name}.{'.'.join(attributes)}",
                                    self.roots_for(path), depth + 1) if len(attributes) > 1 else None
            return None
        value = context.inference.combine_bindings(bindings)
        if value is None:
            return None
        from torchlint.values import Kind

        if value.kind is Kind.EXTERNAL and value.qualname:
            # A re-export (`from .feedforward import FeedForward` in a package __init__),
            # possibly of something outside the project (`from torch.autograd import Variable`).
            target = ".".join([value.qualname, *rest])
            inside = self.resolve(target, self.roots_for(path), depth + 1)
            if inside is not None:
                return inside
            return context, replace(value, qualname=target)
        if rest:
            if value.kind is Kind.CLASS and len(rest) == 1:
                member = context.inference.class_attribute(value.cls, rest[0])
                return (context, member) if member is not None else None
            return None
        return context, value
