"""Stand-ins for the third-party modules a job's code imports but this machine lacks.

A training script imports matplotlib, visdom, tensorboardX, gym, tqdm... around the lines
the runtime check wants to reach; where one is not installed the run used to stop at the
import, and every finding of the file was COULD NOT RUN. Inside a job, ``installed()``
puts a finder at the end of ``sys.meta_path``: a top-level module no other finder found,
that is not torch, numpy, the standard library or a module of the project, becomes a
stand-in that takes any attribute, call, iteration, ``with``, subclassing and arithmetic
and records its use. The run goes on; each verdict of the run then names the stand-ins
it ran with. A stand-in never makes a tensor, so no evidence of a bug can rest on a value
one invented: it can only let the program reach the real lines.

The other things a fresh clone run without arguments lacks are here too, each recorded
in the run's list the same way: values for required command-line options
(``required_options``), and Python 3 syntax in the project's Python 2 modules
(``ported_imports``). torchvision's datasets, transforms and models, which need torch,
are synthetic.py's.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import re
import sys
import types
from typing import Callable, Iterator, Optional

# What a run lists among its stand-ins when it kept `.cuda()` tensors on the CPU (monitor.py).
CUDA_ON_CPU = "CUDA"
# What a run lists when the project read `torch.version.cuda`, None in a CPU build (monitor.py).
CUDA_VERSION = "CUDA version"
# The CUDA version a project reads in a CPU build: one torch is built for.
ASSUMED_CUDA = "12.8"
# How a run lists what synthetic.py made: "synthetic torchvision.datasets.MNIST (1x28x28 random images)".
SYNTHETIC = "synthetic "
# How a run lists a file ``torch.load`` could not find (synthetic.missing_checkpoints): "checkpoint vgg16.pth".
CHECKPOINT = "checkpoint "
# How a run lists Python 2 code it ran as rewritten (check.py): "python 2 print statement, async keyword".
PORTED = "python 2 "
# How a run lists an output folder it made because the fresh clone lacks it: "folder logs".
FOLDER = "folder "
# How a run lists a numpy alias it put back: "numpy np.float".
NUMPY_ALIAS = "numpy "
# How a run lists a top-level statement of a script imported for a call that raised and was
# left out: "left out 93 FileNotFoundError: [Errno 2] No such file or directory: 'data/x.npy'".
LEFT_OUT = "left out "
# How a run lists a periodic `if` (`step % log_interval == 0`) it took on its first pass: "periodic 181".
PERIODIC = "periodic "
# How a run lists a relative import it took from the project's root: "climbing ..utils".
CLIMBING = "climbing "


def record(used: list[str], entry: str) -> None:
    """Add ``entry`` to a run's list of what it made up (``used``), once."""
    if entry not in used:
        used.append(entry)


def _python2_next(value):
    """Python 2's ``it.next()``: the object's own ``next`` where it has one (a progress bar's),
    else the iterator's next item, as ``next(it)`` gives it."""
    method = getattr(value, "next", None)
    return method() if method is not None else next(value)


# Python 2's builtins that Python 3 renamed, where a Python 2 file runs.
PYTHON2_BUILTINS = {"xrange": range, "unicode": str, "basestring": str, "long": int, "raw_input": input,
                    "unichr": chr, "reduce": functools.reduce, "__python2_next__": _python2_next}


