"""The thread corpus (eval/threads/): every case well formed, none from a reserved thread,
and a sample of them reproducing their bug under real torch (the whole corpus is verified by
`scripts/thread_corpus.py verify`)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import thread_corpus  # noqa: E402


def test_every_case_is_well_formed():
    cases = thread_corpus.load_cases()
    kinds = thread_corpus.kinds()
    assert {case.kind for case in cases} <= set(kinds)
    for case in cases:
        assert case.split in ("dev", "held-out")
        assert case.bad.read_text(encoding="utf-8") != case.fixed.read_text(encoding="utf-8"), case.name
        assert case.name.startswith(case.kind + "--"), case.name


@pytest.mark.parametrize(("one", "other"), [
    ("https://discuss.pytorch.org/t/some-title/12345", "http://discuss.pytorch.org/t/other-slug/12345/7"),
    ("https://stackoverflow.com/questions/555/why-does", "https://stackoverflow.com/q/555"),
    ("https://github.com/pytorch/pytorch/issues/77#issuecomment-1", "https://www.github.com/PyTorch/pytorch/issues/77/"),
])
def test_one_thread_has_one_normal_form(one, other):
    assert thread_corpus.normalized_url(one) == thread_corpus.normalized_url(other)


def test_a_reserved_thread_is_refused(tmp_path, monkeypatch):
    cases = tmp_path / "cases"
    case = cases / "volatile--discuss-424242"
    case.mkdir(parents=True)
    (case / "bad.py").write_text("import torch\nx = torch.autograd.Variable(torch.ones(1), volatile=True)\n")
    (case / "fixed.py").write_text("import torch\nx = torch.ones(1)\n")
    url = "https://discuss.pytorch.org/t/a-thread/424242"
    (case / "case.toml").write_text(
        f'url = "{url}"\ntitle = "t"\nkind = "volatile"\nshows = "warns"\nexpect = "volatile"\nlines = [2]\n')
    reserved = tmp_path / "reserved.sha256"
    reserved.write_text(hashlib.sha256(b"discuss.pytorch.org/t/424242").hexdigest() + "\n")
    monkeypatch.setattr(thread_corpus, "CASES", cases)
    monkeypatch.setattr(thread_corpus, "RESERVED_HASHES", reserved)
    with pytest.raises(SystemExit, match="reserved for independent evaluation"):
        thread_corpus.load_cases()
    reserved.write_text("")
    assert [c.name for c in thread_corpus.load_cases()] == ["volatile--discuss-424242"]


def test_a_thread_of_a_reserved_repository_is_refused(tmp_path, monkeypatch):
    cases = tmp_path / "cases"
    case = cases / "volatile--gh-someone-project-7"
    case.mkdir(parents=True)
    (case / "bad.py").write_text("import torch\nx = torch.autograd.Variable(torch.ones(1), volatile=True)\n")
    (case / "fixed.py").write_text("import torch\nx = torch.ones(1)\n")
    (case / "case.toml").write_text('url = "https://github.com/Someone/Project/issues/7"\ntitle = "t"\n'
                                    'kind = "volatile"\nshows = "warns"\nexpect = "volatile"\nlines = [2]\n')
    reserved = tmp_path / "reserved.sha256"
    reserved.write_text(hashlib.sha256(b"github.com/someone/project").hexdigest() + "\n")
    monkeypatch.setattr(thread_corpus, "CASES", cases)
    monkeypatch.setattr(thread_corpus, "RESERVED_HASHES", reserved)
    with pytest.raises(SystemExit, match="reserved for independent evaluation"):
        thread_corpus.load_cases()


def test_the_reserved_hashes_cover_the_shared_list():
    """reserved.sha256 is refreshed from ../shared/reserved whenever that list is there."""
    if not thread_corpus.RESERVED_SOURCE.exists():
        pytest.skip("no ../shared/reserved here")
    urls = [line.strip() for line in thread_corpus.RESERVED_SOURCE.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert {thread_corpus.url_hash(url) for url in urls} <= thread_corpus.reserved_hashes()
    if thread_corpus.RESERVED_REPOSITORIES.exists():
        repositories = [line.strip() for line in thread_corpus.RESERVED_REPOSITORIES.read_text().splitlines()
                        if line.strip() and not line.startswith("#")]
        assert {thread_corpus.repository_hash(f"https://github.com/{r}") for r in repositories} \
            <= thread_corpus.reserved_hashes()


def _one_case_per_kind() -> list[str]:
    chosen: dict[str, str] = {}
    for case in thread_corpus.load_cases():
        chosen.setdefault(case.kind, case.name)
    return sorted(chosen.values())


@pytest.mark.parametrize("name", _one_case_per_kind())
def test_a_case_of_each_kind_reproduces_under_torch(name):
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "thread_corpus.py"), "verify", "--jobs", "1", name],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 cases verified" in done.stdout
