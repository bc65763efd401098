"""TL409 saved-tensor-inplace: an in-place write to a tensor autograd saved for a
backward that runs after the write."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, LATENT, LIST_ITEMS, NOT_REPRODUCED, Applicability, Bad, Fix, InplaceOverSaved, Observation, Rule,
    SavedWrite, StaleForward, Verdict, cst, edits, is_true, keyword, quote, saved_writes, torch_api,
)


class SavedTensorInplace(Rule):
    code = "TL409"
    name = "saved-tensor-inplace"
    summary = ("in-place write (`s.mul_(2)`, `inplace=True`, `optimizer.step()`) to a tensor autograd saved for a "
               "later `backward()`")
    message = (
        "In-place write ({how}) to `{written}`, which `{saver}` saved for backward; {backward} reads it after "
        "the write and raises RuntimeError; {advice}"
    )
    shared_message = (
        "In-place write ({how}) to `{written}`, a view of `{base}`, whose storage `{saver}` saved for backward "
        "(it keeps {what}, another view of `{base}`: views share one version counter); {backward} reads it after "
        "the write and raises RuntimeError; {advice}"
    )
    result_message = (
        "In-place write ({how}) to the result of `{saver}`, which it saved for backward; {backward} reads it "
        "after the write and raises RuntimeError; {advice}"
    )
    step_message = (
        "`{step}` writes every parameter of `{module}` in place, and `{forward}` saved them for backward ({why}); "
        "{backward} goes back through `{forward}` after the step and raises RuntimeError; {advice}"
    )
    module_message = (
        "`{writer}` works in place on its input, the output of `{saver}`, which autograd saved ({why}); the "
        "backward through them raises RuntimeError \"modified by an inplace operation\"{when}; drop `inplace=True`"
    )
    fix = Applicability.SAFE
    requires = (r"backward|autograd\.grad|\bforward\b|\b__call__\b", r"_\s*\(|[-+*/%&|^@<>]=|\]|\binplace\b|\.step\s*\(")
    references = (
        ("Autograd mechanics: in-place operations",
         "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
        ("Saved tensors", "https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors"),
    )
    docs = """
    ## What it does
    Flags an in-place write (`s.mul_(2)`, `s += 1`, `s[0] = 0`, `F.relu(.., inplace=True)`,
    `h.exp().relu_()`) to a tensor that an operation saved for backward, when a
    `backward()` (or `torch.autograd.grad`) after the write differentiates something
    computed from that operation. What each operation saves comes from torch itself
    (torchlint's table of torch facts, generated under `saved_tensors_hooks`): `exp`,
    `sigmoid`, `tanh`, `relu`, `softmax` save their result; `pow`, `log`, `abs` their
    input; `x * t`, `x @ t`, `F.linear` and `F.conv2d` the other operand of one that
    requires grad; of the tensors an operation returns together, the ones it keeps
    (`evals, evecs = torch.linalg.eigh(k)`, then `evals.clamp_min_(0)`: `eigh` keeps both;
    `torch.sort` keeps only its indices, so its values may be written). The finding names the saving operation and the backward. A function of
    the file that writes its parameter in place on every call (`def normalize(t): t -=
    t.mean()`) writes what it is given: `z = normalize(z)` on a saved `z` is flagged at the
    call.

    In the `forward` of an `nn.Module` the backward is the training step's: what
    `forward` returns is differentiated after it, so a write there to a saved tensor
    whose saving operation reaches the returned value is flagged too (`gate =
    torch.sigmoid(self.fc(x)); gate.mul_(2); return x * gate`). So is a function of the
    file whose result a caller back-propagates after the call (`loss = nll(logits, y)`,
    `loss.backward()`, with `probs = logits.softmax(-1); probs[probs < 1e-8] = 1e-8` in
    `nll`), also through the names the caller computes from it (`probs = softmax(z)`, `loss
    = -probs.log().mean()`, `loss.backward()`). A function of the file that writes in place
    is followed further, through the calls of the file, one or two levels: a helper that
    `forward` calls (`h = gate(self.fc(x))`, `return self.head(h)`), a method of the
    module, a function the loss function calls; the finding stays on the write, and names
    the calls that take its result to the backward. An autograd Function's `forward` runs
    without a graph and is left alone.
    A view shares its base's version counter: an operation that saved a name bound to a
    view (`h = outputs[:, t]`, then `self.cell(x[:, t], h)`, also from the iteration
    before) saved `outputs`, and a write to any part of `outputs` after it is flagged.

    `optimizer.step()` is an in-place write too, to every parameter the optimizer was given
    (`Adam(netD.parameters())`), and a forward through a module saves its parameters for
    the gradient of its input (`netD(fake)` with `fake` from a generator, or any stack of
    layers). A step between that forward and a backward through it is flagged: the GAN
    that steps D before G's backward through the same `netD(fake)`, the actor-critic
    that updates the critic before the actor's loss (computed through the critic) is
    differentiated, a `retain_graph=True` backward in a loop over a forward computed
    once above it. So is a step in a method that then differentiates a result another
    method of the class kept on the instance (`self.fake = self.netG(z)` in `forward`,
    read as `self.fake` in a `backward` method that steps the generator first): that
    graph was built before the method ran, when the method sets the attribute nowhere and
    calls no method that does. The finding names the step, the forward and the backward.

    A module built to work in place (`nn.ReLU(inplace=True)`, `nn.Dropout(p, inplace=True)`,
    `nn.LeakyReLU(0.2, True)`) writes its input: flagged, at its construction, when it runs
    on the saved output of the layer before it, next to it in an `nn.Sequential` (also one
    built from a list of appended layers) or called on what a module returned in a
    `forward` (`x = self.block(x); x = self.dropout(x)`, where `self.block` ends with a
    ReLU). What a module of the project returns is followed through its `forward` (or its
    `__call__` where it defines one, and a method whose result `forward` returns), also
    for a class of another module of the project; an activation picked from a dict of
    classes by a constant key (`ACTS["relu"]()`) is that class. A `forward` that applies
    its activation only when it is set (`x = self.conv(x)`, then `if self.act is not None:
    x = self.act(x)`, with `self.act = nn.ReLU() if act_cfg else None`; or `if self.act is
    None: return x` before `return self.act(x)`) returns a saved output whenever that arm runs: the finding names the condition, and a write to such
    outputs (`laterals[i - 1] += up(laterals[i])` in a feature pyramid) is flagged. Such a module held in an attribute writes what it is called on: `x =
    self.relu(x)` after `self.conv1(x)` kept `x` is flagged at the call, as are
    `torch.relu_(x)` and `F.relu(x, inplace=True)` (the name is bound again only after the
    write). A name bound to a saved result (`x = y` after `y = torch.softmax(..)`) is the
    same tensor, and so are the items of a list of saved results (`feats = [F.relu(conv(x))
    for ..]`, then `feats[i - 1] += up(feats[i])`; the unsafe fix writes `feats[i - 1] =
    feats[i - 1] + ..`, a new tensor in the list). A view of a saved tensor
    (`x.transpose(1, 2)`, `x[0]`) shares its version
    counter: saving the view saves the tensor, and a write to the tensor is flagged; in
    `x[i] = f(x)` and `x += f(x)` the right side runs first. Two views of one tensor share
    it too: `keep, move = halves(x)` (a function of the file that returns `t[:, :n], t[:,
    n:]`, or a static method called through its class) or `move = x[:, n:]`, then
    `self.net(keep)` and `move *= s` is flagged, and written out of place. A saved tensor
    written several times is reported once on each path, at its first write: in each arm of
    an `if` that writes it (`if 'scale_factor' in cfg: feats[i] += ..` / `else: feats[i] +=
    ..`), since only one arm runs.

    Writes through a `.data`, `.detach()`, view or numpy alias are reported by TL102,
    TL301, TL303 and TL304, with the same evidence.

    ## Why is this bad?
    Backward needs the values the operation saw. torch counts writes to every tensor
    (its version), and `backward()` raises `RuntimeError: one of the variables needed
    for gradient computation has been modified by an inplace operation` when a saved
    tensor changed. `F.relu(x, inplace=True)` after a linear layer is fine (the layer
    does not save its output); after `exp()` or `sigmoid()` it is not.

    ## What to do instead
    Write out of place: `s = s * 2`, `F.relu(h.exp())`, or `s = s.clone()` before the
    write. Call `optimizer.step()` after every backward through the forwards of the
    modules it updates (both backwards first, then both steps), or compute the forward
    again after the step (`netD(fake)` once more for the generator's loss).

    ## Fix (safe for an unnamed result or a module, unsafe for a name)
    `inplace=True` is dropped (from a module's construction too) and `h.exp().relu_()` becomes `h.exp().relu()`: nothing else
    holds that result. When the operation saved its result, `s.mul_(2)` as a statement
    becomes `s = s.mul(2)` and `s += 1` becomes `s = s + 1`, unsafe: another name for the
    same tensor no longer sees the change. When it saved an input (`y = x ** 2` keeps `x`),
    the write is often the point (a parameter update) and belongs after the backward: the
    advice says so, with no fix. An item assignment gets no fix, and neither does a step:
    which order the updates need is the author's choice.
    """
    bad = (
        Bad(
            """
            import torch

            layer = torch.nn.Linear(3, 3)
            x = torch.randn(2, 3)
            s = torch.sigmoid(layer(x))
            s.mul_(2)
            s.sum().backward()
            """,
            reported=((6, "s.mul_(2)"),),
            unsafe=True,
            fixed="""
            import torch

            layer = torch.nn.Linear(3, 3)
            x = torch.randn(2, 3)
            s = torch.sigmoid(layer(x))
            s = s.mul(2)
            s.sum().backward()
            """,
        ),
        Bad(
            """
            import torch
            import torch.nn.functional as F

            layer = torch.nn.Linear(3, 3)
            h = F.relu(layer(torch.randn(2, 3)).exp(), inplace=True)
            h.sum().backward()
            """,
            reported=((5, "F.relu(layer(torch.randn(2, 3)).exp(), inplace=True)"),),
            fixed="""
            import torch
            import torch.nn.functional as F

            layer = torch.nn.Linear(3, 3)
            h = F.relu(layer(torch.randn(2, 3)).exp())
            h.sum().backward()
            """,
        ),
        Bad(
            """
            import torch
            from torch import nn

            netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
            netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
            optD = torch.optim.Adam(netD.parameters())
            fake = netG(torch.randn(16, 4))
            score = netD(fake)
            loss_d = score.mean()
            loss_g = -score.mean()
            loss_d.backward(retain_graph=True)
            optD.step()
            loss_g.backward()
            """,
            reported=((12, "optD.step()"),),
        ),
    )
    good = (
        """
        import torch
        import torch.nn.functional as F

        layer = torch.nn.Linear(3, 3)
        h = F.relu(layer(torch.randn(2, 3)), inplace=True)  # a linear layer keeps its input, not its output
        s = torch.sigmoid(h)
        s.sum().backward(retain_graph=True)
        s.mul_(2)  # after the backward
        t = h + 1
        t.mul_(2)  # `+` saves nothing
        t.sum().backward()
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in self.ctx.autograd.inplace_over_saved():
            self._report_module(found)
        reported: set[int] = set()
        for stale in self.ctx.autograd.stale_forwards():
            self._report_step(stale, reported)
        for found in saved_writes(self.ctx):
            written = found.written
            fix, advice = self._fix(found)
            message = self.message if isinstance(written, cst.Name) else self.result_message
            if found.read.shares:
                message = self.shared_message
            self.report(found.write.node, message, how=found.write.how, written=written, base=found.read.shares,
                        what=found.read.what,
                        saver=found.read.saver, backward=found.read.reader(self.ctx), advice=advice,
                        evidence=self.ctx.tensor(found.read.saver), related=found.read.related(self.ctx), fix=fix)

    def _report_module(self, found: InplaceOverSaved) -> None:
        writer = found.writer
        qualname = self.ctx.qualname(writer.func) or ""
        inplace = torch_api.inplace_argument(writer, qualname)
        fix = None
        positional = [arg for arg in writer.args if arg.keyword is None]
        if inplace is not None and (inplace.keyword is not None or positional[-1] is inplace):
            text = edits.call_text(self.ctx, writer, dropped=lambda arg: arg is inplace)
            fix = Fix(Applicability.SAFE, "Drop `inplace=True`", (edits.replace(writer, text),))
        related = ((found.saver, "saves its output for backward here"),
                   (found.at, "the in-place layer runs on that output here"))
        # A dropout writes only when it drops something: in training, with p > 0.
        when = " in training (when it drops anything)" if "Dropout" in qualname else ""
        self.report(writer, self.module_message, writer=writer, saver=found.saver, why=found.why, when=when,
                    related=related, fix=fix)

    def _report_step(self, stale: StaleForward, reported: set[int]) -> None:
        step, forward, backward = stale.step, stale.forward, stale.backward
        # Both lifted from one call (a `backward(self, ..)` method that steps, then differentiates):
        # the order to change is inside it; otherwise it is where the calls are.
        where = step.node if step.via is not None and step.via is backward.via else step.at
        if id(where) in reported:
            return  # one finding per step, with the first backward it breaks
        reported.add(id(where))
        shown_backward = backward.node if where is step.node and backward.via is not None else backward.at
        snippet = self.ctx.snippet
        if stale.next_iteration:
            reads = "and the next iteration's backward reads them here, through the graph `retain_graph=True` kept"
            advice = f"compute `{snippet(forward.at)}` inside the loop, on every iteration"
            shown = f"on the next iteration, `{snippet(shown_backward)}`"
        else:
            reads = "and this backward reads them, after the step"
            advice = f"call `{snippet(where)}` after `{snippet(shown_backward)}`, or compute " \
                     f"`{snippet(forward.at)}` again after the step"
            shown = f"`{snippet(shown_backward)}`"
        related = [(forward.node, f"`{forward.module}` saves its parameters for backward here")]
        if forward.via is not None:
            related.append((forward.via, "this call runs that forward and returns its result"))
        if forward.held is not None:
            related.append((forward.held, "this method reads that result from the instance here: its graph was built "
                                          "before the method ran"))
        related += [(step.built, "the optimizer is given those parameters here"), (shown_backward, reads)]
        self.report(where, self.step_message, step=where, module=forward.module, forward=forward.at,
                    why=forward.saves, backward=shown, advice=advice, related=tuple(related))

    def _fix(self, found: SavedWrite) -> tuple[Optional[Fix], str]:
        write = found.write.node
        if not isinstance(found.written, cst.Name):
            if isinstance(write, cst.Call) and is_true(keyword(write, "inplace")):
                text = edits.call_text(self.ctx, write, dropped=lambda arg: arg.keyword is not None
                                       and arg.keyword.value == "inplace")
                return Fix(Applicability.SAFE, "Drop `inplace=True`", (edits.replace(write, text),)), \
                    "drop `inplace=True`"
            if isinstance(write, cst.Call) and isinstance(write.func, cst.Attribute) \
                    and write.func.value is found.written:
                method = write.func.attr.value[:-1]
                return Fix(Applicability.SAFE, f"Use `{method}()`", (edits.replace(write.func.attr, method),)), \
                    f"use `{method}()`"
            return None, f"write to a copy: `{self.ctx.snippet(found.written)}.clone()`"
        name = found.written
        statement = self.ctx.parent(write)
        if found.read.what == LIST_ITEMS and isinstance(statement, cst.AugAssign) and statement.target is write:
            return self._out_of_place(statement)  # an item of a list: the sum is a new tensor put in the list
        if found.read.what == LIST_ITEMS:
            return None, f"write out of place and put the result in `{name.value}` as a new item"
        if found.read.shares and isinstance(statement, cst.AugAssign) and statement.target is write \
                and isinstance(write, cst.Name):
            return self._out_of_place(statement)  # the sum is a new tensor; the shared storage is left as it was
        if found.read.what != "its result":
            # An input was saved (a parameter, a leaf): writing it in place is often the point
            # (an update); the write belongs after the backward, or the operation needs a copy.
            return None, f"write to `{name.value}` after the backward, or give `{self.ctx.snippet(found.read.saver)}` " \
                         f"a copy (`{found.read.what[1:-1]}.clone()`)"
        if isinstance(write, cst.Call) and isinstance(statement, cst.Expr) and isinstance(write.func, cst.Attribute) \
                and write.func.value is name:
            method = write.func.attr.value[:-1]
            call = self.ctx.code(write)
            new = f"{name.value} = {name.value}.{method}{call[call.index('('):]}"
            return Fix(Applicability.UNSAFE, f"Write `{new}`", (edits.replace(write, new),)), \
                f"write out of place: `{new}`"
        if isinstance(statement, cst.AugAssign) and statement.target is write and isinstance(write, cst.Name):
            return self._out_of_place(statement)
        return None, f"`.clone()` `{name.value}` before writing to it"

    def _out_of_place(self, statement: cst.AugAssign) -> tuple[Fix, str]:
        """`x += y` written as `x = x + y`: a new tensor, the saved one left as it was."""
        target = self.ctx.code(statement.target)
        new = f"{target} = {target} {statement.operator.token[:-1]} {self.ctx.code(statement.value)}"
        return Fix(Applicability.UNSAFE, f"Write `{new}`", (edits.replace(statement, new),)), \
            f"write out of place: `{new}`"

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and "modified by an inplace operation" in raised["message"]:
            return Verdict(CONFIRMED, f"backward raised {raised['type']}: {raised['message']}")
        write = run.first("saved-write")
        if write is not None:
            return Verdict(LATENT, f"{quote(write['write']['where'])} changed a tensor saved for backward at "
                                   f"{quote(write['saved_at'])}, but no backward used it on this run")
        return Verdict(NOT_REPRODUCED, "the write did not change a tensor saved for backward on this run")
