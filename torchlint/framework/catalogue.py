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


# generated: start
RULES = {info.code: info for info in (
    RuleInfo("TL101", "data-read", Applicability.SAFE, True),
    RuleInfo("TL102", "data-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL103", "data-assign", Applicability.UNSAFE, True),
    RuleInfo("TL201", "variable-wrap", Applicability.SAFE, True),
    RuleInfo("TL202", "volatile", Applicability.UNSAFE, True),
    RuleInfo("TL203", "data-index-scalar", Applicability.SAFE, True),
    RuleInfo("TL204", "legacy-constructor", Applicability.SAFE, True),
    RuleInfo("TL205", "async-argument", Applicability.SAFE, True),
    RuleInfo("TL206", "retain-variables", Applicability.SAFE, True),
    RuleInfo("TL207", "renamed-function", Applicability.SAFE, True),
    RuleInfo("TL208", "legacy-reduction", Applicability.SAFE, True),
    RuleInfo("TL301", "detach-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL302", "detach-inplace-method", Applicability.UNSAFE, True),
    RuleInfo("TL303", "view-inplace", Applicability.UNSAFE, True),
    RuleInfo("TL304", "numpy-sharing", Applicability.UNSAFE, True),
    RuleInfo("TL305", "id-storage-compare", Applicability.UNSAFE, True),
    RuleInfo("TL401", "loss-accumulation", Applicability.UNSAFE, True),
    RuleInfo("TL402", "clone-detach-order", Applicability.SAFE, True),
    RuleInfo("TL403", "tensor-from-tensor", Applicability.SAFE, True),
    RuleInfo("TL404", "nonleaf-grad", Applicability.DISPLAY_ONLY, True),
)}
# generated: end


def names() -> dict[str, str]:
    """code -> name for every rule and the engine's TL000."""
    from torchlint.framework.diagnostics import UNLINTABLE_FILE

    return {UNLINTABLE_FILE.code: UNLINTABLE_FILE.name, **{code: info.name for code, info in RULES.items()}}
