"""TL213 dataloader-next: ``iter(loader).next()``, the Python 2 spelling that DataLoader
iterators lost in PyTorch 1.13 (an AttributeError today)."""

from typing import Callable, Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits, torch_api,
)


class DataloaderNext(Rule):
    code = "TL213"
    name = "dataloader-next"
    summary = "`iter(loader).next()`: DataLoader iterators have no `.next()` since PyTorch 1.13 (AttributeError)"
    message = ("`{call}` calls `.next()` on an iterator of a `DataLoader`: the Python 2 spelling was removed in "
               "PyTorch 1.13 and raises AttributeError; use `next({iterator})`")
    fix = Applicability.SAFE
    since = "1.13"
    requires = (r"\.next\(\)", r"DataLoader")
    references = (
        ("PyTorch 1.13.0 release notes", "https://github.com/pytorch/pytorch/releases/tag/v1.13.0"),
    )
    docs = """
    ## What it does
    Flags `it.next()` where `it` is `iter(loader)` (or a name bound only to such
    iterators) and `loader` is a `torch.utils.data.DataLoader(...)` (or a name bound
    only to DataLoaders), resolved through the file's imports: the GAN loop's
    `data_iter = iter(dataloader)` then `data = data_iter.next()`.

    ## Why is this bad?
    Python 2 iterators had a `next()` method; Python 3 renamed it `__next__()` and
    reads it through the builtin `next(it)`. PyTorch's DataLoader iterators kept a
    `next = __next__` alias for Python 2 until PyTorch 1.13 removed it: today the call
    raises `AttributeError: '_SingleProcessDataLoaderIter' object has no attribute
    'next'` (`_MultiProcessingDataLoaderIter` with workers), and the training loop stops
    at its first batch.

    ## What to do instead
    Call the builtin: `next(data_iter)`.

    ## Fix (safe)
    `it.next()` becomes `next(it)`, the iterator's own text kept.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            loader = DataLoader(TensorDataset(torch.ones(8, 2)), batch_size=4, num_workers=2)
            data_iter = iter(loader)
            first = data_iter.next()
            second = iter(loader).next()
            """,
            reported=((6, "data_iter.next()"), (7, "iter(loader).next()")),
            fixed="""
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            loader = DataLoader(TensorDataset(torch.ones(8, 2)), batch_size=4, num_workers=2)
            data_iter = iter(loader)
            first = next(data_iter)
            second = next(iter(loader))
            """,
        ),
    )
    good = (
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        loader = DataLoader(TensorDataset(torch.ones(8, 2)), batch_size=4, num_workers=2)
        data_iter = iter(loader)
        first = next(data_iter)

        class Stream:
            def next(self):
                return 1

        stream = Stream()
        value = stream.next()
        numbers = iter([1, 2])
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if node.args or not isinstance(func, cst.Attribute) or func.attr.value != "next":
            return
        evidence = self._dataloader_iterator(func.value)
        if evidence is None:
            return
        iterator = self.ctx.code(func.value)
        fix = Fix(Applicability.SAFE, "Call the builtin `next()`", (edits.replace(node, f"next({iterator})"),))
        self.report(node, evidence=evidence, fix=fix, call=self.ctx.snippet(node),
                    iterator=self.ctx.snippet(func.value))

    def _dataloader_iterator(self, node: cst.BaseExpression) -> Optional[tuple[Step, ...]]:
        """Why ``node`` is an iterator of a DataLoader: ``iter(loader)``, or a name bound
        only to such iterators."""
        return self._through_names(node, self._iter_call)

    def _iter_call(self, node: cst.BaseExpression) -> Optional[tuple[Step, ...]]:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "iter"
                and len(node.args) == 1 and not node.args[0].star and not self.ctx.binding_values(node.func)):
            return None
        loader = self._through_names(node.args[0].value, self._dataloader_call)
        return None if loader is None else (Step(node, "`{code}` is an iterator of a DataLoader"),) + loader

    def _dataloader_call(self, node: cst.BaseExpression) -> Optional[tuple[Step, ...]]:
        if not isinstance(node, cst.Call):
            return None
        qualname = self.ctx.qualname(node.func)
        return self.ctx.origin(node.func, qualname) if qualname in torch_api.DATALOADER_CLASSES else None

    def _through_names(self, node: cst.BaseExpression,
                       what: Callable[[cst.BaseExpression], Optional[tuple[Step, ...]]]) -> Optional[tuple[Step, ...]]:
        """Why ``node`` is ``what`` says it is: itself, or a name whose every assignment is."""
        if not isinstance(node, cst.Name):
            return what(node)
        values = self.ctx.assigned_values(node)
        if values is None:
            return None
        steps: tuple[Step, ...] = ()
        for value in values:
            found = what(value)
            if found is None:
                return None
            steps += (Step(value, f"`{node.value}` = `{{code}}`"),) + found
        return steps

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "AttributeError" and "attribute 'next'" in raised["message"]:
            return Verdict(CONFIRMED, f"AttributeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "the iterator had `.next()` here (PyTorch before 1.13)")
