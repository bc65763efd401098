#!/usr/bin/env python3
"""Write torchlint/analysis/torchvision_layers.py: which layer of each torchvision model
builder behaves differently in training mode (BatchNorm that tracks running statistics,
Dropout or StochasticDepth with p > 0).

Each builder is called with its defaults and no weights on the meta device (nothing is
allocated, nothing downloaded; on the CPU where its initialization reads values) and its
modules are read in order. torchvision is imported
from the folder given, so that it need not be installed:

    pip download torchvision --no-deps -d /tmp/tv
    pip install --no-deps --target /tmp/tvlib /tmp/tv/torchvision-*.whl
    python scripts/gen_torchvision_layers.py /tmp/tvlib

torchvision's compiled operators are not needed to build a model; where they do not
match the installed torch, their meta registrations are skipped.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import types
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "torchlint" / "analysis" / "torchvision_layers.py"
NAMESPACES = ("detection", "segmentation", "video", "optical_flow", "quantization")


def train_mode_layer(model) -> str | None:
    """The torch class (its public path) of the first module of ``model`` that behaves
    differently in training mode, or None."""
    import torch.nn as nn
    from torchvision.ops import StochasticDepth

    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.track_running_stats:
            kind = type(module).__name__
            return f"torch.nn.{kind}" if hasattr(nn, kind) else "torch.nn.BatchNorm2d"
        if isinstance(module, nn.modules.dropout._DropoutNd) and module.p > 0:
            return f"torch.nn.{type(module).__name__}"
        if isinstance(module, StochasticDepth) and module.p > 0:
            return "torchvision.ops.StochasticDepth"
    return None


def read_builders(folder: Path) -> tuple[dict[str, str], list[str], str]:
    """{builder path under torchvision.models (public and defining module): its layer},
    the builders that could not be built, and the torchvision version."""
    sys.path.insert(0, str(folder))
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
    warnings.simplefilter("ignore")
    import torch
    import torchvision
    from torchvision import models

    layers: dict[str, str] = {}
    failed: list[str] = []
    for name in sorted(models.list_models()):
        builder = models.get_model_builder(name)
        module = builder.__module__.removeprefix("torchvision.models.")
        namespace = module.split(".")[0] if module.split(".")[0] in NAMESPACES else ""
        public = f"{namespace}.{name}" if namespace else name
        options = {"weights": None}
        if "weights_backbone" in inspect.signature(builder).parameters:
            options["weights_backbone"] = None  # else a detection model downloads its backbone's
        model = None
        for device in ("meta", "cpu"):  # some initializations read the values they made
            try:
                with torch.device(device):
                    model = builder(**options)
                break
            except Exception as error:  # noqa: BLE001 - a builder that needs more than its defaults
                problem = f"{public}: {type(error).__name__}: {error}"[:160]
        if model is None:
            failed.append(problem)
            continue
        layer = train_mode_layer(model)
        if layer is not None:
            layers[public] = layer
            layers[f"{module}.{name}"] = layer
    return layers, failed, torchvision.__version__.split("+")[0]


def render(layers: dict[str, str], version: str) -> str:
    lines = [
        '"""The layer of each torchvision model builder that behaves differently in training mode',
        "(BatchNorm tracking running statistics, Dropout or StochasticDepth with p > 0), from",
        f"torchvision {version}'s models built with their defaults and no weights by",
        "``python scripts/gen_torchvision_layers.py``. Generated: do not edit.",
        "",
        "Builders are paths under ``torchvision.models``, both the public one (``resnet18``,",
        "``detection.fasterrcnn_resnet50_fpn``) and the defining module's (``resnet.resnet18``).",
        '"""',
        "",
        f"TORCHVISION_VERSION = {version!r}",
        "",
        "TRAIN_MODE_LAYERS: dict[str, str] = {",
    ]
    lines += [f"    {path!r}: {layer!r}," for path, layer in sorted(layers.items())]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder holding the torchvision package")
    args = parser.parse_args()
    layers, failed, version = read_builders(args.folder)
    TARGET.write_text(render(layers, version), encoding="utf-8")
    print(f"{TARGET.relative_to(REPO)}: {len(layers)} paths, torchvision {version}")
    for line in failed:
        print(f"not built: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
