"""TL220 integer-true-division: ``/`` (``div``) on an integer tensor, integer division up to
PyTorch 1.4 and true division since 1.6: the float quotient of old beam-search code
(``candidates / vocab_size``) raises where it is used as an index, and ``/=`` on an integer
tensor raises at once."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Edit, Fix, Observation, Rule, Step, Verdict, cst,
    edits, integer_index, iter_nodes, keyword, positional_args, torch_facts, torch_api,
)

# What an integer stays through (the other operand an integer too).
_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Modulo, cst.FloorDivide)
_INTEGER_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.ModuloAssign,
                      cst.FloorDivideAssign)
_ERRORS = ("for index", "tensors used as indices must be", "can't be cast to the desired output type",
           "to have one of the following scalar types: Long, Int", "only applicable to index tensor")
_TRUNC = 'rounding_mode="trunc"'


class IntegerTrueDivision(Rule):
    code = "TL220"
    name = "integer-true-division"
    summary = ("`/` on an integer tensor (`idx / vocab_size`): integer division before PyTorch 1.5, a float "
               "tensor since 1.6, which raises where it is used as an index; `/=` on one raises")
    message = "`{division}` divides an integer tensor ({origin}): {consequence}; use `{fixed}`"
    fix = Applicability.SAFE
    since = "1.5"
    fix_since = "1.8"
    raised_where_used = True
    requires = (r"/|\bdiv",)
    references = (
        ("PyTorch 1.5.0 release notes: integer division with `/` and `div` is an error",
         "https://github.com/pytorch/pytorch/releases/tag/v1.5.0"),
        ("PyTorch 1.6.0 release notes: `/` and `div` perform true division",
         "https://github.com/pytorch/pytorch/releases/tag/v1.6.0"),
        ("torch.div (rounding_mode, since 1.8)", "https://pytorch.org/docs/stable/generated/torch.div.html"),
    )
    docs = """
    ## What it does
    Flags a division (`a / b`, `a.div(b)`, `torch.div(a, b)`, `a /= b`, `a.div_(b)`, none
    given a `rounding_mode`) of an integer tensor, where the code shows it wants an integer:

    - the quotient is used as an index, directly or through names, integer arithmetic and
      dtype-keeping methods (`x[q]`, `index_select`, `gather`, `scatter`, `index_add`,
      `take`, `F.embedding`, `F.one_hot`);
    - the same operands are also taken `%` (`candidates / V` next to `candidates % V`, the
      beam search's row and column of a flattened top-k);
    - the division is in place (`/=`, `div_`).

    A tensor is an integer one when it is made so: the indices of `topk`, `sort`,
    `max(dim)` and the like, `argmax`, `nonzero`, `randperm`, `.long()`, `.int()`,
    `torch.LongTensor(..)`, `dtype=torch.long`, `torch.arange` of integers, and what
    dtype-keeping methods (`view`, `squeeze`, `cuda`...), indexing and integer arithmetic
    make of one (the `integer` column of the table of torch facts, read from torch).

    ## Why is this bad?
    Up to PyTorch 1.4, `/` on two integer operands was integer division, rounding toward
    zero, as in C. PyTorch 1.5 made it an error, and since 1.6 it is true division: the
    quotient is a float tensor. Code written for the old behaviour (the beam search of a
    2018 seq2seq, `predecessors = candidates / vocab_size`) now computes fractional
    indices: `index_select` raises `Expected dtype int32 or int64 for index`, `x[q]` raises
    `IndexError: tensors used as indices must be long, int, byte or bool tensors`, and
    where nothing indexes with it the arithmetic silently goes on with fractions. An
    in-place division of an integer tensor raises `result type Float can't be cast to the
    desired output type Long`.

    ## What to do instead
    Say which rounding you mean: `torch.div(a, b, rounding_mode="trunc")` is exactly what
    the old `/` computed (toward zero); `a // b` (`rounding_mode="floor"`) is the same for
    the non-negative values indices are. Where a fraction is meant, write
    `a.float() / b`.

    ## Fix (safe)
    `a / b` becomes `torch.div(a, b, rounding_mode="trunc")`, `a /= b` on a name or an
    attribute becomes `a.div_(b, rounding_mode="trunc")`, and `div`/`div_` calls get
    `rounding_mode="trunc"`: the old result, for negative values too. `rounding_mode`
    needs PyTorch 1.8; with an older `target-torch` the fix is held back.
    """
    bad = (
        Bad(
            """
            import torch

            scores = torch.randn(2, 12)
            hidden = torch.randn(1, 6, 4)
            top, candidates = scores.view(2, -1).topk(3, dim=1)
            tokens = candidates % 4
            rows = (candidates / 4).view(-1)
            hidden = hidden.index_select(1, rows)
            counts = torch.arange(10)
            counts /= 2
            """,
            reported=((7, "candidates / 4"), (10, "counts /= 2")),
            fixed="""
            import torch

            scores = torch.randn(2, 12)
            hidden = torch.randn(1, 6, 4)
            top, candidates = scores.view(2, -1).topk(3, dim=1)
            tokens = candidates % 4
            rows = torch.div(candidates, 4, rounding_mode="trunc").view(-1)
            hidden = hidden.index_select(1, rows)
            counts = torch.arange(10)
            counts.div_(2, rounding_mode="trunc")
            """,
        ),
    )
    good = (
        """
        import torch

        scores = torch.randn(2, 12)
        top, candidates = scores.topk(3, dim=1)
        rows = torch.div(candidates, 4, rounding_mode="floor")
        cols = candidates // 4
        correct = (scores.argmax(1) == 0).sum()
        accuracy = correct / 2
        mean_index = candidates.float() / 4
        fraction = candidates / 4.0
        ratio = top / 2
        """,
    )

    _aliases: Optional[frozenset[str]] = None  # _div_aliases, once per file

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide):
            self._check(node, node.left, node.right, in_place=False)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.DivideAssign):
            self._check(node, node.target, node.value, in_place=True)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        # Most calls are no division: the name first (`torch.div` may be imported under another).
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else None
        if name not in ("div", "div_") and name not in self._div_aliases():
            return
        if keyword(node, "rounding_mode") is not None:
            return
        arguments = positional_args(node)
        if isinstance(func, cst.Attribute) and func.attr.value in ("div", "div_") \
                and self.ctx.qualname(func) is None and len(arguments) == 1:
            self._check(node, func.value, arguments[0].value, in_place=func.attr.value == "div_")
        elif self.ctx.qualname(func) == "torch.div" and len(arguments) == 2:
            self._check(node, arguments[0].value, arguments[1].value, in_place=False)

    def _div_aliases(self) -> frozenset[str]:
        """The names `torch.div` is imported under in this file (`from torch import div as d`)."""
        if self._aliases is None:
            self._aliases = self.ctx.imported_aliases(("torch.div",))
        return self._aliases

    def _check(self, node: cst.CSTNode, dividend: cst.BaseExpression, divisor: cst.BaseExpression,
               in_place: bool) -> None:
        if _floating(divisor) or self.ctx.version_dispatched(node) is not None:
            return
        found = self._integer(dividend, 0)
        if found is None:
            return
        origin, steps = found
        related: tuple = ()
        if in_place:
            consequence = ("true division gives a float, which an integer tensor cannot hold in place: RuntimeError "
                           "(result type Float can't be cast to the desired output type) since PyTorch 1.5")
        else:
            if self._converted(node):
                return
            uses = self._index_uses(node, 0)
            used = uses[0] if uses else None
            remainder = None if used is not None else self._remainder(node, dividend, divisor)
            if used is None and remainder is None:
                return
            if used is not None:
                consequence = (f"integer division up to PyTorch 1.4, a float tensor since 1.6, and the quotient is "
                               f"used as an index at line {self.ctx.line_index.position(used.start)[0]} "
                               f"(`{self.ctx.snippet(used)}`), which raises on a float tensor")
                related = tuple((use, "the quotient is used as an index here") for use in uses)
            else:
                consequence = (f"integer division up to PyTorch 1.4, a float tensor since 1.6; "
                               f"`{self.ctx.snippet(remainder)}` beside it takes the remainder of the same division, "
                               f"so the quotient is meant to be an integer")
                related = ((remainder, "the remainder of the same division"),)
        fix, fixed = self._fix(node, dividend, divisor, in_place)
        shown = self.ctx.snippet(node)
        if _own_parentheses(node) and shown.startswith("(") and shown.endswith(")"):
            shown = shown[1:-1]  # `(a / b).view(-1)`: the division, not its parentheses
        self.report(node, evidence=steps, fix=fix, related=related, division=shown,
                    origin=origin, consequence=consequence, fixed=fixed)

    # --- the evidence that a tensor holds integers ----------------------------------------

    def _integer(self, node: cst.BaseExpression, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        """How ``node`` is shown to be an integer tensor: a phrase, and the evidence steps."""
        if depth > 6:
            return None
        if isinstance(node, cst.Call):
            return self._integer_call(node, depth)
        if isinstance(node, cst.Subscript):
            return self._integer_subscript(node, depth)
        if isinstance(node, cst.Attribute):
            if node.attr.value == "indices" and self._indices_of(node.value) is not None:
                return f"the indices of `{self.ctx.snippet(node.value)}`", (Step(node, "`{code}` are int64 indices"),)
            fact = torch_facts.method(node.attr.value)
            if fact is not None and fact.kind == "property" and fact.integer == "keeps":  # `.data`
                return self._kept(node, node.value, depth)
            return None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _INTEGER_OPERATORS):
            left, right = self._integer(node.left, depth + 1), self._integer(node.right, depth + 1)
            if left is not None and (right is not None or _integer_literal(node.right)):
                return left[0], (Step(node, "`{code}` is integer arithmetic on integers"), *left[1])
            if right is not None and _integer_literal(node.left):
                return right[0], (Step(node, "`{code}` is integer arithmetic on integers"), *right[1])
            return None
        if isinstance(node, cst.Name):
            return self._integer_name(node, depth)
        return None

    def _integer_call(self, node: cst.Call, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        func = node.func
        qualname = self.ctx.qualname(func)
        if isinstance(func, cst.Attribute) and qualname is None:
            method = func.attr.value
            fact = torch_facts.method(method)
            integer = fact.integer if fact is not None else None
            if method in ("to", "type"):
                named = [self.ctx.qualname(a.value) or "" for a in node.args]
                if any(name in torch_api.INTEGER_DTYPE_NAMES or _integer_type(name) for name in named):
                    return f"`.{method}({self.ctx.snippet(node.args[0].value)})`", \
                        (Step(node, "`{code}` is an integer tensor"),)
                if node.args and not all(name.startswith("torch.device") or self._is_device(a.value)
                                         for name, a in zip(named, node.args)):
                    return None  # `.to(dtype)`, `.type(t)`: another dtype may come
            if integer == "always" and self.ctx.tensor(func.value) is not None:
                return f"`.{method}()`", (Step(node, "`{code}` is an integer tensor"),)
            if integer == "keeps":
                return self._kept(node, func.value, depth)
            return None
        if qualname is None:
            return None
        fact = torch_facts.fact(qualname)
        if fact is None:
            return None
        dtype = keyword(node, "dtype")
        if dtype is not None:
            if (self.ctx.qualname(dtype) or "") in torch_api.INTEGER_DTYPE_NAMES:
                return f"`dtype={self.ctx.snippet(dtype)}`", (Step(node, "`{code}` is an integer tensor"),)
            return None
        if fact.kind == "type" and fact.legacy_dtype is not None and "int" in fact.legacy_dtype:
            return f"`{qualname}`", (Step(node, "`{code}` is an integer tensor"),)
        arguments = positional_args(node)
        if fact.integer == "always" and fact.factory and arguments and all(_integer_literal(a.value)
                                                                           for a in arguments):
            return f"`{qualname}` of integers", (Step(node, "`{code}` is an integer tensor"),)
        if fact.integer == "always" and not fact.factory and arguments and self.ctx.tensor(arguments[0].value):
            return f"`{qualname}`", (Step(node, "`{code}` is an integer tensor"),)
        if fact.integer == "keeps" and arguments:
            return self._kept(node, arguments[0].value, depth)
        return None

    def _integer_subscript(self, node: cst.Subscript, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        if integer_index(node) in (1, -1):
            source = self._indices_of(node.value)
            if source is not None:
                return f"the indices of `{self.ctx.snippet(node.value)}`", \
                    (Step(node, f"`{{code}}` are the int64 indices `{source}` returns"),)
        return self._kept(node, node.value, depth)  # indexing keeps the dtype

    def _integer_name(self, node: cst.Name, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        sources = self.ctx.assignment_sources(node)
        if not sources:
            return None
        found = []
        for value, path, width, augmented in sources:
            for statement in augmented:  # `steps += 7`: still integers
                if not isinstance(statement.operator, _INTEGER_AUGMENTED) \
                        or not (_integer_literal(statement.value) or self._integer(statement.value, depth + 1)):
                    return None
            if path:
                source = self._indices_of(value, unpacked=True) if path in ((1,), (-1,)) and width == 2 else None
                if source is None:
                    return None
                found.append((f"the indices of `{self.ctx.snippet(value)}`",
                              (Step(value, f"`{node.value}` gets the int64 indices `{source}` returns"),)))
                continue
            inner = self._integer(value, depth + 1)
            if inner is None:
                return None
            found.append((inner[0], (Step(value, f"`{node.value}` = `{{code}}`"), *inner[1])))
        return found[0]

    def _kept(self, node: cst.CSTNode, source: cst.BaseExpression, depth: int) -> Optional[tuple[str, tuple]]:
        inner = self._integer(source, depth + 1)
        if inner is None:
            return None
        return inner[0], (Step(node, f"`{{code}}` keeps the dtype of `{self.ctx.snippet(source)}`"), *inner[1])

    def _indices_of(self, node: cst.BaseExpression, unpacked: bool = False) -> Optional[str]:
        """``x.topk(k)``, ``x.max(1)``, ``torch.sort(x)``: a call whose tuple ends with int64
        indices: the call's name, else None.  A method given a dimension and ``unpacked`` into
        two names (``_, index = x.max(1)``) needs no evidence that ``x`` is a tensor: numpy's
        ``max(1)`` and a list's ``sort()`` give no pair."""
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        qualname = self.ctx.qualname(func)
        if isinstance(func, cst.Attribute) and qualname is None:
            fact, receiver, arguments = torch_facts.method(func.attr.value), func.value, positional_args(node)
            dims = len(arguments)
        else:
            fact = torch_facts.fact(qualname) if qualname else None
            arguments = positional_args(node)
            receiver = arguments[0].value if arguments else None
            dims = len(arguments) - 1
        if fact is None or fact.integer != "indices" or receiver is None:
            return None
        given_dim = dims >= 1 or keyword(node, "dim") is not None
        if not (fact.tensor_only and fact.kind == "method" or self.ctx.tensor(receiver) is not None
                or unpacked and fact.kind == "method" and given_dim):
            return None
        if fact.returns == "depends" and not given_dim:
            return None  # `x.max()` is a tensor: only `x.max(dim)` gives (values, indices)
        return func.attr.value if isinstance(func, cst.Attribute) else qualname

    def _is_device(self, node: cst.BaseExpression) -> bool:
        """``device``, ``self.device``, ``args.device``, ``"cuda"``: where, not what."""
        if isinstance(node, cst.SimpleString):
            return True
        text = self.ctx.code(node)
        return text.rsplit(".", 1)[-1] in ("device", "dev", "gpu", "cuda")

    # --- where the code shows it wants an integer -----------------------------------------

    def _index_uses(self, node: cst.CSTNode, depth: int) -> list[cst.CSTNode]:
        """The calls and subscripts that take the quotient ``node`` (through integer arithmetic,
        dtype-keeping methods and names) as an index."""
        if depth > 3:
            return []
        current = node
        while True:
            parent = current.parent
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _INTEGER_OPERATORS):
                current = parent
                continue
            if isinstance(parent, cst.Attribute) and parent.value is current:
                call = parent.parent
                fact = torch_facts.method(parent.attr.value)
                if isinstance(call, cst.Call) and call.func is parent and fact is not None \
                        and fact.integer == "keeps" and parent.attr.value not in ("to", "type"):
                    current = call
                    continue
                if fact is not None and fact.kind == "property" and fact.integer == "keeps":
                    current = parent
                    continue
                return []
            if isinstance(parent, cst.Index):
                element = parent.parent
                subscript = element.parent if element is not None else None
                return [subscript] if isinstance(subscript, cst.Subscript) else []
            if isinstance(parent, cst.Arg):
                call = parent.parent
                return [call] if isinstance(call, cst.Call) and self._index_argument(call, parent) else []
            if isinstance(parent, cst.Assign) and parent.value is current and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0].target, cst.Name):
                return self._index_uses_of_name(parent.targets[0].target.value, parent.value, depth)
            return []

    def _converted(self, node: cst.CSTNode) -> bool:
        """The quotient is made an integer again before anything else reads it:
        ``(a / b).long()``, ``(a / b).floor().int()``, ``int(a / b)``."""
        current = node
        while True:
            parent = current.parent
            if isinstance(parent, cst.Arg) and isinstance(parent.parent, cst.Call) \
                    and isinstance(parent.parent.func, cst.Name) and parent.parent.func.value == "int":
                return True
            if not (isinstance(parent, cst.Attribute) and parent.value is current
                    and isinstance(parent.parent, cst.Call) and parent.parent.func is parent):
                return False
            call, method = parent.parent, parent.attr.value
            fact = torch_facts.method(method)
            if method in ("to", "type"):
                return any((self.ctx.qualname(a.value) or "") in torch_api.INTEGER_DTYPE_NAMES
                           or _integer_type(self.ctx.qualname(a.value) or "") for a in call.args)
            if fact is None or fact.integer not in ("always", "keeps") and method not in ("floor", "trunc", "round"):
                return False
            if fact.integer == "always":
                return True
            current = call

    def _index_uses_of_name(self, name: str, value: cst.BaseExpression, depth: int) -> list[cst.CSTNode]:
        uses = [use for load in self.ctx.reads_of_value(name, value) for use in self._index_uses(load, depth + 1)]
        return sorted(uses, key=lambda use: use.start)

    def _index_argument(self, call: cst.Call, argument: cst.Arg) -> bool:
        if argument.keyword is not None:
            return argument.keyword.value == "index"
        arguments = positional_args(call)
        position = next((i for i, a in enumerate(arguments) if a is argument), None)
        func = call.func
        if isinstance(func, cst.Attribute) and self.ctx.qualname(func) is None:
            fact = torch_facts.method(func.attr.value)
            return torch_api.INDEX_TAKING_METHODS.get(func.attr.value) == position and fact is not None \
                and (fact.tensor_only or self.ctx.tensor(func.value) is not None)
        return torch_api.INDEX_TAKING_FUNCTIONS.get(self.ctx.qualname(func) or "") == position

    def _remainder(self, node: cst.CSTNode, dividend: cst.BaseExpression,
                   divisor: cst.BaseExpression) -> Optional[cst.BinaryOperation]:
        """``dividend % divisor`` in the same function (or module): the divmod idiom."""
        scope = self.ctx.enclosing_function(node) or self.ctx.module
        wanted = (self.ctx.code(dividend), self.ctx.code(divisor))
        for other in _binary_operations(scope):
            if isinstance(other.operator, cst.Modulo) \
                    and (self.ctx.code(other.left), self.ctx.code(other.right)) == wanted:
                return other
        return None

    # --- the fix ------------------------------------------------------------------------

    def _fix(self, node: cst.CSTNode, dividend: cst.BaseExpression, divisor: cst.BaseExpression,
             in_place: bool) -> tuple[Optional[Fix], str]:
        if isinstance(node, cst.Call):
            text = edits.call_text(self.ctx, node, added=_TRUNC)
            return Fix(Applicability.SAFE, "Divide with `rounding_mode=\"trunc\"`, as `/` did on integers",
                       (edits.replace(node, text),)), text
        if in_place:
            if not isinstance(dividend, (cst.Name, cst.Attribute)):
                shown = f"{self.ctx.snippet(dividend)}.div_({self.ctx.snippet(divisor)}, {_TRUNC})"
                return None, shown
            text = f"{self.ctx.receiver_code(dividend)}.div_({self.ctx.code(divisor)}, {_TRUNC})"
            return Fix(Applicability.SAFE, "Divide in place with `rounding_mode=\"trunc\"`, as `/=` did on integers",
                       (edits.replace(node, text),)), text
        torch, imports = edits.torch_name(self.ctx)
        text = f"{torch}.div({self.ctx.code(dividend)}, {self.ctx.code(divisor)}, {_TRUNC})"
        # The call needs no parentheses of its own: `(a / b).view(-1)` -> `torch.div(..).view(-1)`.
        outer = Edit(node, text, span=self.ctx.outer_span(node)) if _own_parentheses(node) \
            else edits.replace(node, text)
        return Fix(Applicability.SAFE, "Divide with `rounding_mode=\"trunc\"`, as `/` did on integers",
                   (outer, *imports)), text

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and any(fragment in raised["message"] for fragment in _ERRORS):
            at = f" (raised at line {raised['line']})" if raised.get("line") else ""
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}{at}")
        quotient = run.first("quotient")
        if quotient is not None and not quotient["integer"]:
            return Verdict(NOT_REPRODUCED, f"`{quotient['dividend']}` held a {quotient['dtype']} tensor here, not "
                                           f"integers: its division is true division on any torch")
        if quotient is not None and quotient.get("fractional"):
            return Verdict(CONFIRMED, f"`{quotient['dividend']}` held {quotient['dtype']} integers, and dividing "
                                      f"gave the float tensor {quotient['true']} where PyTorch 1.4 gave "
                                      f"{quotient['old']}")
        if quotient is not None and "fractional" in quotient:
            return Verdict(NOT_REPRODUCED, f"`{quotient['dividend']}` divided without a remainder here "
                                           f"({quotient['old']}): the float quotient had the old values")
        return Verdict(NOT_REPRODUCED, "the division ran, and its float quotient raised nothing here")


def _own_parentheses(node: cst.CSTNode) -> bool:
    """``(a / b)`` with one pair of parentheses of its own, around nothing else."""
    return len(getattr(node, "lpar", ())) == 1 and len(getattr(node, "rpar", ())) == 1


def _floating(node: cst.BaseExpression) -> bool:
    """``2.0``, ``float(n)``: a float divisor asks for a fraction."""
    if isinstance(node, cst.Float):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float"


def _integer_literal(node: cst.BaseExpression) -> bool:
    """An int the code spells as one: ``4``, ``-1``, ``len(xs)``, a list of them."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _integer_literal(node.expression)
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(_integer_literal(e.value) for e in node.elements)
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"


def _integer_type(qualname: str) -> bool:
    fact = torch_facts.fact(qualname) if qualname.startswith("torch.") else None
    return fact is not None and fact.kind == "type" and "int" in (fact.legacy_dtype or "")


def _binary_operations(root: cst.CSTNode):
    return (node for node in iter_nodes(root) if isinstance(node, cst.BinaryOperation))