class _Python2Methods(ast.NodeTransformer):
    """The iterator and dictionary methods Python 3 renamed: ``gen.next()`` (a generator has
    no ``next`` in Python 3), ``d.iteritems()``. On the tree, so every line and column holds."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
            if node.func.attr == "next":
                return ast.copy_location(ast.Call(ast.Name("__python2_next__", ast.Load()), [node.func.value], []),
                                         node)
            if node.func.attr in ("iteritems", "itervalues", "iterkeys"):
                node.func.attr = node.func.attr[len("iter"):]
        return node


def compile_job(source: str, path: str, *, ported: bool = False, imported: bool = False,
                periodic: tuple[int, ...] = ()):
    """The code a job runs, compiled with its own future flags (never torchlint's).
    ``ported``: Python 2 code, repaired to parse (syntax.legacy), run as Python 2 ran it.
    ``imported``: a script compiled to define what one of its functions needs, for a call
    with synthesized arguments: its top-level training loops (a ``for`` or ``while`` whose
    body calls ``.backward()`` or ``.step()``, or a function of the script that does) are
    left out, as a ``__main__`` block is;
    they would spend the run's time before the call. Any other top-level statement but an
    import that raises is left out too, the rest of the script still defined: NRI's scripts
    load their generated data (absent from a fresh clone) before they define the classes
    and functions a call needs. Each one left out is given to ``__torchlint_left_out__(line,
    error)`` in the job's namespace, to be named in the verdict (LEFT_OUT).
    ``periodic``: the lines of ``if`` statements testing a step against a period
    (`if step % log_interval == 0:`) taken on their first pass, ``__torchlint_first_pass__(line)``
    saying so (plan.periodic_guards)."""
    tree = ast.parse(source, path)
    if ported:
        tree = _Python2Methods().visit(tree)
    if imported:
        tree = _as_imported(tree)
    for node in ast.walk(tree) if periodic else ():
        if isinstance(node, ast.If) and node.lineno in periodic:
            node.test = _FirstPass(node.lineno).visit(node.test)
    return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)


def periodic_test(node: ast.AST) -> bool:
    """``step % period == 0`` (either way round)."""
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
        and any(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mod) for side in (node.left, *node.comparators)) \
        and any(isinstance(side, ast.Constant) and side.value == 0 for side in (node.left, *node.comparators))


class _FirstPass(ast.NodeTransformer):
    """``step % period == 0`` becomes ``__torchlint_first_pass__(line) or step % period == 0``;
    the rest of the test stays (`self.viz_on and ...` is still false when the option is off)."""

    def __init__(self, line: int):
        self.line = line

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        if not periodic_test(node):
            return self.generic_visit(node)
        first = ast.copy_location(ast.Call(ast.Name("__torchlint_first_pass__", ast.Load()),
                                           [ast.Constant(self.line)], []), node)
        return ast.copy_location(ast.BoolOp(ast.Or(), [first, node]), node)


def first_passes(used: list[str]) -> Callable[[int], bool]:
    """The ``__torchlint_first_pass__`` of a job's namespace (compile_job): true the first
    time each periodic test is reached, which ``used`` records ("periodic 181")."""
    def first_pass(line: int) -> bool:
        entry = f"{PERIODIC}{line}"
        first = entry not in used
        record(used, entry)
        return first
    return first_pass


def recording_left_out(used: list[str]) -> Callable[[int, BaseException], None]:
    """The ``__torchlint_left_out__`` of an imported script's namespace (compile_job): it
    records in ``used`` each top-level line left out and its error ("left out 93
    FileNotFoundError: ...")."""
    def left_out(line: int, error: BaseException) -> None:
        message = str(error).splitlines()[0][:200] if str(error) else ""
        used.append(f"{LEFT_OUT}{line} {type(error).__name__}: {message}")
    return left_out


def _as_imported(tree: ast.Module) -> ast.Module:
    def steps(node: ast.AST) -> bool:
        return any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                   and inner.func.attr in ("backward", "step") for inner in ast.walk(node))

    # The script's own functions that train: NRI's `for epoch in range(args.epochs): train(epoch)`.
    training = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and steps(node)}

    def trains(statement: ast.stmt) -> bool:
        return isinstance(statement, (ast.For, ast.While)) and (steps(statement) or any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in training
            for node in ast.walk(statement)))

    def guarded(statement: ast.stmt) -> ast.stmt:
        if isinstance(statement, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                or isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            return statement  # a docstring stays first, where `from __future__` may follow it
        report = ast.Call(ast.Name("__torchlint_left_out__", ast.Load()),
                          [ast.Constant(statement.lineno), ast.Name("__torchlint_error__", ast.Load())], [])
        handler = ast.ExceptHandler(ast.Name("Exception", ast.Load()), "__torchlint_error__", [ast.Expr(report)])
        return ast.copy_location(ast.Try([statement], [handler], [], []), statement)

    tree.body = [ast.copy_location(ast.Pass(), statement) if trains(statement) else guarded(statement)
                 for statement in tree.body]
    return tree


# Where torchvision is missing, these of its modules are synthetic.py's, not stand-ins.
_SYNTHETIC_MODULES = ("torchvision.datasets", "torchvision.transforms", "torchvision.models")

# Never stood in for: what the monitor itself needs, and what must fail loudly if absent.
_REAL = ("torch", "numpy", "torchlint", "pytest", "_pytest")


class StandIn:
    """Whatever the missing module's code is asked for: callable, indexable, iterable
    (empty), usable in ``with``, as a base class, in arithmetic and comparisons."""

    def __init__(self, name: str):
        object.__setattr__(self, "_standin_name", name)

    def __repr__(self) -> str:
        return f"<stand-in for {self._standin_name}>"

    def __getattr__(self, attribute: str) -> "StandIn":
        return _stand_in_for(self._standin_name, attribute)

    def __setattr__(self, attribute: str, value) -> None:
        pass

    def __call__(self, *args, **kwargs) -> "StandIn":
        return StandIn(f"{self._standin_name}()")

    def __getitem__(self, key) -> "StandIn":
        return StandIn(f"{self._standin_name}[]")

    def __setitem__(self, key, value) -> None:
        pass

    def __iter__(self) -> Iterator:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True

    def __enter__(self) -> "StandIn":
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __mro_entries__(self, bases) -> tuple:
        # `class Logger(tensorboardX.SummaryWriter):` still defines a class, whose
        # `super().__init__(log_dir)` and inherited attributes the base stands in for.
        return (StandInBase,)

    def __format__(self, spec: str) -> str:
        return repr(self)

    def _result(self, *other) -> "StandIn":
        return StandIn(f"{self._standin_name}(..)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _result
    __floordiv__ = __mod__ = __pow__ = __neg__ = __pos__ = __abs__ = _result
    __lt__ = __le__ = __gt__ = __ge__ = _result


class StandInBase:
    """The base of a class built on a missing module's class (`class Folder(ImageFolder)`):
    it takes any constructor arguments, and an attribute the class lacks is a stand-in."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __getattr__(self, attribute: str) -> StandIn:
        return _stand_in_for(type(self).__name__, attribute)

    def __init_subclass__(cls, **kwargs) -> None:
        # `super().build_vocab(...)` looks the method up in the bases' own dictionaries,
        # never through `__getattr__`: the missing class's methods its subclass calls that
        # way are put in a base of the subclass's own, each a stand-in's call.
        super().__init_subclass__(**kwargs)
        if StandInBase not in cls.__bases__:
            return
        called = {name for value in vars(cls).values() for name in _called_on_super(value)} - set(dir(StandInBase))
        if called:
            base = type(f"{cls.__name__}StandInBase", (StandInBase,),
                        {name: _stand_in_method(cls.__name__, name) for name in called})
            cls.__bases__ = tuple(base if b is StandInBase else b for b in cls.__bases__)


def _stand_in_method(owner: str, name: str):
    def method(self, *args, **kwargs) -> StandIn:
        return StandIn(f"{owner}.{name}()")
    return method


def _called_on_super(value) -> set[str]:
    """The attributes a function reads from ``super()``: the name after ``LOAD_SUPER_ATTR``
    (Python 3.12+), or the first attribute read after ``super`` is loaded and called."""
    import dis

    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    names: set[str] = set()
    pending = [code] if code is not None else []
    while pending:
        code = pending.pop()
        pending += [const for const in code.co_consts if isinstance(const, types.CodeType)]
        after_super = False
        for instruction in dis.get_instructions(code):
            if instruction.opname == "LOAD_SUPER_ATTR":
                names.add(instruction.argval)
            elif instruction.opname == "LOAD_GLOBAL" and instruction.argval == "super":
                after_super = True
            elif after_super and instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                names.add(instruction.argval)
                after_super = False
    return {name for name in names if not (name.startswith("__") and name.endswith("__"))}


class _StandInModule(types.ModuleType):
    def __getattr__(self, attribute: str):
        if f"{self.__name__}.{attribute}" in _SYNTHETIC_MODULES:  # `from torchvision import datasets`
            return importlib.import_module(f"{self.__name__}.{attribute}")
        return _stand_in_for(self.__name__, attribute)


def _stand_in_for(owner: str, attribute: str) -> StandIn:
    """What a missing attribute of a stand-in is: another one; but no dunder, which Python
    and libraries probe for (``__len__``, ``__array__``...) and must find missing."""
    if attribute.startswith("__") and attribute.endswith("__"):
        raise AttributeError(attribute)
    return StandIn(f"{owner}.{attribute}")


def _has_module(folders: list[str], name: str) -> bool:
    """One of ``folders`` holds the top-level module or package ``name``."""
    return any(os.path.exists(os.path.join(folder, name + ".py")) or os.path.isdir(os.path.join(folder, name))
               for folder in folders)


@functools.lru_cache(maxsize=256)
def _import_fallbacks(filename: str) -> frozenset[int]:
    """The lines of ``try:`` bodies whose handler catches a failed import and binds what
    the program goes on with (``except ImportError: import pickle``, ``except Exception:
    amp = None``, ``HAS_APEX = False``): an import there has the program's own fallback. A
    handler that raises or exits (``raise ImportError("pip install visdom")``), or only
    passes or prints, is none: the program needs the module, and gets a stand-in."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return frozenset()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_falls_back(handler) for handler in node.handlers):
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return frozenset(lines)


def _falls_back(handler: ast.ExceptHandler) -> bool:
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {node.id if isinstance(node, ast.Name) else getattr(node, "attr", None) for node in caught}
    if handler.type is not None and not names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
        return False
    last = handler.body[-1]
    stops = isinstance(last, ast.Raise) or isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and (
        ast.unparse(last.value.func) in ("sys.exit", "exit", "quit", "os._exit"))
    binds = any(isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign))
                for statement in handler.body for node in ast.walk(statement))
    return binds and not stops


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, project_folders: list[str], synthetic: Optional[Callable[[str, list], types.ModuleType]]):
        self.project_folders = project_folders
        self.used: list[str] = []  # top-level names stood in for, in order
        self.synthetic = synthetic

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in _REAL or top in sys.stdlib_module_names or self._in_project(top):
            return None
        if top not in self.used and not self._imported_by_the_project():
            # A library's optional dependency (`try: import gmpy2`), or the project's own
            # (`try: import cPickle as pickle / except ImportError: import pickle`): its
            # ImportError is its fallback, the path the program takes where it is missing.
            return None
        if top not in self.used:
            self.used.append(top)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _imported_by_the_project(self) -> bool:
        """The import statement being run is in a file of the project, not of a library."""
        frame = sys._getframe(2)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                     or frame.f_code.co_filename == __file__):
            frame = frame.f_back
        if frame is None:
            return False
        filename = os.path.realpath(frame.f_code.co_filename)
        return any(filename.startswith(folder + os.sep) for folder in self.project_folders) \
            and frame.f_lineno not in _import_fallbacks(frame.f_code.co_filename)

    def _in_project(self, name: str) -> bool:
        """A module of the project that failed to import is an error to see, not to hide."""
        return _has_module(self.project_folders, name)

    def create_module(self, spec):
        if spec.name.startswith(_SYNTHETIC_MODULES) and self.synthetic is not None:
            return self.synthetic(spec.name, self.used)
        module = _StandInModule(spec.name)
        module.__path__ = []  # a package: its submodules come here too
        return module

    def exec_module(self, module) -> None:
        pass


