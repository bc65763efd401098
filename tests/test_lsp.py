"""`torchlint server`: a real LSP client over stdio against `python -m torchlint server`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import run_torchlint

pytest.importorskip("pygls")

TIMEOUT = 20

BAD = """\
import torch

x = torch.randn(3, requires_grad=True)
loss = x.sum()
print(loss.data[0])
"""
GOOD = BAD.replace("loss.data[0]", "loss.item()")


class LspClient:
    """JSON-RPC 2.0 with Content-Length framing over the server's pipes."""

    def __init__(self, cwd: Path):
        environment = dict(os.environ)
        environment.pop("GITHUB_ACTIONS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "torchlint", "server"], cwd=cwd, env=environment,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body.decode("utf-8")))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params) -> object:
        self.next_id += 1
        request_id = self.next_id
        self.send({"id": request_id, "method": method, "params": params})
        message = self.wait(lambda m: m.get("id") == request_id and "method" not in m)
        assert "error" not in message, message
        return message["result"]

    def wait(self, matches) -> dict:
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
            if matches(message):
                return message

    def diagnostics(self, uri: str) -> list[dict]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri)
        return message["params"]["diagnostics"]

    def open(self, uri: str, text: str) -> list[dict]:
        self.notify("textDocument/didOpen",
                    {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        return self.diagnostics(uri)

    def change(self, uri: str, text: str, version: int) -> list[dict]:
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"text": text}]})
        return self.diagnostics(uri)

    def code_actions(self, uri: str, diagnostic: dict | None, only: list[str] | None = None) -> list[dict]:
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}}
        context: dict = {"diagnostics": [diagnostic] if diagnostic else []}
        if only:
            context["only"] = only
        return self.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": diagnostic["range"] if diagnostic else whole,
            "context": context,
        })


def apply_workspace_edit(text: str, uri: str, edit: dict) -> str:
    """What an editor does: apply the TextEdits (UTF-16 positions), last first."""
    lines = text.splitlines(keepends=True) or [""]

    def offset(position: dict) -> int:
        before = sum(len(line) for line in lines[: position["line"]])
        line = lines[position["line"]] if position["line"] < len(lines) else ""
        units = column = 0
        while column < len(line) and units < position["character"]:
            units += len(line[column].encode("utf-16-le")) // 2
            column += 1
        return before + column

    edits = sorted(edit["changes"][uri], key=lambda e: offset(e["range"]["start"]), reverse=True)
    for text_edit in edits:
        start, end = offset(text_edit["range"]["start"]), offset(text_edit["range"]["end"])
        text = text[:start] + text_edit["newText"] + text[end:]
    return text


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lsp")


@pytest.fixture(scope="module")
def client(workspace):
    lsp = LspClient(workspace)
    result = lsp.request("initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(),
                                        "capabilities": {}})
    assert result["capabilities"]["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.fixAll.torchlint"]
    lsp.notify("initialized", {})
    yield lsp
    if lsp.process.poll() is None:
        lsp.process.kill()
        lsp.process.wait()


def uri_of(workspace: Path, name: str) -> str:
    return (workspace / name).as_uri()


