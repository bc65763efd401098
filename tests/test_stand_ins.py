"""Stand-ins for the modules a run's code imports but the machine lacks (runtime/stand_ins.py):
real imports, from a project folder and from a library folder."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from importlib.util import find_spec
from pathlib import Path

import pytest

from torchlint.runtime import stand_ins

from test_runtime_check import CONFIRMED, by_finding, cli

MISSING = "missing_visualizer_for_a_test"


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text).lstrip())


@pytest.fixture
def folders(tmp_path: Path, monkeypatch):
    project, library = tmp_path / "project", tmp_path / "library"
    write(project, "uses_missing.py", f"""
        import {MISSING}
        from {MISSING}.plots import Figure

        board = {MISSING}.Board(port=8097)
        board.line([1, 2], title="loss")
        with Figure() as figure:
            figure.save("a.png")
        class Logger({MISSING}.Writer):
            pass
        class Folder({MISSING}.ImageFolder):
            def __init__(self, root, transform=None):
                super().__init__(root, transform=transform)
                self.root = root
        folder = Folder("data", transform=None)
        SEEN = (folder.root, type(folder.samples).__name__)
        class Field({MISSING}.Field):
            def build_vocab(self, *args, **kwargs):
                super(Field, self).build_vocab(*args, **kwargs)
                self.built = True
                return super().numericalize([[1]])
        field = Field(batch_first=True)
        BUILT = (type(field.build_vocab([])).__name__, field.built)
        total = board.count + 1
        RAN = True
    """)
    write(project, "own_fallbacks.py", f"""
        try:
            import {MISSING} as fast
        except ImportError:
            import json as fast
        try:
            from {MISSING}_too import amp
        except (ValueError, Exception):
            amp = None
        try:
            import {MISSING}_needed
        except ImportError:
            raise SystemExit("pip install it")
        try:
            import {MISSING}_wanted
        except ImportError:
            print("no {MISSING}_wanted: its plots are not drawn")
        FALLBACKS = (fast.__name__, amp, type({MISSING}_needed).__name__, type({MISSING}_wanted).__name__)
    """)
    write(project, "broken_sibling.py", "import helpers_that_fail\n")
    write(project, "helpers_that_fail.py", f"import {MISSING}_too\nraise RuntimeError('a real error')\n")
    write(library, "optional_dependency.py", f"""
        try:
            import {MISSING}
            FAST = True
        except ImportError:
            FAST = False
    """)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.syspath_prepend(str(library))
    yield project, library
    for name in list(sys.modules):
        if name.startswith((MISSING, "uses_missing", "broken_sibling", "helpers_that_fail", "optional_dependency",
                            "own_fallbacks")):
            del sys.modules[name]


def test_the_project_runs_on_with_stand_ins(folders) -> None:
    project, _library = folders
    with stand_ins.installed([str(project)]) as used:
        module = importlib.import_module("uses_missing")
    assert module.RAN and issubclass(module.Logger, object)
    # A subclass's `super().__init__(..)` and inherited attributes are the base's to stand in for.
    assert module.SEEN == ("data", "StandIn")
    # ... and so are the base's methods it calls through `super()`, which `__getattr__` never sees.
    assert module.BUILT == ("StandIn", True)
    assert used == [MISSING]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(MISSING)  # gone once the block ends


def test_a_library_keeps_its_fallback(folders) -> None:
    project, _library = folders
    with stand_ins.installed([str(project)]) as used:
        module = importlib.import_module("optional_dependency")
    assert module.FAST is False and used == []


def test_the_project_keeps_its_own_fallbacks(folders) -> None:
    # An import with the project's own fallback takes it, as where the module is missing;
    # one whose handler stops the program, or binds nothing to go on with, gets a stand-in.
    project, _library = folders
    with stand_ins.installed([str(project)]) as used:
        module = importlib.import_module("own_fallbacks")
    assert module.FALLBACKS == ("json", None, "_StandInModule", "_StandInModule")
    assert used == [f"{MISSING}_needed", f"{MISSING}_wanted"]


def test_a_project_module_that_fails_still_fails(folders) -> None:
    project, _library = folders
    with stand_ins.installed([str(project)]):
        with pytest.raises(RuntimeError, match="a real error"):
            importlib.import_module("broken_sibling")


@pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")
def test_a_verdict_names_the_stand_ins_it_ran_with(tmp_path: Path) -> None:
    write(tmp_path, "train.py", f"""
        import torch
        import {MISSING} as viz

        board = viz.Board()
        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward()
        board.line(loss.data[0])
    """)
    result = cli("check", "--runtime", "--output-format", "json", "train.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    [runtime] = by_finding(json.loads(result.stdout), tmp_path)["train.py"].values()
    assert runtime["verdict"] == CONFIRMED, runtime
    assert f"ran with stand-ins for the missing modules {MISSING}" in runtime["evidence"]


def test_a_script_imported_for_a_call_leaves_out_loops_that_train_through_its_functions() -> None:
    source = textwrap.dedent("""
        import torch

        weight = torch.ones(2, requires_grad=True)
        trained = []


        def train(epoch):
            (weight * epoch).sum().backward()
            trained.append(epoch)


        def describe(epoch):
            return f"epoch {epoch}"


        for epoch in range(3):
            train(epoch)
        names = [describe(epoch) for epoch in range(2)]
        for epoch in range(2):
            names.append(describe(epoch))
    """)
    namespace = {"__name__": "imported", "__torchlint_left_out__": lambda line, error: None}
    exec(stand_ins.compile_job(source, "train.py", imported=True), namespace)
    # The loop that trains through `train()` is left out; the others run, as when the script runs.
    assert namespace["trained"] == [] and namespace["names"] == ["epoch 0", "epoch 1"] * 2


def test_a_periodic_test_is_taken_on_its_first_pass_only() -> None:
    source = textwrap.dedent("""
        logged, checked = [], []
        for step in range(1, 6):
            if step % 1000 == 0:
                logged.append(step)
            if checked is None and step % 1000 == 0:
                checked.append(step)
    """)
    used: list = []
    namespace = {"__torchlint_first_pass__": stand_ins.first_passes(used)}
    exec(stand_ins.compile_job(source, "train.py", periodic=(4, 6)), namespace)
    # As at step 1000, once; the other half of the second test still keeps its branch shut.
    assert namespace["logged"] == [1] and namespace["checked"] == [] and used == ["periodic 4"]
