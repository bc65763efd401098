"""Configuration: ``[tool.torchlint]`` in pyproject.toml, command-line overrides, and the
effective settings for each file.

Rule selection follows ruff: each layer (defaults, then the config file, then the
command line) may replace the selection (``select``), add to it (``extend-select``)
and remove from it (``ignore``); inside a layer the most specific selector wins
(``TL102`` beats ``TL1`` beats ``ALL``), and at equal specificity ``ignore`` wins.
A ``select`` on the command line replaces the config file's selection entirely.
TorchFix codes (``TOR102``) are accepted for the rules torchlint covers (torchfix.py).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from torchlint.syntax.source import UnreadableSource, read_bytes
from torchlint.syntax.versions import NEWEST_TARGET, OLDEST_TARGET, NewerSyntax, newer_syntax
from torchlint.framework import torchfix
from torchlint.framework.catalogue import RULES
from torchlint.framework.diagnostics import Applicability, Diagnostic, Fix, file_note, rows_phrase
from torchlint.engine.patterns import PatternList, problems

if TYPE_CHECKING:
    from torchlint.framework.diagnostics import FileReport
    from torchlint.framework.rule import Rule

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "__pycache__", "_build", "buck-out",
    "build", "dist", "node_modules", "site-packages", "venv", ".torchlint_cache",
)

KNOWN_KEYS = (
    "select", "ignore", "extend-select", "per-file-ignores", "extend-per-file-ignores", "exclude",
    "extend-exclude", "force-exclude", "respect-gitignore", "target-torch", "target-version",
)
# The files that hold settings, in the order one folder's are preferred: the dedicated
# ones (settings at their top level, as in ruff.toml), then pyproject.toml's [tool.torchlint].
CONFIG_NAMES = (".torchlint.toml", "torchlint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


@dataclass(frozen=True)
class Options:
    """One layer of settings (a config file or the command line); None means not given."""

    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: Optional[tuple[tuple[str, tuple[str, ...]], ...]] = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: Optional[tuple[str, ...]] = None
    extend_exclude: tuple[str, ...] = ()
    force_exclude: Optional[bool] = None
    respect_gitignore: Optional[bool] = None
    target_torch: Optional[str] = None  # "2.4": the torch release the project runs on
    target_version: Optional[str] = None  # "py38": the oldest Python the project runs on
    # When ``target_version`` is not given: ``[project] requires-python`` of the same folder.
    requires_python: Optional[str] = None
    source: str = "the command line"


# --- selectors -----------------------------------------------------------------------

_PREFIX = re.compile(r"^[A-Z]+[0-9]*$")


def resolve_selector(selector: str, source: str) -> tuple[frozenset[str], int]:
    """The rule codes a selector names, and how specific it is."""
    text = selector.strip()
    rules = RULES
    if torchfix.is_torchfix_code(text):
        try:
            codes = torchfix.translate(text)
            return codes, 100 if text.upper() in torchfix.RULES else len(text)
        except torchfix.NotCovered as error:
            raise ConfigError(f"{source}: {error}")
    if text == "ALL":
        return frozenset(rules), 0
    upper = text.upper()
    if upper in rules:
        return frozenset({upper}), 100
    for code, rule in rules.items():
        if rule.name == text:
            return frozenset({code}), 100
    if _PREFIX.match(upper):
        codes = frozenset(code for code in rules if code.startswith(upper))
        if codes:
            return codes, len(upper)
    known = ", ".join(f"{code} ({rule.name})" for code, rule in rules.items())
    raise ConfigError(f"{source}: unknown rule selector {selector!r}; known rules: {known}")


def _apply_layer(enabled: frozenset[str], layer: Options) -> frozenset[str]:
    on: dict[str, int] = {}
    off: dict[str, int] = {}
    if layer.select is None:
        for code in enabled:
            on[code] = -1  # inherited from the previous layer, less specific than anything
    for selectors, target in ((layer.select or (), on), (layer.extend_select, on), (layer.ignore, off)):
        for selector in selectors:
            codes, specificity = resolve_selector(selector, layer.source)
            for code in codes:
                target[code] = max(target.get(code, -2), specificity)
    return frozenset(code for code, level in on.items() if level > off.get(code, -2))


def select_rules(layers: list[Options]) -> frozenset[str]:
    enabled = frozenset(code for code, rule in RULES.items() if rule.default_enabled)
    for layer in layers:
        enabled = _apply_layer(enabled, layer)
    return enabled


# --- config files --------------------------------------------------------------------

# path -> (its size and modification time when read, its document): a long-running process
# (the language server) sees an edited configuration; a run reads each file once, its
# `[tool.torchlint]` table and its `requires-python` alike.
_toml_cache: dict[Path, tuple[Optional[tuple[int, int]], dict]] = {}


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(read_bytes(str(path), _MAX_CONFIG_BYTES).decode("utf-8"))
    except UnreadableSource as error:
        raise ConfigError(f"{path}: cannot read: {error.reason}")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not valid UTF-8 (byte 0x{error.object[error.start]:02x} at offset {error.start})")
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}")


_MAX_CONFIG_BYTES = 1 << 20


def _document(path: Path) -> dict:
    """The TOML document at ``path``, read once while it stays the same file."""
    stamp = _stamp(path)
    cached = _toml_cache.get(path)
    if cached is not None and cached[0] == stamp and stamp is not None:
        return cached[1]
    data = _read_toml(path)
    _toml_cache[path] = (stamp, data)
    return data


def torchlint_table(path: Path, *, required: bool) -> Optional[dict]:
    """The ``[tool.torchlint]`` table of a pyproject.toml (or a torchlint.toml's top level)."""
    data = _document(path)
    table = data.get("tool", {}).get("torchlint") if isinstance(data.get("tool"), dict) else None
    if table is None and path.name != "pyproject.toml" and (required or path.name in CONFIG_NAMES):
        table = data  # a dedicated torchlint.toml: settings at the top level
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.torchlint] must be a table")
    return table


