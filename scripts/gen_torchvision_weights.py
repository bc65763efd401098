#!/usr/bin/env python3
"""Write torchlint/analysis/torchvision_weights.py from torchvision's own source.

torchvision 0.13 replaced its model builders' ``pretrained=`` / ``pretrained_backbone=``
flags with ``weights=`` / ``weights_backbone=``; each builder still takes the old names
through ``@handle_legacy_interface(weights=("pretrained", <Weights>.<NAME>), ...)``,
whose default is what ``pretrained=True`` means.  This script reads those decorators
(no torchvision import: the source is parsed) from an unpacked torchvision, a
torchvision wheel, or an installed copy, and writes the table rule TL515 fixes with.

    pip download torchvision --no-deps -d /tmp/tv
    python scripts/gen_torchvision_weights.py /tmp/tv/torchvision-*.whl

A default that is not a plain ``<Weights>.<NAME>`` (a lambda choosing between the
quantized and the float weights, or ``None``: no weights for ``pretrained=True``) is
recorded as None: TL515 then reports the call without a fix for ``True``.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import zipfile
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "torchlint" / "analysis" / "torchvision_weights.py"
OLD_NAMES = {"weights": "pretrained", "weights_backbone": "pretrained_backbone"}


def read_sources(source: Path) -> tuple[dict[str, str], str]:
    """{module path under torchvision.models ("" for the package): its source}, and the
    torchvision version."""
    files: dict[str, str] = {}
    if source.is_file():  # a wheel
        with zipfile.ZipFile(source) as wheel:
            for name in wheel.namelist():
                if name.endswith(".py") and (name.startswith("torchvision/models/") or name == "torchvision/version.py"):
                    files[name] = wheel.read(name).decode("utf-8")
    else:
        root = source if (source / "models").is_dir() else source / "torchvision"
        for path in root.rglob("*.py"):
            relative = "torchvision/" + path.relative_to(root).as_posix()
            if relative.startswith("torchvision/models/") or relative == "torchvision/version.py":
                files[relative] = path.read_text(encoding="utf-8")
    version = re.search(r"__version__\s*=\s*['\"]([^'\"+]+)", files.get("torchvision/version.py", ""))
    modules = {}
    for name, text in files.items():
        if not name.startswith("torchvision/models/"):
            continue
        parts = list(PurePosixPath(name[len("torchvision/models/"):]).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = text
    if not modules:
        sys.exit(f"no torchvision/models sources in {source}")
    return modules, version.group(1) if version else "unknown"


def _resolve_relative(module: str, is_package: bool, level: int, target: str) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([target] if target else [])])


class Module:
    def __init__(self, name: str, text: str, packages: set[str]):
        self.name = name
        self.tree = ast.parse(text)
        self.is_package = name in packages
        self.defined: set[str] = set()
        self.star_from: list[str] = []  # modules (under torchvision.models) star-imported
        self.imported: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        self.all: list[str] | None = None
        self.all_from: list[str] = []  # `__all__ = a_all + b_all` from `from .a import __all__ as a_all`
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = _resolve_relative(name, self.is_package, node.level, base)
                elif base.startswith("torchvision.models"):
                    base = base[len("torchvision.models") + 1:]
                else:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        self.star_from.append(base)
                    elif alias.name == "__all__":
                        self.all_from.append(base)
                    else:
                        self.imported[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                if isinstance(node.value, (ast.List, ast.Tuple)):
                    self.all = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]


def star_exports(modules: dict[str, Module], name: str) -> set[str]:
    module = modules.get(name)
    if module is None:
        return set()
    if module.all is not None:
        return set(module.all)
    if module.all_from:
        return set().union(*(star_exports(modules, source) for source in module.all_from))
    names = {n for n in module.defined if not n.startswith("_")}
    for source in module.star_from:
        names |= star_exports(modules, source)
    return names


def public_paths(modules: dict[str, Module], defining: str, name: str) -> list[str]:
    """Every ``module.name`` path under torchvision.models (no private module on the way)
    that names ``defining``'s ``name``, shortest first."""
    paths = []
    for module_name, module in modules.items():
        if any(part.startswith("_") for part in module_name.split(".") if part):
            continue
        if module_name == defining or _reaches(modules, module_name, defining, name, set()):
            paths.append(f"{module_name}.{name}" if module_name else name)
    return sorted(paths, key=lambda path: (path.count("."), path))


