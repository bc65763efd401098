"""Jupyter notebooks through the real CLI: cell-relative findings, IPython magics, noqa,
`--fix` that rewrites only code cells, `--diff`, standard input, malformed notebooks.

Notebooks are written here the way Jupyter writes them (keys sorted, indent 1, non-ASCII
kept, a final newline), with outputs, execution counts, ids and metadata."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import REPO, run_torchlint

EXAMPLE = REPO / "examples" / "notebooks" / "legacy_training.ipynb"

METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.11.7"},
}


def code(source: str, count: int | None = None, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "execution_count": count, "id": f"code-{count}",
            "metadata": {"tags": ["keep"]}, "outputs": outputs or [],
            "source": source.splitlines(keepends=True)}


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "id": f"md-{len(source)}", "metadata": {},
            "source": source.splitlines(keepends=True)}


def stream(text: str) -> dict:
    return {"name": "stdout", "output_type": "stream", "text": text.splitlines(keepends=True)}


def notebook(*cells: dict, metadata: dict | None = None) -> dict:
    return {"cells": list(cells), "metadata": METADATA if metadata is None else metadata,
            "nbformat": 4, "nbformat_minor": 5}


def jupyter_json(content: dict) -> str:
    return json.dumps(content, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def write(project, name: str, content: dict) -> Path:
    path = project.root / name
    path.write_text(jupyter_json(content), encoding="utf-8")
    return path


def assert_valid_notebook(path: Path) -> dict:
    """Still a valid nbformat 4 notebook (checked by nbformat itself when installed)."""
    content = json.loads(path.read_text(encoding="utf-8"))
    assert content["nbformat"] == 4
    try:
        import nbformat
    except ImportError:
        assert all(isinstance(cell["source"], (str, list)) for cell in content["cells"])
    else:
        nbformat.validate(nbformat.read(str(path), as_version=4))
    return content


def with_sources(content: dict, sources: dict[int, str]) -> dict:
    """``content`` with the sources of some cells (1-based) replaced, as Jupyter would save it."""
    changed = copy.deepcopy(content)
    for number, source in sources.items():
        changed["cells"][number - 1]["source"] = source.splitlines(keepends=True)
    return changed


# A tensor made in cell 2 is read through `.data` in cell 4 (cell 3 is markdown).
TRAINING = notebook(
    markdown("# Training\n"),
    code("import torch\nx = torch.rand(3, requires_grad=True)", 1),
    markdown("Now the legacy bits:\n"),
    code("y = x.data\nloss = (x * 2).sum()\nloss.backward()\nprint(loss.data[0])", 2,
         [{"ename": "IndexError", "evalue": "invalid index of a 0-dim tensor", "output_type": "error",
           "traceback": ["IndexError: invalid index of a 0-dim tensor"]}]),
    code("print(x.grad)", 3, [stream("tensor([2., 2., 2.])\n")]),
)


def test_findings_are_located_in_cells(project) -> None:
    write(project, "train.ipynb", TRAINING)
    result = project.run("check", "--isolated", "--output-format", "concise", "train.ipynb")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[:2] == [
        "train.ipynb:cell 4:1:5: TL101 `x.data` is an alias autograd does not track; use `x.detach()`",
        "train.ipynb:cell 4:4:7: TL203 [*] `loss.data[0]` raises IndexError on a 0-dim tensor since "
        "PyTorch 0.5; use `loss.item()`",
    ]


def test_json_keeps_the_notebook_as_filename_and_adds_the_cell(project) -> None:
    path = write(project, "train.ipynb", TRAINING)
    items = project.run("check", "--isolated", "--output-format", "json", "train.ipynb").json()
    assert [(item["code"], item["cell"], item["location"]) for item in items] == [
        ("TL101", 4, {"row": 1, "column": 5}),
        ("TL203", 4, {"row": 4, "column": 7}),
    ]
    assert {item["filename"] for item in items} == {str(path)}
    # The evidence names the earlier cell the tensor comes from, with its row there.
    assert items[0]["evidence"] == [{
        "message": "`x` = `torch.rand(3, requires_grad=True)`, which returns a tensor [cell 2]",
        "location": {"row": 2, "column": 5},
    }]
    assert items[1]["fix"]["edits"][0]["location"] == {"row": 4, "column": 7}


def test_full_output_shows_the_line_of_the_cell(project) -> None:
    write(project, "train.ipynb", TRAINING)
    result = project.run("check", "--isolated", "--select", "TL203", "train.ipynb")
    assert "train.ipynb:cell 4:4:7: TL203" in result.stdout
    assert "4 | print(loss.data[0])\n" in result.stdout


def test_python_files_have_no_cell_key(project) -> None:
    project.write("a.py", "import torch\nx = torch.rand(3, requires_grad=True)\ny = x.data\n")
    [item] = project.run("check", "--isolated", "--output-format", "json", "a.py").json()
    assert "cell" not in item


def test_cell_numbers_go_past_nine_in_order(project) -> None:
    cells = [code("import torch\nx = torch.rand(3, requires_grad=True)", 1)]
    cells += [markdown(f"step {i}\n") for i in range(9)]
    cells += [code("y = x.data", 2), code("z = x.data", 3)]
    write(project, "long.ipynb", notebook(*cells))
    result = project.run("check", "--isolated", "--output-format", "concise", "long.ipynb")
    assert [line.split(": ")[0] for line in result.stdout.splitlines()[:2]] == [
        "long.ipynb:cell 11:1:5", "long.ipynb:cell 12:1:5"]


MAGICS = notebook(
    code("%matplotlib inline\nimport torch\n!pip install tqdm\nfiles = !ls\ntorch.rand?\n"
         "x = torch.rand(3, requires_grad=True)", 1),
    code("%%time\nfor i in range(2):\n    %time y = i\n    w = (x\n         % 2)\n    v = x.data\n"
         "!echo one \\\n  two", 2, [stream("CPU times: user 3 us\n")]),
    code("%%bash\necho x.data\n", 3, [stream("x.data\n")]),
    code("x.data?\n%timeit x.data\nz = x.data", 4),
)


def test_magics_do_not_break_parsing_and_are_never_reported(project) -> None:
    write(project, "magic.ipynb", MAGICS)
    items = project.run("check", "--isolated", "--output-format", "json", "magic.ipynb").json()
    assert [(item["cell"], item["location"]["row"], item["location"]["column"], item["code"])
            for item in items] == [
        (2, 6, 9, "TL101"),  # `v = x.data` under %%time, after a `%` that is the modulo operator
        (4, 3, 5, "TL101"),  # `z = x.data`; not the magic lines above it, nor the %%bash cell
    ]


def test_fix_keeps_magics_exactly(project) -> None:
    path = write(project, "magic.ipynb", MAGICS)
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "magic.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = with_sources(MAGICS, {
        2: "%%time\nfor i in range(2):\n    %time y = i\n    w = (x\n         % 2)\n    v = x.detach()\n"
           "!echo one \\\n  two",
        4: "x.data?\n%timeit x.data\nz = x.detach()",
    })
    assert path.read_text(encoding="utf-8") == jupyter_json(expected)


def test_noqa_in_a_cell(project) -> None:
    write(project, "nb.ipynb", notebook(
        code("import torch\nx = torch.rand(3, requires_grad=True)", 1),
        code("y = x.data  # noqa: TL101\nz = x.data  # noqa: TL203\n", 2),
    ))
    assert project.findings("--isolated", "nb.ipynb") == [("nb.ipynb", 2, 5, "TL101")]
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "nb.ipynb")
    content = json.loads((project.root / "nb.ipynb").read_text())
    assert content["cells"][1]["source"] == ["y = x.data  # noqa: TL101\n", "z = x.detach()  # noqa: TL203\n"]
    assert result.returncode == 0


def test_fix_rewrites_only_the_code_cells(project) -> None:
    path = write(project, "train.ipynb", TRAINING)
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "train.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found 2 findings (2 fixed, 0 remaining)." in result.stdout
    fixed = assert_valid_notebook(path)
    # Outputs, execution counts, ids, metadata, markdown and the JSON layout stay as they were.
    expected = with_sources(TRAINING, {4: "y = x.detach()\nloss = (x * 2).sum()\nloss.backward()\nprint(loss.item())"})
    assert fixed == expected
    assert path.read_text(encoding="utf-8") == jupyter_json(expected)
    assert project.run("check", "--isolated", "train.ipynb").returncode == 0


def test_a_first_cell_that_starts_with_a_byte_order_mark_is_fixed_as_it_is_linted(project) -> None:
    """Linting skips one leading U+FEFF as Python skips it in a file; the check of the fix
    compiled the cells with it and refused every fix of such a notebook (a fuzz campaign)."""
    path = write(project, "bom.ipynb", notebook(code("\ufeffimport torch\nx = torch.zeros(3)\ny = x.data")))
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "bom.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    [cell] = assert_valid_notebook(path)["cells"]
    assert "".join(cell["source"]) == "\ufeffimport torch\nx = torch.zeros(3)\ny = x.detach()"


def test_fix_adds_the_import_to_the_first_cell(project) -> None:
    path = write(project, "nb.ipynb", notebook(
        markdown("Legacy\n"),
        code("from torch.autograd import Variable\nimport numpy as np", 1),
        code("v = Variable(np.ones(3))", 2),
    ))
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "nb.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    sources = ["".join(cell["source"]) for cell in assert_valid_notebook(path)["cells"]]
    assert sources == ["Legacy\n", "import numpy as np", "v = np.ones(3)"]


def test_diff_is_per_cell(project) -> None:
    path = write(project, "train.ipynb", TRAINING)
    original = path.read_bytes()
    result = project.run("check", "--isolated", "--diff", "train.ipynb")
    assert result.returncode == 1
    assert path.read_bytes() == original  # --diff writes nothing
    # One unified diff per changed cell, named as the findings name it, of the cell's code.
    assert result.stdout.startswith("--- train.ipynb:cell 4\n+++ train.ipynb:cell 4\n@@ ")
    assert "\n-print(loss.data[0])\n+print(loss.item())" in result.stdout
    assert '"source"' not in result.stdout and result.stdout.count("--- ") == 1
    assert "Would fix 1 finding in 1 file." in result.stderr
    # It is what --fix writes into that cell.
    project.run("check", "--isolated", "--fix", "train.ipynb")
    fixed = json.loads(path.read_text())
    assert "".join(fixed["cells"][3]["source"]).endswith("print(loss.item())")


def test_stdin_notebook(project) -> None:
    data = jupyter_json(TRAINING).encode()
    result = project.run("check", "--isolated", "--output-format", "concise", "--stdin-filename", "train.ipynb",
                         "-", stdin=data)
    assert result.returncode == 1
    assert result.stdout.startswith("train.ipynb:cell 4:1:5: TL101")
    fixed = project.run("check", "--isolated", "--fix", "--stdin-filename", "train.ipynb", "-", stdin=data)
    assert fixed.returncode == 1, fixed.stderr  # TL101 remains (its fix is unsafe)
    assert json.loads(fixed.stdout) == with_sources(
        TRAINING, {4: "y = x.data\nloss = (x * 2).sum()\nloss.backward()\nprint(loss.item())"})
    assert "train.ipynb:cell 4:1:5: TL101" in fixed.stderr


def test_a_cell_that_does_not_parse_is_reported_and_the_rest_linted(project) -> None:
    write(project, "nb.ipynb", notebook(
        code("import torch\nx = torch.rand(3, requires_grad=True)", 1),
        code("def broken(:\n    pass", 2),
        code("pip install torch", 3),
        code("y = x.data", 4),
    ))
    result = project.run("check", "--isolated", "--output-format", "concise", "nb.ipynb")
    assert result.returncode == 1
    assert result.stdout.splitlines()[:3] == [
        "nb.ipynb:cell 2:1:12: TL000 nb.ipynb:cell 2 was not linted: syntax error: invalid syntax",
        "nb.ipynb:cell 3:1:5: TL000 nb.ipynb:cell 3 was not linted: syntax error: invalid syntax",
        "nb.ipynb:cell 4:1:5: TL101 `x.data` is an alias autograd does not track; use `x.detach()`",
    ]


@pytest.mark.parametrize("content, reason", [
    (b'{"cells": [}', "bad.ipynb:1:12: TL000 bad.ipynb was not linted: not a notebook: invalid JSON: Expecting value"),
    (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}',
     "bad.ipynb:1:1: TL000 bad.ipynb was not linted: not an nbformat 4 notebook (nbformat: 3)"),
    (b"[1, 2]", "bad.ipynb:1:1: TL000 bad.ipynb was not linted: not a notebook: the JSON is not an object"),
    (json.dumps({"cells": [{"cell_type": "code", "source": 3, "metadata": {}, "outputs": []}],
                 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(),
     "bad.ipynb:1:1: TL000 bad.ipynb was not linted: cell 1: `source` is not a string or a list of strings"),
    (b"\xff\xfe{}", "bad.ipynb:1:1: TL000 bad.ipynb was not linted: not a notebook: it is not valid UTF-8"),
])
@pytest.mark.parametrize("mode", [(), ("--fix",)])
def test_malformed_notebooks_are_not_linted(project, content: bytes, reason: str, mode) -> None:
    path = project.write("bad.ipynb", content)
    result = project.run("check", "--isolated", "--output-format", "concise", *mode, "bad.ipynb")
    assert result.returncode == 1
    assert result.stdout.startswith(reason), result.stdout
    assert path.read_bytes() == content


def test_other_layouts_are_kept_byte_for_byte(project) -> None:
    """Indent 2, CRLF line breaks, \\u escapes, unsorted keys: written back the same way."""
    content = notebook(code("import torch  # é\r\nx = torch.rand(3, requires_grad=True)\r\nl = x.sum()\r\n"
                            "print(l.data[0])", 1), metadata={"language_info": {"name": "python"}, "a": 1})
    content["cells"][0] = dict(reversed(list(content["cells"][0].items())))

    def dump(value: dict) -> bytes:
        return (json.dumps(value, indent=2, ensure_ascii=True) + "\n").replace("\n", "\r\n").encode()

    path = project.write("nb.ipynb", dump(content))
    result = project.run("check", "--isolated", "--fix", "nb.ipynb")
    assert result.returncode == 0, result.stdout + result.stderr
    content["cells"][0]["source"][-1] = "print(l.item())"
    assert path.read_bytes() == dump(content)


def test_a_layout_that_cannot_be_reproduced_is_not_rewritten(project) -> None:
    content = notebook(code("import torch\nl = torch.rand(3).sum()\nprint(l.data[0])", 1))
    path = project.write("nb.ipynb", json.dumps(content, indent=3) + "\n")
    before = path.read_bytes()
    result = project.run("check", "--isolated", "--fix", "nb.ipynb")
    assert result.returncode == 2
    assert "nb.ipynb: not fixed, file left unchanged: its JSON layout cannot be reproduced exactly" in result.stderr
    assert path.read_bytes() == before


def test_top_level_await_is_fixed_as_ipython_runs_it(project) -> None:
    # IPython awaits at top level; the fix is verified cell by cell, with that allowed.
    path = write(project, "nb.ipynb", notebook(
        code("import asyncio, torch\nl = torch.rand(3).sum()", 1),
        code("await asyncio.sleep(0)\nprint(l.data[0])", 2),
    ))
    assert project.findings("--isolated", "nb.ipynb") == [("nb.ipynb", 2, 7, "TL203")]
    result = project.run("check", "--isolated", "--fix", "nb.ipynb")
    assert result.returncode == 0, result.stderr
    assert json.loads(path.read_text())["cells"][1]["source"] == ["await asyncio.sleep(0)\n", "print(l.item())"]


def test_a_late_future_import_starting_a_cell_is_fixed(project) -> None:
    # Legal in IPython (each cell is compiled alone), not in one module of all the cells;
    # the future import holds in the cells after it.
    path = write(project, "nb.ipynb", notebook(
        code("import torch\nl = torch.rand(3).sum()", 1),
        code("from __future__ import annotations\ndef f(x: Later) -> None:\n    print(l.data[0])", 2),
        code("def g(y: AlsoLater) -> None:\n    print(l.data[0])", 3),
    ))
    result = project.run("check", "--isolated", "--fix", "nb.ipynb")
    assert result.returncode == 0, result.stderr
    cells = json.loads(path.read_text())["cells"]
    assert cells[1]["source"][-1] == "    print(l.item())"
    assert cells[2]["source"][-1] == "    print(l.item())"
    assert_valid_notebook(path)


def test_a_cell_that_does_not_compile_gets_a_clear_fix_error(project) -> None:
    path = write(project, "nb.ipynb", notebook(
        code("import torch\nl = torch.rand(3).sum()", 1),
        code("print(l.data[0])\nbreak", 2),
    ))
    assert project.findings("--isolated", "nb.ipynb") == [("nb.ipynb", 1, 7, "TL203")]
    result = project.run("check", "--isolated", "--fix", "nb.ipynb")
    assert result.returncode == 2
    assert "cell 2 does not compile as it is (line 2: 'break' outside loop)" in result.stderr
    assert json.loads(path.read_text())["cells"][1]["source"][0] == "print(l.data[0])\n"


def test_notebooks_of_other_languages_are_skipped(project) -> None:
    write(project, "r.ipynb", notebook(code("x <- c(1, 2)\nx.data", 1),
                                       metadata={"kernelspec": {"language": "R", "name": "ir"}}))
    result = project.run("check", "--isolated", "r.ipynb")
    assert result.returncode == 0, result.stdout


def test_folders_include_notebooks_but_not_checkpoints(project) -> None:
    write(project, "train.ipynb", TRAINING)
    (project.root / ".ipynb_checkpoints").mkdir()
    write(project, ".ipynb_checkpoints/train-checkpoint.ipynb", TRAINING)
    project.write("model.py", "import torch\n")
    assert project.run("check", "--show-files").stdout.splitlines() == ["model.py", "train.ipynb"]
    # Also when `exclude` replaces the default exclusions (which list .ipynb_checkpoints).
    shown = project.run("check", "--isolated", "--exclude", "build", "--show-files").stdout.splitlines()
    assert shown == ["model.py", "train.ipynb"]


def test_the_example_notebook() -> None:
    """examples/notebooks/legacy_training.ipynb: the seed's training loop, split into cells,
    with the outputs Jupyter recorded (the IndexError included)."""
    result = run_torchlint("check", "--isolated", "--output-format", "json", str(EXAMPLE))
    assert result.returncode == 1, result.stderr
    found = [(item["cell"], item["location"]["row"], item["location"]["column"], item["code"])
             for item in result.json()]
    assert found == [(5, 8, 21, "TL203"), (5, 10, 39, "TL203"), (5, 10, 64, "TL203")]


def test_fixing_the_example_notebook(tmp_path: Path) -> None:
    path = tmp_path / EXAMPLE.name
    path.write_bytes(EXAMPLE.read_bytes())
    result = run_torchlint("check", "--isolated", "--fix", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    before, after = json.loads(EXAMPLE.read_text()), assert_valid_notebook(path)
    changed = [number for number, (old, new) in enumerate(zip(before["cells"], after["cells"]), 1) if old != new]
    assert changed == [5]
    assert {k: v for k, v in after["cells"][4].items() if k != "source"} == \
        {k: v for k, v in before["cells"][4].items() if k != "source"}
    assert after["cells"][4]["source"][-1] == \
        '    print("step", step, "loss %.3f" % loss.item(), "penalty", penalty.item())'
    assert after["metadata"] == before["metadata"]


# --- the runtime check runs a notebook's code cells in order, like a script ------------------

RUNTIME = notebook(
    code("%matplotlib inline\nimport torch\nw = torch.ones(3, requires_grad=True)\nloss = (w * 2).sum()", 1),
    markdown("# Training\n"),
    code("loss.backward()\nprint(loss.data[0])", 2),
    code("x = torch.Tensor(5)\nprint(x.sum())", 3),
)


def test_runtime_runs_the_cells_in_order_and_names_them(project) -> None:
    pytest.importorskip("torch")
    path = write(project, "train.ipynb", RUNTIME)
    before = path.read_bytes()
    items = project.run("check", "--isolated", "--runtime", "--output-format", "json", "train.ipynb").json()
    verdicts = {(item["code"], item["cell"], item["location"]["row"]): item["runtime"] for item in items}
    assert set(verdicts) == {("TL203", 3, 2), ("TL204", 4, 1)}
    indexed = verdicts[("TL203", 3, 2)]
    assert indexed["verdict"] == "CONFIRMED" and "IndexError" in indexed["evidence"], indexed
    # Cell 3 stops the run; it runs again with its fix to reach cell 4, and says so in cells.
    uninitialized = verdicts[("TL204", 4, 1)]
    assert uninitialized["verdict"] == "CONFIRMED", uninitialized
    assert "`x.sum()` (cell 4, line 2) read 5 of 5 values" in uninitialized["evidence"]
    assert uninitialized["evidence"].endswith("(after fixing cell 3, line 2)")
    assert path.read_bytes() == before


def test_runtime_names_the_cell_a_run_stopped_in(project) -> None:
    pytest.importorskip("torch")
    write(project, "stops.ipynb", notebook(
        code("import torch\nraise RuntimeError('no data folder')", 1),
        code("x = torch.Tensor(2, 3)\nprint(x.mean())", 2),
    ))
    [item] = project.run("check", "--isolated", "--runtime", "--output-format", "json", "stops.ipynb").json()
    assert item["cell"] == 2
    assert item["runtime"]["verdict"] == "COULD NOT RUN"
    assert item["runtime"]["evidence"].startswith(
        "cell 2, line 1 never executed (the run stopped at cell 1, line 2 with RuntimeError: no data folder)")
