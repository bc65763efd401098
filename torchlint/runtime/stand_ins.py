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
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from typing import Iterator

# What a run lists among its stand-ins when it kept `.cuda()` tensors on the CPU (monitor.py).
CUDA_ON_CPU = "CUDA"

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


class _StandInModule(types.ModuleType):
    def __getattr__(self, attribute: str):
        return _stand_in_for(self.__name__, attribute)


def _stand_in_for(owner: str, attribute: str) -> StandIn:
    """What a missing attribute of a stand-in is: another one; but no dunder, which Python
    and libraries probe for (``__len__``, ``__array__``...) and must find missing."""
    if attribute.startswith("__") and attribute.endswith("__"):
        raise AttributeError(attribute)
    return StandIn(f"{owner}.{attribute}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, project_folders: list[str]):
        self.project_folders = project_folders
        self.used: list[str] = []  # top-level names stood in for, in order

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in _REAL or top in sys.stdlib_module_names or self._in_project(top):
            return None
        if top not in self.used and not self._imported_by_the_project():
            # A library's optional dependency (`try: import gmpy2`): its ImportError is its fallback.
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
        return any(filename.startswith(folder + os.sep) for folder in self.project_folders)

    def _in_project(self, name: str) -> bool:
        """A module of the project that failed to import is an error to see, not to hide."""
        return any(os.path.exists(os.path.join(folder, name + ".py")) or os.path.isdir(os.path.join(folder, name))
                   for folder in self.project_folders)

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []  # a package: its submodules come here too
        return module

    def exec_module(self, module) -> None:
        pass


@contextlib.contextmanager
def installed(project_folders: list[str]) -> Iterator[list[str]]:
    """Stand-ins for missing modules while the block runs; yields the list of the
    top-level names stood in for (filled as they are imported)."""
    finder = _Finder([os.path.realpath(folder) for folder in project_folders if folder])
    sys.meta_path.append(finder)
    try:
        yield finder.used
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name, module in list(sys.modules.items()):
            if isinstance(module, _StandInModule):
                del sys.modules[name]