def _stamp(path: Path) -> Optional[tuple[int, int]]:
    try:
        status = os.stat(path)
    except OSError:
        return None  # reading it will say why
    return status.st_size, status.st_mtime_ns


def find_config(directory: Path) -> Optional[Path]:
    """The nearest settings, from ``directory`` up: a ``.torchlint.toml`` or
    ``torchlint.toml``, or a pyproject.toml with a ``[tool.torchlint]`` table."""
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not os.path.isfile(candidate):
                continue
            if name != "pyproject.toml":
                return candidate
            try:
                text = read_bytes(str(candidate), _MAX_CONFIG_BYTES).decode("utf-8", "replace")
            except UnreadableSource:
                continue
            if "torchlint" in text and torchlint_table(candidate, required=False) is not None:
                return candidate
    return None


def _string_list(table: dict, key: str, source: str) -> Optional[tuple[str, ...]]:
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{source}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def _selection(table: dict, source: str) -> Optional[tuple[str, ...]]:
    """``select``; an empty list is an error, not every rule off (``ignore = ["ALL"]`` is that)."""
    selected = _string_list(table, "select", source)
    if selected is not None and not any(item.strip() for item in selected):
        raise ConfigError(f"{source}: `select` names no rule; give codes (TL101), prefixes (TL1), names or "
                          "\"ALL\" (to turn every rule off, use ignore = [\"ALL\"])")
    return selected


def _bool(table: dict, key: str, source: str) -> Optional[bool]:
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: `{key}` must be true or false, got {value!r}")
    return value


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:[a-z+].*)?$")