@contextlib.contextmanager
def installed(project_folders: list[str],
              synthetic: Optional[Callable[[str, list], types.ModuleType]] = None) -> Iterator[list[str]]:
    """Stand-ins for missing modules while the block runs; yields the list of the
    top-level names stood in for (filled as they are imported). ``synthetic(name, used)``
    makes the modules of _SYNTHETIC_MODULES where torchvision is missing (synthetic.module,
    which a job passes: it imports torch)."""
    finder = _Finder([os.path.realpath(folder) for folder in project_folders if folder], synthetic)
    sys.meta_path.append(finder)
    try:
        yield finder.used
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name, module in list(sys.modules.items()):
            if isinstance(module, _StandInModule) or getattr(module, "torchlint_synthetic", False):
                del sys.modules[name]


# How a run lists an option it gave a value: "option --dataset cifar10".
OPTION = "option "
# How a run lists an option it gave the value that names the files the project made:
# "given --suffix _springs5" (made_inputs.option_naming).
GIVEN_OPTION = "given "
_ALTERNATIVES = re.compile(r"^\s*([\w.-]+)\s*\|")  # help='cifar10 | lsun | imagenet'


def _invented_value(action: argparse.Action) -> str:
    """A value for a required option the command line lacks: its first choice, the first
    alternative its help lists, a number for a number, else a name (a folder that holds
    nothing: a dataset built from it gets synthetic images)."""
    if action.choices:
        return str(next(iter(action.choices)))
    match = _ALTERNATIVES.match(action.help or "")
    if match:
        return match.group(1)
    if action.type in (int, float):
        return "1"
    return "data"