def _reaches(modules, module_name: str, defining: str, name: str, seen: set[str]) -> bool:
    """``module_name`` gets ``name`` from ``defining`` through star imports."""
    if module_name in seen:
        return False
    seen.add(module_name)
    module = modules[module_name]
    for source in module.star_from:
        if source == defining and name in star_exports(modules, source):
            return True
        if source in modules and name in star_exports(modules, source) and _reaches(modules, source, defining, name, seen):
            return True
    return False


def defining_module(modules: dict[str, Module], module: str, name: str) -> str:
    """Where the class ``name`` used in ``module`` is defined."""
    seen = set()
    while module not in seen:
        seen.add(module)
        current = modules[module]
        if name in current.defined:
            return module
        if name in current.imported:
            module, name = current.imported[name]
            continue
        break
    raise LookupError(f"{name} not found from {module}")


def weights_path(modules, module: str, default: ast.expr) -> str | None:
    """``<Weights>.<NAME>`` as its public path under torchvision.models, or None when the
    default is not such a plain name."""
    if not (isinstance(default, ast.Attribute) and isinstance(default.value, ast.Name)):
        return None
    cls = default.value.id
    home = defining_module(modules, module, cls)
    paths = public_paths(modules, home, cls)
    if not paths:
        return None
    return f"{paths[0]}.{default.attr}"


def collect(modules: dict[str, Module]):
    builders: dict[str, dict[str, str | None]] = {}
    positions: dict[str, dict[str, int]] = {}
    paths: dict[str, str] = {}
    for module_name, module in sorted(modules.items()):
        for node in module.tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                        and decorator.func.id == "handle_legacy_interface"):
                    continue
                every = public_paths(modules, module_name, node.name)
                if not every:
                    continue
                canonical = every[0]
                # Positional arguments go to the keyword-only parameters in order
                # (torchvision's @kwonly_to_pos_or_kw), as they did to the old signature.
                order = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                entry: dict[str, str | None] = {}
                where: dict[str, int] = {}
                for keyword in decorator.keywords:
                    value = keyword.value
                    if not (isinstance(value, ast.Tuple) and len(value.elts) == 2
                            and isinstance(value.elts[0], ast.Constant)):
                        continue
                    old = value.elts[0].value
                    entry[old] = weights_path(modules, module_name, value.elts[1])
                    if keyword.arg in order:
                        where[old] = order.index(keyword.arg)
                builders[canonical] = entry
                positions[canonical] = where
                for path in every:
                    paths[path] = canonical
    return builders, positions, paths


def render(builders, positions, paths, version: str, source_name: str) -> str:
    lines = [
        f'"""torchvision\'s model builders and what their deprecated ``pretrained=True`` /',
        f'``pretrained_backbone=True`` mean, read from torchvision {version}\'s source (each',
        '``@handle_legacy_interface`` decorator under torchvision/models) by',
        f'``python scripts/gen_torchvision_weights.py {source_name}``.',
        'Generated: do not edit.',
        '',
        'Weights are paths under ``torchvision.models``; None where ``True`` has no plain',
        'weights to name (a lambda choosing quantized or float weights, or no weights at all).',
        '"""',
        '',
        f'TORCHVISION_VERSION = {version!r}',
        '',
        '# builder (its shortest path under torchvision.models) -> old parameter -> the weights',
        '# `True` stands for',
        'BUILDERS: dict[str, dict[str, str | None]] = {',
    ]
    for name in sorted(builders):
        lines.append(f"    {name!r}: {builders[name]!r},")
    lines += ["}", "", "# builder -> old parameter -> its index among positional arguments",
              "POSITIONS: dict[str, dict[str, int]] = {"]
    for name in sorted(positions):
        lines.append(f"    {name!r}: {positions[name]!r},")
    lines += ["}", "", "# every path under torchvision.models that names a builder -> the builder's key above",
              "PATHS: dict[str, str] = {"]
    for path in sorted(paths):
        lines.append(f"    {path!r}: {paths[path]!r},")
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="a torchvision wheel, or an unpacked/installed torchvision")
    parser.add_argument("--output", type=Path, default=TARGET)
    options = parser.parse_args()
    texts, version = read_sources(options.source)
    packages = {name for name in texts if any(other.startswith(f"{name}.") or (name == "" and other)
                                             for other in texts)}
    modules = {name: Module(name, text, packages) for name, text in texts.items()}
    builders, positions, paths = collect(modules)
    source_name = options.source.name if options.source.is_file() else str(options.source)
    options.output.write_text(render(builders, positions, paths, version, source_name), encoding="utf-8")
    print(f"{options.output}: {len(builders)} builders, {len(paths)} paths, torchvision {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
