"""Module names: what a file is called when imported, and the import roots that are
never the user's own code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Roots whose names torchlint knows itself; never looked up on disk.
KNOWN_ROOTS = frozenset({"torch", "numpy", "builtins", "torchvision", "timm", "tensorflow", "jax"})

# Import roots that are never the user's modules: those torchlint knows, and the standard
# library's (a project module that shadows one is not followed for renamed torch names).
NOT_PROJECT_ROOTS = KNOWN_ROOTS | sys.stdlib_module_names


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
