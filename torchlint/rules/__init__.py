"""Layer 4, the rules: one module each.  Every ``Rule`` subclass defined in a module of
this package is registered, by its code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Optional

from torchlint.framework.rule import Rule

_registry: Optional[dict[str, type[Rule]]] = None


def all_rules() -> dict[str, type[Rule]]:
    """Every rule shipped in ``torchlint.rules``, by code, in code order."""
    global _registry
    if _registry is None:
        import torchlint.rules as package  # this package: its modules, found on disk

        found: dict[str, type[Rule]] = {}
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                    if obj.code in found:
                        raise RuntimeError(f"two rules share the code {obj.code}")
                    found[obj.code] = obj
        _registry = dict(sorted(found.items()))
    return _registry


def rule_by_name_or_code(key: str) -> Optional[type[Rule]]:
    rules = all_rules()
    if key.upper() in rules:
        return rules[key.upper()]
    for rule in rules.values():
        if rule.name == key:
            return rule
    return None
