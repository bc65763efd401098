"""TL508 nonpublic-function and TL509 nonpublic-import: ``default_collate`` and
``default_convert`` taken from ``torch.utils.data._utils.collate`` (TorchFix's TOR104 and
TOR105)."""

import re
from typing import Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, called_name, cst, edits,
    iter_nodes,
)

_PRIVATE_MODULE = "torch.utils.data._utils.collate"
_PUBLIC_MODULE = "torch.utils.data.dataloader"
_NAMES = frozenset({"default_collate", "default_convert"})
_PRIVATE = {f"{_PRIVATE_MODULE}.{name}": f"{_PUBLIC_MODULE}.{name}" for name in _NAMES}

_DOCS_WHY = """
    ## Why is this bad?
    `torch.utils.data._utils` is private (the leading underscore): PyTorch may move or
    rename what is in it without a deprecation. The two functions are public as
    `torch.utils.data.dataloader.default_collate` and `default_convert` (also
    `torch.utils.data.default_collate` and `default_convert`), the very same function
    objects, since PyTorch 1.11
    ([pytorch#69862](https://github.com/pytorch/pytorch/pull/69862)).
"""


class NonpublicFunction(Rule):
    code = "TL508"
    name = "nonpublic-function"
    summary = "`torch.utils.data._utils.collate.default_collate(..)`: a private path; use `torch.utils.data.dataloader`"
    message = "`{private}` is not public: use `{public}` (the same function)"
    fix = Applicability.SAFE
    torchfix = ("TOR104",)
    requires = (r"default_co(llate|nvert)",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags uses of `torch.utils.data._utils.collate.default_collate` and
    `default_convert`, the names resolved through the file's imports: a call (TorchFix's
    TOR104 flags calls), and a reference by a dotted name
    (`collate_fn=torch.utils.data._utils.collate.default_collate`). A name imported from
    the private module is reported at its import by TL509.
    """ + _DOCS_WHY + """
    ## What to do instead
    `torch.utils.data.dataloader.default_collate(batch)` (or
    `from torch.utils.data.dataloader import default_collate`).

    ## Fix (safe)
    The dotted name is rewritten to the public one: through a name the file already
    binds to `torch.utils.data.dataloader`, `torch.utils.data` or `torch` when the
    private path starts from one of those, else `dataloader.default_collate` with
    `dataloader` added to the file's `from torch.utils.data import ...` (as TorchFix
    does), else `torch.utils.data.dataloader.default_collate` (importing torch when
    needed). It is the same function object, so nothing changes at run time. A call of
    a name imported from the private module is fixed at the import (TL509).

    References: TorchFix TOR104; [pytorch#69862](https://github.com/pytorch/pytorch/pull/69862).
    """
    bad = (
        Bad(
            """
            import torch
            from torch.utils.data import _utils

            batch = _utils.collate.default_collate([torch.ones(2), torch.zeros(2)])
            """,
            reported=((4, "_utils.collate.default_collate([torch.ones(2), torch.zeros(2)])"),),
            fixed="""
            import torch
            from torch.utils.data import dataloader, _utils

            batch = dataloader.default_collate([torch.ones(2), torch.zeros(2)])
            """,
        ),
        Bad(
            """
            import torch

            loader = torch.utils.data.DataLoader(range(4), collate_fn=torch.utils.data._utils.collate.default_convert)
            """,
            reported=((3, "torch.utils.data._utils.collate.default_convert"),),
            fixed="""
            import torch

            loader = torch.utils.data.DataLoader(range(4), collate_fn=torch.utils.data.dataloader.default_convert)
            """,
        ),
    )
    good = (
        """
        import torch
        from torch.utils.data.dataloader import default_collate

        batch = default_collate([torch.ones(2), torch.zeros(2)])
        values = torch.utils.data.default_convert([1, 2])
        """,
        """
        def default_collate(batch):
            return list(batch)

        batch = default_collate([1, 2])
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called in _NAMES or isinstance(func, cst.Name) and called in self._imported_as():
            self._check(func, node)

    def _imported_as(self) -> frozenset:
        """The names the file imports the two functions under (`default_convert as convert`)."""
        names = self.ctx.cache.get("TL508-names")
        if names is None:
            names = frozenset(
                alias.asname.name.value for node in iter_nodes(self.ctx.module)
                if isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None
                and not isinstance(node.names, cst.ImportStar)
                and self.ctx.code(node.module).replace(" ", "") == _PRIVATE_MODULE
                for alias in node.names
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name))
            self.ctx.cache["TL508-names"] = names
        return names

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in _NAMES:
            return
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return  # visit_Call reports the call
        if isinstance(parent, (cst.ImportFrom, cst.Import, cst.ImportAlias)) or \
                isinstance(parent, cst.Attribute) and parent.value is node:
            return
        self._check(node, node)

    def _check(self, name: cst.BaseExpression, reported: cst.CSTNode) -> None:
        qualname = self.ctx.qualname(name)
        public = _PRIVATE.get(qualname or "")
        if public is None:
            return
        fix = self._fix(name, public) if isinstance(name, cst.Attribute) else None
        self.report(reported, evidence=self.ctx.origin(name, qualname), fix=fix, private=qualname, public=public)

    def _fix(self, name: cst.Attribute, public: str) -> Optional[Fix]:
        """``name`` (a dotted private path) spelled through the public module."""
        function = public.rsplit(".", 1)[1]
        edits_: tuple[Edit, ...] = ()
        spelled = self._through_prefix(name, public)
        if spelled is None:
            spelled, edits_ = self._through_import(function)
        if spelled is None:
            torch, imports = edits.torch_name(self.ctx)
            spelled, edits_ = f"{torch}.utils.data.dataloader.{function}", imports
        return Fix(Applicability.SAFE, f"Use `{public}`", (edits.replace(name, spelled), *edits_))

    def _through_prefix(self, name: cst.Attribute, public: str) -> Optional[str]:
        """`torch.utils.data._utils.collate.default_collate` -> `torch.utils.data.dataloader.default_collate`:
        from the longest part of the path that names `torch`, `torch.utils` or `torch.utils.data`."""
        chain = []
        current: cst.BaseExpression = name
        while isinstance(current, cst.Attribute):
            chain.append(current.value)
            current = current.value
        for prefix in chain:  # longest first
            qualname = self.ctx.qualname(prefix)
            if qualname in ("torch", "torch.utils", "torch.utils.data"):
                return f"{self.ctx.code(prefix)}{public[len(qualname):]}"
        return None

    def _through_import(self, function: str) -> tuple[Optional[str], tuple[Edit, ...]]:
        """`dataloader.default_collate`, through a module-level name bound to the public
        module, or with `dataloader` added to a `from torch.utils.data import ...`."""
        names = self.ctx.names_only_imported_as(_PUBLIC_MODULE)
        if names:
            return f"{names[0]}.{function}", ()
        if re.search(r"\bdataloader\b", self.ctx.text):
            return None, ()  # a name of the file's own: adding the import could shadow it
        for statement in self.ctx.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                        and not isinstance(small.names, cst.ImportStar) \
                        and self.ctx.code(small.module).replace(" ", "") == "torch.utils.data":
                    return f"dataloader.{function}", (edits.insert_before(small.names[0], "dataloader, "),)
        return None, ()

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: the private and the public name are the same function object")


