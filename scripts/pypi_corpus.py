"""Download released packages from PyPI and unpack their Python files, to lint real code.

Files come from the index's simple API and are checked against its sha256; nothing
from a package is ever executed (no `setup.py`, no build).  Everything lands in
`corpus/` (git-ignored), and downloads are reused on later runs.

    python scripts/pypi_corpus.py allennlp==0.5.0 timm==1.0.11
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import io
import re
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"
INDEX = "https://pypi.org/simple/{name}/"

LEGACY = [
    "allennlp==0.5.0", "pyro-ppl==0.1.2", "torchtext==0.2.3", "pretrainedmodels==0.7.4",
    "torchnet==0.0.4", "pytorch-pretrained-bert==0.6.2", "torchvision==0.2.0",
]
# More code of the PyTorch 0.3/0.4 era, added to the labelled evaluation set because it is
# dense in the idioms the packages above have few of (volatile, `.data =`, `loss.data[0]`).
MORE_LEGACY = [
    "fastai==0.7.0", "allennlp==0.3.0", "skorch==0.1.0.post1", "sru==2.0.0",
    "pytorch-pretrained-biggan==0.1.0", "torchfcn==1.7.0",
    # Chosen by era, not by findings, to measure TL203 (`loss.data[0]`) on more sites: every
    # trainer released on PyPI before PyTorch 0.4 (Apr 2018) that was checked and ships its
    # training loop: inferno (2017-08), pyprob (2017-10), cogitare (2018-02), PyToune (2018-03).
    "inferno-pytorch==0.1.7", "pyprob==0.10.0.dev2", "cogitare==0.1.0", "pytoune==0.2.1",
]
MODERN = ["timm==1.0.11", "transformers==4.46.0", "deepspeed==0.16.4"]


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data):
        if self._href:
            self.links.append((data.strip(), self._href))
            self._href = None


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _choose(links: list[tuple[str, str]], name: str, version: str) -> tuple[str, str]:
    stem = re.sub(r"[-_.]+", "[-_.]", re.escape(name).replace("\\", ""))
    pattern = re.compile(rf"^{stem}-{re.escape(version)}(-|\.tar\.gz$|\.zip$)", re.IGNORECASE)
    candidates = [(filename, url) for filename, url in links if pattern.match(filename)]
    for suffix in ("-py3-none-any.whl", "-py2.py3-none-any.whl", ".tar.gz", ".zip"):
        for filename, url in candidates:
            if filename.endswith(suffix):
                return filename, url
    raise SystemExit(f"no pure-Python wheel or sdist of {name}=={version} on the index")


def download(requirement: str) -> Path:
    """Unpack the .py files of ``name==version`` under corpus/; return that folder."""
    name, version = requirement.split("==")
    target = CORPUS / f"{_normalize(name)}-{version}"
    marker = target / ".complete"
    if marker.exists():
        return target
    request = urllib.request.Request(INDEX.format(name=_normalize(name)), headers={"User-Agent": "torchlint-corpus"})
    with urllib.request.urlopen(request, timeout=120) as response:
        parser = _Links()
        parser.feed(response.read().decode("utf-8"))
    filename, url = _choose(parser.links, name, version)
    url, _, fragment = url.partition("#")
    with urllib.request.urlopen(url, timeout=600) as response:
        data = response.read()
    if fragment.startswith("sha256="):
        digest = hashlib.sha256(data).hexdigest()
        if digest != fragment[len("sha256="):]:
            raise SystemExit(f"{filename}: sha256 mismatch")
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    if filename.endswith(".whl") or filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                if member.endswith(".py") and not member.startswith("/") and ".." not in member:
                    (target / member).parent.mkdir(parents=True, exist_ok=True)
                    (target / member).write_bytes(archive.read(member))
                    count += 1
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.endswith(".py") and not member.name.startswith("/") \
                        and ".." not in member.name:
                    extracted = archive.extractfile(member)
                    (target / member.name).parent.mkdir(parents=True, exist_ok=True)
                    (target / member.name).write_bytes(extracted.read())
                    count += 1
    marker.write_text(f"{filename}\n{count} files\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*", default=LEGACY + MODERN)
    for requirement in parser.parse_args().packages:
        folder = download(requirement)
        print(f"{requirement}: {folder.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
