"""scripts/metamorphic.py: each rewrite keeps what the program does and says where each line
went; run for real on a small program, and through the script on two dev cases."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from torch_programs import run_program as torch_program

REPO = Path(__file__).resolve().parent.parent
SPEC = importlib.util.spec_from_file_location("metamorphic", REPO / "scripts" / "metamorphic.py")
metamorphic = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(metamorphic)

PROGRAM = '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
width = 4


def scale(x):
    return x * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(width, 1)

    def forward(self, x):
        return self.fc(scale(x))


model = Net()
batch = torch.ones(3, width)
total = model(batch).sum()
print("total", round(total.item(), 4))
'''


def _run(folder: Path) -> str:
    done = torch_program("bad.py", cwd=folder, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("rewrite", sorted(metamorphic.REWRITES))
def test_a_rewrite_keeps_the_output_and_maps_every_line(tmp_path: Path, rewrite: str) -> None:
    pytest.importorskip("torch")
    original = tmp_path / "original"
    original.mkdir()
    (original / "bad.py").write_text(PROGRAM)
    files, where = metamorphic.REWRITES[rewrite](PROGRAM)
    changed = tmp_path / rewrite
    changed.mkdir()
    for name, text in files.items():
        (changed / name).write_text(text)
    assert _run(changed) == _run(original)
    old = PROGRAM.splitlines()
    for number in (15, 18, 23):  # a line of a class, of a method, of the script
        name, line = where(number)
        new = (changed / name).read_text().splitlines()[line - 1]
        if rewrite == "rename":  # the same statement, its names changed
            assert new.split("=")[0].count(".") == old[number - 1].split("=")[0].count(".") and \
                len(new.split()) == len(old[number - 1].split())
        else:
            assert new.strip() == old[number - 1].strip()


def test_split_puts_the_module_class_and_its_helpers_in_models_py() -> None:
    files, where = metamorphic.split_models(PROGRAM)
    assert "class Net(nn.Module):" in files["models.py"] and "def scale(x):" in files["models.py"]
    assert "from models import scale, Net" in files["bad.py"]
    assert where(15)[0] == "models.py" and where(21)[0] == "bad.py"


def test_rename_leaves_attributes_functions_and_other_libraries_keywords() -> None:
    files, _ = metamorphic.renamed(PROGRAM)
    text = files["bad.py"]
    assert "self.fc = nn.Linear(width" not in text  # `width` is bound by the program: renamed
    assert "self.fc" in text and "def scale(" in text and "round(" in text
    assert "total" not in text.split("print(")[0].splitlines()[-1]


def test_the_script_rewrites_dev_cases_and_refuses_held_out_ones(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    sys.path.insert(0, str(REPO / "scripts"))
    import thread_corpus

    cases = thread_corpus.load_cases()
    dev = next(case.name for case in cases if case.split == "dev" and case.kind == "volatile")
    held_out = next(case.name for case in cases if case.split == "held-out")
    done = subprocess.run([sys.executable, "scripts/metamorphic.py", "--rewrites", "main,rename", "--work",
                           str(tmp_path), dev], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| main | 1 | 0 | 0 | 0 |" in done.stdout and "| rename | 1 | 0 | 0 | 0 |" in done.stdout
    refused = subprocess.run([sys.executable, "scripts/metamorphic.py", held_out], cwd=REPO, capture_output=True,
                             text=True, timeout=600)
    assert refused.returncode == 2 and "only dev cases" in refused.stderr