@contextlib.contextmanager
def required_options(used: list[str], options: Optional[dict[str, str]] = None) -> Iterator[None]:
    """A script run as ``python train.py`` with no arguments stops at its first required
    option (``--dataroot``, ``--dataset``) with exit status 2, before any flagged line:
    while the block runs, a parse of the command line that lacks a required option gets
    one (``_invented_value``), and ``used`` records which ("option --dataset cifar10").
    ``options`` (flag -> value) are given to a parser that declares them, as the user
    would type them ("given --suffix _springs5"); a parser without them never sees them."""
    original = argparse.ArgumentParser.parse_known_args

    def parse_known_args(self, args=None, namespace=None):
        words = list(sys.argv[1:] if args is None else args)
        given = {word.split("=", 1)[0] for word in words}
        added: list[str] = []
        for flag, value in (options or {}).items():
            if flag not in given and flag in self._option_string_actions:
                added += [flag, value]
                given.add(flag)
                record(used, f"{GIVEN_OPTION}{flag} {value}")
        for action in self._actions:
            if not action.required or given & set(action.option_strings):
                continue
            if not action.option_strings and any(not word.startswith("-") for word in words):
                continue  # the command line has positional words: argparse matches them
            value = _invented_value(action)
            added += [action.option_strings[-1], value] if action.option_strings else [value]
            used.append(f"{OPTION}{action.option_strings[-1] if action.option_strings else action.dest} {value}")
        return original(self, [*words, *added] if added else args, namespace)

    argparse.ArgumentParser.parse_known_args = parse_known_args
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_known_args = original


