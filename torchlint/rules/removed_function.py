"""TL501 removed-function and TL502 removed-import: ``torch.solve``, ``torch.symeig``,
``torch.gesv``, ``torch.potrf``...: functions torch no longer has (TorchFix's TOR001 and
TOR004)."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst,
    earliest_release, imported_module, torch_api,
)

_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in torch_api.REMOVED_FUNCTIONS)
_REQUIRES = "|".join(sorted(_NAMES))  # a filter: words inside others may match


def _history(qualname: str) -> str:
    """``deprecated in PyTorch 1.9 and removed in 1.13`` from the table, as far as it is known."""
    deprecated, removed, _, _ = torch_api.REMOVED_FUNCTIONS[qualname]
    text = f"deprecated in PyTorch {deprecated}" if deprecated else "deprecated"
    return text + (f" and removed in {removed}" if removed else " and has since been removed")


def _deprecated_in(qualname: str) -> Optional[str]:
    """The release from which a finding on ``qualname`` holds: the one that deprecated it."""
    deprecated, removed, _, _ = torch_api.REMOVED_FUNCTIONS[qualname]
    return deprecated or removed


def _advice(qualname: str) -> Fix:
    _, _, replacement, reference = torch_api.REMOVED_FUNCTIONS[qualname]
    return Fix(Applicability.DISPLAY_ONLY, f"Use {replacement}; see {reference}", ())


def _judge(run: Observation) -> Verdict:
    raised = run.raised
    if raised is not None and raised["type"] == "AttributeError" and "has no attribute" in raised["message"]:
        return Verdict(CONFIRMED, f"AttributeError: {raised['message']}")
    if raised is not None and "is now removed" in raised["message"]:
        return Verdict(CONFIRMED, f"{raised['type']}: {raised['message'].splitlines()[0]}")
    return Verdict(NOT_REPRODUCED, "the call ran without the error of a removed torch function "
                                   "(an older torch, or a name of the project's own?)")


class RemovedFunction(Rule):
    code = "TL501"
    name = "removed-function"
    summary = "`torch.solve`, `torch.symeig`, `torch.gesv`, `torch.potrf`...: functions torch no longer has"
    message = "`{qualname}` was {history}: the call fails; use {replacement}"
    fix = Applicability.DISPLAY_ONLY
    torchfix = ("TOR001",)
    requires = (_REQUIRES,)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags calls of torch functions that no longer exist, resolved through the file's
    imports (`import torch as T; T.gesv(..)`, `from torch import symeig as eigh`):

    - `torch.solve`, `torch.lstsq`, `torch.symeig`, `torch.eig` and `torch.matrix_rank`,
      deprecated in PyTorch 1.9 for their `torch.linalg` counterparts and removed
      afterwards (torch keeps a stub that raises "This function was deprecated since
      version 1.9 and is now removed");
    - the LAPACK names of PyTorch 0.x that 2017-2020 code still calls: `torch.gesv`
      (renamed `torch.solve` in 1.1), `torch.gels` (`torch.lstsq`, removed in 1.3),
      `torch.potrf`, `torch.potrs`, `torch.potri` (`cholesky`, `cholesky_solve`,
      `cholesky_inverse`, 1.0-1.1), `torch.trtrs` (`triangular_solve`, 1.1), `torch.pstrf`,
      and the batched `torch.btrifact`, `torch.btrifact_with_info`, `torch.btrisolve`,
      `torch.btriunpack` (`lu`, `lu_solve`, `lu_unpack`, 1.2): calling them raises
      `AttributeError: module 'torch' has no attribute ...`.

    A function of the project's own with the same name (`solve(A, b)` of a solver
    module) is not reported: only the name imported from torch is.

    ## Why is this bad?
    The call fails with any current torch: the code cannot run at all.

    ## What to do instead
    Call the `torch.linalg` function: `torch.linalg.solve(A, B)` for `torch.solve(B, A)`
    and `torch.gesv(B, A)` (the arguments are reversed, and the LU factors are no longer
    returned), `torch.linalg.lstsq(A, B)` for `torch.lstsq(B, A)`,
    `torch.linalg.eigh` for `torch.symeig` (it reads the lower triangle by default),
    `torch.linalg.eig` for `torch.eig` (complex results), `torch.linalg.cholesky(A).mH`
    for `torch.potrf(A)` (it returned the upper factor), `torch.linalg.lu_factor` for
    `torch.btrifact`. Each message names the replacement.

    ## Fix
    None automatic: the replacements take their arguments in another order or return
    something else, so each call needs a look. TorchFix reports these as TOR001.
    """
    bad = (
        Bad(
            """
            import torch

            def solve_system(A, b):
                x, _ = torch.gesv(b, A)
                return x

            def eigenvalues(A):
                return torch.symeig(A, eigenvectors=False)[0]
            """,
            reported=((4, "torch.gesv(b, A)"), (8, "torch.symeig(A, eigenvectors=False)")),
        ),
    )
    good = (
        """
        import torch

        def solve_system(A, b):
            return torch.linalg.solve(A, b)

        def eigenvalues(A):
            return torch.linalg.eigvalsh(A)
        """,
        """
        import numpy as np
        import scipy.linalg

        def solve(A, b):
            return np.linalg.solve(A, b)

        x = solve(np.eye(2), np.ones(2))
        L = scipy.linalg.cholesky(np.eye(2))
        w = np.linalg.eig(np.eye(2))
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.aliases = self.ctx.imported_aliases(torch_api.REMOVED_FUNCTIONS)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called not in _NAMES and called not in self.aliases:
            return  # most calls: no need to resolve the name
        qualname = self.ctx.qualname(func)
        if qualname not in torch_api.REMOVED_FUNCTIONS or self.ctx.version_dispatched(func) is not None:
            return  # not removed, or the branch for older torch of a version check
        self.report(node, evidence=self.ctx.origin(func, qualname), fix=_advice(qualname), qualname=qualname,
                    history=_history(qualname), replacement=torch_api.REMOVED_FUNCTIONS[qualname][2],
                    holds_from=_deprecated_in(qualname))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return _judge(run)


class RemovedImport(Rule):
    code = "TL502"
    name = "removed-import"
    summary = "`from torch import solve`, `gesv`, `potrf`...: an import of a function torch no longer has"
    message = "import of {names}: it fails; use {replacements}"
    fix = Applicability.DISPLAY_ONLY
    torchfix = ("TOR004",)
    requires = (_REQUIRES,)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags `from torch import ...` statements that import a function torch no longer has
    (the functions of TL501: `torch.solve`, `torch.symeig`, `torch.lstsq`, `torch.eig`,
    `torch.matrix_rank`, removed after their deprecation in PyTorch 1.9, and the
    LAPACK names of PyTorch 0.x, `torch.gesv`, `torch.gels`, `torch.potrf`,
    `torch.btrifact`...). The finding is on the import statement, once for the
    statement whatever the number of such names in it; the calls through the imported
    name are TL501's.

    ## Why is this bad?
    With a current torch the import itself fails (`ImportError: cannot import name
    'gesv' from 'torch'`), so nothing of the module can be used; for the five 1.9
    functions the import still works but every call raises.

    ## What to do instead
    Import the `torch.linalg` function the message names and adapt the calls (the
    arguments are often in another order: see TL501).

    ## Fix
    None automatic. TorchFix reports these as TOR004.
    """
    bad = (
        Bad(
            """
            from torch import gesv, symeig as eigh

            def solve_system(A, b):
                return gesv(b, A)[0]
            """,
            reported=((1, "from torch import gesv, symeig as eigh"),),
        ),
    )
    good = (
        """
        from torch.linalg import solve, eigh
        from numpy.linalg import eig
        from scipy.linalg import lstsq

        def solve_system(A, b):
            return solve(A, b)
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = imported_module(node)
        if module is None or not (module == "torch" or module.startswith("torch.")):
            return
        found = [f"{module}.{alias.name.value}" for alias in node.names
                 if isinstance(alias.name, cst.Name) and f"{module}.{alias.name.value}" in torch_api.REMOVED_FUNCTIONS]
        if not found:
            return
        # One finding for the statement (TorchFix gives one per name, at the same place).
        names = " and ".join(f"`{qualname}` ({_history(qualname)})" for qualname in found)
        replacements = "; ".join(f"{torch_api.REMOVED_FUNCTIONS[q][2]} for `{q.rsplit('.', 1)[1]}`" for q in found)
        advice = Fix(Applicability.DISPLAY_ONLY, "; ".join(
            f"Use {torch_api.REMOVED_FUNCTIONS[q][2]}, see {torch_api.REMOVED_FUNCTIONS[q][3]}" for q in found), ())
        self.report(node, fix=advice, names=names, replacements=replacements,
                    holds_from=earliest_release(_deprecated_in(qualname) for qualname in found))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "ImportError" and "cannot import name" in raised["message"]:
            return Verdict(CONFIRMED, f"ImportError: {raised['message']}")
        return _judge(run)
