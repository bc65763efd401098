"""TL513 dataloader-workers: a ``DataLoader`` that loads in the training process
(``num_workers`` absent or 0; TorchFix's TOR401)."""

from typing import Optional

from torchlint.framework.api import NOT_REPRODUCED, Bad, Observation, Rule, Verdict, called_name, cst, torch_api

_NUM_WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)


def _num_workers(call: cst.Call) -> Optional[cst.Arg]:
    index = 0
    for arg in call.args:
        if arg.keyword is None:
            if index == _NUM_WORKERS_POSITION:
                return arg
            index += 1
        elif arg.keyword.value == "num_workers":
            return arg
    return None


class DataloaderWorkers(Rule):
    code = "TL513"
    name = "dataloader-workers"
    summary = "`DataLoader(..)` without `num_workers` (or with 0): batches load in the training loop, synchronously"
    message = "this `DataLoader` loads in the main process ({why}): pass `num_workers` > 0 to load batches in parallel"
    fix = None
    torchfix = ("TOR401",)
    default_enabled = False
    requires = (r"DataLoader",)
    references = (
        ("torch.utils.data.DataLoader", "https://pytorch.org/docs/stable/data.html"),
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `torch.utils.data.DataLoader(...)` (resolved through the file's imports)
    that passes no `num_workers` (by keyword, or as sixth positional argument) or
    passes the literal `0`. A value computed at run time (`num_workers=args.workers`)
    is left alone, and so is a call with `*args` or `**kwargs`. TorchFix's TOR401, the
    static form of PyTorch profiler's `SynchronizedDataLoaderPattern`. Off by default,
    as in TorchFix: tests, tiny in-memory datasets and notebooks load in the main
    process on purpose; enable it with `--select TL513` (or `TOR401`).

    ## Why is this bad?
    With `num_workers=0` (the default) each batch is read, decoded and augmented in the
    training process, between two steps: the GPU waits for every batch. With workers,
    batches are prepared in parallel while the model trains.

    ## What to do instead
    Pass `num_workers=` (a few per GPU, up to the CPU cores), usually with
    `pin_memory=True` for GPU training and `persistent_workers=True` across epochs.

    ## Fix
    None: how many workers fit is the machine's and the dataset's question (and worker
    processes need the dataset to be picklable and the script to be import-safe).

    References: TorchFix TOR401; [torch.utils.data: multi-process data
    loading](https://pytorch.org/docs/stable/data.html#multi-process-data-loading);
    `torch.profiler._pattern_matcher.SynchronizedDataLoaderPattern`.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            data = TensorDataset(torch.randn(64, 3))
            train = DataLoader(data, batch_size=8, shuffle=True)
            valid = DataLoader(data, batch_size=8, num_workers=0)
            """,
            reported=((5, "DataLoader(data, batch_size=8, shuffle=True)"),
                      (6, "DataLoader(data, batch_size=8, num_workers=0)")),
        ),
    )
    good = (
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        def loaders(args):
            data = TensorDataset(torch.randn(64, 3))
            train = DataLoader(data, batch_size=8, shuffle=True, num_workers=4)
            valid = DataLoader(data, batch_size=8, num_workers=args.workers)
            return train, valid
        """,
        """
        class DataLoader:
            def __init__(self, path):
                self.path = path

        loader = DataLoader("data.csv")
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called != "DataLoader" or any(arg.star for arg in node.args):
            return
        argument = _num_workers(node)
        if argument is not None and not (isinstance(argument.value, cst.Integer) and argument.value.value == "0"):
            return
        qualname = self.ctx.qualname(func)
        if qualname not in torch_api.DATALOADER_CLASSES:
            return
        why = "no `num_workers`" if argument is None else "`num_workers` is 0"
        self.report(node, evidence=self.ctx.origin(func, qualname), why=why)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a performance rule; loading in the main process gives the same "
                                       "batches, only later")