class _PortingLoader(importlib.machinery.SourceFileLoader):
    """A module of the project that Python 3 cannot compile is compiled as torchlint reads
    it (syntax.legacy: ``print x`` as a tuple, same length), with Python 2's builtin names."""

    ported: Optional[str] = None

    def source_to_code(self, data, path, *, _optimize=-1):
        try:
            return super().source_to_code(data, path, _optimize=_optimize)
        except SyntaxError:
            from torchlint.syntax.legacy import repair  # what a job needs only for Python 2 code

            repaired = repair(importlib.util.decode_source(data))
            if repaired is None:
                raise
            self.ported = ", ".join(dict.fromkeys(r.construct for r in repaired[1]))
            return compile_job(repaired[0], path, ported=True)

    def exec_module(self, module) -> None:
        code = self.get_code(module.__name__)
        if self.ported:
            module.__dict__.update(PYTHON2_BUILTINS)
        exec(code, module.__dict__)

    def get_code(self, fullname):
        # No cached bytecode: whether the file needs porting is decided from its text.
        source = self.get_data(self.get_filename(fullname))
        return self.source_to_code(source, self.get_filename(fullname))


class _PortingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, project_folders: list[str]):
        self.project_folders = project_folders

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) \
                or not any(os.path.realpath(spec.origin).startswith(folder + os.sep) for folder in self.project_folders):
            return None
        spec.loader = _PortingLoader(fullname, spec.origin)
        return spec


