#!/usr/bin/env python3
"""Rebuild the script corpus: training scripts, tutorials and paper code from public
GitHub repositories, each pinned to one commit, for measuring recall on the code users
actually have (issue 18).  No third-party code is committed: the manifest says what to
fetch, and this script fetches it into the git-ignored corpus/scripts/.

The manifest is eval/script_corpus/<owner>+<name>.json, one file per repository:

    {"repo": "owner/name", "commit": "<40 hex>", "date": "2018-03-02",
     "kind": "script" | "modern", "paths": ["main.py", "models/dcgan.py", ...],
     "why": "what the code is, why it is in the corpus"}

``paths`` are the files labelled (eval/labels/<owner>+<name>.csv, every line read); the
rebuilt folder holds exactly those, at that commit.  A repository is read from a local
mirror when one exists (``--mirror DIR``, default /work/.mirror: ``<owner>+<name>/repo/.git``),
else cloned from github.com.

    python scripts/script_corpus.py                 # rebuild every entry
    python scripts/script_corpus.py owner/name ...  # some of them
    python scripts/script_corpus.py --list          # the entries, one line each
    python scripts/script_corpus.py --whole         # whole repositories, for the runtime check

``--whole`` rebuilds each repository's whole tree at its commit into corpus/runtime/, as a
fresh clone has it, less its data files (arrays, weights, archives, images, anything over
1 MB): the runtime check is measured on what a user who has just cloned the repository
and has not downloaded its data has (issue 19).

The repositories reserved for independent evaluation (issue 18) are refused here.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "eval" / "script_corpus"
TARGET = REPO / "corpus" / "scripts"
WHOLE_TARGET = REPO / "corpus" / "runtime"
DATA_SUFFIXES = {".npy", ".npz", ".pt", ".pth", ".pkl", ".pickle", ".h5", ".hdf5", ".mat", ".t7", ".bin",
                 ".caffemodel", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".jpg", ".jpeg", ".png",
                 ".gif", ".bmp", ".tif", ".tiff", ".mp4", ".avi", ".wav", ".mp3", ".ckpt", ".onnx", ".lmdb",
                 ".csv", ".tsv", ".parquet", ".txt.gz"}
LARGEST_FILE = 1 << 20
DEFAULT_MIRROR = Path("/work/.mirror")

# Kept out of this corpus: another evaluation uses them, and must see code torchlint was
# never tuned on (issue 18 lists them).
RESERVED = {name.lower() for name in """
ikostrikov/pytorch-trpo ikostrikov/pytorch-a3c ikostrikov/pytorch-a2c-ppo-acktr
ikostrikov/pytorch-a2c-ppo-acktr-gail xternalz/WideResNet-pytorch facebookresearch/mixup-cifar10
hunkim/PyTorchZeroToAll salesforce/awd-lstm-lm boschresearch/Continuous-Recurrent-Units cv-rits/LMSCNet
utkuozbulak/pytorch-cnn-visualizations L1aoXingyu/pytorch-beginner MorvanZhou/PyTorch-Tutorial
ai-med/nn-common-modules amdegroot/ssd.pytorch eriklindernoren/PyTorch-GAN pytorch/examples
zoogzog/chexnet meijieru/crnn.pytorch Harry24k/adversarial-attacks-pytorch yaodongyu/TRADES
locuslab/fast_adversarial pyyush/GraphML facebookarchive/loop jcjohnson/pytorch-examples
sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning znxlwm/pytorch-MNIST-CelebA-GAN-DCGAN
spro/practical-pytorch aaron-xichen/pytorch-playground kuangliu/pytorch-cifar yunjey/pytorch-tutorial
jwyang/faster-rcnn.pytorch ruotianluo/self-critical.pytorch Kaixhin/Rainbow adambielski/siamese-triplet
tkipf/pygcn jadore801120/attention-is-all-you-need-pytorch SeanNaren/deepspeech.pytorch
chenyuntc/simple-faster-rcnn-pytorch meetshah1995/pytorch-semseg carpedm20/ENAS-pytorch Diego999/pyGAT
karpathy/nanoGPT lucidrains/denoising-diffusion-pytorch huggingface/diffusers
huggingface/pytorch-image-models facebookresearch/fairseq Lightning-AI/pytorch-lightning
""".split()}


def entries(names: list[str] | None = None) -> list[dict]:
    found = []
    for path in sorted(MANIFEST.glob("*.json")):
        entry = json.loads(path.read_text(encoding="utf-8"))
        if path.stem != entry["repo"].replace("/", "+"):
            raise SystemExit(f"{path}: the file must be named after its repo ({entry['repo']})")
        if entry["repo"].lower() in RESERVED:
            raise SystemExit(f"{path}: {entry['repo']} is reserved for independent evaluation")
        if names is None or entry["repo"] in names:
            found.append(entry)
    if names:
        missing = set(names) - {entry["repo"] for entry in found}
        if missing:
            raise SystemExit(f"not in the manifest: {', '.join(sorted(missing))}")
    return found


def folder(entry: dict, whole: bool = False) -> Path:
    """Where ``entry``'s files are rebuilt (also the name its labels file is keyed by)."""
    return (WHOLE_TARGET if whole else TARGET) / entry["repo"].replace("/", "+")


