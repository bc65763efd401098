"""The rules by code, without importing them.

Selecting rules (``--select TL1``, ``ignore = ["view-inplace"]``), naming them in
statistics and keying the cache need only codes and names; importing the rule modules
means importing the parser and the inference, which a run whose files are all cached never needs.
``torchlint/output/docs.py`` writes this table from the rule modules (``python
scripts/gen_docs.py``) and a test fails when it drifts from them.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from torchlint.framework.diagnostics import Applicability


class RuleInfo(NamedTuple):
    code: str
    name: str
    fix: Optional[Applicability]
    default_enabled: bool
    torchfix: tuple[str, ...] = ()  # the TorchFix codes it stands for
    since: Optional[str] = None  # the torch release from which its findings hold
    fix_since: Optional[str] = None  # the oldest torch release its fixes' code runs on


# generated: start
RULES = {info.code: info for info in (
    RuleInfo("TL101", "data-read", Applicability.SAFE, True, since='0.4'),
    RuleInfo("TL102", "data-inplace", Applicability.UNSAFE, True, since='0.4'),
    RuleInfo("TL103", "data-assign", Applicability.UNSAFE, True, since='0.4'),
    RuleInfo("TL201", "variable-wrap", Applicability.SAFE, True, since='0.4'),
    RuleInfo("TL202", "volatile", Applicability.SAFE, True, since='0.4'),
    RuleInfo("TL203", "data-index-scalar", Applicability.SAFE, True, since='0.5'),
    RuleInfo("TL204", "legacy-constructor", Applicability.SAFE, True, since='0.4'),
    RuleInfo("TL205", "async-argument", Applicability.SAFE, True, fix_since='0.4'),
    RuleInfo("TL206", "retain-variables", Applicability.SAFE, True, since='0.2'),
    RuleInfo("TL207", "renamed-function", Applicability.SAFE, True, since='0.4.1'),
    RuleInfo("TL208", "legacy-reduction", Applicability.SAFE, True, since='0.4.1'),
    RuleInfo("TL209", "implicit-softmax-dim", Applicability.SAFE, True, since='0.3'),
    RuleInfo("TL210", "scalar-first-overload", Applicability.SAFE, True, since='1.5'),
    RuleInfo("TL211", "byte-mask", Applicability.SAFE, True, since='1.2'),
    RuleInfo("TL212", "legacy-autograd-function", None, True, since='0.4'),
    RuleInfo("TL213", "dataloader-next", Applicability.SAFE, True, since='1.13'),
    RuleInfo("TL214", "backward-gradient-shape", Applicability.SAFE, True, since='1.0'),
    RuleInfo("TL215", "transposed-view", Applicability.SAFE, True, since='1.7'),
    RuleInfo("TL216", "typed-storage", Applicability.UNSAFE, True, since='2.0'),
    RuleInfo("TL217", "scheduler-step-epoch", Applicability.SAFE, True, since='1.4'),
    RuleInfo("TL218", "sparse-constructor", Applicability.SAFE, True, since='2.1'),
    RuleInfo("TL219", "packed-sequence-unpack", Applicability.SAFE, True, since='1.1'),
    RuleInfo("TL220", "integer-true-division", Applicability.SAFE, True, since='1.5', fix_since='1.8'),
    RuleInfo("TL301", "detach-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL302", "detach-inplace-method", Applicability.UNSAFE, True),
    RuleInfo("TL303", "view-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL304", "numpy-sharing", Applicability.UNSAFE, True),
    RuleInfo("TL305", "id-storage-compare", Applicability.UNSAFE, True),
    RuleInfo("TL401", "loss-accumulation", Applicability.UNSAFE, True),
    RuleInfo("TL402", "clone-detach-order", Applicability.SAFE, True),
    RuleInfo("TL403", "tensor-from-tensor", Applicability.SAFE, True),
    RuleInfo("TL404", "nonleaf-grad", Applicability.DISPLAY_ONLY, True),
    RuleInfo("TL405", "grad-mode-not-called", Applicability.SAFE, True),
    RuleInfo("TL406", "nonleaf-requires-grad", Applicability.DISPLAY_ONLY, True),
    RuleInfo("TL407", "missing-zero-grad", Applicability.UNSAFE, True),
    RuleInfo("TL408", "backward-without-graph", Applicability.DISPLAY_ONLY, True),
    RuleInfo("TL409", "saved-tensor-inplace", Applicability.SAFE, True),
    RuleInfo("TL410", "gradient-cut", Applicability.DISPLAY_ONLY, True),
    RuleInfo("TL411", "backward-twice", Applicability.DISPLAY_ONLY, True),
    RuleInfo("TL412", "uninitialized-parameter", Applicability.UNSAFE, True),
    RuleInfo("TL413", "dtype-mismatch", Applicability.SAFE, True),
    RuleInfo("TL414", "missing-eval", Applicability.UNSAFE, True),
    RuleInfo("TL415", "numpy-requires-grad", Applicability.SAFE, True),
    RuleInfo("TL416", "device-mismatch", Applicability.UNSAFE, True),
    RuleInfo("TL417", "leaf-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL418", "module-list", Applicability.UNSAFE, True),
    RuleInfo("TL419", "functional-dropout", Applicability.SAFE, True),
    RuleInfo("TL501", "removed-function", Applicability.DISPLAY_ONLY, True, ('TOR001',)),
    RuleInfo("TL502", "removed-import", Applicability.DISPLAY_ONLY, True, ('TOR004',)),
    RuleInfo("TL503", "deprecated-function", Applicability.SAFE, True, ('TOR101',)),
    RuleInfo("TL504", "deprecated-import", Applicability.SAFE, True, ('TOR103',)),
    RuleInfo("TL505", "require-grad-typo", Applicability.SAFE, True, ('TOR002',)),
    RuleInfo("TL506", "checkpoint-reentrant", Applicability.UNSAFE, True, ('TOR003',), since='2.1'),
    RuleInfo("TL507", "unsafe-load", Applicability.UNSAFE, True, ('TOR102',), fix_since='1.13'),
    RuleInfo("TL508", "nonpublic-function", Applicability.SAFE, True, ('TOR104',)),
    RuleInfo("TL509", "nonpublic-import", Applicability.SAFE, True, ('TOR105',)),
    RuleInfo("TL510", "use-log1p", Applicability.UNSAFE, True, ('TOR106',)),
    RuleInfo("TL511", "use-expm1", Applicability.UNSAFE, True, ('TOR107',)),
    RuleInfo("TL512", "logsumexp", Applicability.UNSAFE, True, ('TOR108',)),
    RuleInfo("TL513", "dataloader-workers", None, False, ('TOR401',)),
    RuleInfo("TL514", "zero-grad-keeps-memory", Applicability.UNSAFE, False, ('TOR402',), since='2.0'),
    RuleInfo("TL515", "torchvision-pretrained", Applicability.SAFE, True, ('TOR201',), since='1.12'),
    RuleInfo("TL516", "torchvision-to-tensor", None, True, ('TOR202',), since='2.1'),
    RuleInfo("TL517", "torchvision-models-import", Applicability.SAFE, True, ('TOR203',)),
    RuleInfo("TL901", "unused-noqa", Applicability.SAFE, False),
)}
# generated: end


def names() -> dict[str, str]:
    """code -> name for every rule and the engine's TL000."""
    from torchlint.framework.diagnostics import UNLINTABLE_FILE

    return {UNLINTABLE_FILE.code: UNLINTABLE_FILE.name, **{code: info.name for code, info in RULES.items()}}
