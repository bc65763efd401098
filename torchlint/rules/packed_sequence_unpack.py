"""TL219 packed-sequence-unpack: ``data, batch_sizes = packed`` on a PackedSequence, which has
had four fields since PyTorch 1.1: a ValueError (too many values to unpack) today."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Step, Verdict, cst, edits,
    torch_api,
)

_PACKED_SEQUENCE = "torch.nn.utils.rnn.PackedSequence"
# Handlers that catch the ValueError: an unpacking inside their `try` is a compatibility
# branch written for both layouts.
_CATCHING = frozenset({"builtins.ValueError", "builtins.Exception", "builtins.BaseException"})


class PackedSequenceUnpack(Rule):
    code = "TL219"
    name = "packed-sequence-unpack"
    summary = ("`data, batch_sizes = packed` on a PackedSequence: it has four fields since PyTorch 1.1, so the "
               "unpacking raises ValueError")
    message = ("`{target} = {value}` unpacks a PackedSequence into two names, but it has four fields since "
               "PyTorch 1.1: ValueError (too many values to unpack); read its fields: {fixed}")
    fix = Applicability.SAFE
    since = "1.1"
    requires = (r"PackedSequence|pack_padded_sequence|pack_sequence",)
    references = (
        ("torch.nn.utils.rnn.PackedSequence", "https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.PackedSequence.html"),
        ("pytorch/pytorch#15225: PackedSequence keeps sorted_indices and unsorted_indices (PyTorch 1.1)",
         "https://github.com/pytorch/pytorch/pull/15225"),
        ("huggingface/torchMoji#34: the error in torchMoji's LSTM", "https://github.com/huggingface/torchMoji/issues/34"),
    )
    docs = """
    ## What it does
    Flags an unpacking into exactly two targets (`a, b = x`, `[a, b] = x`) where `x` is
    a `torch.nn.utils.rnn.PackedSequence`, and shows how it knows: `x` is built here by
    `pack_padded_sequence(..)`, `pack_sequence(..)` or `PackedSequence(..)`, or is the
    first output of an `nn.LSTM`/`GRU`/`RNN` called on one (through names bound only to
    such values), or the unpacking runs under `if isinstance(x, PackedSequence):`,
    directly or through a name bound to that test:

    ```python
    is_packed = isinstance(input, PackedSequence)
    if is_packed:
        input, batch_sizes = input
    ```

    An unpacking inside a `try` whose handler catches `ValueError`, or in a branch that
    tests the torch version, is left alone: it is written for both layouts.

    ## Why is this bad?
    A `PackedSequence` is a namedtuple. Up to PyTorch 1.0 it had two fields, `data` and
    `batch_sizes`, and RNN code of that time (torchMoji's LSTM, ports of
    `torch/nn/_functions/rnn.py`) took them apart by unpacking. PyTorch 1.1 added
    `sorted_indices` and `unsorted_indices` for `enforce_sorted=False`, and every
    PackedSequence has all four fields, even one built as `PackedSequence(data,
    batch_sizes)` (the last two are then None). The unpacking now raises `ValueError: too
    many values to unpack (expected 2)`, and the model's forward stops there.

    ## What to do instead
    Read the fields by name: `data, batch_sizes = x.data, x.batch_sizes`. Where the
    order of the sequences matters, keep `x.sorted_indices` and `x.unsorted_indices`
    too, or pass the PackedSequence on whole.

    ## Fix (safe)
    When `x` is a name, `a, b = x` becomes `a, b = x.data, x.batch_sizes`: the values
    the two fields gave before PyTorch 1.1. When `x` is an attribute (`self.packed`), the
    same fix reads it twice and is unsafe; any other expression (a call) would be
    evaluated twice, and gets no fix, nor does `a, b = c = x` (`c` would get the pair).
    Code that later rebuilds `PackedSequence(output, batch_sizes)` from the two fields
    drops the indices of a sequence packed with `enforce_sorted=False`, as it would have
    on PyTorch 1.0: pass them on too where such sequences reach it.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

            class HardSigmoidLSTM(torch.nn.Module):
                def forward(self, input, hx=None):
                    is_packed = isinstance(input, PackedSequence)
                    if is_packed:
                        input, batch_sizes = input
                        max_batch_size = batch_sizes[0]
                    return input

            packed = pack_padded_sequence(torch.randn(5, 3, 4), [5, 4, 2])
            data, batch_sizes = packed
            """,
            reported=((8, "input, batch_sizes"), (13, "data, batch_sizes")),
            fixed="""
            import torch
            from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

            class HardSigmoidLSTM(torch.nn.Module):
                def forward(self, input, hx=None):
                    is_packed = isinstance(input, PackedSequence)
                    if is_packed:
                        input, batch_sizes = input.data, input.batch_sizes
                        max_batch_size = batch_sizes[0]
                    return input

            packed = pack_padded_sequence(torch.randn(5, 3, 4), [5, 4, 2])
            data, batch_sizes = packed.data, packed.batch_sizes
            """,
        ),
    )
    good = (
        """
        import torch
        from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

        packed = pack_padded_sequence(torch.randn(5, 3, 4), [5, 4, 2])
        data, batch_sizes = packed.data, packed.batch_sizes
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        first, *rest = packed
        padded, lengths = pad_packed_sequence(packed)
        hidden, cell = torch.zeros(1, 3, 2), torch.zeros(1, 3, 2)

        def unpack(input):
            if isinstance(input, PackedSequence):
                input, batch_sizes = input.data, input.batch_sizes
            return input
        """,
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        pairs = [target.target for target in node.targets if _two_names(target.target)]
        if not pairs or self.ctx.version_dispatched(node) is not None or self._caught(node):
            return
        value = node.value
        evidence = self._packed(value, node)
        if evidence is None:
            return
        named = isinstance(value, (cst.Name, cst.Attribute))
        shown = self.ctx.snippet(value)
        fixed = f"`{shown}.data, {shown}.batch_sizes`" if named else \
            f"`.data` and `.batch_sizes` of `{shown}`, evaluated once"
        fix = None
        # With `a, b = c = x`, `c` would get the pair instead of the PackedSequence.
        if named and len(node.targets) == 1:
            text = self.ctx.receiver_code(value)
            simple = isinstance(value, cst.Name)
            fix = Fix(Applicability.SAFE if simple else Applicability.UNSAFE,
                      "Read the fields `.data` and `.batch_sizes`" + ("" if simple else f" (`{text}` is read twice)"),
                      (edits.replace(value, f"{text}.data, {text}.batch_sizes"),))
        for target in pairs:
            self.report(target, evidence=evidence, fix=fix, target=self.ctx.snippet(target), value=shown, fixed=fixed)

    def _packed(self, value: cst.BaseExpression, statement: cst.Assign) -> Optional[tuple[Step, ...]]:
        """Why ``value`` is a PackedSequence: what the inference knows of it, or an
        ``isinstance`` test that guards ``statement``."""
        if isinstance(value, cst.Name):
            found = self.ctx.bound_values(value)
            if found and all(v is not None and v.kind is Kind.PACKED for v in found):
                return tuple(step for v in found for step in v.why)
            return self._guarded(value, statement)
        inferred = self.ctx.infer(value)
        if inferred is None or inferred.kind is not Kind.PACKED or not inferred.why:
            return None
        if inferred.why[0].node is value or isinstance(value, cst.Attribute):
            return inferred.why  # the chain starts at the value (`self.packed = ..` names it)
        said = "returns" if isinstance(value, cst.Call) else "is"
        return (Step(value, f"`{{code}}` {said} a PackedSequence"), *inferred.why)

    def _guarded(self, name: cst.Name, statement: cst.Assign) -> Optional[tuple[Step, ...]]:
        """The ``if`` tests, around ``statement`` in its function, that establish that ``name``
        is a PackedSequence: ``isinstance(name, PackedSequence)`` or a name bound to it."""
        if not self.ctx.binding_values(name):
            return None
        child: cst.CSTNode = statement
        for ancestor in self.ctx.ancestors(statement):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(ancestor, cst.If) and child is ancestor.body:
                for conjunct in _conjuncts(ancestor.test):
                    found = self._tests_packed(conjunct, name)
                    if found is not None:
                        return found
            child = ancestor
        return None

    def _tests_packed(self, test: cst.BaseExpression, name: cst.Name) -> Optional[tuple[Step, ...]]:
        """Evidence that ``test``, when true, shows that ``name`` (as it is bound where it is
        unpacked) is a PackedSequence: the ``isinstance`` call itself, or a name bound only to
        such calls."""
        if isinstance(test, cst.Call):
            found = self._isinstance(test, name)
            return None if found is None else (Step(test, f"`{{code}}` holds here: `{name.value}` is a PackedSequence"),
                                               *found)
        if not isinstance(test, cst.Name):
            return None
        values = self.ctx.assigned_values(test)
        if not values:
            return None
        steps: tuple[Step, ...] = ()
        for value in values:
            found = self._isinstance(value, name) if isinstance(value, cst.Call) else None
            if found is None:
                return None
            steps += (Step(value, f"`{test.value}` = `{{code}}`"),) + found
        return (Step(test, f"`{{code}}` holds here: `{name.value}` is a PackedSequence"),) + steps

    def _isinstance(self, call: cst.Call, name: cst.Name) -> Optional[tuple[Step, ...]]:
        """The import of PackedSequence, when ``call`` is ``isinstance(name, PackedSequence)``
        of the same ``name`` the unpacking reads (the same bindings reach both)."""
        if self.ctx.qualname(call.func) != "builtins.isinstance" or len(call.args) != 2 \
                or any(arg.star or arg.keyword is not None for arg in call.args):
            return None
        subject, kinds = call.args[0].value, call.args[1].value
        if not (isinstance(subject, cst.Name) and subject.value == name.value):
            return None
        if not self.ctx.same_bindings(subject, name):
            return None  # rebound between the test and the unpacking
        if isinstance(kinds, cst.Tuple):
            return None  # `isinstance(x, (tuple, PackedSequence))`: x may be a pair
        if torch_api.normalize(self.ctx.qualname(kinds) or "") != _PACKED_SEQUENCE:
            return None
        return self.ctx.origin(kinds, _PACKED_SEQUENCE)

    def _caught(self, statement: cst.Assign) -> bool:
        """Whether ``statement`` is in the body of a ``try`` (in its function) that catches ValueError."""
        child: cst.CSTNode = statement
        for ancestor in self.ctx.ancestors(statement):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(ancestor, (cst.Try, cst.TryStar)) and child is ancestor.body:
                for handler in ancestor.handlers:
                    caught = handler.type
                    if caught is None:
                        return True
                    kinds = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
                    if any(self.ctx.qualname(kind) in _CATCHING for kind in kinds):
                        return True
            child = ancestor
        return False

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "ValueError" \
                and "too many values to unpack (expected 2" in raised["message"]:
            return Verdict(CONFIRMED, f"ValueError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "the value unpacked here had two items: not a PackedSequence of PyTorch 1.1 "
                                       "or later on this run")


def _two_names(target: cst.BaseExpression) -> bool:
    """``a, b`` or ``[a, b]``: two targets, none starred (``a, *rest`` takes any length)."""
    return isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
        and not any(isinstance(element, cst.StarredElement) for element in target.elements)


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of ``a and b and c``, each true when the test is; the test itself otherwise."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]
