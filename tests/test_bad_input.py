"""Files that cannot be linted are reported as TL000 and skipped; the rest is still linted."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys

import pytest

from conftest import run_torchlint
from torchlint.syntax.source import MAX_FILE_BYTES, LineIndex
from torchlint.engine.config import Options, SettingsResolver
from torchlint.engine.discovery import discover
from torchlint.engine.files import lint_path

GOOD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.data)\n"


def tl000(project, *args) -> dict[str, dict]:
    result = project.run("check", "--output-format", "json", *args)
    assert result.returncode == 1, result.stderr
    items = result.json()
    assert any(item["code"] == "TL101" for item in items), "the good file must still be linted"
    return {os.path.basename(item["filename"]): item for item in items if item["code"] == "TL000"}


def test_syntax_error(project) -> None:
    project.write("good.py", GOOD)
    project.write("broken.py", "import torch\n\nx = = torch.ones(1)\nprint(x.data)\n")
    found = tl000(project)["broken.py"]
    assert found["message"].startswith("broken.py was not linted: syntax error")
    assert found["location"]["row"] == 3
    assert found["name"] == "unlintable-file"


def test_python2_print_statement(project) -> None:
    project.write("good.py", GOOD)
    project.write("py2.py", 'print "hello"\n')
    # Reported as a full run reports Python 2 (legacy.py), though no rule has anything to look for.
    assert "py2.py has syntax that Python 3 refuses: print statement (line 1)" in tl000(project)["py2.py"]["message"]
    project.write("broken.py", "def f(:\n")
    assert "syntax error" in tl000(project)["broken.py"]["message"]


def test_not_utf8(project) -> None:
    project.write("good.py", GOOD)
    project.write("latin.py", "# caf\xe9\nx = 1\n".encode("latin-1"))
    found = tl000(project)["latin.py"]
    assert "not valid UTF-8: cannot decode byte 0xe9 at line 1, column 6" in found["message"]
    assert found["location"] == {"row": 1, "column": 6}


def test_coding_cookie_and_bom_are_honoured(project) -> None:
    project.write("latin.py", ("# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\n" + GOOD.split("\n", 1)[1]).encode("latin-1"))
    project.write("bom.py", b"\xef\xbb\xbf" + GOOD.encode())
    found = project.findings()
    assert found == [("bom.py", 3, 7, "TL101"), ("latin.py", 5, 7, "TL101")]


def test_bad_coding_cookie(project) -> None:
    project.write("good.py", GOOD)
    project.write("weird.py", b"# coding: no-such-codec\nx = 1\n")
    assert "encoding" in tl000(project)["weird.py"]["message"]


def test_binary_file(project) -> None:
    project.write("good.py", GOOD)
    project.write("blob.py", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "binary file" in tl000(project)["blob.py"]["message"]


def test_huge_file(project) -> None:
    project.write("good.py", GOOD)
    with open(project.root / "huge.py", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    assert "too large" in tl000(project)["huge.py"]["message"]


def test_vanished_file_as_dangling_symlink(project) -> None:
    project.write("good.py", GOOD)
    os.symlink(project.root / "gone.py", project.root / "link.py")
    assert "file not found" in tl000(project)["link.py"]["message"]


def test_file_removed_between_discovery_and_reading(project) -> None:
    project.write("good.py", GOOD)
    doomed = project.write("doomed.py", GOOD)
    resolver = SettingsResolver(Options(), cwd=project.root)
    found = discover(["."], resolver)
    assert sorted(c.display for c in found.files) == ["doomed.py", "good.py"]
    doomed.unlink()
    reports = {c.display: lint_path(str(c.path), c.display, c.settings.rules_for(c.path)) for c in found.files}
    assert [d.code for d in reports["good.py"].diagnostics] == ["TL101"]
    assert [d.code for d in reports["doomed.py"].diagnostics] == ["TL000"]
    assert "file not found" in reports["doomed.py"].diagnostics[0].message


def test_unreadable_file(project) -> None:
    project.write("good.py", GOOD)
    secret = project.write("secret.py", GOOD)
    secret.chmod(0)
    # As root, torchlint runs without the capability to bypass file permissions.
    result = run_torchlint("check", "--output-format", "json", cwd=project.root, without_root_file_access=True)
    items = {os.path.basename(i["filename"]): i for i in result.json()}
    assert items["good.py"]["code"] == "TL101"
    assert "permission denied" in items["secret.py"]["message"]


def test_unreadable_folder(project) -> None:
    project.write("good.py", GOOD)
    project.write("locked/inside.py", GOOD)
    (project.root / "locked").chmod(0)
    try:
        result = run_torchlint("check", "--output-format", "json", cwd=project.root, without_root_file_access=True)
        items = result.json()
        assert any(i["code"] == "TL101" and i["filename"].endswith("good.py") for i in items)
        locked = [i for i in items if i["code"] == "TL000"]
        assert len(locked) == 1 and "cannot list the folder" in locked[0]["message"]
    finally:
        (project.root / "locked").chmod(stat.S_IRWXU)


@pytest.mark.parametrize("output_format", ["full", "concise", "json"])
def test_tl000_appears_in_every_format(project, output_format) -> None:
    project.write("good.py", GOOD)
    project.write("broken.py", "def f(:\n")
    result = project.run("check", "--output-format", output_format)
    assert result.returncode == 1
    assert "TL000" in result.stdout and "broken.py was not linted: syntax error" in result.stdout
    assert "TL101" in result.stdout


def test_deeply_nested_expression_does_not_crash(project) -> None:
    terms = " + ".join(["x"] * 900)
    project.write("deep.py", f"import torch\nx = torch.ones(1, requires_grad=True)\ny = ({terms}).data\n")
    result = project.run("check", "--output-format", "json")
    assert result.returncode == 1, result.stderr
    assert [item["code"] for item in result.json()] == ["TL101"]


def _refused_depth() -> int:
    """A nesting depth this Python refuses to compile (about 3,000 before 3.13, 10,000 since)."""
    for depth in (3000, 12000, 40000):
        ran = subprocess.run([sys.executable, "-c", f"compile('x' + '.a' * {depth}, 'f', 'exec')"],
                             capture_output=True)
        if ran.returncode != 0:
            return depth
    pytest.skip("this Python compiles any nesting tried")


@pytest.mark.parametrize("shape", ["sum", "attributes"])
def test_nesting_python_refuses_to_compile_is_not_linted(project, shape) -> None:
    """ast accepts more than the compiler (on 3.10, any depth); what `python file.py` refuses
    is TL000, not a file with findings."""
    depth = _refused_depth()
    expression = "(" + " + ".join(["x"] * depth) + ")" if shape == "sum" else "x" + ".data" * depth
    source = f"import torch\nx = torch.ones(1, requires_grad=True)\ny = {expression}.data\n"
    project.write("deep.py", source)
    ran = subprocess.run([sys.executable, "deep.py"], cwd=project.root, capture_output=True, text=True)
    assert ran.returncode != 0 and "RecursionError" in ran.stderr
    result = project.run("check", "--output-format", "json", "--select", "TL101")
    assert result.returncode == 1, result.stderr
    [item] = result.json()
    assert item["code"] == "TL000" and "nested too deeply for Python to compile it" in item["message"]


def test_empty_and_whitespace_files(project) -> None:
    project.write("empty.py", "")
    project.write("blank.py", "\n\n   \n")
    project.write("formfeed.py", "\x0c\nimport torch\n")
    result = project.run("check")
    assert result.returncode == 0, result.stdout


def test_crlf_file_positions(project) -> None:
    project.write("win.py", GOOD.replace("\n", "\r\n").encode())
    assert project.findings() == [("win.py", 3, 7, "TL101")]
    full = project.run("check", "win.py")
    assert "3 | print(w.data)\n" in full.stdout


@pytest.mark.parametrize("text", ["", "x", "x\n", "x\ny", "\n\n", "a\r\nbb\rc\n", "a\rb", "t\u2028u\nv\x0cw\n"])
def test_line_starts_are_where_python_starts_a_line(text) -> None:
    """Only \\r\\n, \\r and \\n end a line (not U+2028 or a form feed), with or without \\r."""
    index = LineIndex(text)
    expected = [0] + [offset + 1 for offset, character in enumerate(text)
                      if character == "\n" or character == "\r" and text[offset + 1:offset + 2] != "\n"]
    assert index.starts == expected
    for offset in range(len(text) + 1):
        row, column = index.position(offset)
        assert index.offset(row, column) == offset


def test_json_output_survives_odd_file_names(project) -> None:
    project.write("we ird\u00e9.py", GOOD)
    result = project.run("check", "--output-format", "json")
    assert json.loads(result.stdout)[0]["filename"].endswith("we ird\u00e9.py")


def test_a_deep_file_is_not_refused_for_what_only_the_compiler_checks(project) -> None:
    """A tree deeper than usual is first compiled, to refuse what CPython's compiler refuses
    for its nesting; a late `from __future__` import, which `ast` accepts and only the
    compiler rejects, must not make such a file TL000 when a shallow one is linted (found
    by the fuzz campaign)."""
    chain = "-" * 2500
    text = ("from __future__ import absolute_import\nimport torch\n"
            f"x = torch.ones(3, requires_grad=True)\ny = {chain}x\nfrom __future__ import division\nprint(x.data)\n")
    try:
        ast.parse(text)
    except (RecursionError, SyntaxError, MemoryError):
        pytest.skip("this Python's own parser refuses the depth")
    project.write("deep.py", text)
    assert project.findings("--select", "TL101") == [("deep.py", 6, 7, "TL101")]