class _PatchedLoader(importlib.machinery.SourceFileLoader):
    """A module of the project imported from a text given for its file (its fixed version)."""

    def __init__(self, fullname: str, path: str, source: str):
        super().__init__(fullname, path)
        self.source = source

    def get_code(self, fullname):
        return compile(self.source, self.get_filename(fullname), "exec", dont_inherit=True)


class _PatchedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, sources: dict[str, str]):
        self.sources = {os.path.realpath(path): source for path, source in sources.items()}

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        source = self.sources.get(os.path.realpath(spec.origin)) if spec is not None and spec.origin else None
        if source is None:
            return None
        spec.loader = _PatchedLoader(fullname, spec.origin, source)
        return spec


@contextlib.contextmanager
def patched_imports(sources: dict[str, str]) -> Iterator[None]:
    """While the block runs, the project's modules at these paths import from the given
    texts: a script's rerun past a finding it confirmed in a module it imports runs that
    module with the finding's fix applied."""
    if not sources:
        yield
        return
    for path, source in sources.items():
        linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    with _first_finder(_PatchedFinder(sources)):
        yield


@contextlib.contextmanager
def ported_imports(project_folders: list[str]) -> Iterator[None]:
    """While the block runs, a Python 2 module of the project imports as it is ported
    (``_PortingLoader``); the run of a Python 2 file needs it for its Python 2 neighbours."""
    with _first_finder(_PortingFinder([os.path.realpath(folder) for folder in project_folders if folder])):
        yield


@contextlib.contextmanager
def _first_finder(finder: importlib.abc.MetaPathFinder) -> Iterator[None]:
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


def writes(mode: str) -> bool:
    """An ``open`` mode that writes (``"r+"`` too)."""
    return any(letter in mode for letter in "wax+")


def _make_parent(path, used: list[str]) -> bool:
    """Make the missing folder ``path`` is to be written in, recording it; False when it
    exists or cannot be made (outside what the job may write), so the caller's own error
    stands."""
    parent = os.path.dirname(os.path.abspath(os.fspath(path)))
    if os.path.isdir(parent):
        return False
    try:
        os.makedirs(parent)
    except OSError:
        return False
    relative = os.path.relpath(parent)
    record(used, FOLDER + (parent if relative.startswith("..") else relative))
    return True


