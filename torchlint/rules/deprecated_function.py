"""TL503 deprecated-function and TL504 deprecated-import: ``torch.qr``, ``torch.range``,
``torch.cuda.amp.autocast``, ``functorch.vmap``...: functions torch deprecated for
another (TorchFix's TOR101 and TOR103)."""

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, called_name, cst, edits,
    earliest_release, imported_module, is_false, is_true, torch_api,
)

_TABLE = torch_api.DEPRECATED_FUNCTIONS
_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in _TABLE)
_REQUIRES = "|".join(sorted(_NAMES))  # a filter: words inside others may match
_AUTOCAST_POSITIONAL = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast's, in order
# Drop-in replacements whose signature is not quite the same: the fix is unsafe.
_UNSAFE_DROP_IN = frozenset({"torch.utils._pytree._register_pytree_node"})
# What an operand must be to take `+ 1` without parentheses: an atom or arithmetic.
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.MatrixMultiply)


def _since(qualname: str) -> str:
    since = _TABLE[qualname][0]
    return f"deprecated since PyTorch {since}" if since else "deprecated"


def _int(node: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal, ``-2`` included."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def _argument(call: cst.Call, name: str, position: int) -> Optional[cst.Arg]:
    positional = [arg for arg in call.args if arg.keyword is None]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return positional[position] if position < len(positional) else None


class DeprecatedFunction(Rule):
    code = "TL503"
    name = "deprecated-function"
    summary = ("`torch.qr`, `torch.range`, `torch.cholesky`, `torch.cuda.amp.autocast`, `functorch.vmap`...: "
               "deprecated functions with a replacement")
    message = "`{qualname}` is {since}; use {replacement}"
    fix = Applicability.SAFE
    torchfix = ("TOR101",)
    requires = (_REQUIRES,)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags calls of torch functions deprecated in favour of another (TorchFix's list),
    resolved through the file's imports: `torch.qr`, `torch.cholesky`,
    `torch.chain_matmul`, `torch.symeig`'s siblings `torch.lu`, `torch.lu_solve`,
    `torch.triangular_solve`, `torch.svd`, `torch.norm` (deprecated from PyTorch 1.9 on
    for `torch.linalg`), `torch.ger` (`torch.outer`), `torch.range` (`torch.arange`),
    `nn.UpsamplingNearest2d` / `nn.UpsamplingBilinear2d` (`nn.Upsample`),
    `torch.testing.assert_allclose` (`assert_close`, 1.12), `nn.utils.weight_norm`
    (`nn.utils.parametrizations.weight_norm`, 2.1), `torch.utils._pytree._register_pytree_node`
    (2.2), `torch.backends.cuda.sdp_kernel` (`torch.nn.attention.sdpa_kernel`),
    `torch.cuda.amp.autocast`, `torch.cpu.amp.autocast`, `torch.cuda.amp.custom_fwd` and
    `custom_bwd`, `torch.cuda.amp.GradScaler` (`torch.amp`, 2.4), the per-device autocast
    state functions `torch.get_autocast_gpu_dtype()`, `torch.is_autocast_cpu_enabled()`,
    `torch.set_autocast_cpu_dtype(..)`... (one function taking the device, 2.4),
    `torch.cuda.memory_cached` and `max_memory_cached` (`memory_reserved`, 1.4), and
    `functorch.vmap`, `grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian`, `functionalize`
    (`torch.func`, 2.0). A bare decorator (`@torch.cuda.amp.custom_fwd`) is a call too.
    With `target-torch`, an API deprecated after the target release is not reported.

    ## Why is this bad?
    Most of them warn when called (`torch.norm`, `torch.svd`, `torch.ger` and the
    `Upsampling*2d` classes are deprecated in their documentation only) and all are
    due to go: `torch.solve`, `torch.symeig` and `torch.eig` went that way (TL501).
    `torch.range` also includes its end, unlike Python's `range` and `torch.arange`,
    and returns floats for integer bounds.

    ## What to do instead
    Call the replacement the message names. Several take their arguments in another
    order (`torch.linalg.lu_solve(LU, pivots, B)`, `torch.linalg.solve_triangular(A, B)`)
    or return something else (`torch.linalg.svd` returns `Vh`, not `V`).

    ## Fix
    Safe: `torch.ger` -> `torch.outer`, `functorch.vmap` -> `torch.func.vmap` (and the
    other `functorch` transforms), `torch.cuda.amp.autocast(..)` ->
    `torch.amp.autocast("cuda", ..)` (positional arguments passed by keyword, as the two
    signatures order them differently), `torch.cuda.amp.custom_fwd` ->
    `torch.amp.custom_fwd(.., device_type="cuda")`, `torch.cuda.amp.GradScaler(..)` ->
    `torch.amp.GradScaler("cuda", ..)`, `torch.get_autocast_gpu_dtype()` ->
    `torch.get_autocast_dtype("cuda")` (the device first, the other arguments as they
    were), `torch.cuda.memory_cached` -> `torch.cuda.memory_reserved`,
    `torch.chain_matmul(a, b, ..)` ->
    `torch.linalg.multi_dot([a, b, ..])` (two matrices or more: `multi_dot` refuses one).
    Unsafe: `torch.qr(A)` -> `torch.linalg.qr(A)` (`some=False`: `mode="complete"`),
    `torch.cholesky(A)` -> `torch.linalg.cholesky(A)` (`upper=True`: `.mH`, computed from
    the lower factor), `_register_pytree_node` -> `register_pytree_node` (the arguments
    after the third differ), and `torch.range(a, b)` -> `torch.arange(a, b + 1)`: the end
    is the last value plus the step where all are integer literals (`range(0, 6, 2)` ->
    `arange(0, 8, 2)`), a trailing `- 1` is dropped (`n - 1` -> `n`), and otherwise `+ 1`
    (or `- 1` for a negative step) is added, which is exact for integer bounds; the
    dtype changes from the default float type to `int64` unless `dtype=` is given. A
    float or computed step gets no automatic fix, and neither do the functions whose
    replacement takes other arguments, nor a function imported by name
    (`from functorch import vmap`: TL504 rewrites the import).
    """
    bad = (
        Bad(
            """
            import torch
            import functorch

            def positions(n):
                return torch.range(0, n - 1)

            def per_sample_grads(f, x):
                return functorch.vmap(functorch.grad(f))(x)

            with torch.cuda.amp.autocast(enabled=False):
                pass
            """,
            reported=((5, "torch.range(0, n - 1)"), (8, "functorch.vmap(functorch.grad(f))"),
                      (8, "functorch.grad(f)"), (10, "torch.cuda.amp.autocast(enabled=False)")),
            fixed="""
            import torch
            import functorch

            def positions(n):
                return torch.arange(0, n)

            def per_sample_grads(f, x):
                return torch.func.vmap(torch.func.grad(f))(x)

            with torch.amp.autocast("cuda", enabled=False):
                pass
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        positions = torch.arange(0, 10)
        q, r = torch.linalg.qr(torch.eye(3))
        with torch.amp.autocast("cpu"):
            pass
        per_sample = torch.func.vmap(torch.sin)(torch.ones(3))
        """,
        """
        import math
        import numpy as np

        def norm(v):
            return math.sqrt(sum(x * x for x in v))

        q, r = np.linalg.qr(np.eye(3))
        total = norm([3, 4]) + sum(range(0, 10))
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.aliases = self.ctx.imported_aliases(_TABLE)

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self._deprecated(node.func)
        if qualname is not None:
            self.report(node, evidence=self.ctx.origin(node.func, qualname), fix=self._fix(node, node.func, qualname),
                        qualname=qualname, since=_since(qualname), replacement=_TABLE[qualname][1],
                        holds_from=_TABLE[qualname][0])

    def visit_Decorator(self, node: cst.Decorator) -> None:
        decorator = node.decorator
        if isinstance(decorator, cst.Call):
            return  # a call: visit_Call
        qualname = self._deprecated(decorator)
        if qualname is not None:
            self.report(decorator, evidence=self.ctx.origin(decorator, qualname),
                        fix=self._fix(None, decorator, qualname),
                        qualname=qualname, since=_since(qualname), replacement=_TABLE[qualname][1],
                        holds_from=_TABLE[qualname][0])

    def _deprecated(self, func: cst.BaseExpression) -> Optional[str]:
        called = called_name(func)
        if called not in _NAMES and called not in self.aliases:
            return None  # most calls: no need to resolve the name
        qualname = self.ctx.qualname(func)
        if qualname not in _TABLE:
            return None
        if isinstance(func, cst.Name) and any(imported not in _TABLE for imported in self.ctx.imports_binding(func)):
            return None  # `try: from torch import vmap / except ImportError: from functorch import vmap`
        if self.ctx.version_dispatched(func) is not None:
            return None  # the branch for older torch of `if version.parse(torch.__version__) >= ...`
        return qualname

    # --- fixes ----------------------------------------------------------------------

    def _advice(self, qualname: str, why: str = "") -> Fix:
        return Fix(Applicability.DISPLAY_ONLY, f"Use {_TABLE[qualname][1]}{why}", ())

    def _torch(self, func: cst.BaseExpression) -> tuple[str, tuple[Edit, ...]]:
        """How to spell ``torch`` here: the root of ``func`` when it is the torch module
        (``T`` of ``T.qr``), or the file's name for it (imported when needed)."""
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if root is not func and isinstance(root, cst.Name) and self.ctx.qualname(root) == "torch":
            return root.value, ()
        return edits.torch_name(self.ctx)

    def _fix(self, call: Optional[cst.Call], func: cst.BaseExpression, qualname: str) -> Fix:
        if not isinstance(func, cst.Attribute):
            return self._advice(qualname, " (and import it instead)")
        if call is not None and any(arg.star for arg in call.args) and qualname not in torch_api.DROP_IN_REPLACEMENTS:
            return self._advice(qualname)
        if qualname in torch_api.DROP_IN_REPLACEMENTS:
            return self._rename(func, qualname)
        if qualname in torch_api.DEVICE_CUSTOM_AUTOGRAD_DECORATORS:
            return self._custom(call, func, qualname)
        if call is None:
            return self._advice(qualname)
        if qualname in torch_api.DEVICE_AUTOCASTS:
            return self._autocast(call, func, torch_api.DEVICE_AUTOCASTS[qualname])
        if qualname in torch_api.DEVICE_ARGUMENT_REPLACEMENTS:
            return self._device_first(call, func, qualname)
        if qualname == "torch.range":
            return self._range(call, func)
        if qualname == "torch.cholesky":
            return self._cholesky(call, func)
        if qualname == "torch.qr":
            return self._qr(call, func)
        if qualname == "torch.chain_matmul":
            return self._chain_matmul(call, func)
        return self._advice(qualname)

    def _rename(self, func: cst.Attribute, qualname: str) -> Fix:
        new = torch_api.DROP_IN_REPLACEMENTS[qualname]
        applicability = Applicability.UNSAFE if qualname in _UNSAFE_DROP_IN else Applicability.SAFE
        if new.rsplit(".", 1)[0] == qualname.rsplit(".", 1)[0]:  # the same module: rename the attribute
            return Fix(applicability, f"Call `{new}`", (edits.replace(func.attr, new.rsplit(".", 1)[1]),))
        torch, imports = self._torch(func)
        spelled = torch + new[len("torch"):] if new.startswith("torch.") else new
        return Fix(applicability, f"Call `{new}`", (edits.replace(func, spelled), *imports))

    def _rewritten(self, call: cst.Call, func: str, dropped=lambda arg: False, added: str = "",
                   first: str = "") -> str:
        """The call with ``func`` for its function, the arguments for which ``dropped`` is
        true left out, ``added`` after the others and ``first`` before them."""
        text = edits.call_text(self.ctx, call, dropped, added)
        rest = text[self.ctx.span(call.func)[1] - self.ctx.span(call)[0]:]
        if first:
            opening = rest.index("(") + 1
            inside = rest[opening:].strip()
            rest = rest[:opening] + first + (", " if inside != ")" else "") + rest[opening:].lstrip() \
                if inside != ")" else rest[:opening] + first + ")"
        return func + rest

    def _autocast(self, call: cst.Call, func: cst.Attribute, device: str) -> Fix:
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(positional) > len(_AUTOCAST_POSITIONAL):
            return self._advice(f"torch.{device}.amp.autocast")
        torch, imports = self._torch(func)
        # torch.amp.autocast(device_type, dtype, enabled, ...): another order than
        # torch.cuda.amp.autocast(enabled, dtype, ...), so positional arguments go by keyword.
        added = ", ".join(f"{name}={self.ctx.code(arg.value)}" for name, arg in zip(_AUTOCAST_POSITIONAL, positional))
        text = self._rewritten(call, f"{torch}.amp.autocast", lambda arg: arg.keyword is None, added, f'"{device}"')
        return Fix(Applicability.SAFE, f'Call `torch.amp.autocast("{device}", ...)`',
                   (edits.replace(call, text), *imports))

    def _device_first(self, call: cst.Call, func: cst.Attribute, qualname: str) -> Fix:
        """``torch.get_autocast_gpu_dtype()`` -> ``torch.get_autocast_dtype("cuda")``, and
        ``torch.cuda.amp.GradScaler(..)`` -> ``torch.amp.GradScaler("cuda", ..)``: the
        device first, the other arguments after it as they were."""
        new, device = torch_api.DEVICE_ARGUMENT_REPLACEMENTS[qualname]
        torch, imports = self._torch(func)
        text = self._rewritten(call, torch + new[len("torch"):], first=f'"{device}"')
        return Fix(Applicability.SAFE, f'Call `{new}("{device}", ...)`', (edits.replace(call, text), *imports))

    def _custom(self, call: Optional[cst.Call], func: cst.Attribute, qualname: str) -> Fix:
        name = torch_api.DEVICE_CUSTOM_AUTOGRAD_DECORATORS[qualname]
        torch, imports = self._torch(func)
        if call is None:  # @torch.cuda.amp.custom_fwd
            text = f'{torch}.amp.{name}(device_type="cuda")'
            return Fix(Applicability.SAFE, f'Use `@torch.amp.{name}(device_type="cuda")`',
                       (edits.replace(func, text), *imports))
        if any(arg.keyword is not None and arg.keyword.value == "device_type" for arg in call.args):
            return self._advice(qualname)
        text = self._rewritten(call, f"{torch}.amp.{name}", added='device_type="cuda"')
        return Fix(Applicability.SAFE, f'Call `torch.amp.{name}(..., device_type="cuda")`',
                   (edits.replace(call, text), *imports))

    def _cholesky(self, call: cst.Call, func: cst.Attribute) -> Fix:
        upper = _argument(call, "upper", 1)
        source = _argument(call, "input", 0)
        if source is None:
            return self._advice("torch.cholesky")
        torch, imports = self._torch(func)
        new = f"{torch}.linalg.cholesky"
        out = any(arg.keyword is not None and arg.keyword.value == "out" for arg in call.args)
        if upper is None or is_false(upper.value):
            text = self._rewritten(call, new, lambda arg: arg is upper)
        elif is_true(upper.value) and not out:
            # U = L^H: what torch.cholesky's deprecation message itself suggests.
            text = self._rewritten(call, new, lambda arg: arg is upper) + ".mH"
        else:
            text = self._rewritten(call, new, lambda arg: arg is upper, f"upper={self.ctx.code(upper.value)}")
        return Fix(Applicability.UNSAFE, "Call `torch.linalg.cholesky`", (edits.replace(call, text), *imports))

    def _qr(self, call: cst.Call, func: cst.Attribute) -> Fix:
        some = _argument(call, "some", 1)
        if _argument(call, "input", 0) is None:
            return self._advice("torch.qr")
        torch, imports = self._torch(func)
        added = ""
        if some is not None and is_false(some.value):
            added = 'mode="complete"'
        elif some is not None and not is_true(some.value):
            added = f'mode="reduced" if {self.ctx.code(some.value)} else "complete"'
        text = self._rewritten(call, f"{torch}.linalg.qr", lambda arg: arg is some, added)
        return Fix(Applicability.UNSAFE, "Call `torch.linalg.qr`", (edits.replace(call, text), *imports))

    def _chain_matmul(self, call: cst.Call, func: cst.Attribute) -> Fix:
        matrices = [arg for arg in call.args if arg.keyword is None]
        others = [arg for arg in call.args if arg.keyword is not None]
        if len(matrices) < 2 or any(arg.keyword.value != "out" for arg in others):
            return self._advice("torch.chain_matmul", " (it needs two matrices or more)")
        torch, imports = self._torch(func)
        listed = "[" + ", ".join(self.ctx.code(arg.value) for arg in matrices) + "]"
        arguments = ", ".join([listed, *(f"out={self.ctx.code(arg.value)}" for arg in others)])
        return Fix(Applicability.SAFE, "Call `torch.linalg.multi_dot`",
                   (edits.replace(call, f"{torch}.linalg.multi_dot({arguments})"), *imports))

    def _range(self, call: cst.Call, func: cst.Attribute) -> Fix:
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
        if len(positional) > 3 or not set(keywords) <= {"start", "end", "step", "out", "dtype", "layout", "device",
                                                          "requires_grad"}:
            return self._advice("torch.range")
        named = dict(zip(("start", "end", "step"), positional))
        if any(name in named for name in keywords):
            return self._advice("torch.range")
        named.update({name: arg for name, arg in keywords.items() if name in ("start", "end", "step")})
        end_arg, step_arg, start_arg = named.get("end"), named.get("step"), named.get("start")
        if end_arg is None:
            return self._advice("torch.range")
        step = 1 if step_arg is None else _int(step_arg.value)
        if step is None or step == 0:
            return self._advice("torch.range", " (its end is excluded: add the step to it)")
        end = end_arg.value
        start = 0 if start_arg is None else _int(start_arg.value)
        literal = _int(end)
        exact = False
        if literal is not None and start is not None:
            count = (literal - start) // step + 1  # torch.range includes its end when a step lands on it
            if count <= 0:
                return self._advice("torch.range")
            new_end = str(start + count * step)  # one step past the last value
            exact = True
        elif literal is not None:
            new_end = str(literal + (1 if step > 0 else -1))
        elif isinstance(end, cst.BinaryOperation) and _int(end.right) == (1 if step > 0 else -1) and \
                isinstance(end.operator, cst.Subtract):
            new_end = self.ctx.code(end.left)  # `n - 1` -> `n`
        elif isinstance(end, cst.BinaryOperation) and _int(end.right) == 1 and step < 0 and \
                isinstance(end.operator, cst.Add):
            new_end = self.ctx.code(end.left)  # `n + 1`, counting down -> `n`
        else:
            start_of, end_of = self.ctx.outer_span(end)
            operand = self.ctx.text[start_of:end_of]
            if (start_of, end_of) == self.ctx.span(end) and not (
                    isinstance(end, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
                                     cst.UnaryOperation))
                    or (isinstance(end, cst.BinaryOperation) and isinstance(end.operator, _ARITHMETIC))):
                operand = f"({operand})"
            new_end = f"{operand} + 1" if step > 0 else f"{operand} - 1"
        end_at = self.ctx.span(call)[1]
        func_end = self.ctx.span(call.func)[1]
        value_start, value_end = self.ctx.outer_span(end)
        text = self.ctx.text
        head = self.ctx.code(func.value) + ".arange"
        new = head + text[func_end:value_start] + new_end + text[value_end:end_at]
        safe = exact and "dtype" in keywords
        return Fix(Applicability.SAFE if safe else Applicability.UNSAFE,
                   "Call `torch.arange` with the end moved one step on" +
                   ("" if "dtype" in keywords else " (it returns int64 for integer bounds, torch.range floats)"),
                   (edits.replace(call, new),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or(
            "deprecated",
            "torch gave no deprecation warning here (`torch.norm`, `torch.svd`, "
            "`torch.ger` and `nn.Upsampling*2d` are deprecated in the documentation only)",
        )


class DeprecatedImport(Rule):
    code = "TL504"
    name = "deprecated-import"
    summary = "`from functorch import vmap`, `from torch import qr`...: an import of a deprecated torch function"
    message = "import of {names}; use {replacements}"
    fix = Applicability.SAFE
    torchfix = ("TOR103",)
    requires = (_REQUIRES,)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags `from ... import` statements that import a deprecated torch function (the
    functions of TL503: `from functorch import vmap, grad`, `from torch import qr`,
    `from torch.cuda.amp import autocast`, `from torch.backends.cuda import sdp_kernel`...),
    once for the statement whatever the number of such names in it; the calls through
    the imported names are TL503's.

    ## Why is this bad?
    The function is on its way out (most of them warn on every call, see TL503), and an
    import is where the new spelling is best introduced: the calls then need no change.

    ## What to do instead
    Import the replacement: `from torch.func import vmap, grad` for the `functorch`
    transforms (since PyTorch 2.0), `from torch import outer` for `ger`,
    `register_pytree_node` for `_register_pytree_node`.

    ## Fix (safe)
    When every name the statement imports has a drop-in replacement in one module, the
    statement is rewritten: `from functorch import vmap, grad` becomes `from torch.func
    import vmap, grad`, and `from torch import ger` becomes `from torch import outer`
    (with the calls of `ger` in the file renamed `outer`; `ger as g` becomes `outer as
    g` and the calls stay). A statement that also imports something without such a
    replacement (`from functorch import make_functional, vmap`), or a function whose
    replacement takes other arguments (`from torch.cuda.amp import autocast`: the device
    becomes the first argument of `torch.amp.autocast`), gets the advice without an
    automatic fix. `_register_pytree_node` -> `register_pytree_node` is unsafe (the
    arguments after the third differ).
    """
    bad = (
        Bad(
            """
            from functorch import vmap, grad
            from torch import ger

            def outer_products(u, v):
                return vmap(ger)(u, v)
            """,
            reported=((1, "from functorch import vmap, grad"), (2, "from torch import ger")),
            fixed="""
            from torch.func import vmap, grad
            from torch import outer

            def outer_products(u, v):
                return vmap(outer)(u, v)
            """,
        ),
    )
    good = (
        """
        from torch.func import vmap, grad
        from torch import outer
        from torch.amp import autocast
        from numpy.linalg import qr, norm
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = imported_module(node)
        if module is None or any(isinstance(a, cst.ExceptHandler) for a in self.ctx.ancestors(node)):
            return  # none, or the fallback of `try: from torch.func import vmap / except ImportError:`
        aliases = [alias for alias in node.names if isinstance(alias.name, cst.Name)]
        found = [f"{module}.{alias.name.value}" for alias in aliases if f"{module}.{alias.name.value}" in _TABLE]
        if not found:
            return
        names = " and ".join(f"`{qualname}` ({_since(qualname)})" for qualname in found)
        replacements = "; ".join(f"{_TABLE[q][1]} for `{q.rsplit('.', 1)[1]}`" for q in found)
        self.report(node, fix=self._fix(node, module, aliases, found), names=names, replacements=replacements,
                    holds_from=earliest_release(_TABLE[qualname][0] for qualname in found))

    def _fix(self, node: cst.ImportFrom, module: str, aliases: list[cst.ImportAlias], found: list[str]) -> Fix:
        advice = Fix(Applicability.DISPLAY_ONLY, "; ".join(f"Import {_TABLE[q][1]}" for q in found), ())
        if len(found) != len(aliases) or any(q not in torch_api.DROP_IN_REPLACEMENTS for q in found):
            return advice
        modules = {torch_api.DROP_IN_REPLACEMENTS[q].rsplit(".", 1)[0] for q in found}
        if len(modules) != 1:
            return advice
        new_module = modules.pop()
        changes: list[Edit] = []
        if new_module != module:
            changes.append(edits.replace(node.module, new_module))
        for alias in aliases:
            old = alias.name.value
            new = torch_api.DROP_IN_REPLACEMENTS[f"{module}.{old}"].rsplit(".", 1)[1]
            if new == old:
                continue
            changes.append(edits.replace(alias.name, new))
            if alias.asname is None:
                uses = self.ctx.reads_of_import(alias, old)
                if uses is None:
                    return advice
                changes += [edits.replace(use, new) for use in uses]
        unsafe = any(q in _UNSAFE_DROP_IN for q in found)
        new_names = ", ".join(torch_api.DROP_IN_REPLACEMENTS[q].rsplit(".", 1)[1] for q in found)
        return Fix(Applicability.UNSAFE if unsafe else Applicability.SAFE,
                   f"Import `{new_names}` from `{new_module}`", tuple(changes))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return DeprecatedFunction.judge(run)
