"""Torch names that a project's own module hands over under another name
(``from .compat import V`` after ``from torch.autograd import Variable as V`` there, or
``FT = torch.FloatTensor``): found through the import, with or without the name in the
file's text, and not when the other module may make the name something else."""

from __future__ import annotations

import json

from conftest import Project
from torchlint.framework.rule import Rule

COMPAT = """
import torch
from torch.autograd import Variable as V
FT = torch.FloatTensor
"""


def _package(project: Project) -> None:
    project.write("pyproject.toml", "[project]\nname = 'pkg'\n")
    project.write("pkg/__init__.py")
    project.write("pkg/compat.py", COMPAT)


def test_a_renamed_variable_and_legacy_type_from_a_project_module_are_found(project: Project) -> None:
    _package(project)
    # Neither "Variable" nor "Tensor" is in this file's text: the pre-scan alone would skip it.
    project.write("pkg/train.py", """
        from .compat import V, FT

        def step(x):
            return V(x), FT(3)
    """)
    assert ("pkg/train.py", 4, 12, "TL201") in project.findings()
    assert ("pkg/train.py", 4, 18, "TL204") in project.findings()
    result = project.run("check", "--output-format", "json", "--select", "TL204", "pkg/train.py")
    [finding] = result.json()
    assert finding["message"].startswith("`FT(3)` allocates uninitialized memory")
    assert finding["evidence"][0]["message"] == (
        "`FT` is `torch.FloatTensor`, as `pkg.compat` defines it: `FT` is imported here")
    fixed = project.run("check", "--select", "TL204", "--fix", "pkg/train.py")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = (project.root / "pkg/train.py").read_text()
    assert text.startswith("import torch\nfrom .compat import V, FT\n")
    assert "torch.empty(3, dtype=torch.float32)" in text


def test_a_chain_of_re_exports_and_a_module_attribute_are_followed(project: Project) -> None:
    _package(project)
    project.write("pkg/reexport.py", "from .compat import V as W\n")
    project.write("pkg/chain.py", """
        from .reexport import W

        def step(x):
            return W(x)
    """)
    project.write("pkg/attribute.py", """
        from . import compat

        def step(x):
            return compat.V(x), compat.FT(2)
    """)
    findings = project.findings("--select", "TL201,TL204")
    assert ("pkg/chain.py", 4, 12, "TL201") in findings
    assert ("pkg/attribute.py", 4, 12, "TL201") in findings
    assert ("pkg/attribute.py", 4, 25, "TL204") in findings


def test_a_name_a_module_may_switch_is_reported_without_a_fix(project: Project) -> None:
    """pyprob's util.py: `Tensor = torch.FloatTensor`, and a function switches it to
    `torch.cuda.FloatTensor`; every call is a legacy constructor either way, but a fix to
    `torch.empty(.., dtype=torch.float32)` would move the tensor off the GPU: reported,
    with no fix."""
    project.write("pyproject.toml", "[project]\nname = 'pkg'\n")
    project.write("pkg/__init__.py")
    project.write("pkg/util.py", """
        import torch
        Tensor = torch.FloatTensor

        def set_cuda(on):
            global Tensor
            Tensor = torch.cuda.FloatTensor if on else torch.FloatTensor

        def zeros(n):
            return Tensor(n).zero_()
    """)
    project.write("pkg/use.py", """
        from pkg import util
        from pkg.util import Tensor

        def f():
            return util.Tensor(3), Tensor(2)
    """)
    project.write("pkg/local.py", """
        import torch

        def ids(t, on_gpu):
            LongTensor = torch.cuda.LongTensor if on_gpu else torch.LongTensor
            return LongTensor([t])
    """)
    result = project.run("check", "--select", "TL204", "--output-format", "json")
    found = sorted((item["filename"].split("pkg/")[-1], item["location"]["row"], item["fix"]) for item in result.json())
    # use.py imports the name: what another module may switch it to is not followed there.
    assert found == [("local.py", 5, None), ("util.py", 9, None)]
    assert all(" or `torch.cuda." in item["message"] for item in result.json())


def test_the_cache_drops_a_result_when_the_renaming_module_changes(project: Project) -> None:
    _package(project)
    project.write("pkg/train.py", "from .compat import FT\n\nbuffer = FT(3)\n")
    assert project.findings("--select", "TL204") == [("pkg/train.py", 3, 10, "TL204")]
    assert project.findings("--select", "TL204") == [("pkg/train.py", 3, 10, "TL204")]  # from the cache
    project.write("pkg/compat.py", "def FT(n):\n    return [0.0] * n\n")  # train.py is unchanged
    assert project.findings("--select", "TL204") == []
    project.write("pkg/compat.py", COMPAT)
    assert project.findings("--select", "TL204") == [("pkg/train.py", 3, 10, "TL204")]


def test_the_pre_scan_finds_what_linting_every_file_finds(project: Project, monkeypatch) -> None:
    """Skipping files or rules by their text must not lose a finding that comes through
    another module: the same package, linted in-process with the pre-scan and without."""
    from torchlint.analysis.project import Project as Modules
    from torchlint.framework.diagnostics import report_to_data
    from torchlint.rules import all_rules
    from torchlint.engine import batch

    _package(project)
    project.write("pkg/reexport.py", "from .compat import V as W\n")
    project.write("pkg/a.py", "from .compat import V\n\ndef f(x):\n    return V(x)\n")
    project.write("pkg/b.py", "from .reexport import W\n\ndef f(x):\n    return W(x)\n")
    project.write("pkg/c.py", "from . import compat\n\nbuffer = compat.FT(2)\n")
    project.write("pkg/d.py", "import json\n\ndef f(x):\n    return json.dumps(x)\n")

    def lint_all() -> dict[str, str]:
        modules = Modules()
        reports = {}
        for path in sorted((project.root / "pkg").glob("*.py")):
            job = batch.Job(path, path.name, tuple(sorted(all_rules())), modules.roots_for(path))
            report, _ = batch.lint_job(job, None, None, modules)
            reports[path.name] = json.dumps(report_to_data(report), sort_keys=True)
        return reports

    with_pre_scan = lint_all()
    monkeypatch.setattr(Rule, "may_match", classmethod(lambda cls, text, known=None: True))
    assert lint_all() == with_pre_scan
    assert sum('"TL201"' in report or '"TL204"' in report for report in with_pre_scan.values()) == 4
