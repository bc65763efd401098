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

Because a file's findings can depend on other files, the project also records what
each file looked at: the modules it analysed (with a digest of the text analysed) and
the places a module was looked for and not found.  ``dependencies()`` gives that, over
every file reached, so the cache can tell when a result is stale.

A fix that removes an import of a name must know that no other module takes the name
from this one (``from .torch_imports import *`` and then ``Variable(x)``):
``removal_risk()`` reads the whole package tree for that, once per run, and the file's
findings then depend on every file of the tree and on its listing (a new module may
star-import this one), which ``dependencies()`` records as a folder path ending in a
separator, whose digest is that of ``python_files()``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import OrderedDict, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from torchlint.syntax.source import UnreadableSource, decode, read_bytes
from torchlint.analysis.exports import MAY_STAR_IMPORT, STAR_IMPORT, Exports, Import, import_words, imports_of, may_rename, summarize
from torchlint.analysis.module_names import KNOWN_ROOTS, NOT_PROJECT_ROOTS, module_identity, script_folder

if TYPE_CHECKING:
    from torchlint.syntax import cst
    from torchlint.analysis.module_analysis import ModuleAnalysis

# Enough for the modules a package imports everywhere (transformers: modeling_utils.py,
# generation/utils.py, the package __init__ ...): below about 2.5 million characters
# they no longer fit and are parsed again for every file.  A worker linting transformers
# peaked at about 250 MiB with this.
_CACHE_CHARACTERS = 3_000_000
_MAX_FILE_BYTES = 2 * 1024 * 1024
_MAX_PROBES = 100_000  # remembered lookups of a module name on disk (transformers: 10,000)


def _candidates(root: Path, dotted: str) -> tuple[str, str]:
    """The files Python would take module ``dotted`` from, under ``root``."""
    base = os.path.join(root, *dotted.split("."))
    return base + ".py", os.path.join(base, "__init__.py")


_RELATIVE_IMPORT = re.compile(r"^[ \t]*from[ \t]+\.", re.MULTILINE)
_ABSOLUTE_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?"
                              r"(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*))", re.MULTILINE)
_PROJECT_MARKERS = ("setup.py", "setup.cfg", "pyproject.toml", ".git")


def _module_bytes(path: Path) -> bytes:
    """The bytes of a module the analysis looks into, never through a symbolic link that
    leads out of the folder its imports start from: a repository's ``util.py -> ~/.netrc``
    (or a linked package folder) is not read, as discovery does not read it either."""
    real = os.path.realpath(path)
    start = os.path.realpath(module_identity(path)[2])
    if os.path.commonpath([real, start]) != start:
        raise UnreadableSource("a symbolic link to a file outside the project: not read")
    return read_bytes(str(path))


