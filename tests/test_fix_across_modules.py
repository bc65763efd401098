"""A safe fix stays safe across modules: TL201 removes an unused `from torch.autograd
import Variable` only when no other module of the package can take `Variable` from that
module (a star import that uses it, directly or through other star imports, an import of
the name, `__all__`).  fastai 0.7 broke that way: `torch_imports.py` imported `Variable`
unused, `lm_rnn.py` did `from .torch_imports import *` and called `Variable(x)`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import Project

IMPORTS = "import torch\nfrom torch.autograd import Variable\nimport numpy as np\n"
WITHOUT = "import torch\nimport numpy as np\n"


def _import_fixes(project: Project, *paths: str, cache: str | None = None) -> list[tuple[str, str]]:
    """(applicability, message) of the fix of each TL201 finding on an import line."""
    where = ("--cache-dir", cache) if cache else ("--no-cache",)
    result = project.run("check", "--select", "TL201", "--output-format", "json", *where, *paths)
    assert result.returncode in (0, 1), result.stderr
    return [(item["fix"]["applicability"], item["fix"]["message"]) if item["fix"] else (None, None)
            for item in result.json() if "is imported from" in item["evidence"][0]["message"]]


def _python(cwd: Path, code: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=environment)


def _fastai(project: Project) -> None:
    project.write("fa/__init__.py")
    project.write("fa/torch_imports.py", IMPORTS)
    project.write("fa/lm_rnn.py", """
        from .torch_imports import *

        def f(x):
            return Variable(x)
    """)


def test_a_star_importer_that_uses_the_name_keeps_the_import(project: Project) -> None:
    _fastai(project)
    reason = ("`fa/lm_rnn.py` imports everything from this module (`from .torch_imports import *`), "
              "and may use `Variable` through it")
    assert _import_fixes(project, "fa/torch_imports.py") == [
        ("unsafe", f"Remove the unused import of `Variable`; {reason}")]
    diff = project.run("check", "--no-cache", "--diff", "fa/torch_imports.py")
    assert diff.returncode == 0 and diff.stdout == "", diff.stdout  # nothing safe to do

    for target in ("fa/torch_imports.py", "fa/"):  # the module alone (pre-commit), and the package
        fixed = project.run("check", "--no-cache", "--fix", target)
        assert fixed.returncode == 1, fixed.stdout + fixed.stderr
        assert (project.root / "fa/torch_imports.py").read_text() == IMPORTS
    run = _python(project.root, "import torch, fa.lm_rnn; print(fa.lm_rnn.f(torch.ones(2)).tolist())")
    assert run.returncode == 0 and run.stdout == "[1.0, 1.0]\n", run.stderr

    # The unsafe fix is applied when asked for; with the whole package, `Variable(x)` in
    # lm_rnn.py goes too, so the package still works.
    fixed = project.run("check", "--no-cache", "--fix", "--unsafe-fixes", "fa/")
    assert (project.root / "fa/torch_imports.py").read_text() == WITHOUT, fixed.stdout + fixed.stderr
    assert "Variable" not in (project.root / "fa/lm_rnn.py").read_text(), fixed.stdout + fixed.stderr
    run = _python(project.root, "import torch, fa.lm_rnn; print(fa.lm_rnn.f(torch.ones(2)).tolist())")
    assert run.returncode == 0 and run.stdout == "[1.0, 1.0]\n", run.stderr


def test_absolute_and_transitive_star_imports_and_imports_of_the_name_are_seen(project: Project) -> None:
    project.write("pyproject.toml", "[project]\nname = 'pkg'\n")
    project.write("pkg/__init__.py", "from .core import *\n")
    project.write("pkg/torch_imports.py", IMPORTS)
    project.write("pkg/core.py", "from pkg.torch_imports import *\n\nSIZE = 3\n")
    project.write("pkg/models/__init__.py")
    project.write("pkg/models/net.py", "from ..core import *\n\ndef wrap(x):\n    return Variable(x)\n")
    chain = ("`pkg/models/net.py` imports everything from `pkg/core.py` (`from ..core import *`), which imports "
             "everything from this module (`from pkg.torch_imports import *`), and may use `Variable` through it")
    assert _import_fixes(project, "pkg/torch_imports.py") == [
        ("unsafe", f"Remove the unused import of `Variable`; {chain}")]

    # Through the package: `pkg/__init__.py` star-imports core, and `import pkg` takes it from there.
    project.write("pkg/models/net.py", "import pkg\n\ndef wrap(x):\n    return pkg.Variable(x)\n")
    assert _import_fixes(project, "pkg/torch_imports.py") == [
        ("unsafe", "Remove the unused import of `Variable`; `pkg/models/net.py` imports `pkg/__init__.py` "
                   "(`import pkg`), which imports everything from `pkg/core.py` (`from .core import *`), which "
                   "imports everything from this module (`from pkg.torch_imports import *`), and may use "
                   "`Variable` through it")]

    # An import of the name itself breaks whatever the importer does with it.
    project.write("pkg/models/net.py", "from pkg.torch_imports import Variable as V\n")
    assert _import_fixes(project, "pkg/torch_imports.py") == [
        ("unsafe", "Remove the unused import of `Variable`; `pkg/models/net.py` imports `Variable` from this "
                   "module (`from pkg.torch_imports import Variable as V`)")]
    fixed = project.run("check", "--no-cache", "--fix", "pkg/")
    assert (project.root / "pkg/torch_imports.py").read_text() == IMPORTS, fixed.stdout + fixed.stderr
    run = _python(project.root, "import pkg.models.net")
    assert run.returncode == 0, run.stderr


def test_a_name_in_all_is_exported(project: Project) -> None:
    project.write("pkg/__init__.py")
    project.write("pkg/compat.py", IMPORTS + '\n__all__ = [\n    "np",\n    "Variable",\n]\n')
    assert _import_fixes(project, "pkg/compat.py") == [
        ("unsafe", "Remove the unused import of `Variable`; `__all__` lists `Variable` (line 7): it is exported, "
                   "and code elsewhere may import it from here; the fix takes it out of `__all__` too")]
    assert project.run("check", "--no-cache", "--fix", "pkg/").returncode == 1
    assert "Variable" in (project.root / "pkg/compat.py").read_text()
    project.run("check", "--no-cache", "--fix", "--unsafe-fixes", "pkg/")
    assert (project.root / "pkg/compat.py").read_text() == WITHOUT + '\n__all__ = [\n    "np",\n]\n'
    run = _python(project.root, "from pkg.compat import *; print(np.__name__)")
    assert run.returncode == 0 and run.stdout == "numpy\n", run.stderr

    # An `__all__` that is computed may list it.
    project.write("pkg/compat.py", IMPORTS + "\n__all__ = [name for name in dir() if not name.startswith('_')]\n")
    assert _import_fixes(project, "pkg/compat.py") == [
        ("unsafe", "Remove the unused import of `Variable`; `__all__` is computed (line 5) and may list `Variable`")]
    assert project.run("check", "--no-cache", "--fix", "pkg/").returncode == 1
    assert "Variable" in (project.root / "pkg/compat.py").read_text()


def test_without_a_module_that_can_take_the_name_the_removal_stays_safe(project: Project) -> None:
    project.write("pkg/__init__.py", "from .core import *\n")  # star-imports core, never says `Variable`
    project.write("pkg/core.py", IMPORTS + "\ndef ones():\n    return torch.ones(2)\n")
    project.write("pkg/train.py", "from torch.autograd import Variable\nfrom .core import ones\n\nx = Variable(ones())\n")
    project.write("pkg/hidden.py", IMPORTS + '\n__all__ = ["np"]\n')  # `__all__` leaves it out of star imports
    project.write("pkg/uses_hidden.py", "from .hidden import *\n\nprint(Variable)\n")
    assert _import_fixes(project, "pkg/core.py", "pkg/hidden.py") == [
        ("safe", "Remove the unused import of `Variable`")] * 2
    project.run("check", "--no-cache", "--fix", "pkg/core.py", "pkg/hidden.py")
    assert (project.root / "pkg/core.py").read_text() == WITHOUT + "\ndef ones():\n    return torch.ones(2)\n"
    assert (project.root / "pkg/hidden.py").read_text() == WITHOUT + '\n__all__ = ["np"]\n'
    run = _python(project.root, "import pkg, pkg.train; print(pkg.ones().tolist())")
    assert run.returncode == 0 and run.stdout == "[1.0, 1.0]\n", run.stderr


def test_a_cached_safe_fix_becomes_unsafe_when_a_star_importer_appears(project: Project) -> None:
    project.write("pkg/__init__.py")
    project.write("pkg/torch_imports.py", IMPORTS)
    project.write("pkg/other.py", "x = 1\n")
    cache = str(project.root / "cache")
    safe = [("safe", "Remove the unused import of `Variable`")]
    assert _import_fixes(project, "pkg/torch_imports.py", cache=cache) == safe
    assert _import_fixes(project, "pkg/torch_imports.py", cache=cache) == safe  # from the cache
    # A new module (in a new subpackage) star-imports it: the folder's listing changed.
    project.write("pkg/sub/__init__.py")
    project.write("pkg/sub/lm_rnn.py", "from ..torch_imports import *\n\ndef f(x):\n    return Variable(x)\n")
    unsafe = _import_fixes(project, "pkg/torch_imports.py", cache=cache)
    assert unsafe == [("unsafe", "Remove the unused import of `Variable`; `pkg/sub/lm_rnn.py` imports everything "
                                 "from this module (`from ..torch_imports import *`), and may use `Variable` through it")]
    assert _import_fixes(project, "pkg/torch_imports.py", cache=cache) == unsafe
    # An existing module becomes one: its text changed.
    (project.root / "pkg/sub/lm_rnn.py").unlink()
    assert _import_fixes(project, "pkg/torch_imports.py", cache=cache) == safe
    project.write("pkg/other.py", "from pkg.torch_imports import *\n\nv = Variable\n")
    # `v = Variable` stays whatever is fixed: removing the import would break other.py.
    assert _import_fixes(project, "pkg/torch_imports.py", cache=cache)[0][0] == "display-only"
    fixed = project.run("check", "--cache-dir", cache, "--fix", "pkg/")
    assert (project.root / "pkg/torch_imports.py").read_text() == IMPORTS, fixed.stdout


def test_an_import_a_star_importer_keeps_using_is_never_removed(project: Project) -> None:
    """NRI: `utils.py` imports Variable, `train.py` does `from utils import *` and calls
    `Variable(x, volatile=True)`, which no fix rewrites: removing the import from utils.py,
    even as an unsafe fix, would be a NameError in train.py."""
    project.write("utils.py", "import torch\nfrom torch.autograd import Variable\n\n"
                              "def ones(n):\n    return Variable(torch.ones(n))\n")
    project.write("train.py", "import torch\nfrom utils import *\n\nx = torch.zeros(2)\n"
                              "y = Variable(x, volatile=True)\nprint(ones(2) + y)\n")
    fixed = project.run("check", "--no-cache", "--isolated", "--select", "TL201,TL202", "--fix", "--unsafe-fixes", ".")
    assert "from torch.autograd import Variable" in (project.root / "utils.py").read_text(), fixed.stdout
    again = project.run("check", "--no-cache", "--isolated", "--select", "TL201,TL202", "--diff", "--unsafe-fixes", ".")
    assert again.returncode == 0 and again.stdout == "", again.stdout  # and a second pass has nothing to do
    run = _python(project.root, "import train")
    assert run.returncode == 0, run.stderr
