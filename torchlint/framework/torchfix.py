"""TorchFix's rule codes (``TOR...``) and the torchlint rules that do their work.

Read from TorchFix's source (every ``TorchError`` of its visitors, 0.7.0 and its main
branch after it, which added TOR108 and TOR402).  A torchlint rule names the TorchFix
codes it stands for in its ``torchfix`` attribute; the catalogue carries them, so
``--select TOR102``, ``--ignore``, config and ``# noqa: TOR102`` accept the TorchFix
code as that rule without importing any rule module.  The TOR9xx rules are for
pytorch/pytorch's own code and have no torchlint rule: a selector that names one says to
keep TorchFix for it, and a prefix such as ``TOR`` selects the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchlint.framework import catalogue

PREFIX = "TOR"
VERSION = "0.7.0"
KEEP_TORCHFIX = (
    "keep running TorchFix for {} (`pip install torchfix==" + VERSION + "`; "
    "`flake8 --select TOR` or `torchfix .`)"
)


@dataclass(frozen=True)
class TorchFixRule:
    code: str
    flags: str
    default: bool  # on by default in TorchFix (TOR0, TOR1, TOR2)

    @property
    def torchlint(self) -> tuple[str, ...]:
        """The torchlint rules that do this rule's work."""
        return tuple(info.code for info in catalogue.RULES.values() if self.code in info.torchfix)

    @property
    def internal(self) -> bool:
        """For pytorch/pytorch itself (TOR9xx): no torchlint rule, and left out of prefixes."""
        return self.code.startswith(f"{PREFIX}9")


RULES: dict[str, TorchFixRule] = {
    rule.code: rule
    for rule in (
        TorchFixRule("TOR001", "use of a removed function (`torch.solve`, `torch.symeig`, `torch.lstsq`, `torch.matrix_rank`)", True),
        TorchFixRule("TOR002", "the typo `x.require_grad = ...` (for `requires_grad`)", True),
        TorchFixRule("TOR003", "`torch.utils.checkpoint.checkpoint` without `use_reentrant`", True),
        TorchFixRule("TOR004", "import of a removed function (see TOR001)", True),
        TorchFixRule("TOR101", "use of a deprecated function (`torch.norm`, `torch.range`, `torch.qr`, `torch.nn.utils.weight_norm`, `functorch.vmap`, ...)", True),
        TorchFixRule("TOR102", "`torch.load` without `weights_only`", True),
        TorchFixRule("TOR103", "import of a deprecated function (see TOR101)", True),
        TorchFixRule("TOR104", "use of a non-public function (`torch.utils.data._utils.collate.default_collate`)", True),
        TorchFixRule("TOR105", "import of a non-public function (see TOR104)", True),
        TorchFixRule("TOR106", "`torch.log(1 + x)` instead of `torch.log1p(x)`", True),
        TorchFixRule("TOR107", "`torch.exp(x) - 1` instead of `torch.special.expm1(x)`", True),
        TorchFixRule("TOR108", "`torch.log(torch.sum(torch.exp(x), dim))` instead of `torch.logsumexp(x, dim)`", True),
        TorchFixRule("TOR201", "torchvision's deprecated `pretrained=` / `pretrained_backbone=` parameters", True),
        TorchFixRule("TOR202", "the deprecated `torchvision.transforms.v2.ToTensor`", True),
        TorchFixRule("TOR203", "`import torchvision.models as models` instead of `from torchvision import models`", True),
        TorchFixRule("TOR401", "a `DataLoader` without `num_workers` (synchronous loading)", False),
        TorchFixRule("TOR402", "`zero_grad(set_to_none=False)` (gradients zeroed instead of freed)", False),
        TorchFixRule("TOR901", "`torch.library.Library` in PyTorch's own tests", False),
    )
}


class NotCovered(ValueError):
    """A TOR selector names TorchFix rules that no torchlint rule covers."""


def is_torchfix_code(selector: str) -> bool:
    """``TOR102`` or a prefix of TorchFix codes (``TOR1``, ``TOR``)."""
    return re.fullmatch(rf"{PREFIX}[0-9]*", selector.strip(), re.IGNORECASE) is not None


def equivalent_codes(code: str) -> frozenset[str]:
    """The torchlint codes a TorchFix code stands for in a ``# noqa`` (none if uncovered)."""
    rule = RULES.get(code.strip().upper())
    return frozenset(rule.torchlint) if rule is not None else frozenset()


def translate(selector: str) -> frozenset[str]:
    """The torchlint codes for a TOR selector (a code like ``TOR102`` or a prefix like
    ``TOR1``); raises NotCovered, explaining, unless torchlint covers every rule it names
    (a prefix leaves out the TOR9xx rules, which are for pytorch/pytorch itself)."""
    text = selector.strip().upper()
    named = [rule for code, rule in RULES.items() if code.startswith(text)]
    if not named:
        raise NotCovered(
            f"{selector.strip()!r} is not a TorchFix {VERSION} rule code "
            f"(those are {', '.join(RULES)})"
        )
    if text not in RULES and not all(rule.internal for rule in named):
        named = [rule for rule in named if not rule.internal]
    uncovered = [rule for rule in named if not rule.torchlint]
    if len(uncovered) == 1:
        rule = uncovered[0]
        raise NotCovered(f"torchlint has no rule for TorchFix's {rule.code} ({rule.flags}): {KEEP_TORCHFIX.format('it')}")
    if uncovered:
        raise NotCovered(
            f"torchlint has no rule for TorchFix's {', '.join(rule.code for rule in uncovered)} "
            f"(docs/torchfix.md says what each flags): {KEEP_TORCHFIX.format('them')}"
        )
    return frozenset(code for rule in named for code in rule.torchlint)
