"""Denial of service from what is linted (issue 40, item 7): star imports that fan out
are resolved in polynomial time, and the language server lints within the CLI's limits,
refuses a buffer over the size limit, keeps answering, and goes when its client goes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_lsp import BAD, LspClient


def _star_import_web(project, modules: int) -> None:
    """A package whose ``__init__`` star-imports its modules two by two in
    ``try/except ImportError``, each module star-importing the package and every other
    module: every name not bound anywhere was looked for along every path of up to 9
    star imports (``modules ** 9``)."""
    names = [f"m{index}" for index in range(modules)]
    project.write("setup.py")
    project.write("pkg/__init__.py", "".join(f"try:\n    from .{first} import *\nexcept ImportError:\n"
                                             f"    from .{second} import *\n"
                                             for first, second in zip(names[::2], names[1::2])))
    for name in names:
        project.write(f"pkg/{name}.py", "from . import *\n" + "".join(f"from .{other} import *\n"
                                                                      for other in names if other != name))
    project.write("pkg/compat.py", "from torch.autograd import Variable as V\n")
    project.write("pkg/m0.py", (project.root / "pkg/m0.py").read_text() + "from .compat import V\n")
    project.write("use.py", "import torch\nfrom pkg import V, missing\n\nx = V(torch.ones(1))\ny = missing(x)\n")


def test_star_imports_between_modules_are_resolved_in_polynomial_time(project):
    _star_import_web(project, 6)
    # Before: __init__.py and use.py were stopped at the limit (6 ** 9 paths).
    found = project.findings("-j1", "--no-cache", "--file-timeout", "20")
    assert found == [("pkg/compat.py", 1, 28, "TL201"), ("use.py", 4, 5, "TL201")]


# --- the language server -------------------------------------------------------------------

def _findings(lines: int) -> str:
    """A text with two findings on each of ``lines`` lines."""
    return "import torch\nx = torch.randn(3, requires_grad=True)\n" + "y = x.data[0] + x.data[1]\n" * lines


SLOW = _findings(20_000)  # 500 KB that take 4 s (a quiet machine) to 15 s (a busy one) and 200 MiB to lint
SLOWER = _findings(100_000)  # 2.5 MB: 18 s or more


def _server(workspace: Path, process_id: int | None = None, options: dict | None = None) -> LspClient:
    client = LspClient(workspace)
    client.request("initialize", {"processId": process_id, "rootUri": workspace.as_uri(), "capabilities": {},
                                  "initializationOptions": options})
    client.notify("initialized", {})
    return client


@pytest.fixture
def servers():
    started: list[LspClient] = []
    yield lambda *args, **kwargs: started.append(_server(*args, **kwargs)) or started[-1]
    for client in started:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()


def _published(client: LspClient, uris: set[str]) -> dict[str, list[dict]]:
    """The diagnostics published for each of ``uris``, in the order they came."""
    found: dict[str, list[dict]] = {}
    while len(found) < len(uris):
        message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] in uris)
        found[message["params"]["uri"]] = message["params"]["diagnostics"]
    return found


def _open(client: LspClient, uri: str, text: str) -> None:
    client.notify("textDocument/didOpen",
                  {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})


def test_a_document_over_the_size_limit_gets_one_diagnostic_and_the_server_goes_on(servers, tmp_path):
    client = servers(tmp_path)
    huge, small = (tmp_path / "huge.py").as_uri(), (tmp_path / "small.py").as_uri()
    # Before: linted whole, for minutes, answering nothing.
    start = time.monotonic()
    [refused] = client.open(huge, "x = [1, 2, 3]\n" * 800_000)  # 11.2 MB
    assert time.monotonic() - start < 15
    assert refused["code"] == "TL000"
    assert "was not linted: the document is too large (10.7 MiB; torchlint skips files over 10 MiB)" \
        in refused["message"]
    assert client.code_actions(huge, None) == []
    assert [d["code"] for d in client.open(small, BAD)] == ["TL203"]


def test_a_document_slow_to_lint_is_stopped_at_the_time_limit_while_others_are_linted(servers, tmp_path):
    client = servers(tmp_path, options={"fileTimeout": 3})
    slow, small = (tmp_path / "slow.py").as_uri(), (tmp_path / "small.py").as_uri()
    _open(client, slow, SLOWER)
    _open(client, small, BAD)
    # Before: the slow one was linted whole (no limit) and only then the small one.
    found = _published(client, {slow, small})
    assert list(found) == [small, slow]
    assert [d["code"] for d in found[small]] == ["TL203"]
    [stopped] = found[slow]
    assert stopped["code"] == "TL000"
    assert "was not linted: took longer than 3 s to lint, so it was stopped" in stopped["message"]
    assert client.code_actions(slow, None) == []  # nothing to fix, and at once
    # The server goes on: a new version of the small buffer is linted.
    assert client.change(small, BAD.replace("loss.data[0]", "loss.item()"), version=2) == []


def test_code_actions_on_many_findings_are_stopped_at_the_time_limit(servers, tmp_path):
    client = servers(tmp_path, options={"fileTimeout": 3})
    uri = (tmp_path / "many.py").as_uri()
    assert len(client.open(uri, _findings(1_500))) == 3_000  # linted within the limit
    # Each fix is checked to compile, with the whole text: over the whole buffer, minutes
    # (before: the server answered nothing meanwhile).
    start = time.monotonic()
    assert client.code_actions(uri, None, only=["quickfix"]) == []
    assert time.monotonic() - start < 15
    assert [d["code"] for d in client.open((tmp_path / "small.py").as_uri(), BAD)] == ["TL203"]


def test_a_document_that_needs_too_much_memory_is_stopped(servers, tmp_path):
    client = servers(tmp_path, options={"fileMemory": 32 << 20})
    uri = (tmp_path / "big.py").as_uri()
    [stopped] = client.open(uri, SLOW)
    assert stopped["code"] == "TL000"
    assert "needed more than 32 MiB of memory to lint, so it was stopped" in stopped["message"]


def test_the_server_exits_when_its_input_closes_during_a_lint(servers, tmp_path):
    client = servers(tmp_path)
    _open(client, (tmp_path / "slow.py").as_uri(), SLOWER)
    time.sleep(0.5)  # the lint is under way
    client.process.stdin.close()
    # Before: it went on linting (18 s or more here) before it read the end.
    assert client.process.wait(timeout=5) == 0


def test_the_server_exits_when_the_process_of_its_client_is_gone(servers, tmp_path):
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    client = servers(tmp_path, process_id=editor.pid)
    _open(client, (tmp_path / "slow.py").as_uri(), SLOWER)
    time.sleep(0.5)
    editor.kill()
    editor.wait()
    # Its input stays open (held by this test): only `processId` tells that the client is gone.
    client.process.wait(timeout=5)
    assert client.process.returncode is not None