def test_diagnostics_follow_the_buffer(client, workspace):
    uri = uri_of(workspace, "buffer.py")  # never written: the buffer is linted, not the disk
    [diagnostic] = client.open(uri, BAD)
    assert diagnostic["code"] == "TL203"
    assert diagnostic["range"] == {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 18}}
    assert diagnostic["severity"] == 2
    assert diagnostic["source"] == "torchlint"
    assert diagnostic["codeDescription"]["href"].endswith("/docs/rules/TL203-data-index-scalar.md")
    assert "loss.item()" in diagnostic["message"]
    # The evidence, located: "`loss` = `x.sum()`" points at `x.sum()` on line 4.
    related = {item["message"]: item["location"] for item in diagnostic["relatedInformation"]}
    at_sum = {"line": 3, "character": 7}
    assert related["`loss` = `x.sum()`"] == {"uri": uri, "range": {"start": at_sum, "end": at_sum}}

    assert client.change(uri, GOOD, version=2) == []
    assert len(client.change(uri, BAD, version=3)) == 1
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri)] == ["TL203"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []


def test_related_notes_point_at_their_place(client, workspace):
    uri = uri_of(workspace, "related.py")
    text = "import torch\n\nx = torch.rand(2, requires_grad=True)\ny = x.data\ny[0] = 0.5\n"
    diagnostics = client.open(uri, text)
    [write] = [d for d in diagnostics if d["code"] == "TL102"]
    related = {item["message"]: item["location"]["range"]["start"] for item in write["relatedInformation"]}
    assert related["`y` = `x.data` here"] == {"line": 3, "character": 4}


def test_columns_are_utf16_code_units(client, workspace):
    uri = uri_of(workspace, "emoji.py")
    [diagnostic] = client.open(uri, BAD.replace("print(loss", 'print("😋é", loss'))
    # `print("` is 7 units, 😋 is 2 (a surrogate pair), é 1, `", ` 3.
    assert diagnostic["range"]["start"] == {"line": 4, "character": 13}
    assert diagnostic["range"]["end"] == {"line": 4, "character": 25}


def test_quick_fix_removes_the_finding(client, workspace):
    uri = uri_of(workspace, "quickfix.py")
    text = BAD.replace("print(loss", 'print("😋", loss')
    [diagnostic] = client.open(uri, text)
    actions = client.code_actions(uri, diagnostic)
    [fix] = [action for action in actions if action["title"].startswith("Fix: ")]
    assert fix["kind"] == "quickfix" and fix["isPreferred"] is True
    assert fix["diagnostics"][0]["code"] == "TL203"
    fixed = apply_workspace_edit(text, uri, fix["edit"])
    assert fixed == text.replace("loss.data[0]", "loss.item()")
    compile(fixed, "quickfix.py", "exec")
    assert client.change(uri, fixed, version=2) == []


def test_fix_all_equals_check_fix(client, workspace):
    uri = uri_of(workspace, "fixall.py")
    text = BAD + "\ny = x.mean()\nvalues = [loss.data[0], y.data[0]]\n"
    assert len(client.open(uri, text)) == 3
    [action] = client.code_actions(uri, None, only=["source.fixAll"])
    assert action["title"] == "Fix all safe fixes in this file"
    assert action["kind"] == "source.fixAll.torchlint"
    fixed = apply_workspace_edit(text, uri, action["edit"])
    cli = run_torchlint("check", "--fix", "--stdin-filename", "fixall.py", "-", cwd=workspace,
                        stdin=text.encode("utf-8"))
    assert fixed == cli.stdout
    assert fixed != text
    assert client.change(uri, fixed, version=2) == []
    # Nothing left to fix: no fix-all action.
    assert client.code_actions(uri, None, only=["source.fixAll.torchlint"]) == []


def test_ignore_action_adds_or_extends_noqa(client, workspace):
    uri = uri_of(workspace, "ignore.py")
    [diagnostic] = client.open(uri, BAD)
    [ignore] = [a for a in client.code_actions(uri, diagnostic) if a["title"] == "Ignore TL203 on this line"]
    ignored = apply_workspace_edit(BAD, uri, ignore["edit"])
    assert ignored.splitlines()[4] == "print(loss.data[0])  # noqa: TL203"
    assert client.change(uri, ignored, version=2) == []

    extended_source = BAD.replace("print(loss.data[0])", "print(loss.data[0])  # keep # noqa: TL101")
    [diagnostic] = client.change(uri, extended_source, version=3)
    [ignore] = [a for a in client.code_actions(uri, diagnostic) if a["title"] == "Ignore TL203 on this line"]
    extended = apply_workspace_edit(extended_source, uri, ignore["edit"])
    assert extended.splitlines()[4] == "print(loss.data[0])  # keep # noqa: TL101, TL203"
    assert client.change(uri, extended, version=4) == []


def test_unparsable_buffer_gets_tl000_and_the_server_goes_on(client, workspace):
    uri = uri_of(workspace, "broken.py")
    [diagnostic] = client.open(uri, "import torch\ndef f(:\n    pass\n")
    assert diagnostic["code"] == "TL000"
    assert diagnostic["range"]["start"]["line"] == 1
    assert "syntax error" in diagnostic["message"]
    assert client.code_actions(uri, diagnostic) == []
    assert [d["code"] for d in client.change(uri, BAD, version=2)] == ["TL203"]


def test_findings_stay_marked_stale_while_the_buffer_does_not_parse(client, workspace):
    uri = uri_of(workspace, "typing.py")
    [finding] = client.open(uri, BAD)
    assert finding["code"] == "TL203" and finding["severity"] == 2
    typing = BAD + "def half(:\n"  # the user is typing: the buffer does not parse for a moment
    found = client.change(uri, typing, version=2)
    assert sorted(d["code"] for d in found) == ["TL000", "TL203"]
    [stale] = [d for d in found if d["code"] == "TL203"]
    assert stale["message"].endswith("(stale: from before the syntax error)")
    assert stale["severity"] == 3 and stale["range"] == finding["range"]
    # Parsing again: the fresh findings, nothing stale.
    [fresh] = client.change(uri, BAD + "def half(x):\n    return x / 2\n", version=3)
    assert fresh["code"] == "TL203" and "stale" not in fresh["message"]
    # A file that never parsed has nothing to keep.
    [only] = client.open(uri_of(workspace, "never.py"), "def f(:\n")
    assert only["code"] == "TL000"


def test_configuration_of_the_files_folder_applies(client, workspace):
    project = workspace / "configured"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL203"]\n')
    assert client.open(uri_of(project, "quiet.py"), BAD) == []
    # The server runs for hours: an edited configuration applies to the next lint.
    (project / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL101"]\n')
    assert [d["code"] for d in client.change(uri_of(project, "quiet.py"), BAD, version=2)] == ["TL203"]


def test_shutdown_and_exit(workspace):
    lsp = LspClient(workspace)
    lsp.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    lsp.notify("initialized", {})
    assert lsp.request("shutdown", None) is None
    lsp.notify("exit", None)
    assert lsp.process.wait(timeout=TIMEOUT) == 0


def test_a_notebook_open_in_the_editor_gets_findings_on_its_cells(client, workspace):
    """Notebook documents (LSP 3.17): the code cells are linted as one module, as `check`
    lints an .ipynb file, and each cell gets its own findings; a markdown cell gets none."""
    notebook = (workspace / "train.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{notebook[len('file:'):]}#cell{index}" for index in range(3)]
    texts = ["import torch\nx = torch.randn(3, requires_grad=True)\nloss = x.sum()",
             "# Training\nSome *text*.",
             "%matplotlib inline\nprint(loss.data[0])\ny = x.data"]
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1, "cells": [
            {"kind": 2, "document": cells[0]}, {"kind": 1, "document": cells[1]}, {"kind": 2, "document": cells[2]}]},
        "cellTextDocuments": [{"uri": uri, "languageId": "python" if index != 1 else "markdown", "version": 1,
                               "text": text} for index, (uri, text) in enumerate(zip(cells, texts))],
    })
    published = {}
    for _ in range(2):  # one notification per code cell
        message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] in cells)
        published[message["params"]["uri"]] = message["params"]["diagnostics"]
    assert published[cells[0]] == []
    found = sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
                   for d in published[cells[2]])
    assert found == [("TL101", 2, 4), ("TL203", 1, 6)]  # rows of the cell, the magic line kept
    # Fixing the cell clears it.
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": notebook, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cells[2], "version": 2}, "changes": [
            {"text": "%matplotlib inline\nprint(loss.item())\ny = x.detach()"}]}]}},
    })
    while True:
        message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] == cells[2])
        if not message["params"]["diagnostics"]:
            break


