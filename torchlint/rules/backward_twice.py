"""TL411 backward-twice: a backward through a graph that an earlier backward freed."""

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, ReusedGraph, Rule, Verdict, cst,
)


class BackwardTwice(Rule):
    code = "TL411"
    name = "backward-twice"
    summary = ("a backward through a graph an earlier backward freed: hidden state carried into the next batch, "
               "a forward above the loop, two losses of one forward: RuntimeError")
    message = (
        "`{second}` goes back through `{forward}`, {how}: RuntimeError \"Trying to backward through the graph a "
        "second time\"; {advice}"
    )
    above_message = (
        "`{above}` runs once, above the loop, and keeps its graph: `{second}` goes back through it on every "
        "iteration, and the first iteration's backward freed it: RuntimeError \"Trying to backward through the graph "
        "a second time\"; {advice} (or `.detach()` it, when no gradient should flow into it)"
    )
    frozen_message = (
        "`{above}` keeps the graph of what it is computed from, and `{forward}`, a module whose parameters have "
        "gradients off, passes it on above the loop: `{second}` goes back through it on every iteration, and the "
        "first iteration's backward freed it: RuntimeError \"Trying to backward through the graph a second time\"; "
        "{advice}"
    )
    discarded_message = (
        "`{detach}` returns a detached copy and throws it away, leaving the tensor in the graph: `{name}` still "
        "carries `{forward}`'s graph, freed by the previous iteration's backward, and `{second}` goes back through "
        "it: RuntimeError \"Trying to backward through the graph a second time\"; {advice}"
    )
    fix = Applicability.DISPLAY_ONLY
    # The error is raised by the backward, a line the finding names as related when it is on the
    # computation above the loop or on a detach whose result is thrown away.
    raised_where_used = True
    requires = (r"backward|autograd\.grad",)
    references = (
        ("Autograd mechanics: saved tensors are freed after backward",
         "https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors"),
        ("torch.Tensor.backward: retain_graph", "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
        ("torch.Tensor.detach: a new tensor, detached from the current graph",
         "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
    )
    docs = """
    ## What it does
    Flags a `backward()` (or `torch.autograd.grad`) that goes through the graph of a
    module's forward after another backward freed it:

    - **state carried into the next batch**: `output, hidden = rnn(x, hidden)` in a loop
      whose backward runs every iteration, with nothing detaching `hidden`: the next
      iteration's forward starts from the previous iteration's graph; also state a module
      of the file keeps on itself (`output, self.hidden = self.rnn(x, self.hidden)` in its
      `forward`, never detached or reset in the class or the loop);
    - **a forward above the loop**: `out = model(x)` computed once, and `loss(out).backward()`
      on every iteration; also a value computed once by torch operations from a tensor that
      requires grad (`targets = features @ true_w` with `true_w` made with
      `requires_grad=True`), and the losses of one forward back-propagated one by one in a
      loop over them (`for loss in model.losses(x): loss.backward()`);
    - **a total back-propagated on every iteration**: `total = total + loss` (or
      `total += loss`) in the loop and `total.backward()` there: the second iteration's
      backward goes back through the first iteration's graph, freed by the first backward;
    - **two backwards through one forward**: two losses computed from one forward (a GAN's
      fake used by the discriminator's loss without `detach()` and again by the
      generator's), each given its own `backward()`, the first without `retain_graph=True`.

    The analysis follows the values from the forward to each backward through
    assignments, `+=`, tuple elements, loop variables and calls of this file's functions
    (`update(loss)`, a method computing the losses), stops at `.detach()`, `.item()`,
    `.data` and `no_grad` blocks, and knows a `repackage_hidden(h)` that returns
    `h.detach()` cuts the graph, as does a method of the state's class that assigns its
    attributes detached values (`state.detach()` running `self.hidden = self.hidden.detach()`).
    A module whose parameters all have gradients off (`unet.requires_grad_(False)`, also
    when a class keeps it as `self.unet`), called on inputs that do not require grad,
    records no graph, and is not reported.

    The finding is on the line to change: the computation above the loop when the loop
    only reuses its result (not when the loop iterates over it: then on the backward), and
    for a frozen module's call there, where its one input that requires grad was computed
    (`self.context = encoder(ids)`, not detached: the graph the backward finds freed); a
    `h.detach()` whose result is thrown away (a statement of its own: `detach()` returns a
    new tensor and leaves `h` in the graph) where the loop meant to detach its state;
    otherwise the backward. It names the forward and both backwards.

    ## Why is this bad?
    `backward()` frees the buffers autograd saved for it as it goes, unless asked to
    keep them with `retain_graph=True`. A second backward through the same forward finds
    them gone and raises `RuntimeError: Trying to backward through the graph a second
    time (or directly access saved tensors after they have already been freed)`.
    `retain_graph=True` is rarely the fix: carried hidden state then grows a graph
    through every batch seen so far, and the loop slows down and runs out of memory.

    ## What to do instead
    Detach state carried between batches once per iteration (`hidden = hidden.detach()`,
    `tuple(h.detach() for h in hidden)` for an LSTM); compute the forward inside the
    loop; sum the losses and call `backward()` once, or `detach()` the part the second
    loss must not differentiate (`netD(fake.detach())` for the discriminator).

    ## Fix
    None automatic: which of these the code means is the author's choice. The finding
    says which applies.
    """
    bad = (
        Bad(
            """
            import torch
            from torch import nn

            rnn = nn.GRU(3, 4)
            h = torch.zeros(1, 2, 4)
            for x in [torch.randn(5, 2, 3), torch.randn(5, 2, 3)]:
                out, h = rnn(x, h)
                out.pow(2).mean().backward()
            """,
            reported=((8, "out.pow(2).mean().backward()"),),
        ),
        Bad(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
            prediction = model(torch.randn(8, 3))
            for epoch in range(3):
                loss = prediction.pow(2).mean()
                loss.backward()
            """,
            reported=((5, "model(torch.randn(8, 3))"),),
        ),
        Bad(
            """
            import torch
            from torch import nn

            G, D = nn.Linear(2, 3), nn.Linear(3, 1)
            fake = G(torch.randn(4, 2))
            d_loss = D(fake).mean()
            d_loss.backward()
            g_loss = -D(fake).mean()
            g_loss.backward()
            """,
            reported=((9, "g_loss.backward()"),),
        ),
    )
    good = (
        """
        import torch
        from torch import nn

        rnn = nn.GRU(3, 4)
        h = torch.zeros(1, 2, 4)
        for x in [torch.randn(5, 2, 3), torch.randn(5, 2, 3)]:
            h = h.detach()
            out, h = rnn(x, h)
            out.pow(2).mean().backward()

        G, D = nn.Linear(2, 3), nn.Linear(3, 1)
        fake = G(torch.randn(4, 2))
        d_loss = D(fake.detach()).mean()
        d_loss.backward()
        g_loss = -D(fake).mean()
        g_loss.backward()

        out = G(torch.randn(4, 2))
        first, second = out.sum(), out.pow(2).sum()
        first.backward(retain_graph=True)
        second.backward()
        for loss in [D(G(torch.randn(4, 2))).mean(), D(G(torch.randn(4, 2))).sum()]:
            loss.backward()
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        reported: set[int] = set()
        lifetime = self.ctx.autograd.lifetime
        for reused in self.ctx.autograd.reused_graphs():
            if id(reused.second.at) in reported:
                continue
            if reused.forward.via is None and lifetime.records_no_graph(reused.forward.at):
                continue  # a frozen module on inputs that need no gradient: no graph to free
            discarded = None
            if reused.how == "carried":
                detached, discarded = lifetime.state_detach(reused.carrier, reused.second.at)
                if detached:
                    continue
            reported.add(id(reused.second.at))
            if discarded is not None:
                self._report_discarded(reused, discarded)
            else:
                self._report(reused)

    def _report_discarded(self, reused: ReusedGraph, detach: cst.Call) -> None:
        """The loop means to detach the state it carries, but throws the detached tensor away."""
        snippet = self.ctx.snippet
        name = snippet(reused.carrier)
        advice = "assign the result (`h = h.detach()`; for state kept on an object, `self.hidden = " \
                 "self.hidden.detach()`)"
        self.report(detach, self.discarded_message, detach=detach, name=name, second=reused.second.at,
                    forward=reused.forward.at, advice=advice,
                    related=((reused.carrier, f"`{name}` keeps the forward's graph for the next iteration here"),
                             (reused.second.at, "this backward goes back through the freed graph")),
                    fix=Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ()))

    def _report(self, reused: ReusedGraph) -> None:
        snippet = self.ctx.snippet
        forward, first, second = reused.forward, reused.first, reused.second
        related = [(forward.node, f"`{forward.module}`'s forward saves tensors for backward here" if forward.module
                    else "this computation, from a tensor that requires grad, saves tensors for backward here")]
        if forward.via is not None:
            related.append((forward.via, "this call runs that forward and returns its result"))
        if reused.how == "carried":
            name = snippet(reused.carrier)
            how = (f"which `{name}` carries from the previous iteration, and the previous iteration's backward freed "
                   f"that graph")
            advice = f"detach it once per iteration before the forward: `{name} = {name}.detach()` (for a tuple of " \
                     f"states, `tuple(h.detach() for h in {name})`)"
            related.append((reused.carrier, f"`{name}` keeps the forward's graph for the next iteration here"))
        elif reused.how == "total":
            name = snippet(reused.carrier)
            how = (f"which `{name}` accumulates over the iterations, and the previous iteration's backward freed "
                   f"that graph")
            advice = f"back-propagate each iteration's loss alone, and add its `.item()` to `{name}` for the report"
            related.append((reused.carrier, f"`{name}` keeps every iteration's graph here"))
        elif reused.how == "next-iteration":
            how = "which runs once, above the loop, while this backward runs on every iteration and frees its graph " \
                  "on the first"
            advice = f"compute `{snippet(forward.at)}` inside the loop"
            if not self.ctx.autograd.lifetime.loop_iterates_result(forward.at, forward.elements, second.at):
                # What must move is the computation above the loop: the finding goes there (for a
                # frozen module, where the one input that requires grad was computed).
                origin = self.ctx.autograd.lifetime.frozen_input_origin(forward.at) if forward.via is None else None
                above = origin or (forward.via if forward.via is not None else forward.at)
                message = self.above_message
                if origin is not None:
                    message = self.frozen_message
                    advice = f"`.detach()` `{snippet(origin)}` where it is made, when no gradient should flow into " \
                             f"what it is computed from, or compute it inside the loop"
                    related.append((forward.at, "this call of a module whose parameters have gradients off "
                                                "records a graph only through that input"))
                self.report(above, message, above=above, second=second.at, forward=forward.at, advice=advice,
                            related=((second.at, "this backward, run on every iteration, goes back through it"),
                                     *related[1:]),
                            fix=Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ()))
                return
        else:
            how = f"whose graph `{snippet(first.at)}` freed (it has no `retain_graph=True`)"
            advice = "call `backward()` once on the sum of the losses, or `detach()` what the second loss must not " \
                     "differentiate"
            related.append((first.at, "this backward frees the forward's graph"))
        self.report(second.at, second=second.at, forward=forward.at, how=how, advice=advice, related=tuple(related),
                    fix=Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ()))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.raised_or("RuntimeError", "backward through the graph a second time",
                             "every backward on this run found the graph it went through")
