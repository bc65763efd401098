"""TL410 gradient-cut: inside ``forward`` (or a loss), a tensor of the autograd graph turned
into numpy or Python values that flow into what the function returns.

Where values leave torch and how they reach the result is the shared analysis's
(``torchlint.analysis.graph_exits``, reached through ``ctx.grad_flow.graph_exits``); this
rule chooses the functions, leaves out the layers meant to stay fixed, and says it."""

from __future__ import annotations

import re

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, is_true, iter_nodes,
    keyword, quote, torch_facts,
)

# Layers whose output is not meant to be trained through (a teacher, a target network).
_NOT_TRAINED = re.compile(r"teacher|target|ema\b|_ema|momentum|frozen|fixed|pretrained|reference|critic_old", re.I)
# Classes that only run for inference (an export wrapper, a predictor, a post-processor).
_INFERENCE_CLASSES = re.compile(r"Predictor|Inference|Export|Post[Pp]rocess|Demo|Deploy|Evaluat")


class GradientCut(Rule):
    code = "TL410"
    name = "gradient-cut"
    summary = ("inside `forward`, a graph tensor turned into numpy or Python values (`.numpy()`, `.item()`, "
               "`float()`) that flow into the output: the layers before it get no gradient")
    message = (
        "`{tensor}` is part of the autograd graph{source}; `{cut}` takes its values out of torch, and they flow "
        "into the returned `{returned}` (line {line}): {layer} no gradient through this path; {advice}"
    )
    backward_message = (
        "`{cut}` takes values out of the autograd graph, and `{backward}` (line {line}) runs on what is made from "
        "them only because `requires_grad` is set on it: nothing it was computed from gets a gradient (the "
        "parameters' `.grad` stays None); compute the loss from the tensors themselves"
    )
    term_message = (
        "the term `{term}` of `{target}` is computed only from {cut}: `{backward}` (line {line}) sends no "
        "gradient back through it, so it trains nothing it was computed from"
    )
    fix = Applicability.DISPLAY_ONLY
    requires = (r"\bforward\b|backward",
                r"numpy|autograd|\.item\(|tolist|\bfloat\(|\bnp\.|\bmath\.|tensor\(|Tensor\(|detach\(|\.data\b")
    references = (
        ("Autograd mechanics", "https://pytorch.org/docs/stable/notes/autograd.html"),
        ("torch.Tensor.item", "https://pytorch.org/docs/stable/generated/torch.Tensor.item.html"),
        ("torch.Tensor.numpy", "https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html"),
        ("Retaining gradients after converting to numpy then PyTorch (PyTorch forums)",
         "https://discuss.pytorch.org/t/retaining-gradients-after-comverting-to-numpy-then-pytorch/194702"),
        ("ruff issue 12349: prefer torch over numpy inside nn.Module",
         "https://github.com/astral-sh/ruff/issues/12349"),
    )
    docs = """
    ## What it does
    Flags, inside the `forward` method of an `nn.Module` subclass (and inside a function
    whose result a `backward()` in the same file differentiates), a tensor of the
    autograd graph turned into numpy or Python values (`t.detach().cpu().numpy()`,
    `t.data.numpy()`, `t.item()`, `t.tolist()`, `float(t)`, `np.tanh(t.detach())`,
    `math.exp(t)`, `torch.tensor(t)`) when what comes out flows, through assignments in
    that function, into the tensor it returns as a value (an operand of arithmetic, the
    input of a layer, a tensor made from it, a list comprehension over the values) and
    nothing else carries `t` itself to the result. That `t` is part of the graph (the
    output of a layer, or computed from
    one) comes from the inference, with its evidence; the finding names the layer that
    gets no gradient and the returned expression.

    A value used only as a size, an index, a loop bound, an `if` condition, or returned
    as a Python number for logging is left alone; so is `t.detach()` that stays in
    torch (a target network, a straight-through estimator `x + (q - x).detach()`), code
    under `torch.no_grad()`, code that runs only when `self.training` is false, methods
    other than `forward`, and a cut when `t` also reaches the output directly
    (`x / float(x.norm())`: `x` still gets its gradient). Step functions and integers
    are left alone too (`int(t)`, `a.astype(int)`, `np.round(a)`, `h.argmax()`,
    `h.max(1)[1]`): torch gives them no gradient either, so nothing is lost. So are
    cuts from a layer meant to stay fixed (a file that sets `requires_grad = False`, a
    `teacher`, `target` or `ema` network) and the `forward` of a class named for
    inference (`Predictor`, `Export`, `PostProcess`...).

    Also flagged, anywhere: `loss.backward()` on a loss with no graph but for a
    `requires_grad` the code sets on it (`loss.requires_grad = True`,
    `torch.tensor([..], requires_grad=True)`, what people write to silence "element 0 of
    tensors does not require grad"), where every place the graph was cut is a round trip
    through plain values (`torch.tensor([p.item() for p in probs])`, `torch.Tensor([p[1]
    for p in probs])` of a list of tensors, numpy) or, where the flag is set on the
    back-propagated value itself, a `.detach()` / `.data` (a loss of `model(x).detach()`
    made to require grad; a detached copy made a leaf to learn, `x.detach().requires_grad_()`,
    is not a cut graph): reported at the cut, which backward runs past without reaching
    the model. So is a term of the back-propagated sum (`ce + lam * penalty`, through
    names bound once to a sum, or to what the one `return` of a function of the file gives,
    an item of its tuple: `total, aux = step(..)` of `return fit + aux, aux`) computed only
    from the gradients of `torch.autograd.grad`
    without `create_graph=True` (a gradient penalty that then trains nothing), from a round
    trip through plain values or from a step function, scaled at most by values not known
    to be tensors: reported at the first place it was cut.

    ## Why is this bad?
    Autograd records only torch operations on tensors. A numpy array or a Python float
    has no history: the tensor built from it again (`torch.from_numpy(a)`,
    `torch.tensor(v)`, or `out * v`) is a new leaf, and `backward()` stops there. The
    layers that computed `t` get no gradient through this path, and if it is the only
    one, their `.grad` stays `None` and they never train, without any error or warning.

    ## What to do instead
    Compute it in torch: `torch.tanh(h)` instead of `np.tanh(h.detach().numpy())`, `h`
    itself (a 0-dim tensor broadcasts) instead of `h.item()` or `float(h)`. When no
    gradient should flow there, write `h.detach()` and stay in torch, which says so.

    ## Fix (display-only)
    The torch equivalent is shown; rewriting numpy code into torch is left to its author.
    """
    bad = (
        Bad(
            """
            import numpy as np
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(4, 8)
                    self.fc2 = nn.Linear(8, 2)

                def forward(self, x):
                    h = self.fc1(x)
                    squashed = np.tanh(h.detach().numpy())
                    return self.fc2(torch.from_numpy(squashed))
            """,
            reported=((13, "h.detach().numpy()"),),
        ),
        Bad(
            """
            import torch
            import torch.nn as nn

            class Gated(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = nn.Linear(8, 1)
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    gate = torch.sigmoid(self.gate(x)).mean()
                    return self.proj(x) * gate.item()
            """,
            reported=((12, "gate.item()"),),
        ),
    )
    good = (
        """
        import numpy as np
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 2)

            def forward(self, x):
                h = torch.tanh(self.fc1(x))
                h = h / float(h.norm())  # `h` still reaches the output
                q = torch.round(h)
                h = h + (q - h).detach()  # straight-through: stays in torch
                k = int(h.argmax(1).max().item())  # an index
                return self.fc2(h)[:, : k + 1]

            def predict(self, x):
                return np.tanh(self.forward(x).detach().numpy())
        """,
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        exits = self.ctx.grad_flow.graph_exits
        forward = node.name.value == "forward"
        if not forward and not exits.is_differentiated(node):
            return
        function = exits.function_info(node)
        if function is None or (forward and not self._is_forward(function) and not exits.is_differentiated(node)):
            return
        if self.ctx.grad_disabled(node.body) is not None:
            return
        for cut in exits.cuts(node):
            escape = exits.escape(cut, node)
            if escape is not None and not (escape.layer is not None
                                           and _NOT_TRAINED.search(self.ctx.snippet(escape.layer))):
                self._report(escape)

    def visit_Call(self, node: cst.Call) -> None:
        """`loss.backward()` on a loss that has no graph but for a `requires_grad` the code set
        on it (to silence "does not require grad"): the round trip that cut it is the line."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward") or self.ctx.qualname(func):
            return
        flow = self.ctx.grad_flow
        target = func.value
        if self.ctx.tensor(target) is None or flow.no_graph.expects_no_graph(node) \
                or flow.no_graph.graphless(target) is not None:
            return
        proof = flow.no_graph_but_requires_grad.graphless(target)
        made = flow.no_graph.made_to_require_grad(target)  # a detach then counts: the loss was given the flag
        cuts = [cut for cut in proof.cuts if (cut.to_change or cut.detached and made)
                and isinstance(cut.node, (cst.Call, cst.Attribute))] if proof else []
        if not cuts or len(cuts) != len(proof.cuts):
            self._inert_terms(node, target)
            return
        cut = min(cuts, key=lambda found: found.node.start)
        self.report(cut.node, self.backward_message, cut=cut.node, backward=node, line=self._line(node),
                    evidence=proof.steps, related=((node, "this backward runs, and reaches nothing it was computed "
                                                          "from"),),
                    fix=Fix(Applicability.DISPLAY_ONLY, cut.advice, ()))

    def _inert_terms(self, backward: cst.Call, target: cst.BaseExpression) -> None:
        """A term of the back-propagated sum that no gradient comes back through (a gradient
        penalty of `autograd.grad` without `create_graph=True`, a round trip through `.item()`):
        reported at the first place it was cut."""
        for term, proof in self.ctx.grad_flow.no_graph.inert_terms(target):
            cut = min(proof.cuts, key=lambda found: found.node.start)
            if self._exit_inside(cut.node):
                return  # said where the values leave torch, in the function that returns them
            self.report(cut.node, self.term_message, term=term, target=target, cut=cut.noun, backward=backward,
                        line=self._line(backward), evidence=proof.steps,
                        related=((backward, "this backward reaches nothing the term was computed from"),),
                        fix=Fix(Applicability.DISPLAY_ONLY, cut.advice, ()))
            return

    def _exit_inside(self, node: cst.CSTNode) -> bool:
        """A finding of ``visit_FunctionDef`` lies within ``node``: the values of a graph tensor
        leave torch there, in a function whose result is differentiated."""
        exits = self.ctx.grad_flow.graph_exits
        function = next((a for a in _ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        if function is None or not (function.name.value == "forward" or exits.is_differentiated(function)) \
                or exits.function_info(function) is None:
            return False
        return any(escape is not None and node.start <= escape.cut.node.start and escape.cut.node.end <= node.end
                   for escape in (exits.escape(cut, function) for cut in exits.cuts(function)))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        left = run.every("graph-left")
        attached = next((details for details in left if details["requires_grad"]), None)
        if attached is not None:
            state = f"had grad_fn={attached['grad_fn']}" if attached["grad_fn"] else "was a leaf that requires grad"
            verb = "took its values"
            if attached["how"] in (".detach()", ".data"):
                then = next((details["how"] for details in left[left.index(attached) + 1:]
                             if details["how"] not in (".detach()", ".data")), None)
                verb = "cut it from the graph" + (f" and `{then}` took its values" if then else "")
            return Verdict(CONFIRMED, f"{quote(attached['where'])}: the tensor {state} when `{attached['how']}` "
                                      f"{verb}: no gradient flows back through this line")
        if left:
            how = left[0]["how"]
            return Verdict(NOT_REPRODUCED, f"the tensor had no grad_fn and did not require grad when `{how}` took its "
                                           "values: it was not part of the graph on this run")
        return Verdict(NOT_REPRODUCED, "no tensor left torch at this line on this run")

    # --- what is said

    def _is_forward(self, function) -> bool:
        """``forward`` of an ``nn.Module`` subclass that is not an inference-only class."""
        return self.ctx.is_module_forward(function) and not _INFERENCE_CLASSES.search(function.cls.name)

    def _report(self, escape) -> None:
        cut, value, flow, layer = escape.cut, escape.value, escape.flow, escape.layer
        line = self._line(flow.returned)
        source = ""
        if isinstance(cut.tensor, cst.Name):
            values = self.ctx.assigned_values(cut.tensor)
            if values is not None and len(values) == 1:
                source = f" (`{cut.tensor.value}` = `{self.ctx.snippet(values[0])}`, line {self._line(values[0])})"
        if layer is not None:
            who = f"`{self.ctx.snippet(layer)}` gets"
        elif value.leaf is True:
            who = f"`{self.ctx.snippet(cut.tensor)}`, a leaf that requires grad, gets"
        else:
            who = f"what computed `{self.ctx.snippet(cut.tensor)}` gets"
        advice = self._advice(cut, flow)
        if any(isinstance(node, cst.Call) and is_true(keyword(node, "requires_grad"))
               for part in (*flow.through, flow.returned) for node in iter_nodes(part)):
            advice += " (`requires_grad=True` makes a new leaf: it does not connect the values back to the graph)"
        steps = [Step(node, "`{code}` carries the values on") for node in flow.through]
        steps.append(Step(flow.returned, "`{code}` is returned, computed from them"))
        self.report(
            cut.node, tensor=cut.tensor, source=source, cut=cut.node, returned=flow.returned, line=line,
            layer=who, advice=advice, evidence=(*value.why, *steps),
            related=((flow.returned, "returned here, computed from the values that left torch"),),
            fix=Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ()),
        )

    def _advice(self, cut, flow) -> str:
        tensor = self.ctx.receiver(cut.tensor)
        if flow.numpy_call is not None:
            name = self.ctx.qualname(flow.numpy_call.func) or ""
            short = name.rsplit(".", 1)[-1]
            if torch_facts.fact(f"torch.{short}") is not None:
                return f"compute it in torch: `torch.{short}({self.ctx.snippet(cut.tensor)})`"
            return "compute it with torch operations on the tensor"
        if cut.how in ("`.item()`", "`float()`", "`int()`"):
            return f"use the tensor `{tensor}` itself (a 0-dim tensor broadcasts), or `{tensor}.detach()` if " \
                   "no gradient should flow there"
        return f"keep `{tensor}` a tensor and use torch operations, or `{tensor}.detach()` if no gradient " \
               "should flow there"

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]


def _ancestors(node: cst.CSTNode):
    current = node.parent
    while current is not None:
        yield current
        current = current.parent