class Project:
    def __init__(self, cache_characters: int = _CACHE_CHARACTERS, parser: str = "auto"):
        self.parser = parser  # parsing.py: which parser builds the trees of this project's files
        self._analyses: OrderedDict[Path, Optional["ModuleAnalysis"]] = OrderedDict()
        self._sizes: dict[Path, int] = {}
        self._budget = cache_characters
        self._files: dict[tuple[Path, str], tuple[Optional[Path], int]] = {}
        # module -> [digest, the names it may make other names (None: any), its Exports once
        # needed]: small, kept for the run
        self._summaries: dict[Path, list] = {}
        self._project_roots: dict[Path, Optional[Path]] = {}
        self._roots: dict[Path, tuple[Path, ...]] = {}  # file -> roots_for(file)
        # For the cache: file -> the project files it analysed, and the paths it probed in vain.
        self._digests: dict[Path, str] = {}
        self._looked_into: defaultdict[Path, set[Path]] = defaultdict(set)
        self._absent: defaultdict[Path, set[str]] = defaultdict(set)
        # Package trees read for removal_risk (once per run), and which files' fixes read them.
        self._trees: dict[Path, _Tree] = {}
        self._scanned: defaultdict[Path, set[Path]] = defaultdict(set)
        self._text_has: dict[tuple[Path, str], bool] = {}  # (file, pattern) -> whether its text has it
        self._script_folders: dict[Path, Optional[Path]] = {}  # module -> the folder of its scripts
        # The answers of the name resolution under way (see _followed); None between them.
        self._followed_memo: Optional[dict] = None

    # --- finding modules -------------------------------------------------------------

    def roots_for(self, path: Path) -> tuple[Path, ...]:
        """Where imports of the file at ``path`` are looked up: the folder its package
        starts from, its own folder, and the project's root (a test folder without an
        ``__init__.py`` imports the package by its absolute name, as pytest runs it)."""
        roots = self._roots.get(path)
        if roots is None:
            roots = self._roots[path] = self._find_roots(path)
        return roots

    def _find_roots(self, path: Path) -> tuple[Path, ...]:
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

    def find_module(self, dotted: str, roots: tuple[Path, ...], consumer: Optional[Path] = None) -> Optional[Path]:
        if not dotted or dotted.split(".")[0] in KNOWN_ROOTS or dotted.startswith("."):
            return None
        for root in roots:
            key = (root, dotted)
            entry = self._files.get(key)
            candidates = None
            if entry is None:
                candidates = _candidates(root, dotted)
                found = next((candidate for candidate in candidates if os.path.isfile(candidate)), None)
                # The file, and how many places it was looked for in vain before it.
                entry = self._files[key] = (Path(found) if found is not None else None,
                                            candidates.index(found) if found is not None else len(candidates))
            if consumer is not None and entry[1]:
                self._absent[consumer].update((candidates or _candidates(root, dotted))[:entry[1]])
            if entry[0] is not None:
                return entry[0]
        return None

    def imports_own_module(self, text: str, path: Path) -> bool:
        """Whether ``text`` (the file at ``path``) imports from a module of its project:
        a relative import, or an absolute one found on disk from the file's roots.  Read
        from the text alone, so an import in a string counts too (that only costs a parse)."""
        if _RELATIVE_IMPORT.search(text):
            return True
        roots = self.roots_for(path)
        consumer = Path(os.path.abspath(path))
        for match in _ABSOLUTE_IMPORT.finditer(text):
            if match.group(1) is not None:
                names = [match.group(1)]
            else:
                names = [re.split(r"\s+as\s", part.strip())[0] for part in match.group(2).split(",")]
            if any(name.split(".")[0] not in NOT_PROJECT_ROOTS and self.find_module(name, roots, consumer) is not None
                   for name in names):
                return True
        return False

    def split(self, qualname: str, roots: tuple[Path, ...],
              consumer: Optional[Path] = None) -> Optional[tuple[Path, list[str]]]:
        """``pkg.mod.func`` -> (the file of ``pkg.mod``, ["func"]): the longest module prefix."""
        parts = qualname.split(".")
        for end in range(len(parts) - 1, 0, -1):
            path = self.find_module(".".join(parts[:end]), roots, consumer)
            if path is not None:
                return path, parts[end:]
        return None

    def dependencies(self, path: Path) -> tuple[dict[str, Optional[str]], set[str]]:
        """What the findings of ``path`` may depend on besides its own text: every project
        file analysed on its behalf, directly or through other files ({path: digest of the
        text analysed, None if it could not be read}), and the paths where a module was
        looked for and not found (creating one of them could change the findings)."""
        path = Path(os.path.abspath(path))
        seen = {path}
        queue = [path]
        absent: set[str] = set()
        while queue:
            current = queue.pop()
            absent |= self._absent.get(current, set())
            for other in self._looked_into.get(current, ()):
                if other not in seen:
                    seen.add(other)
                    queue.append(other)
        dependencies = {str(other): self._digests.get(other) for other in sorted(seen - {path})}
        for current in sorted(seen):
            for folder in sorted(self._scanned.get(current, ())):
                tree = self._trees[folder]
                dependencies[listing_key(folder)] = tree.listing
                dependencies.update((str(other), digest) for other, digest in tree.files.items() if other != path)
        return dependencies, absent

    def forget_records(self) -> None:
        """Drop the records of files whose analysis is not cached (a linted file's are
        needed only until its cache entry is written), so that they do not grow with the
        number of files linted.  Call it between files."""
        for records in (self._looked_into, self._absent, self._scanned):
            for path in [path for path in records if path not in self._analyses]:
                del records[path]
        recorded = set(self._analyses).union(*self._looked_into.values())
        for path in [path for path in self._digests if path not in recorded]:
            del self._digests[path]
        for memo in (self._files, self._roots):
            if len(memo) > _MAX_PROBES:
                memo.clear()  # only a memo of what exists on disk

    # --- other modules that take a name from this one ------------------------------

    def removal_risk(self, path: Path, name: str, star_exported: bool = True,
                     consumer: Optional[Path] = None) -> Optional[str]:
        """Why removing the module-level name ``name`` from the module at ``path`` may break
        another module of its package (a sentence naming it), or None when none of them
        can take the name from there.  A module takes it if it

        - imports it: ``from .mod import name`` (also through the modules below);
        - star-imports the module (``star_exported``: a star import brings ``name``),
          directly or through other star imports, and mentions the word ``name``;
        - imports the module, or a module that star-imports it (``import pkg.mod``,
          ``from . import mod``), and mentions the word ``name`` (``mod.name``).

        A star importer that never mentions the word cannot use the name (its own
        importers are looked at in their turn).  The package tree is that of
        ``package_tree()``; modules outside it (scripts beside the package) are not seen.
        ``consumer``'s findings then depend on every file of the tree and its listing."""
        path = Path(os.path.abspath(path))
        if path.suffix != ".py":
            return None  # a notebook or a stub: no module imports from it
        tree = self._tree(package_tree(path), consumer)
        mentioning = tree.mentioning(name)
        root = module_identity(path)[2]

        def shown(other: Path) -> str:
            return "this module" if other == path else f"`{os.path.relpath(other, root).replace(os.sep, '/')}`"

        # The modules that hold everything of this one: it, and its star importers, transitively.
        holders: dict[Path, Optional[tuple[Path, Import]]] = {path: None}
        if star_exported:
            by_target: dict[str, list[tuple[Path, Import]]] = defaultdict(list)
            for importer, statement in tree.stars():
                for candidate in self._import_candidates(importer, statement):
                    by_target[candidate].append((importer, statement))
            queue = [path]
            while queue:
                current = queue.pop(0)
                for importer, statement in by_target.get(str(current), ()):
                    if importer not in holders:
                        holders[importer] = (current, statement)
                        queue.append(importer)

        def through(holder: Path) -> str:
            """``, which imports everything from ...`` down to this module."""
            text = ""
            while holder != path:
                holder, statement = holders[holder]
                text += f", which imports everything from {shown(holder)} (`{statement.text}`)"
            return text

        def holder_of(importer: Path, module: str, relative: bool) -> Optional[Path]:
            for candidate in self._import_candidates(importer, Import(module, None, relative, True, "")):
                if Path(candidate) in holders:
                    return Path(candidate)
            return None

        # Definite breakage first (an import of the name), then possible uses.
        possible: list[str] = []
        keys = {name} | {module_identity(holder)[0].rsplit(".", 1)[-1] for holder in holders}
        for other in mentioning:
            if other == path or not tree.words[other] & keys:
                continue
            for statement in tree.imports(other):
                if statement.name == "*":
                    continue
                if statement.name is not None:
                    holder = holder_of(other, statement.module, statement.relative)
                    if holder is not None and statement.name == name:
                        return (f"`{_relative(other, root)}` imports `{name}` from {shown(holder)} "
                                f"(`{statement.text}`){through(holder)}")
                    holder = holder_of(other, f"{statement.module}.{statement.name}", statement.relative)
                    if holder is not None:
                        possible.append(f"`{_relative(other, root)}` imports {shown(holder)} (`{statement.text}`)"
                                        f"{through(holder)}, and may use `{name}` through it")
                    continue
                parts = statement.module.split(".")
                for end in ([len(parts)] if statement.whole else range(len(parts), 0, -1)):
                    holder = holder_of(other, ".".join(parts[:end]), False)
                    if holder is not None:
                        possible.append(f"`{_relative(other, root)}` imports {shown(holder)} (`{statement.text}`)"
                                        f"{through(holder)}, and may use `{name}` through it")
                        break
        for holder in sorted(holders, key=str):
            if holder != path and holder in mentioning:
                importer, statement = holders[holder]
                return (f"`{_relative(holder, root)}` imports everything from {shown(importer)} "
                        f"(`{statement.text}`){through(importer)}, and may use `{name}` through it")
        return possible[0] if possible else None

    def texts_mentioning(self, path: Path, name: str, consumer: Optional[Path] = None) -> list[tuple[Path, str]]:
        """The other modules of the package tree of ``path`` whose text has the word
        ``name``, with their text (``consumer``'s findings then depend on the tree)."""
        path = Path(os.path.abspath(path))
        tree = self._tree(package_tree(path), consumer)
        found = []
        for other in tree.mentioning(name):
            if other == path:
                continue
            try:
                found.append((other, decode(_module_bytes(other)).text))
            except (UnreadableSource, ValueError, LookupError):
                found.append((other, ""))
        return found

    def importing_scripts(self, path: Path, having: Optional[re.Pattern] = None,
                          consumer: Optional[Path] = None) -> list[Path]:
        """The scripts whose imports name the module at ``path`` (``from models import Net``
        in train.py for models.py) and whose text has ``having``, found in the folder of the
        scripts that may import it (``script_folder``): none for a library, and never a module
        of a package, which is no entry point."""
        path = Path(os.path.abspath(path))
        if path not in self._script_folders:
            self._script_folders[path] = script_folder(path)
        folder = self._script_folders[path]
        if folder is None:
            return []
        found = []
        for other in self._tree(folder, consumer).importing(path.stem):
            if other == path or os.path.isfile(other.parent / "__init__.py"):
                continue
            key = (other, having.pattern) if having is not None else None
            if key is not None and key not in self._text_has:
                try:
                    self._text_has[key] = bool(having.search(decode(_module_bytes(other)).text))
                except (UnreadableSource, ValueError, LookupError):
                    self._text_has[key] = False
            if key is None or self._text_has[key]:
                found.append(other)
        return found

    def torch_importer(self, path: Path, name: str, consumer: Optional[Path] = None) -> Optional[tuple[Path, str]]:
        """A module of the package tree of ``path`` that imports torch and takes the
        module-level ``name`` from the module at ``path`` (``from ..common.helpers import
        verify``), with the statement that takes it; None when no such module is seen.
        ``consumer``'s findings then depend on every file of the tree and its listing."""
        path = Path(os.path.abspath(path))
        if path.suffix != ".py":
            return None
        folder = package_tree(path)
        # Tests often sit in packages under a plain folder (`test/common/`, `test/data/`) and
        # import each other with `from ..common import ..`: look from that folder.
        for folder in (folder, folder.parent) if os.path.isfile(folder / "__init__.py") else (folder,):
            tree = self._tree(folder, consumer)
            for other in tree.mentioning(name):
                if other == path or "torch" not in tree.words[other]:
                    continue
                statements = tree.imports(other)
                if not any(not s.relative and s.module.split(".")[0] == "torch" for s in statements):
                    continue
                for statement in statements:
                    if statement.name == name and str(path) in self._import_candidates(other, statement):
                        return other, statement.text
        return None

    def _tree(self, folder: Path, consumer: Optional[Path]) -> "_Tree":
        """The files of the package tree at ``folder`` (read once per run); ``consumer``'s
        findings then depend on every one of them and on the listing."""
        tree = self._trees.get(folder)
        if tree is None:
            tree = self._trees[folder] = _Tree(folder)
        if consumer is not None:
            self._scanned[consumer].add(folder)
        return tree

    def _import_candidates(self, importer: Path, statement: Import) -> set[str]:
        """The files the module of ``statement`` in ``importer`` may be taken from: under
        the file's package root for a relative import, else under any of its roots."""
        roots = (module_identity(importer)[2],) if statement.relative else self.roots_for(importer)
        return {candidate for root in roots for candidate in _candidates(root, statement.module)}

    # --- analysed modules ------------------------------------------------------------

    def analysis(self, path: Path, consumer: Optional[Path] = None) -> Optional["ModuleAnalysis"]:
        """The analysed module at ``path`` (parsed once, then cached), or None if unusable."""
        from torchlint.syntax import cst, parsing

        path = Path(os.path.abspath(path))
        if consumer is not None:
            self._looked_into[consumer].add(path)
        if path in self._analyses:
            self._analyses.move_to_end(path)
            return self._analyses[path]
        analysis = None
        size = 0
        digest = None
        try:
            data = _module_bytes(path)
            digest = content_digest(data)
            if len(data) <= _MAX_FILE_BYTES:
                text = decode(data).text
                # Most of an imported module's functions are never looked into.
                analysis = self.analyse(path, parsing.parse_reading_legacy(text, self.parser, lazy_bodies=True)[0])
                size = len(text)
        except (UnreadableSource, cst.ParserSyntaxError, RecursionError, ValueError):
            analysis = None
        self._digests[path] = digest
        self._analyses[path] = analysis
        self._sizes[path] = size
        self._budget -= size
        while self._budget < 0 and len(self._analyses) > 1:
            old, _ = self._analyses.popitem(last=False)
            self._budget += self._sizes.pop(old)
        return analysis

    def _followed(self, step, qualname: str, roots: tuple[Path, ...], depth: int, consumer: Optional[Path]):
        """``step(qualname, roots, depth, consumer)``, once per arguments while a resolution
        is under way.  Star imports fan out (a package ``__init__`` star-importing modules
        that star-import it back), and without this every path of up to 9 steps through
        them was walked: exponential in the number of star imports.  The depth is part of
        the key, so the answers are those of the walk, found in polynomial time; the memo
        lives only as long as the outermost call, as modules may change between calls."""
        outermost = self._followed_memo is None
        if outermost:
            self._followed_memo = {}
        memo = self._followed_memo
        key = (step.__name__, qualname, roots, depth, consumer)
        try:
            if key not in memo:
                memo[key] = step(qualname, roots, depth, consumer)
            return memo[key]
        finally:
            if outermost:
                self._followed_memo = None

    def other_name(self, qualname: str, roots: tuple[Path, ...], consumer: Optional[Path] = None,
                   depth: int = 0) -> Optional[str]:
        """The name outside the project that the project's ``qualname`` is another name
        for, through imports and plain aliases (``pyprob.util.Tensor`` is
        ``torch.FloatTensor`` when pyprob/util.py says ``Tensor = torch.FloatTensor``);
        None when it is not one (a class, a function, a value, or not the project's)."""
        return self._followed(self._other_name, qualname, roots, depth, consumer)

    def _other_name(self, qualname: str, roots: tuple[Path, ...], depth: int,
                    consumer: Optional[Path]) -> Optional[str]:
        from torchlint.analysis import torch_api

        found = self.split(qualname, roots, consumer)
        if found is None:
            return qualname if depth else None
        if depth > 8:
            return None
        path, attributes = found
        name, rest = attributes[0], attributes[1:]
        exports = self._exports(path, name, consumer)
        if exports is None:
            return None
        if name not in exports.names:
            for module in reversed(exports.star_imports):
                if name in torch_api.star_exports(module):
                    return ".".join([module, name, *rest])
                other = self.other_name(".".join([module, name, *rest]), self.roots_for(path), consumer, depth + 1)
                if other is not None:
                    return other
            return None
        target = exports.target(name)
        if target is None:
            return None
        target = ".".join([target, *rest])
        if target == qualname:
            return None  # `from . import logging` in a package: its own submodule
        return self.other_name(target, self.roots_for(path), consumer, depth + 1)

    def renames_torch(self, qualname: str, roots: tuple[Path, ...], consumer: Optional[Path] = None) -> bool:
        """Whether the project's ``qualname`` is another name for a torch object
        (``from .compat import V``), or is a module of the project that gives one
        another name (``import compat`` for ``compat.V``)."""
        other = self.other_name(qualname, roots, consumer)
        if other is not None:
            return other.split(".")[0] == "torch"
        path = self.find_module(qualname, roots, consumer)
        if path is None:
            return False
        exports = self._exports(path, None, consumer)
        for name in exports.names if exports is not None else ():
            target = exports.target(name)
            if target is not None and target.split(".")[0] == "torch" and target.rsplit(".", 1)[-1] != name:
                return True
        return False

    def _exports(self, path: Path, name: Optional[str], consumer: Optional[Path]) -> Optional[Exports]:
        """The module's exports (see exports.py), or None when it cannot make ``name``
        (if given) another name.  Its text is first only searched for the names of its imports and
        aliases: most names a project imports are its own classes and functions, and
        their modules need not be parsed."""
        path = Path(os.path.abspath(path))
        if consumer is not None:
            self._looked_into[consumer].add(path)
        summary = self._summaries.get(path)
        text = None
        if summary is None:
            digest = None
            try:
                data = _module_bytes(path)
                digest = content_digest(data)
                text = decode(data).text if len(data) <= _MAX_FILE_BYTES else None
            except UnreadableSource:
                pass
            if len(self._summaries) > _MAX_PROBES:
                self._summaries.clear()
            summary = self._summaries[path] = [digest, may_rename(text) if text is not None else frozenset(), None]
        self._digests.setdefault(path, summary[0])
        if name is not None and summary[1] is not None and name not in summary[1]:
            return None
        if summary[2] is None:
            # Parsed once a name passes the text's test; read again only if that is not
            # the first time the module is looked into.
            try:
                if text is None:
                    text = decode(_module_bytes(path)).text
                module_name, is_package, _ = module_identity(path)
                summary[2] = summarize(text, module_name, is_package) or Exports()
            except UnreadableSource:
                summary[2] = Exports()
        return summary[2]

    def analyse(self, path: Path, module: cst.Module) -> "ModuleAnalysis":
        from torchlint.analysis.module_analysis import ModuleAnalysis

        return ModuleAnalysis(module, str(path), file_path=path, project=self)

    def _through_star_imports(self, analysis, name, rest, path, depth, consumer):
        """``name`` brought into a project module by ``from <module> import *``."""
        from torchlint.analysis import torch_api
        from torchlint.analysis.values import Kind, Value

        for module, _seq, _node in reversed(analysis.model.star_imports):
            if name in torch_api.star_exports(module):
                return analysis, Value(Kind.EXTERNAL, qualname=torch_api.normalize(".".join([module, name, *rest])))
            found = self.resolve(".".join([module, name, *rest]), self.roots_for(path), depth + 1, consumer)
            if found is not None:
                return found
        return None

    def resolve(self, qualname: str, roots: tuple[Path, ...], depth: int = 0, consumer: Optional[Path] = None):
        """What an imported name refers to in the project: ``(analysis, value)`` where the
        value is that module's own inference of the name, or None when it is not a
        project name (or cannot be followed, e.g. an import cycle)."""
        return self._followed(self._resolve, qualname, roots, depth, consumer)

    def _resolve(self, qualname: str, roots: tuple[Path, ...], depth: int, consumer: Optional[Path]):
        if depth > 8:
            return None
        found = self.split(qualname, roots, consumer)
        if found is None:
            return None
        path, attributes = found
        analysis = self.analysis(path, consumer)
        if analysis is None:
            return None
        name, rest = attributes[0], attributes[1:]
        bindings = analysis.model.module_scope.bindings.get(name)
        if not bindings:
            found = self._through_star_imports(analysis, name, rest, path, depth, consumer)
            if found is not None:
                return found
            if analysis.model.is_package:
                # `import pkg.sub` style access: pkg.sub.thing
                return self.resolve(f"{analysis.model.module_name}.{'.'.join(attributes)}",
                                    self.roots_for(path), depth + 1, consumer) if len(attributes) > 1 else None
            return None
        value = analysis.inference.combine_bindings(bindings)
        if value is None:
            return None
        from torchlint.analysis.values import Kind

        if value.kind is Kind.EXTERNAL and value.qualname:
            # A re-export (`from .feedforward import FeedForward` in a package __init__),
            # possibly of something outside the project (`from torch.autograd import Variable`).
            target = ".".join([value.qualname, *rest])
            if target == qualname:  # `from . import logging` in the package: the submodule itself
                return analysis, replace(value, qualname=target)
            inside = self.resolve(target, self.roots_for(path), depth + 1, consumer)
            if inside is not None:
                return inside
            return analysis, replace(value, qualname=target)
        if rest:
            if value.kind is Kind.CLASS and len(rest) == 1:
                member = analysis.inference.class_attribute(value.cls, rest[0])
                return (analysis, member) if member is not None else None
            return None
        return analysis, value


