"""The project's own scripts as drivers: a flagged function that no run reached, and that
synthesized arguments do not fit, is usually called by a script of the project
(`main.py` builds the `Trainer` of `trainer.py` from its loaders and calls
`train_one_epoch`). Running that script, as a user runs it, gives the function the
project's real arguments: what ``--entry 'python main.py'`` would do, found without the
user.

Read with ``ast`` in the parent: which files of the project import which (``import
trainer``, ``from models.vgg import VGG``, ``from .layers import *``), and which have an
``if __name__ == "__main__":`` block.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

from torchlint.runtime.plan import TreeReader, read_tree


def _is_main_guard(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.comparators) == 1):
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides) \
        and any(isinstance(side, ast.Constant) and side.value == "__main__" for side in sides)


class ProjectImports:
    """Which of the project's files each file imports, and which are scripts."""

    def __init__(self, paths: list[str], root: str, read: TreeReader = read_tree):
        """``paths``: the files that may be scripts; what they import is found on disk, under ``root``."""
        self.root = root
        self._tree = read
        self._imports: dict[str, set[str]] = {}
        self.scripts: list[str] = []
        for path in dict.fromkeys(os.path.realpath(path) for path in paths):
            tree = self._tree(path)
            if tree is not None and any(_is_main_guard(node) for node in tree.body) \
                    and not os.path.basename(path).startswith(("test_", "setup.", "conftest")):
                self.scripts.append(path)

    def imports(self, path: str) -> set[str]:
        """The project's files that ``path`` imports (read once, when first asked)."""
        if path not in self._imports:
            tree = self._tree(path)
            self._imports[path] = set() if tree is None else self._imported(path, tree)
        return self._imports[path]

    def _bases(self, path: str) -> list[str]:
        """The folders an absolute import of ``path`` may start from: its own and those above
        it, up to the project's root (sys.path, `python -m`, `sys.path.append('..')`)."""
        bases, folder = [], os.path.dirname(path)
        while True:
            bases.append(folder)
            if folder == self.root or os.path.dirname(folder) == folder or not folder.startswith(self.root):
                return bases
            folder = os.path.dirname(folder)

    def _module_files(self, base: str, dotted: list[str]) -> set[str]:
        found = set()
        for end in range(1, len(dotted) + 1):  # `import a.b.c` runs a, a.b and a.b.c
            stem = os.path.join(base, *dotted[:end])
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if candidate.startswith(self.root + os.sep) and os.path.isfile(candidate):
                    found.add(os.path.realpath(candidate))
        return found

    def _imported(self, path: str, tree: ast.Module) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    for base in self._bases(path):
                        found |= self._module_files(base, alias.name.split("."))
            elif isinstance(node, ast.ImportFrom):
                module = (node.module or "").split(".") if node.module else []
                if node.level:
                    base = os.path.dirname(path)
                    for _ in range(node.level - 1):
                        base = os.path.dirname(base)
                    bases = [base]
                else:
                    bases = self._bases(path)
                for base in bases:
                    found |= self._module_files(base, module) if module else set()
                    for alias in node.names:  # `from models import vgg`: a module of the package
                        found |= self._module_files(base, [*module, alias.name])
        found.discard(path)
        return found

    def reached(self, script: str, depth: int = 4) -> set[str]:
        """The project's files that running ``script`` may run: what it imports, and so on."""
        seen, frontier = {script}, {script}
        for _ in range(depth):
            frontier = {name for file in frontier for name in self.imports(file)} - seen
            seen |= frontier
        return seen

    def drivers(self, pending: dict[str, int], limit: int = 3) -> list[tuple[str, set[str]]]:
        """Up to ``limit`` scripts and the files with ``pending`` findings each reaches: the
        one reaching the most findings first, then the one reaching most of those left."""
        chosen: list[tuple[str, set[str]]] = []
        left = dict(pending)
        for _ in range(limit):
            best: Optional[tuple[int, str, set[str]]] = None
            for script in self.scripts:
                if any(script == used for used, _files in chosen):
                    continue
                files = (self.reached(script) - {script}) & set(left)  # its own code ran as itself
                count = sum(left[file] for file in files)
                if count and (best is None or count > best[0]):
                    best = (count, script, files)
            if best is None:
                break
            chosen.append((best[1], best[2]))
            for file in best[2]:
                left.pop(file, None)
        return chosen