class NonpublicImport(Rule):
    code = "TL509"
    name = "nonpublic-import"
    summary = "`from torch.utils.data._utils.collate import default_collate`: a private module; import it from " \
              "`torch.utils.data.dataloader`"
    message = "{names} imported from the private module `{private}`: import from `{public}` (the same functions)"
    fix = Applicability.SAFE
    torchfix = ("TOR105",)
    requires = (r"default_co(llate|nvert)",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `from torch.utils.data._utils.collate import default_collate` (or
    `default_convert`): an import of a public function from its private module.
    TorchFix's TOR105. Their uses through a dotted private path are TL508.
    """ + _DOCS_WHY + """
    ## What to do instead
    `from torch.utils.data.dataloader import default_collate`.

    ## Fix (safe)
    When every name the statement imports is one of the two, its module is replaced by
    `torch.utils.data.dataloader` (aliases kept). A statement that also imports other
    names of the private module is left to a person. The same function objects are
    imported, so nothing changes at run time.

    References: TorchFix TOR105; [pytorch#69862](https://github.com/pytorch/pytorch/pull/69862).
    """
    bad = (
        Bad(
            """
            import torch
            from torch.utils.data._utils.collate import default_collate as collate

            batch = collate([torch.ones(2), torch.zeros(2)])
            """,
            reported=((2, "from torch.utils.data._utils.collate import default_collate as collate"),),
            fixed="""
            import torch
            from torch.utils.data.dataloader import default_collate as collate

            batch = collate([torch.ones(2), torch.zeros(2)])
            """,
        ),
    )
    good = (
        """
        import torch
        from torch.utils.data.dataloader import default_collate, default_convert

        batch = default_collate([torch.ones(2), torch.zeros(2)])
        """,
        """
        from mypackage.data._utils.collate import default_collate
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = self.ctx.code(node.module).replace(" ", "")
        if module != _PRIVATE_MODULE:
            return
        private = [alias for alias in node.names if self.ctx.code(alias.name) in _NAMES]
        if not private:
            return
        fix = Fix(Applicability.SAFE, f"Import from `{_PUBLIC_MODULE}`", (edits.replace(node.module, _PUBLIC_MODULE),)) \
            if len(private) == len(node.names) else \
            Fix(Applicability.DISPLAY_ONLY, f"Import `{', '.join(self.ctx.code(a.name) for a in private)}` from "
                                            f"`{_PUBLIC_MODULE}`", ())
        names = ", ".join(f"`{self.ctx.code(alias.name)}`" for alias in private)
        self.report(node, fix=fix, names=names, private=_PRIVATE_MODULE, public=_PUBLIC_MODULE)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: the private and the public name are the same function object")