def _relative(path: Path, root: Path) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def package_tree(path: Path) -> Path:
    """The folder a module's package starts at (the top package's folder), or the
    module's own folder when that is not a package (scripts)."""
    folder = Path(os.path.abspath(path)).parent
    if not os.path.isfile(folder / "__init__.py"):
        return folder
    while os.path.isfile(folder.parent / "__init__.py") and folder.parent != folder:
        folder = folder.parent
    return folder


def python_files(folder: Path) -> list[str]:
    """The ``.py`` files of ``folder`` and of its packages (subfolders with an
    ``__init__.py``, recursively), as sorted paths relative to it: the modules that
    can import each other from there."""
    found: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(folder, relative) if relative else folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name.endswith(".py") and entry.is_file():
                    found.append(f"{relative}/{entry.name}" if relative else entry.name)
                elif entry.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                    pending.append(f"{relative}/{entry.name}" if relative else entry.name)
            except OSError:
                continue
    return sorted(found)


def listing_key(folder: Path) -> str:
    """The dependency that stands for ``folder``'s listing of Python files: its path
    with a final separator (no file's path ends with one)."""
    return os.path.join(str(folder), "")


def listing_digest(key: str) -> str:
    """The digest of the listing a ``listing_key`` stands for."""
    return content_digest("\n".join(python_files(Path(key))).encode("utf-8", "surrogateescape"))


