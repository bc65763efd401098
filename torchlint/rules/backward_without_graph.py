"""TL408 backward-without-graph: ``backward()`` on a value that has no autograd graph.

Which values have no graph, and where it was cut, is the shared analysis's
(``torchlint.analysis.no_graph``, reached through ``ctx.grad_flow.no_graph``); this rule
says it at the backward."""

from __future__ import annotations

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, enclosing_loops, is_descendant, keyword,
    torch_api,
)


class BackwardWithoutGraph(Rule):
    code = "TL408"
    name = "backward-without-graph"
    summary = "`backward()` on a value computed under `no_grad` or only from detached tensors: RuntimeError"
    message = "{cause}: it has no autograd graph, so `{call}`{where} raises RuntimeError"
    call_message = (
        "`{call}` runs under {disabled}, and it calls `{backward}` (line {line}) on what it computes: with "
        "gradients off nothing has a graph, and backward raises RuntimeError \"element 0 of tensors does not "
        "require grad\"; call it outside the block, or wrap its body in `with torch.enable_grad():`"
    )
    left_off_message = (
        "`{switch}`{when} turns gradients off for the rest of the program, not only inside `{function}`: after "
        "`{call}` (line {call_line}) returns, `{backward}` (line {line}) runs without gradients and raises "
        "RuntimeError \"element 0 of tensors does not require grad\"; compute under `with torch.no_grad():` instead"
    )
    no_grad_forward_message = (
        "`{cls}.forward` runs under `{decorator}` (line {line}), the only place `self.{layer}` runs, yet `{switch}` "
        "(line {switch_line}) turns on `requires_grad` to train it: what it computes there records no graph, so its "
        "parameters never get a gradient and never change"
    )
    fix = Applicability.DISPLAY_ONLY
    # A backward run by a function called under no_grad fails inside it, on a related line.
    raised_where_used = True
    requires = (r"(?:backward|grad)\s*\(",
                r"no_grad|inference_mode|set_grad_enabled|detach|\.data\b|\.item\(|numpy|tolist|arg(?:max|min|sort)"
                r"|requires_grad|from_pretrained"
                r"|\.(?:long|int|bool|eq|ne|gt|lt|ge|le|max|min|median|sort|topk|kthvalue|mode|cummax|cummin)\("
                r"|torch\.(?:max|min|median|sort|topk)\(|\.indices\b|[!=<>]=|[^-=<>]>|<[^<=]"
                r"|torch\.(?:randn?|zeros|ones|empty|full|arange|linspace|eye)\(")
    references = (
        ("Locally disabling gradient computation", "https://pytorch.org/docs/stable/notes/autograd.html"
                                                   "#locally-disabling-gradient-computation"),
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
        ("torch.Tensor.backward", "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
    )
    docs = """
    ## What it does
    Flags `x.backward()`, `torch.autograd.backward(x)` and `torch.autograd.grad(x, ..)`
    where `x` has no autograd graph, as the inference shows with its evidence: `x` is
    computed under `torch.no_grad()` or `torch.inference_mode()` (a `with` block or a
    decorator, including a function so decorated whose result `x` is), or every tensor
    it is computed from was cut from the graph (`.detach()`, `.data`, a new tensor made
    from `.item()`, `.tolist()` or numpy, a result no gradient flows through: `argmax`,
    the indices of `torch.max(out, 1)` or `topk`, a comparison, `.long()`) or made without
    `requires_grad`, through the
    functions of the file that return it and the losses without parameters (of `torch.nn`,
    or a module of the file that builds nothing and calls only torch in `forward`), the
    functions and losses of another module of the project that compute only from their
    arguments (`TripletLoss(margin)(a, p, n)` of `from losses import TripletLoss`), the
    entries of a dict of losses written out (`losses["ce"]`, `sum(losses.values())`) and
    the builtin `sum` of losses; numbers on the way (`math.log(2)`, a numpy value, a
    hyperparameter of `parser.parse_args()` such as `args.weight`) carry no graph. Where
    every cut is a round trip through plain values (`torch.tensor(loss.item())`,
    `torch.from_numpy(out.data.numpy())`, also through a list of `.item()` values), a
    result no gradient flows through, or a model whose parameters were all frozen before
    the call (`for p in model.parameters(): p.requires_grad = False` or
    `model.requires_grad_(False)`, with no layer added after it and nothing in the file
    turning `requires_grad` back on), written before the backward in its function or in a
    function it calls, in the `__init__` of the model's class (over `self.parameters()`,
    after every layer it builds), or after it in a loop around both (a `validate(model, loader)` that
    freezes the model for the next epoch), the finding is on the first of them, the line
    to change, and names the backward. So it is where gradients were turned off (the
    `@torch.no_grad()` decorator, the `with torch.no_grad():` item, the
    `torch.set_grad_enabled(False)` statement) and where a `.detach()` or `.data` is
    written in another function than the backward (a `forward`, a loss function); a
    detach beside the backward, whose use may be what was meant, leaves the finding on
    the backward. Batches of a `DataLoader` require no grad, nor do
    the items a loop takes from a list (written out, or a comprehension) of tensors without a
    graph, or the rows of such a tensor. A value
    computed only from tensors made without `requires_grad` (`w = torch.randn(3, 1)` for
    weights learned by hand) is flagged when they are all made where the backward is, in
    code that sets no `requires_grad` and makes no `Parameter`. Nothing is reported when
    anything on the way may attach it: a module with parameters called outside
    `no_grad`, a value the inference does not know, `torch.enable_grad()`,
    `requires_grad_()` or an in-place write on one of the names, or a test of
    `requires_grad` around the call. A call made under `no_grad` of a function of the
    file that (itself, or through the functions it calls) computes a loss and calls
    `backward()` on it, outside any `if` and without `torch.enable_grad()`, is flagged
    at the call: an adversarial attack run in an evaluation's `no_grad` block (or after
    `torch.set_grad_enabled(False)`). A function of the file that writes
    `torch.set_grad_enabled(False)` as a statement (always run, never turned back on in
    it) leaves gradients off after it returns: called before a statement of the same block
    that runs a backward (itself, or through this file's functions, none of which may turn
    them on), it is flagged at that statement, the line to change (an `evaluate()` that
    leaves the training after it without gradients). `backward()` inside `no_grad` on a value computed
    outside it is left alone (it works), and so is a view made under `no_grad` (`x[0]`,
    `x.view(..)`), which may still reach the graph of what it views. Such a switch under
    an `if` (no `else`) of the function counts too, said with its test, and so does a call
    of a module built by a function of the file (`model = build()`, then `model(x)`).

    The gradients `torch.autograd.grad` returns without `create_graph=True` have no
    graph. A function handed by name to a function or class of the file (`Loss(penalty)`)
    is given what the calls through the parameter or attribute keeping it pass
    (`self._loss_fn(pred.detach(), y)`). A value that has a graph on other paths but none
    on the path through one arm of an `if`, every tensor it is computed from there being
    a constant made in that arm without `requires_grad` (`return torch.tensor(0.)` when a
    batch has no target; the arm taken on every pass of a loop when it ends with
    `continue`), is flagged at the first such constant. A layer made to train
    (`model.encoder.backbone.requires_grad_(True)`, or a loop setting `requires_grad =
    True` over its parameters) that runs only in the `forward` of a module class of the
    file decorated with `@torch.no_grad()` is flagged at the decorator: its parameters
    never get a gradient.

    Autograd runs backward with gradients disabled (unless it is asked to `create_graph`):
    what a hook it calls computes (a module's `register_full_backward_hook`, a tensor's
    `register_hook`), or a function of the file called only from such hooks, has no graph,
    and a `backward()` on it is flagged unless it runs under `torch.enable_grad()`. A
    function of the file returns what the path its arguments select returns: a helper that
    gives a comparison (`(x > threshold).float()`) when a parameter is set, given it by the
    call (a literal, the default, or what every call of the caller passes, also through an
    attribute of `self` its `__init__` sets from a parameter), has no graph there; the
    finding is on the argument that selects that path (`DiceLoss(threshold=0.5)`). A
    comparison or `argmax` of data that never had a graph (a target `(y > 0).float()`) cuts
    nothing: it is not named as a cause, nor taken as the line to change.

    A function of the file called under `no_grad` computes everything without a graph:
    what it returns (a loss, a dict of losses, a part of a tuple) has none when every value
    in it is made during the call (`outputs, losses = self.process_batch(batch)` in the
    evaluation's block), and the finding is on the `with` item. A module made by a
    function of the file that freezes every parameter of what it returns after its last
    layer (`model.requires_grad_(False)` in `build_model()`, or a freezing helper called
    there, also under an `if feature_extract:` its calls pass `True` for) has none either,
    where it is called or in a function it is passed to; the finding is on the freezing
    statement. `.numpy()` is a method of tensors only: a tensor made from its values is a
    round trip whatever the inference knows of the receiver, and so is `torch.tensor(losses)`
    of a list the loop appends tensors to. Layers assigned to the parts of a frozen model
    (`for block in model.blocks: block.proj = Adapter(block.proj)`) train: the model is then
    not taken as frozen.

    Calls are followed to the method they run: `obj(..)` runs the `__call__` of the class
    of the file `obj` is an instance of, and `model(x)` (or `self.forward(x)` written out)
    its `forward`; a name unpacked from such a call is the item of the tuple it returns
    (`total, parts = criterion(out, y)`), and the parameters of `__call__` get what the
    calls of its instances pass. A function that returns a value and, beside it, a copy
    cut from it (`return loss, loss.detach()`) cuts on purpose: the backward of the cut
    item is the line to change. A `@torch.no_grad()` method of a module class whose
    `forward` is not so decorated (`generate`, `predict`) is for inference: its result
    taken for training is flagged at the call. `out.max(d).values` (`topk`, `sort`, ...)
    has a graph exactly when `out` does. `nn.Embedding.from_pretrained(w)` and
    `nn.EmbeddingBag.from_pretrained(w)` build a module whose weight does not require grad
    unless `freeze=False`: a model made only of such layers computes nothing with a graph,
    flagged at the constructor. A helper that freezes the module it returns under an `if`
    its call decides (`if freeze:` of `to_embedding_model(m, freeze=True)`, with a head to
    train added only `if output_dim:` the call leaves `None`) is flagged at the argument
    that selects the freezing. A module's parameters are those of its submodules: a model
    of a module class of the file (extending `nn.Module`, making no `Parameter` itself)
    each part of which its `__init__` builds is frozen before the call, one at a time
    (`for p in model.encoder.parameters(): p.requires_grad = False`, then the decoder),
    is frozen as a whole; the finding is on the last of those statements.

    ## Why is this bad?
    Backward starts from the graph that recorded how `x` was computed. Under
    `no_grad` nothing was recorded, and a detached tensor does not require grad, nor
    does anything computed only from it, so torch raises `RuntimeError: element 0 of
    tensors does not require grad and does not have a grad_fn`. The usual causes are
    a training step written inside the evaluation's `with torch.no_grad():`, a loss
    computed from `output.detach()` (or `output.data`, or `torch.tensor(output.item())`)
    to log or to convert it, a helper decorated with `@torch.no_grad()` whose
    result is then back-propagated, a loss computed from the predicted classes
    (`argmax`) instead of the scores, and weights made without `requires_grad=True`.

    ## What to do instead
    Compute the value that is back-propagated outside `no_grad` (or inside
    `with torch.enable_grad():`), from the tensors themselves: detach only the copy
    kept for logging (`loss.item()`, `loss.detach()`), after `backward()`.

    ## Fix (display-only)
    The advice is shown. Where the computation belongs, and which detach was meant
    for logging, only the author knows.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
            with torch.no_grad():
                loss = nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            """,
            reported=((6, "torch.no_grad()"),),
        ),
        Bad(
            """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            criterion = nn.MSELoss()
            inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
            output = model(inputs)
            loss = criterion(output.detach(), targets)
            loss.backward()
            """,
            reported=((9, "loss.backward()"),),
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
        loss = nn.functional.mse_loss(model(inputs), targets)
        with torch.no_grad():
            loss.backward()  # the graph was recorded outside: this works
            with torch.enable_grad():
                again = nn.functional.mse_loss(model(inputs), targets)
            again.backward()
        """,
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        images = torch.randn(8, 4)
        adversarial = images.detach() + 0.01 * torch.randn(8, 4)
        adversarial.requires_grad_()
        loss = model(adversarial).sum()
        loss.backward()
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in self.ctx.autograd.backward_without_grad():
            disabled = found.disabled
            shown = disabled.items[0].item if isinstance(disabled, cst.With) else disabled
            where = f"`{self.ctx.snippet(shown)}` (line {self._line(disabled)})"
            self.report(found.call, self.call_message, call=found.call, disabled=where, backward=found.backward,
                        line=self._line(found.backward),
                        related=((found.backward, "the backward it runs"), (disabled, "gradients are off here")),
                        fix=Fix(Applicability.DISPLAY_ONLY, "Call it outside the `no_grad` block, or turn gradients "
                                                            "back on with `torch.enable_grad()` inside it", ()))

        for found in self.ctx.grad_flow.no_graph.trained_under_no_grad():
            decorator = f"@{self.ctx.snippet(found.decorator.decorator)}"
            self.report(found.decorator, self.no_grad_forward_message, cls=found.cls, decorator=decorator,
                        line=self._line(found.decorator), layer=found.layer, switch=found.switch_on,
                        switch_line=self._line(found.switch_on),
                        related=((found.switch_on, "made to train here"),),
                        fix=Fix(Applicability.DISPLAY_ONLY, f"Remove `{decorator}` from `{found.cls}.forward` (or run "
                                                            f"`self.{found.layer}` under `torch.enable_grad()` when it "
                                                            f"is trained)", ()))

        for found in self.ctx.autograd.gradients_left_off():
            guard = next((ancestor for ancestor in _ancestors_until(found.switch, cst.FunctionDef)
                          if isinstance(ancestor, cst.If)), None)
            when = f" (when `{self.ctx.snippet(guard.test)}`, line {self._line(guard)})" if guard is not None else ""
            self.report(found.switch, self.left_off_message, switch=found.switch, when=when, function=found.function,
                        call=found.call, call_line=self._line(found.call), backward=found.backward,
                        line=self._line(found.backward), related=((found.backward, "the backward that raises"),),
                        fix=Fix(Applicability.DISPLAY_ONLY, "Compute under `with torch.no_grad():`, which restores "
                                                            "the mode when the block ends", ()))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if called_name(func) not in ("backward", "grad"):
            return
        qualname = self.ctx.qualname(func)
        if qualname in torch_api.AUTOGRAD_ENTRY_POINTS:
            self._check_autograd_call(node, torch_api.AUTOGRAD_ENTRY_POINTS[qualname])
        elif qualname is None and isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self._check(func.value, node, node)

    def _check_autograd_call(self, node: cst.Call, name: str) -> None:
        given = keyword(node, name)
        if given is None and node.args and node.args[0].keyword is None and not node.args[0].star:
            given = node.args[0].value
        if given is None:
            return
        if isinstance(given, (cst.List, cst.Tuple)):
            for element in given.elements:
                if not isinstance(element, cst.StarredElement) and self._check(element.value, node, node, True):
                    return
            return
        self._check(given, node, node, True)

    def _check(self, target: cst.BaseExpression, call: cst.Call, reported: cst.CSTNode, given: bool = False) -> bool:
        """``given``: ``target`` is what an autograd function is given to differentiate, a
        tensor (or it raises) whether or not the inference knows it."""
        no_graph = self.ctx.grad_flow.no_graph
        if not given and self.ctx.tensor(target) is None or no_graph.expects_no_graph(call):
            return False
        proof = no_graph.graphless(target, tensor=given)
        if proof is None:
            return self._check_branch(target, call, given)
        cause = self._cause(target, proof)
        advice = "; ".join(dict.fromkeys(cut.advice for cut in proof.cuts[:2]))
        related = ()
        place = no_graph.line_to_change(proof, call)
        if place is not None:
            # Where the graph was lost is the line to change; the backward raises later.
            reported, related = place, ((call, "backward raises here"),)
        where = f" (line {self._line(call)})" if reported is not call else ""
        self.report(reported, evidence=proof.steps, fix=Fix(Applicability.DISPLAY_ONLY, advice, ()),
                    cause=cause, call=call, where=where, related=related)
        return True

    def _check_branch(self, target: cst.BaseExpression, call: cst.Call, given: bool) -> bool:
        """``target`` has no graph on the path through one arm of an `if` (a loss made of
        constants when a batch has no target): reported at the first constant made there."""
        if any(isinstance(a, (cst.If, cst.IfExp)) for a in _ancestors_until(call, cst.FunctionDef)):
            return False  # `if n_pos > 0: loss.backward()`: the path may be kept away from it
        found = self.ctx.grad_flow.no_graph.graphless_on_branch(target)
        if found is None:
            return False
        proof, statement, arm = found
        test = f"`{self.ctx.snippet(statement.test)}` (line {self._line(statement)})"
        when = f"when {test} holds" if arm else f"when {test} does not hold"
        loops = enclosing_loops(statement)
        if loops and not is_descendant(target, loops[0]):
            when += f" on every pass of the loop (line {self._line(loops[0])})"
        made = ", ".join(f"`{self.ctx.snippet(cut.node)}` (line {self._line(cut.node)})" for cut in proof.cuts[:3])
        cause = f"{when}, `{self.ctx.snippet(target)}` is computed only from constants made there without " \
                f"`requires_grad` ({made}" + (", ...)" if len(proof.cuts) > 3 else ")")
        first = proof.cuts[0]
        self.report(first.node, evidence=proof.steps, fix=Fix(Applicability.DISPLAY_ONLY, first.advice, ()),
                    cause=cause, call=call, where=f" (line {self._line(call)})",
                    related=((call, "backward raises here on that path"), (statement.test, "the path")))
        return True

    def _cause(self, target: cst.BaseExpression, proof) -> str:
        shown = self.ctx.snippet(target)
        cuts = proof.cuts
        if all(cut.fresh for cut in cuts):
            made = ", ".join(f"`{self.ctx.snippet(cut.node)}` (line {self._line(cut.node)})" for cut in cuts[:3])
            return f"`{shown}` is computed only from tensors made without `requires_grad` ({made}" + \
                (", ...)" if len(cuts) > 3 else ")")
        if any(cut.node is target for cut in cuts):
            return next(f"`{shown}` {cut.predicate}" for cut in cuts if cut.node is target)
        if isinstance(target, cst.Name):
            values = self.ctx.binding_values(target)
            direct = [cut for cut in cuts if any(cut.node is value for value in values)]
            if len(direct) == len(values) == len(cuts) == 1:
                return f"`{shown}` {direct[0].predicate}"
        listed = " and ".join(cut.noun for cut in cuts[:2]) + (" and others" if len(cuts) > 2 else "")
        return f"`{shown}` is computed from {listed}, and from nothing that requires grad"

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.raised_or("RuntimeError", "does not require grad and does not have a grad_fn",
                             "backward ran: the value had a graph on this run")


def _ancestors_until(node: cst.CSTNode, kind: type):
    """The ancestors of ``node`` up to the first of ``kind``."""
    current = node.parent
    while current is not None and not isinstance(current, kind):
        yield current
        current = current.parent