@contextlib.contextmanager
def output_folders(used: list[str], made: bool = True) -> Iterator[None]:
    """A fresh clone lacks the folders a training run writes in (``logs/``, ``checkpoints/``:
    git keeps no empty folder, and the author's copy had them), so ``os.mkdir("logs/exp1")``,
    ``open("logs/run.txt", "w")`` or ``torch.save(model, "ckpt/m.pt")`` stop the run before
    any flagged line. While the block runs, such a write makes the missing folder first and
    ``used`` records it ("folder logs"). Only a job whose writes land in a layer of its own
    has them ``made``: the user's tree never gains a folder."""
    if not made:
        yield
        return

    try:
        import torch
    except ImportError:
        torch = None
    original_open, original_mkdir = builtins.open, os.mkdir
    original_save = getattr(torch, "save", None)

    def opened(file, mode="r", *args, **kwargs):
        try:
            return original_open(file, mode, *args, **kwargs)
        except FileNotFoundError:
            if not (isinstance(file, (str, bytes, os.PathLike)) and isinstance(mode, str) and writes(mode)
                    and _make_parent(file, used)):
                raise
        return original_open(file, mode, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        try:
            return original_mkdir(path, *args, **kwargs)
        except FileNotFoundError:
            if kwargs.get("dir_fd") is not None or not _make_parent(os.path.normpath(os.fspath(path)), used):
                raise
        return original_mkdir(path, *args, **kwargs)

    def save(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)):
            _make_parent(f, used)
        return original_save(obj, f, *args, **kwargs)

    builtins.open, os.mkdir = opened, mkdir
    if original_save is not None:
        torch.save = save
    try:
        yield
    finally:
        builtins.open, os.mkdir = original_open, original_mkdir
        if original_save is not None:
            torch.save = original_save


# The aliases of Python's own types numpy 1.24 removed: `np.float` raises AttributeError since.
_NUMPY_ALIASES = {"float": float, "int": int, "bool": bool, "object": object, "long": int, "complex": complex,
                  "str": str, "unicode": str}


@contextlib.contextmanager
def numpy_aliases(used: list[str]) -> Iterator[None]:
    """Code written for numpy before 1.24 says ``dtype=np.float`` and ``x.astype(np.int)``,
    which raise AttributeError today, stopping the run before the flagged lines. While the
    block runs those names are the builtins they always meant (``np.float is float`` held),
    and ``used`` records each one used ("numpy np.float"): the run is the one the author's
    numpy gave, and the user learns that today's numpy stops the program there."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        try:
            import numpy
        except ImportError:
            yield
            return
    had = "__getattr__" in numpy.__dict__
    original = numpy.__dict__.get("__getattr__")

    def lookup(name: str):
        if name in _NUMPY_ALIASES:
            record(used, NUMPY_ALIAS + "np." + name)
            return _NUMPY_ALIASES[name]
        if original is None:
            raise AttributeError(f"module 'numpy' has no attribute {name!r}")
        return original(name)

    numpy.__getattr__ = lookup
    try:
        yield
    finally:
        if had:
            numpy.__getattr__ = original
        else:
            del numpy.__getattr__


@contextlib.contextmanager
def climbing_imports(used: list[str], project_folders: list[str]) -> Iterator[None]:
    """Research code often imports its siblings both ways: a training script says ``from models
    import FCN8s`` with the repository's root on its path, and ``models/fcn8s.py`` says ``from
    ..utils import initialize_weights``, which climbs above the package ``models`` and raises
    ImportError (the author's copy sat inside a package of theirs). While the block runs, such
    an import of a module the project has at its root takes that module, as the author's
    layout did, and ``used`` records which ("climbing ..utils")."""
    original = builtins.__import__
    roots = [folder for folder in project_folders if folder]

    def imported(name, globals=None, locals=None, fromlist=(), level=0):
        try:
            return original(name, globals, locals, fromlist, level)
        except ImportError as error:
            top = name.partition(".")[0]
            if level == 0 or not top or "beyond top-level package" not in str(error) or not _has_module(roots, top):
                raise
        record(used, f"{CLIMBING}{'.' * level}{name}")
        return original(name, globals, locals, fromlist, 0)

    builtins.__import__ = imported
    try:
        yield
    finally:
        builtins.__import__ = original