class _Tree:
    """The Python files of a package tree, read once: their digests (what the findings
    that asked then depend on), their star imports (parsed only when the text has
    one), and per name asked for, the files whose text has that word."""

    def __init__(self, folder: Path):
        self.folder = folder
        names = python_files(folder)
        self.listing = content_digest("\n".join(names).encode("utf-8", "surrogateescape"))
        self.paths = [Path(os.path.join(folder, name)) for name in names]
        self.files: dict[Path, Optional[str]] = {}
        self._stars: list[tuple[Path, str]] = []  # files with a star import, and the text
        self._mentions: dict[str, list[Path]] = {}
        self.words: dict[Path, frozenset[str]] = {}  # import words of the files that mention a name asked for
        self._imports: dict[Path, list[Import]] = {}
        self._parsed_stars: Optional[list[tuple[Path, Import]]] = None
        self._importers: Optional[dict[str, list[Path]]] = None  # import word -> the files it is in

    def _texts(self):
        for path in self.paths:
            try:
                data = _module_bytes(path)
            except UnreadableSource:
                self.files.setdefault(path, None)
                continue
            self.files.setdefault(path, content_digest(data))
            try:
                text = decode(data).text
            except (UnreadableSource, ValueError, LookupError):
                continue  # not Python: it imports nothing
            if text is not None:
                yield path, text

    def mentioning(self, name: str) -> list[Path]:
        """The files whose text has the word ``name`` (reading the tree again for a second name)."""
        found = self._mentions.get(name)
        if found is None:
            word = re.compile(rf"\b{re.escape(name)}\b")
            first = not self._mentions
            found = self._mentions[name] = []
            for path, text in self._texts():
                if first and MAY_STAR_IMPORT.search(text) and STAR_IMPORT.search(text):
                    self._stars.append((path, text))
                if name in text and word.search(text):
                    found.append(path)
                    if path not in self.words:
                        self.words[path] = import_words(text)
        return found

    def importing(self, word: str) -> list[Path]:
        """The files with ``word`` in their import statements (``models`` of ``from models
        import Net``): the tree is read once for every word asked."""
        if self._importers is None:
            self._importers = {}
            for path, text in self._texts():
                for found in import_words(text):
                    self._importers.setdefault(found, []).append(path)
        return self._importers.get(word, [])

    def stars(self) -> list[tuple[Path, Import]]:
        """Every star import of the tree, with its file."""
        if self._parsed_stars is None:
            self._parsed_stars = []
            for path, text in self._stars:
                module_name, is_package, _ = module_identity(path)
                for statement in imports_of(text, module_name, is_package, stars_only=True) or ():
                    self._parsed_stars.append((path, statement))
            self._stars = []
        return self._parsed_stars

    def imports(self, path: Path) -> list[Import]:
        """Every import of the file at ``path`` (read again: only files that mention a name asked for)."""
        if path not in self._imports:
            try:
                text = decode(_module_bytes(path)).text
                module_name, is_package, _ = module_identity(path)
                self._imports[path] = imports_of(text, module_name, is_package) or []
            except (UnreadableSource, ValueError, LookupError):
                self._imports[path] = []
        return self._imports[path]


def content_digest(data: bytes) -> str:
    """The digest that identifies a file's content (in the cache and its dependencies)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()