def test_code_actions_on_a_notebook_cell_fix_and_ignore_what_the_cell_shows(client, workspace):
    """A cell's quick fixes and `# noqa` edit that cell (what `check --fix` would write
    there); fix-all edits every cell it changes; a finding of another cell offers nothing."""
    notebook = (workspace / "actions.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{notebook[len('file:'):]}#cell{index}" for index in range(2)]
    texts = ["import torch\nx = torch.randn(3, requires_grad=True)\nprint(x.data)",
             "%matplotlib inline\nprint(x.data.shape)"]
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1, "cells": [
            {"kind": 2, "document": uri} for uri in cells]},
        "cellTextDocuments": [{"uri": uri, "languageId": "python", "version": 1, "text": text}
                              for uri, text in zip(cells, texts)],
    })
    published = {}
    while len(published) < 2:
        message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] in cells)
        published[message["params"]["uri"]] = message["params"]["diagnostics"]
    [in_first] = published[cells[0]]
    assert in_first["code"] == "TL101"
    actions = client.code_actions(cells[0], in_first, only=["quickfix"])
    assert [action["title"] for action in actions] == ["Fix: Replace with `x.detach()`", "Ignore TL101 on this line"]
    fix, ignore = actions
    assert list(fix["edit"]["changes"]) == [cells[0]]
    assert apply_workspace_edit(texts[0], cells[0], fix["edit"]) == texts[0].replace("x.data", "x.detach()")
    assert apply_workspace_edit(texts[0], cells[0], ignore["edit"]) == texts[0] + "  # noqa: TL101"
    # The finding of the second cell, asked of the first cell: nothing.
    [in_second] = published[cells[1]]
    assert client.code_actions(cells[0], in_second, only=["quickfix"]) == []
    # Fix-all: both cells change, the magic line stays.
    [fix_all] = client.code_actions(cells[1], None, only=["source.fixAll.torchlint"])
    assert fix_all["title"] == "Fix all safe fixes in this notebook"
    changed = fix_all["edit"]["changes"]
    assert sorted(changed) == sorted(cells)
    assert apply_workspace_edit(texts[0], cells[0], {"changes": {cells[0]: changed[cells[0]]}}) == \
        texts[0].replace("x.data", "x.detach()")
    second = apply_workspace_edit(texts[1], cells[1], {"changes": {cells[1]: changed[cells[1]]}})
    assert second == "%matplotlib inline\nprint(x.shape)"