def _code_paths(git_dir: Path, commit: str) -> list[str]:
    """Every file of the tree at ``commit`` but its data files (a mirror may lack those
    blobs: git lists their size as BAD)."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z", commit],
                             check=True, capture_output=True, text=True).stdout
    paths = []
    for record in filter(None, listing.split("\0")):
        meta, path = record.split("\t", 1)
        _mode, kind, _object, size = meta.split()
        if kind == "blob" and size.isdigit() and int(size) <= LARGEST_FILE \
                and not any(path.lower().endswith(suffix) for suffix in DATA_SUFFIXES):
            paths.append(path)
    return paths


def rebuild(entry: dict, mirror: Path = DEFAULT_MIRROR, whole: bool = False) -> Path:
    """The folder holding ``entry``'s files at its commit, fetched if not there yet; with
    ``whole``, its whole tree less its data files."""
    target = folder(entry, whole)
    marker = target / ".complete"
    if marker.exists() and marker.read_text().strip() == entry["commit"]:
        return target
    repo = mirror / entry["repo"].replace("/", "+") / "repo"
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo  # a checkout's, or a bare repository
    with tempfile.TemporaryDirectory() as scratch:
        if not (git_dir / "HEAD").is_file():
            git_dir = Path(scratch) / "clone.git"
            subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                            f"https://github.com/{entry['repo']}.git", str(git_dir)], check=True)
        paths = _code_paths(git_dir, entry["commit"]) if whole else entry["paths"]
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", entry["commit"],
                                  "--", *paths], check=True, capture_output=True).stdout
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and not os.path.isabs(m.name) and ".." not in m.name]
        tar.extractall(target, members=members)
    missing = [path for path in entry["paths"] if not (target / path).is_file()]  # each labelled file is code
    if missing:
        raise SystemExit(f"{entry['repo']}@{entry['commit'][:12]}: missing {missing[:5]}")
    if whole:
        (target / ".git").mkdir()  # a clone's root is marked so: the runtime check reads the project from there
    marker.write_text(entry["commit"] + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="*", help="owner/name entries to rebuild (default: all)")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="folder of local mirrors")
    parser.add_argument("--list", action="store_true", help="list the entries")
    parser.add_argument("--whole", action="store_true",
                        help="rebuild whole repositories, less their data files, into corpus/runtime/")
    args = parser.parse_args()
    chosen = entries(args.repos or None)
    for entry in chosen:
        if args.list:
            print(f"{entry['repo']:50} {entry['commit'][:12]} {entry['date']} {entry['kind']:7} "
                  f"{len(entry['paths'])} files")
            continue
        path = rebuild(entry, args.mirror, args.whole)
        count = sum(1 for item in path.rglob("*") if item.is_file()) - 1 if args.whole else len(entry["paths"])
        print(f"{entry['repo']}: {count} files -> {path.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
