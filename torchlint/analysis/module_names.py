"""Module names: what a file is called when imported, and the import roots that are
never the user's own code."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

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


def script_folder(path: Path) -> Optional[Path]:
    """The folder of the scripts that may import a module (move its classes, call its
    functions): its own folder when it is no package (models.py beside train.py), or the
    folder above its top package when that folder holds scripts (models/resnet.py under a
    folder with train.py); None for a library (its modules rarely move each other's classes,
    and its scripts live elsewhere)."""
    folder = path.parent
    if not os.path.isfile(folder / "__init__.py"):
        return folder
    while os.path.isfile(folder / "__init__.py") and folder.parent != folder:
        folder = folder.parent
    try:
        scripts = any(name.endswith(".py") for name in os.listdir(folder))
    except OSError:
        return None
    return folder if scripts else None