def torch_version(text: str, source: str = "the command line") -> tuple[int, int, int]:
    """``"2.4"``, ``"1.12.1"``, ``"2.4.0+cpu"`` as a comparable (major, minor, patch)."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ConfigError(f"{source}: `target-torch` must be a torch release such as \"2.4\" or \"1.13.1\", "
                          f"got {text!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


# The releases rules name (`since`, `fix_since`), parsed once: every file asks of the same few.
_rule_release = functools.lru_cache(maxsize=None)(torch_version)


@dataclass(frozen=True)
class Target:
    """What ``target-torch`` and ``target-version`` do to one file's findings.

    Beyond leaving out the rules that hold only on a later torch release
    (``Settings.codes_for``): a finding that holds from a later release than ``release``
    (a rule with a table of APIs, each deprecated in its own release) is dropped, and the
    fixes of the ``held`` rules, which write what the target does not have, are only
    shown.  With ``python``, syntax newer than that Python gets a TL000 note (as ruff
    reports it), and no fix may add such syntax (fixer.py)."""

    release: Optional[tuple[int, int, int]] = None
    held: tuple[str, ...] = ()
    python: Optional[tuple[int, int]] = None

    def key(self) -> list:
        """Its part of a cache key."""
        return [list(self.release) if self.release is not None else None, list(self.held),
                list(self.python) if self.python is not None else None]

    def newer_syntax(self, text: str) -> list[NewerSyntax]:
        """The constructs of ``text`` that the target Python does not have.  Newer syntax
        than the Python running torchlint does not parse here (it is a TL000 already)."""
        if self.python is None or self.python >= sys.version_info[:2]:
            return []
        return newer_syntax(text, self.python)

    def apply(self, report: "FileReport") -> "FileReport":
        if self.python is not None and report.source is not None and not report.cells:
            found = self.newer_syntax(report.source.text)
            if found:
                report.diagnostics.insert(0, _newer_syntax_note(report.path, found, self.python))
        if self.release is not None:
            report.diagnostics = [d for d in report.diagnostics
                                  if d.since is None or _rule_release(d.since) <= self.release]
        if self.held:
            for diagnostic in report.diagnostics:
                if diagnostic.code in self.held and diagnostic.fix is not None \
                        and diagnostic.fix.applicability is not Applicability.DISPLAY_ONLY:
                    needs = RULES[diagnostic.code].fix_since
                    diagnostic.fix = Fix(Applicability.DISPLAY_ONLY,
                                         f"{diagnostic.fix.message} (not applied: it needs torch {needs}, newer "
                                         f"than `target-torch`)")
        return report


NO_TARGET = Target()


def _newer_syntax_note(path: str, found: list[NewerSyntax], python: tuple[int, int]) -> Diagnostic:
    kinds: dict[str, list[NewerSyntax]] = {}
    for item in found:
        kinds.setdefault(item.construct, []).append(item)
    described = "; ".join(f"{construct} (Python {items[0].release}: {rows_phrase([item.row for item in items])})"
                          for construct, items in kinds.items())
    return file_note(path, f"{path} uses syntax newer than `target-version` (Python {python[0]}.{python[1]}): "
                           f"{described}. It was linted as this Python reads it", found[0].row, found[0].column)


# --- target-version -----------------------------------------------------------------------

_PYTHON_TARGET = re.compile(r"^py3(\d+)$")
PYTHON_TARGETS = tuple(f"py3{minor}" for minor in range(OLDEST_TARGET[1], NEWEST_TARGET[1] + 1))


def python_version(text: Any, source: str = "the command line") -> tuple[int, int]:
    """``"py38"`` as (3, 8)."""
    match = _PYTHON_TARGET.match(text.strip()) if isinstance(text, str) else None
    if match is None or not OLDEST_TARGET <= (3, int(match.group(1))) <= NEWEST_TARGET:
        raise ConfigError(f"{source}: `target-version` must be one of {', '.join(PYTHON_TARGETS)}, got {text!r}")
    return 3, int(match.group(1))


_SPECIFIER = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>|===)\s*(\d+)(?:\.(\d+|\*))?(?:\.(\d+|\*))?(\.\*)?\s*$")


def requires_python_floor(specifiers: str) -> Optional[tuple[int, int]]:
    """The oldest Python 3 release (3, minor) that a ``requires-python`` range allows, as
    the target when none is given (ruff does the same); None when it cannot be read."""
    clauses = []
    for clause in specifiers.split(","):
        match = _SPECIFIER.match(clause)
        if match is None:
            return None
        operator, major, minor, patch, _wildcard = match.groups()
        minor_number = int(minor) if minor not in (None, "*") else 0
        patched = patch not in (None, "*") and int(patch) > 0
        clauses.append((operator, int(major), minor_number, patched))

    def allows(minor: int) -> bool:
        version = (3, minor)
        for operator, major, clause_minor, patched in clauses:
            bound = (major, clause_minor)
            if operator in (">=", ">", "~=") and version < bound:
                return False
            if operator in ("==", "===") and (version != bound if major == 3 else True):
                return False
            if operator == "<" and (version > bound if patched else version >= bound):
                return False
            if operator == "<=" and version > bound:
                return False
        return True

    for minor in range(OLDEST_TARGET[1] - 7, NEWEST_TARGET[1] + 1):
        if allows(minor):
            return 3, max(minor, OLDEST_TARGET[1])
    return None


def options_from_table(table: dict[str, Any], source: str) -> Options:
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)}; known keys: {', '.join(KNOWN_KEYS)}"
        )
    options = Options(
        select=_selection(table, source),
        extend_select=_string_list(table, "extend-select", source) or (),
        ignore=_string_list(table, "ignore", source) or (),
        per_file_ignores=_per_file_table(table, "per-file-ignores", source),
        extend_per_file_ignores=_per_file_table(table, "extend-per-file-ignores", source) or (),
        exclude=_string_list(table, "exclude", source),
        extend_exclude=_string_list(table, "extend-exclude", source) or (),
        force_exclude=_bool(table, "force-exclude", source),
        respect_gitignore=_bool(table, "respect-gitignore", source),
        target_torch=table.get("target-torch"),
        target_version=table.get("target-version"),
        source=source,
    )
    validate(options)
    return options


def _per_file_table(table: dict[str, Any], key: str, source: str) -> Optional[tuple[tuple[str, tuple[str, ...]], ...]]:
    if key not in table:
        return None
    raw = table[key]
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: `{key}` must be a table of pattern = [codes]")
    entries = []
    for pattern, codes in raw.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{source}: `{key}` entry {pattern!r} must be a list of rule codes")
        entries.append((pattern, tuple(codes)))
    return tuple(entries)


def validate(options: Options) -> None:
    """Fail early, naming the source, on selectors that match no rule and on path
    patterns that match nothing."""
    for selector in (*(options.select or ()), *options.extend_select, *options.ignore):
        resolve_selector(selector, options.source)
    _validate_patterns(options)
    for pattern, codes in (*(options.per_file_ignores or ()), *options.extend_per_file_ignores):
        for code in codes:
            resolve_selector(code, f"{options.source}: per-file-ignores {pattern!r}")
    if options.target_torch is not None:
        torch_version(options.target_torch, options.source)
    if options.target_version is not None:
        python_version(options.target_version, options.source)


def _validate_patterns(options: Options) -> None:
    """Git accepts a pattern such as ``\\`` or ``[z-a]`` and it matches nothing; written in
    the settings, it is surely a mistake."""
    per_file = (*(options.per_file_ignores or ()), *options.extend_per_file_ignores)
    for key, patterns in (("exclude", options.exclude or ()), ("extend-exclude", options.extend_exclude),
                          ("per-file-ignores", (pattern for pattern, _codes in per_file))):
        for pattern, problem in problems(patterns):
            raise ConfigError(f"{options.source}: `{key}` pattern {pattern!r} {problem}")


def load_options(path: Path, *, required: bool) -> Options:
    table = torchlint_table(path, required=required)
    if table is None:
        return Options(source=str(path), requires_python=_requires_python(path.parent / "pyproject.toml"))
    options = options_from_table(table, f"{path} [tool.torchlint]" if path.name == "pyproject.toml" else str(path))
    if options.target_version is None:
        options = dataclasses.replace(options, requires_python=_requires_python(path.parent / "pyproject.toml"))
    return options


def _requires_python(pyproject: Path) -> Optional[str]:
    """``[project] requires-python`` of ``pyproject`` (a settings file's neighbour, or the
    settings file itself), when it has one."""
    if not pyproject.is_file():
        return None
    try:
        project = _document(pyproject).get("project")
    except ConfigError:
        return None
    value = project.get("requires-python") if isinstance(project, dict) else None
    return value if isinstance(value, str) else None


def describe(settings: "Settings") -> list[tuple[str, str]]:
    """The settings a file is linted with, as (name, value) lines for ``--show-settings``."""
    return [
        ("configuration", str(settings.config_path) if settings.config_path else "none (defaults and the command line)"),
        ("root", str(settings.root)),
        ("select", ", ".join(sorted(settings.selected)) or "(no rule)"),
        ("per-file-ignores", "; ".join(f"{pattern}: {', '.join(sorted(codes))}"
                                       for pattern, _spec, codes in settings.per_file_ignores) or "(none)"),
        ("exclude", ", ".join(settings.exclude_patterns)),
        ("force-exclude", str(settings.force_exclude).lower()),
        ("respect-gitignore", str(settings.respect_gitignore).lower()),
        ("target-torch", ".".join(map(str, settings.target_torch)) if settings.target_torch else "(today's torch)"),
        ("target-version", _described_python(settings)),
    ]


def _described_python(settings: "Settings") -> str:
    if settings.target_python is None:
        return "(none: syntax is not checked against an older Python)"
    shown = f"py{settings.target_python[0]}{settings.target_python[1]}"
    return f"{shown} (from requires-python {settings.python_from!r})" if settings.python_from else shown


# --- effective settings ----------------------------------------------------------------


def _spec(patterns) -> PatternList:
    return PatternList.from_strings(patterns)


@dataclass
class Settings:
    """What applies to the files under one project root."""

    root: Path
    config_path: Optional[Path]
    selected: frozenset[str]
    exclude: PatternList
    per_file_ignores: list[tuple[str, PatternList, frozenset[str]]] = field(default_factory=list)
    force_exclude: bool = False
    respect_gitignore: bool = True
    target_torch: Optional[tuple[int, int, int]] = None
    target_python: Optional[tuple[int, int]] = None
    python_from: Optional[str] = None  # the requires-python range it was read from, if it was
    exclude_patterns: tuple[str, ...] = ()  # as given, for --show-settings

    def relative(self, path: Path, anchor: Optional[Path] = None) -> str:
        """``path`` relative to the root (or to ``anchor`` when it is outside the root),
        the form exclude and per-file-ignores patterns are matched against."""
        for base in (self.root, anchor):
            if base is not None:
                try:
                    return path.relative_to(base).as_posix()
                except ValueError:
                    pass
        return path.name

    def is_excluded(self, path: Path, is_dir: bool = False, anchor: Optional[Path] = None,
                    only_below: Optional[Path] = None) -> bool:
        """Whether exclude patterns match ``path``; with ``only_below``, patterns are
        matched against the part of the path below that folder."""
        relative = path.relative_to(only_below).as_posix() if only_below else self.relative(path, anchor)
        if relative in ("", "."):
            return False
        return self.exclude.covers(relative, is_dir)

    def codes_for(self, path: Optional[Path]) -> tuple[str, ...]:
        """The codes of the rules that run on ``path``, sorted."""
        codes = set(self.selected)
        if path is not None:
            relative = self.relative(path)
            for _pattern, spec, ignored in self.per_file_ignores:
                if spec.covers(relative, is_dir=False):
                    codes -= ignored
        if self.target_torch is not None:
            # Findings that hold only from a later release than the project runs on.
            codes = {code for code in codes if not self._after_target(RULES[code].since)}
        return tuple(sorted(codes))

    def target_for(self, path: Optional[Path]) -> "Target":
        """What ``target-torch`` does to the findings of ``path``."""
        if self.target_torch is None:
            # The common case: no second pass over the per-file selection.
            return NO_TARGET if self.target_python is None else Target(python=self.target_python)
        held = tuple(code for code in self.codes_for(path) if self._after_target(RULES[code].fix_since))
        return Target(self.target_torch, held, self.target_python)

    def _after_target(self, release: Optional[str]) -> bool:
        return release is not None and self.target_torch is not None and _rule_release(release) > self.target_torch

    def rules_for(self, path: Optional[Path]) -> list[type[Rule]]:
        return rule_classes(self.codes_for(path))


def build_settings(root: Path, config_path: Optional[Path], layers: list[Options]) -> Settings:
    selected = select_rules(layers)
    exclude = DEFAULT_EXCLUDE
    extend: list[str] = []
    per_file: tuple = ()
    force_exclude = False
    respect_gitignore = True
    target_torch = None
    target_python = python_from = None
    for layer in layers:
        if layer.target_torch is not None:
            target_torch = torch_version(layer.target_torch, layer.source)
        if layer.target_version is not None:
            target_python, python_from = python_version(layer.target_version, layer.source), None
        elif layer.requires_python is not None and target_python is None:
            floor = requires_python_floor(layer.requires_python)
            if floor is not None:
                target_python, python_from = floor, layer.requires_python
        if layer.exclude is not None:
            exclude = layer.exclude
        extend.extend(layer.extend_exclude)
        if layer.per_file_ignores is not None:
            per_file = layer.per_file_ignores
        per_file = (*per_file, *layer.extend_per_file_ignores)
        if layer.force_exclude is not None:
            force_exclude = layer.force_exclude
        if layer.respect_gitignore is not None:
            respect_gitignore = layer.respect_gitignore
    per_file_ignores = []
    for pattern, selectors in per_file:
        codes: set[str] = set()
        for selector in selectors:
            codes |= resolve_selector(selector, f"per-file-ignores {pattern!r}")[0]
        per_file_ignores.append((pattern, _spec([pattern]), frozenset(codes)))
    return Settings(
        root=root,
        config_path=config_path,
        selected=selected,
        exclude=_spec((*exclude, *extend)),
        exclude_patterns=(*exclude, *extend),
        per_file_ignores=per_file_ignores,
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        target_torch=target_torch,
        target_python=target_python,
        python_from=python_from,
    )


class SettingsResolver:
    """Finds the settings for any path: the nearest config upward, or ``--config``."""

    def __init__(self, cli: Options, config: Optional[Path] = None, isolated: bool = False,
                 cwd: Optional[Path] = None):
        self.cli = cli
        self.isolated = isolated
        self.cwd = (cwd or Path(os.getcwd())).resolve()
        validate(cli)
        self._by_config: dict[Optional[Path], Settings] = {}
        self._by_directory: dict[Path, Settings] = {}
        self._fixed: Optional[Settings] = None
        if config is not None:
            config = config.resolve()
            if not os.path.isfile(config):
                raise ConfigError(f"{config}: configuration file not found")
            layer = load_options(config, required=True)
            self._fixed = build_settings(config.parent, config, [layer, cli])
        elif isolated:
            self._fixed = build_settings(self.cwd, None, [cli])

    def for_directory(self, directory: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        settings = self._by_directory.get(directory)
        if settings is None:
            config = find_config(directory)
            settings = self._by_config.get(config)
            if settings is None:
                if config is None:
                    settings = build_settings(self.cwd, None, [self.cli])
                else:
                    settings = build_settings(config.parent, config, [load_options(config, required=False), self.cli])
                self._by_config[config] = settings
            self._by_directory[directory] = settings
        return settings

    def for_file(self, path: Path) -> Settings:
        return self.for_directory(path.parent)


def rule_classes(codes) -> list[type[Rule]]:
    """The rule classes for ``codes`` (this imports the rules, and so the parser)."""
    from torchlint.rules import all_rules

    rules = all_rules()
    return [rules[code] for code in codes]
