"""TL304 numpy-sharing: an in-place write to one side of ``.numpy()`` / ``torch.from_numpy``
while the other side is still used."""

from typing import Optional

from torchlint.framework.api import AliasWrite, AliasWriteRule, Applicability, Bad


class NumpySharing(AliasWriteRule):
    code = "TL304"
    name = "numpy-sharing"
    summary = "in-place write on either side of `.numpy()` / `torch.from_numpy` while the other side is used"
    message = (
        "In-place write ({how}) to `{written}` also changes `{other}`: `{alias}` = `{made}` shares "
        "memory between the tensor `{tensor}` and the array `{array}`, and `{other}` is read "
        "afterwards; copy (`.copy()` / `.clone()`) if they should be independent"
    )
    fix = Applicability.UNSAFE
    requires = (r"numpy",)
    saved_kinds = ("numpy", "from_numpy")
    references = (
        ("torch.from_numpy", "https://pytorch.org/docs/stable/generated/torch.from_numpy.html"),
        ("torch.Tensor.numpy", "https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html"),
    )
    requires_may_be_imported = True
    docs = """
    ## What it does
    Flags an in-place write to either side of `a = t.numpy()` or `t = torch.from_numpy(a)`
    (`a[0] = 1`, `a += 1`, `t.mul_(2)`...) when the other side is read afterwards,
    by the code or by a `backward()` after the write that reads it because an operation
    saved it (`loss = (w * t).sum()` keeps `t`; TL409 says how saved tensors are known).

    ## Why is this bad?
    On the CPU both functions share memory instead of copying: a write to the array
    changes the tensor and the other way round. Writes on the numpy side are invisible
    to autograd entirely, so a tensor saved for backward can be corrupted silently.

    ## What to do instead
    Copy when a separate array or tensor is meant: `t.numpy().copy()`,
    `torch.from_numpy(a).clone()`, or `torch.tensor(a)` (which always copies).

    ## Fix (unsafe)
    Copies where the sharing starts, whichever side is written: `a = t.numpy()`
    becomes `a = t.numpy().copy()` and `t = torch.from_numpy(a)` becomes
    `t = torch.from_numpy(a).clone()`, so the array and the tensor are independent.
    It is unsafe because code that relied on the sharing (filling a tensor through the
    array) stops doing so, and the copy costs memory. It is not offered when the
    alias is made in another way than `name = ...` (tuple unpacking, a chained
    assignment), or when some write to either side is left alone by this rule (under
    `torch.no_grad()`, or with the other side not read afterwards), which looks
    intentional.
    """
    bad = (
        Bad(
            """
            import numpy as np
            import torch

            weights = np.ones(3, dtype=np.float32)
            t = torch.from_numpy(weights)
            weights[0] = 10.0
            print(t)  # meant to be tensor([1., 1., 1.])
            """,
            reported=((6, "weights[0]"),),
            fixed="""
            import numpy as np
            import torch

            weights = np.ones(3, dtype=np.float32)
            t = torch.from_numpy(weights).clone()
            weights[0] = 10.0
            print(t)  # meant to be tensor([1., 1., 1.])
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import numpy as np
        import torch

        weights = np.ones(3, dtype=np.float32)
        t = torch.from_numpy(weights).clone()
        weights[0] = 10.0
        print(t)
        """,
    )

    def message_for(self, event: AliasWrite) -> Optional[str]:
        return self.message if event.alias.kind in ("numpy", "from_numpy") else None

    def fields_for(self, event: AliasWrite) -> dict[str, object]:
        alias = event.alias
        tensor_side, array_side = (alias.base.value, alias.name) if alias.kind == "numpy" \
            else (alias.name, alias.base.value)
        return {"written": event.written.value, "other": alias.base.value if event.through_alias else alias.name,
                "tensor": tensor_side, "array": array_side}

