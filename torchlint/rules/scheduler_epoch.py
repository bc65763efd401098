"""TL217 scheduler-step-epoch: ``scheduler.step(epoch)`` on a torch learning-rate scheduler,
deprecated since PyTorch 1.4 (it warns, and jumps the schedule to that epoch)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Step, Verdict, cst,
    edits, keyword, positional_args,
)

_MODULE = "torch.optim.lr_scheduler."
# The schedulers whose `step(epoch=None)` is LRScheduler's, which warns for any epoch but None.
# CosineAnnealingWarmRestarts keeps a supported `epoch` (fractional epochs), SequentialLR and
# ChainedScheduler take none: they are not here.
_EPOCH_FIRST = frozenset({_MODULE + name for name in (
    "LRScheduler", "_LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
    "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CyclicLR", "OneCycleLR",
)} | {"torch.optim.swa_utils.SWALR"})
# `ReduceLROnPlateau.step(metrics, epoch=None)`: the metric stays, the epoch is the deprecated part.
_PLATEAU = "torch.optim.lr_scheduler.ReduceLROnPlateau"
# Expressions whose evaluation does nothing but read: dropping one changes nothing else.
_READS = (cst.Name, cst.Attribute, cst.Integer, cst.Float)
# How many assignments and classes are followed from the receiver to the scheduler.
_MAX_DEPTH = 4
_EPOCH_WARNING = "The epoch parameter in `scheduler.step()` was not necessary"
_PLATEAU_MESSAGE = ("`{call}` passes an epoch to `{scheduler}.step()`: deprecated since PyTorch 1.4 (torch warns; "
                    "the learning rates do not depend on it); call `{modern}`")


@dataclass(frozen=True)
class Scheduler:
    """What the receiver of ``.step(..)`` is: torch scheduler classes, whether they are
    ReduceLROnPlateau (whose epoch is the second argument), whether the evidence says
    exactly which class runs (a construction) or only its base (an annotation), and why."""

    names: tuple[str, ...]
    plateau: bool
    exact: bool
    why: tuple[Step, ...]


class SchedulerStepEpoch(Rule):
    code = "TL217"
    name = "scheduler-step-epoch"
    summary = ("`scheduler.step(epoch)` on a torch LR scheduler (`ReduceLROnPlateau.step(metric, epoch)`): "
               "the epoch argument is deprecated since PyTorch 1.4; it warns")
    message = ("`{call}` passes an epoch to `{scheduler}.step()`: deprecated since PyTorch 1.4 (torch warns, and "
               "jumps the schedule to that epoch); call `{modern}` once per epoch")
    fix = Applicability.SAFE
    since = "1.4"
    requires = (r"\.step\s*\(", r"lr_scheduler|swa_utils")
    references = (
        ("torch.optim: how to adjust the learning rate",
         "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"),
        ("pytorch/pytorch#26423: chainable schedulers, the epoch argument deprecated (PyTorch 1.4)",
         "https://github.com/pytorch/pytorch/pull/26423"),
        ("torch.optim.lr_scheduler.ReduceLROnPlateau",
         "https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ReduceLROnPlateau.html"),
    )
    docs = """
    ## What it does
    Flags an epoch passed to `step()` of a torch learning-rate scheduler: `scheduler.step(epoch)`
    (or `step(epoch=epoch)`) on `StepLR`, `MultiStepLR`, `ExponentialLR`,
    `CosineAnnealingLR`, `LambdaLR`, `CyclicLR`, `OneCycleLR` and the other classes of
    `torch.optim.lr_scheduler` whose `step` is the base class's, and the second argument
    (or `epoch=`) of `ReduceLROnPlateau.step(metric, epoch)`. The receiver is shown to be such a
    scheduler: built from `torch.optim.lr_scheduler` (resolved through the file's imports,
    or a class of this file derived from one that keeps torch's `step`), directly, through
    names bound only to such values (or `None`), through `self.scheduler` when every
    assignment of it in the class is one, or through a parameter annotated with a scheduler
    class. `CosineAnnealingWarmRestarts.step(epoch)` is left alone: torch supports its
    (fractional) epoch. A scheduler wrapper of the project's own with a `step(epoch)` method
    is not a torch scheduler and is not reported, nor is a name bound to schedulers of both
    kinds (`step(x)` is a metric for ReduceLROnPlateau and an epoch for the others).

    An annotation names a class, and the object may be a subclass with a `step` of its
    own (allennlp's `NoamLR` ignores the epoch): there the finding says what the
    annotation promises, and the runtime check answers NOT REPRODUCED.

    ## Why is this bad?
    PyTorch 1.4 made the schedulers chainable: `step()` counts the epochs itself and
    computes each learning rate from the current one. An epoch passed to `step` is
    deprecated; torch warns on every such call ("The epoch parameter in
    `scheduler.step()` was not necessary and is being deprecated where possible") and,
    for the epoch it is given, sets `last_epoch` and uses the class's closed-form formula
    where it has one, which ignores anything else that changed the learning rate (another
    scheduler chained on the same optimizer). `ReduceLROnPlateau` only stores the epoch in
    `last_epoch`; its learning rates do not depend on it.

    ## What to do instead
    Call `scheduler.step()` once per epoch, after the optimizer's steps
    (`ReduceLROnPlateau`: `scheduler.step(metric)`). To resume, load the scheduler's
    `state_dict()` instead of passing the epoch.

    ## Fix (safe for ReduceLROnPlateau, unsafe for the others)
    Drops the epoch argument. For `ReduceLROnPlateau` built in this file (or a class of
    this file that keeps its `step`) the fix is safe: the learning rates it sets are the
    same, whatever the epochs passed were (measured on torch 2.13, with and without
    patience and cooldown; only `last_epoch` then counts the calls). It is unsafe where the
    file reads `last_epoch`, where the epoch expression does more than read a value, and
    where only an annotation says the receiver is a ReduceLROnPlateau (a subclass may use
    the epoch).

    For the other schedulers the fix is unsafe because the schedule can shift by one
    epoch: `step(epoch)` sets `last_epoch = epoch`, `step()` adds one to it. Both give the
    same learning rates (up to rounding between the closed and chainable forms) when the
    epoch passed is the number of `step` calls so far, as in
    `for epoch in range(1, n + 1): train(); scheduler.step(epoch)`. In the common
    `for epoch in range(n): train(); scheduler.step(epoch)` the old code keeps the initial
    rate one epoch longer (`step(0)` leaves `last_epoch` at 0) and then lags one epoch
    behind: with `StepLR(step_size=2, gamma=0.5)` and `lr=0.1` the epochs train with
    `0.1, 0.1, 0.1, 0.05, 0.05, 0.025` before the fix and `0.1, 0.1, 0.05, 0.05, 0.025,
    0.025` after it (torch 2.13; the same shift with the step at the start of the epoch,
    and with MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, LinearLR,
    ConstantLR and PolynomialLR; MultiplicativeLR gave the same rates either way). Code that resumes with `step(start_epoch)` needs the
    scheduler's `state_dict()` instead.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.optim.lr_scheduler import StepLR

            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = StepLR(optimizer, step_size=30)
            for epoch in range(1, 91):
                optimizer.step()
                scheduler.step(epoch)
            """,
            reported=((9, "epoch"),),
            fixed="""
            import torch
            from torch.optim.lr_scheduler import StepLR

            model = torch.nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scheduler = StepLR(optimizer, step_size=30)
            for epoch in range(1, 91):
                optimizer.step()
                scheduler.step()
            """,
            unsafe=True,
        ),
        Bad(
            """
            import torch

            class Trainer:
                def __init__(self, optimizer):
                    self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)

                def end_epoch(self, epoch, val_loss):
                    self.scheduler.step(val_loss, epoch)
            """,
            reported=((8, "epoch"),),
            fixed="""
            import torch

            class Trainer:
                def __init__(self, optimizer):
                    self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)

                def end_epoch(self, epoch, val_loss):
                    self.scheduler.step(val_loss)
            """,
        ),
    )
    good = (
        """
        import torch
        from torch.optim import lr_scheduler

        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = lr_scheduler.StepLR(optimizer, step_size=30)
        plateau = lr_scheduler.ReduceLROnPlateau(optimizer)
        restarts = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=10)
        for epoch in range(90):
            optimizer.step()
            scheduler.step()
            plateau.step(0.5)
            restarts.step(epoch + 0.5)
        """,
        """
        class WarmupSchedule:
            def __init__(self, warmup):
                self.warmup = warmup

            def step(self, epoch):
                return min(1.0, epoch / self.warmup)

        schedule = WarmupSchedule(5)
        factor = schedule.step(3)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "step" or not node.args \
                or any(arg.star for arg in node.args):
            return
        scheduler = self._scheduler(func.value, 0)
        if scheduler is None:
            return
        epoch = _epoch_argument(node, scheduler.plateau)
        if epoch is None or _is_none(epoch.value):
            return
        metric = [arg for arg in node.args if arg is not epoch]
        shown = ", ".join(f"{arg.keyword.value}={self.ctx.snippet(arg.value)}" if arg.keyword is not None
                          else self.ctx.snippet(arg.value) for arg in metric)
        self.report(epoch, _PLATEAU_MESSAGE if scheduler.plateau else None, evidence=scheduler.why,
                    fix=self._fix(node, epoch, scheduler), call=node, scheduler=" or ".join(scheduler.names),
                    modern=f"{self.ctx.receiver(func.value)}.step({shown})")

    def _fix(self, call: cst.Call, epoch: cst.Arg, scheduler: Scheduler) -> Fix:
        edit = (edits.replace(call, edits.call_text(self.ctx, call, lambda arg: arg is epoch)),)
        if not scheduler.plateau:
            return Fix(Applicability.UNSAFE, "Drop the epoch (the schedule may shift by one epoch: see the docs)", edit)
        # ReduceLROnPlateau's learning rates never depend on the epoch: only `last_epoch` does.
        exact = scheduler.exact and _only_reads(epoch.value) and self.ctx.comment_count(epoch) == 0 \
            and not re.search(r"\blast_epoch\b", self.ctx.text)
        return Fix(Applicability.SAFE if exact else Applicability.UNSAFE, "Drop the epoch argument", edit)

    # --- what the receiver is -------------------------------------------------------------

    def _scheduler(self, node: cst.BaseExpression, depth: int) -> Optional[Scheduler]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, cst.Call):
            return self._construction(node)
        if isinstance(node, cst.Name):
            if self.ctx.is_parameter(node):  # only its annotation says what it is
                return self._annotated(self.ctx.parameter_annotation(node), f"`{node.value}` is annotated `{{code}}`")
            values = self.ctx.assigned_values(node)
            if values is None:
                return None
            return self._all([(value, None) for value in values], node.value, depth)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return self._self_attribute(node, depth)
        return None

    def _all(self, values: list[tuple[Optional[cst.BaseExpression], Optional[cst.BaseExpression]]], name: str,
             depth: int) -> Optional[Scheduler]:
        """The scheduler that every one of ``values`` (value, annotation) is, `None` aside (a
        `step` call on `None` would raise); None when one is anything else or they disagree
        on where the epoch goes."""
        found: list[Scheduler] = []
        for value, annotation in values:
            if annotation is not None:
                scheduler = self._annotated(annotation, f"`{name}` is annotated `{{code}}`")
                if scheduler is not None:
                    found.append(scheduler)
                    continue
            if value is None:
                return None
            if _is_none(value):
                continue
            scheduler = self._scheduler(value, depth + 1)
            if scheduler is None:
                return None
            found.append(Scheduler(scheduler.names, scheduler.plateau, scheduler.exact,
                                   (Step(value, f"`{name}` = `{{code}}`"),) + scheduler.why))
        if not found or len({scheduler.plateau for scheduler in found}) != 1:
            return None
        names = tuple(dict.fromkeys(name for scheduler in found for name in scheduler.names))
        return Scheduler(names, found[0].plateau, all(s.exact for s in found),
                         tuple(step for scheduler in found for step in scheduler.why))

    def _self_attribute(self, node: cst.Attribute, depth: int) -> Optional[Scheduler]:
        """`self.scheduler` in a method, when every `self.scheduler = ..` of the class is a scheduler."""
        values = self.ctx.instance_attribute_values(node)
        return self._all(values, self.ctx.code(node), depth) if values is not None else None

    def _construction(self, call: cst.Call) -> Optional[Scheduler]:
        qualname = self.ctx.qualname(call.func)
        if qualname in _EPOCH_FIRST or qualname == _PLATEAU:
            step = Step(call, f"`{{code}}` builds a `{qualname}`")
            return Scheduler((qualname.rsplit(".", 1)[1],), qualname == _PLATEAU, True,
                             (step,) + self.ctx.origin(call.func, qualname))
        cls = self._local_class(call.func)
        found = self._inherited_step(cls, 0) if cls is not None else None
        if found is None:
            return None
        qualname, chain = found
        return Scheduler((cls.name,), qualname == _PLATEAU, True,
                         (Step(call, f"`{{code}}` builds a `{cls.name}`"),) + chain)

    def _local_class(self, node: cst.BaseExpression):
        value = self.ctx.infer(node)
        if value is not None and value.kind is Kind.CLASS and getattr(value.cls, "model", None) is self.ctx.model:
            return value.cls
        return None

    def _inherited_step(self, cls, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        """The torch scheduler a class of this file derives from, through classes of this file
        with one base each and no `step` of their own (so torch's `step` runs), and why."""
        bases = [base for base in cls.node.bases if base.keyword is None]
        if len(bases) != 1 or depth > _MAX_DEPTH or cls.defines("step"):
            return None
        base = bases[0].value
        qualname = self.ctx.qualname(base)
        if qualname in _EPOCH_FIRST or qualname == _PLATEAU:
            return qualname, (Step(base, f"`{cls.name}` derives from `{qualname}` without a `step` of its own"),)
        parent = self._local_class(base)
        found = self._inherited_step(parent, depth + 1) if parent is not None else None
        if found is None:
            return None
        return found[0], (Step(base, f"`{cls.name}` derives from `{{code}}` without a `step` of its own"),) + found[1]

    def _annotated(self, annotation: Optional[cst.BaseExpression], text: str) -> Optional[Scheduler]:
        """A scheduler class named by an annotation (`Optional[..]` and `.. | None` too): the
        object may be of a subclass, so the evidence is not exact."""
        target = _without_optional(self.ctx, annotation) if annotation is not None else None
        if target is None:
            return None
        qualname = self.ctx.qualname(target)
        if qualname not in _EPOCH_FIRST and qualname != _PLATEAU:
            return None
        return Scheduler((qualname.rsplit(".", 1)[1],), qualname == _PLATEAU, False,
                         (Step(annotation, text),) + self.ctx.origin(target, qualname))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        # LRScheduler.step may first warn that it ran before optimizer.step(): look at every warning.
        for kind, details in run.events:
            if kind == "warning" and _EPOCH_WARNING in details["message"]:
                return Verdict(CONFIRMED, f"torch warned \"{details['message']}\"")
        return Verdict(NOT_REPRODUCED, "torch gave no epoch-deprecation warning here (the scheduler's class has a "
                                       "`step` of its own, or the epoch was None)")


def _epoch_argument(call: cst.Call, plateau: bool) -> Optional[cst.Arg]:
    """The argument that is the epoch: `step(epoch)`, `step(metrics, epoch)`, or `epoch=`;
    None for a call of another shape (which torch would refuse)."""
    expected = 2 if plateau else 1
    if len(call.args) != expected:
        return None
    if keyword(call, "epoch") is not None:
        others = [arg for arg in call.args if arg.keyword is None or arg.keyword.value != "epoch"]
        if all(arg.keyword is None or arg.keyword.value == "metrics" for arg in others):
            return next(arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "epoch")
        return None
    return call.args[-1] if len(positional_args(call)) == expected else None


def _without_optional(ctx, annotation: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`X` of `X`, `Optional[X]`, `X | None` and `Union[X, None]`."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        sides = [annotation.left, annotation.right]
        rest = [side for side in sides if not _is_none(side)]
        return rest[0] if len(rest) == 1 else None
    if isinstance(annotation, cst.Subscript):
        outer = (ctx.qualname(annotation.value) or "").rsplit(".", 1)[-1]
        inner = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
        rest = [value for value in inner if not _is_none(value)]
        if outer in ("Optional", "Union") and len(rest) == 1 and len(inner) == len(annotation.slice):
            return rest[0]
        return None
    return annotation if isinstance(annotation, (cst.Name, cst.Attribute)) else None


def _is_none(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _only_reads(node: cst.BaseExpression) -> bool:
    """An epoch expression whose evaluation has no effect: names, attributes, numbers, arithmetic."""
    if isinstance(node, _READS):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _only_reads(node.left) and _only_reads(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _only_reads(node.expression)
    return False
