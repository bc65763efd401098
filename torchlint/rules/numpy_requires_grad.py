"""TL415 numpy-requires-grad: ``.numpy()`` on a tensor that requires grad."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, torch_api,
)


class NumpyRequiresGrad(Rule):
    code = "TL415"
    name = "numpy-requires-grad"
    summary = ("`.numpy()` (or `np.asarray`) on a tensor that requires grad: a model output, a loss, a parameter, "
               "or something computed from one: RuntimeError")
    message = (
        "`{tensor}` requires grad (it comes from {source}, line {line}): `{call}` raises RuntimeError \"Can't call "
        "numpy() on Tensor that requires grad\"; call `.detach()` before `.numpy()`"
    )
    append_message = (
        "`{tensor}` requires grad (it comes from {source}, line {line}) and is appended to `{container}`: `{call}` "
        "(line {call_line}) converts the list with numpy and raises RuntimeError \"Can't call numpy() on Tensor that "
        "requires grad\"; append `{detached}.detach()` (or `.item()`)"
    )
    fix = Applicability.SAFE
    # A list converted elsewhere is reported where its tensor is appended; numpy raises at the conversion.
    raised_where_used = True
    requires = (r"numpy|sklearn|matplotlib|pandas|scipy",)
    # The conversion may be in a helper of the project (`save_curve(path, losses)` of utils.py).
    requires_may_be_in_imports = requires
    references = (
        ("torch.Tensor.numpy", "https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html"),
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
        ("Autograd mechanics", "https://pytorch.org/docs/stable/notes/autograd.html"),
    )
    docs = """
    ## What it does
    Flags `t.numpy()` (also `t.cpu().numpy()`, `np.asarray(t)`, `np.array(t)` whatever
    their other arguments (`np.array(t, dtype=np.float32)`), and the
    functions that convert the tensors they are given to arrays, by position or keyword:
    numpy's `np.dot`, `np.exp`, `np.where`, ..., scikit-learn's metrics,
    `scipy.stats.pearsonr` and the other correlations, scipy's optimizers
    (`scipy.optimize.minimize(f, x0=t)`, `least_squares`, `curve_fit(.., p0=t)`), `plt.plot`
    and the other plots of
    `matplotlib.pyplot` and of its Axes (`axs[0, 0].plot(epochs, losses)` of
    `fig, axs = plt.subplots(2, 2)`, `fig.add_subplot(..)`), `pd.DataFrame`, and a function
    of another module of the project that converts what it is handed that way on every run:
    `save_curve(path, losses)` of utils.py) where `t` requires grad, as the analysis shows
    with the place the gradient comes from:
    the output of a module with parameters (`model(x)`, `model.forward(x)`, `self.net(x)`,
    `nn.DataParallel(model)(x)`, a model loaded whole with `model = torch.load(path)`, a model whose class
    another file of the project defines, `from net import Regressor`, its layers read
    there, a model built by `torchvision.models` or `timm.create_model`, the `output` a forward hook receives from
    a layer of a model this file calls with gradients on), a parameter
    (`layer.weight`, `model[0].weight` of an `nn.Sequential` built from the layers, also a
    module of the file it holds (`model[0].encoder.weight`) or each of its modules when they
    are of one class (`for m in model: m.conv.weight`), `model.parameters()`,
    `list(model.parameters())[0]`, `p` of
    `for name, p in model.named_parameters()`), a tensor made with `requires_grad=True`
    or made to require grad after it is computed (`y.requires_grad = True`,
    `y.requires_grad_()`), a Hugging Face model loaded `from_pretrained` and the fields of
    its output (`model(**inputs).last_hidden_state`, `.logits`), the rows of a tensor
    (`list(out)`, `torch.cat(list(out))`), the values of a dict (`list(d.values())`, a
    loop `for key in d:` reading `d[key]`, a dict written out in the call), the parameters
    of a lambda where it is called (through the name it is bound to, or the attribute a
    class keeps it in: `self._metric(preds)`), a method of a module class of the file named
    like a distribution's (`flow.log_prob(x)`),
    or anything computed from them by differentiable operations, also across the
    functions of the file (a logging or metrics helper whose parameter a call passes a
    model output, a function that returns one; a function or method of another module of the
    project, `from utils import threshold`, `estimator.predict_proba(x)` of an imported class,
    as that module shows what it returns; in a module the scripts beside it import, what they
    pass: `meter.update(out)` in train.py reaches `Meter.update` of utils.py), lists filled with
    `.append(out)`, `.extend(out)` or `+= [out]` (also the lists a dict keeps:
    `history["loss"].append(loss)` then `plt.plot(history["loss"])`; their builtin `sum`) and
    joined by `torch.cat`/`torch.stack`, `np.concatenate`/`np.stack` or reduced by numpy
    (`np.mean(losses)`, `np.asarray(self.history)`, `plt.plot(losses)`: numpy converts each tensor;
    reported at the `.append(..)` that adds the tensor, the line to change; also a list a
    function of the file fills and returns), lists written in the call
    (`np.sum([loss_fn(o, y) for o in outputs])`), and the entries of
    a dict written out (`state = {"pred": out}`, or returned by a function or method of the
    file, also when handed on to another function: `render(decoder.decode(codes))`)
    read by their key or by a loop over keys, also as another object's attribute or a
    helper's parameter, and a dict filled by `d[key] = out` statements only (a hook's
    `activations[name] = output`). Calls reach methods through the classes of the file
    that inherit them, and `obj(x)` the `__call__` of its class. Nothing is reported after `.detach()`,
    `.data`, `.item()`, an integer operation (`argmax`, a comparison), under
    `torch.no_grad()` / `torch.inference_mode()` (or in a function this file calls
    only there), or in a file that turns parameters' gradients off
    (`requires_grad = False`, `requires_grad_(False)`), where which layers train is not
    known from the text.

    ## Why is this bad?
    A numpy array shares the tensor's memory and has no autograd history, so torch
    refuses to hand out the values of a tensor that requires grad: `RuntimeError:
    Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()
    instead.` It is the usual crash of logging, plotting and metrics code written
    against a model's output during training.

    ## What to do instead
    Detach first: `t.detach().cpu().numpy()`; or compute the values under
    `with torch.no_grad():` when no gradient is needed at all (evaluation).

    ## Fix (safe)
    Inserts `.detach()` before `.numpy()` (for `np.asarray(t)` and the other functions,
    after `t`): the values
    are the same, and the array no longer asks for the graph. For a list, the advice to
    append `.detach()` (or `.item()`) is shown: whether anything back-propagates through
    the list is the author's to say.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            x = torch.randn(8, 4)
            pred = model(x)
            values = pred.cpu().numpy()
            """,
            reported=((7, "pred.cpu().numpy()"),),
            fixed="""
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            x = torch.randn(8, 4)
            pred = model(x)
            values = pred.cpu().detach().numpy()
            """,
        ),
        Bad(
            """
            import torch
            import torch.nn as nn

            def log_scalar(history, value):
                history.append(float(value.numpy()))

            model = nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            history = []
            for _ in range(2):
                loss = model(torch.randn(8, 4)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                log_scalar(history, loss)
            """,
            reported=((5, "value.numpy()"),),
            fixed="""
            import torch
            import torch.nn as nn

            def log_scalar(history, value):
                history.append(float(value.detach().numpy()))

            model = nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            history = []
            for _ in range(2):
                loss = model(torch.randn(8, 4)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                log_scalar(history, loss)
            """,
        ),
        Bad(
            """
            import numpy as np
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            losses = []
            for _ in range(3):
                loss = model(torch.randn(8, 4)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss)
            print(np.mean(losses))
            """,
            reported=((13, "losses.append(loss)"),),
        ),
    )
    good = (
        """
        import numpy as np
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        x = torch.randn(8, 4)
        pred = model(x)
        values = pred.detach().cpu().numpy()
        labels = pred.argmax(1).numpy()
        with torch.no_grad():
            again = model(x).numpy()
        inputs = np.asarray(x)
        total = pred.sum().item()
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._appends_reported: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not node.args:
            self._report_tensor(node, func.value)
            return
        for argument in self.ctx.grad_flow.converted_arguments(node):  # `plot_curve(losses)` of utils.py
            if self._report_tensor(node, argument) or self._report_container(node, argument):
                return
        qualname = self.ctx.qualname(func) if isinstance(func, (cst.Attribute, cst.Name)) else None
        first = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star else None
        if first is not None and qualname in torch_api.NUMPY_TENSOR_CONVERSIONS and self._report_tensor(node, first):
            return  # `np.asarray(t)`, `np.array(t, dtype=np.float32)` of a tensor that requires grad
        if self.ctx.grad_flow.converts_arrays(node):  # `np.dot(emb, emb.T)`, `roc_auc_score(y, out)`, `ax.plot(..)`
            for arg in node.args:  # by position or keyword: `minimize(f, x0=t)`, `scatter(x, y, c=t)`
                if not arg.star and (self._report_tensor(node, arg.value) or
                                     self._report_container(node, arg.value)):
                    return
            return
        if first is None:
            return
        if qualname in torch_api.NUMPY_SEQUENCE_CONVERSIONS:
            self._report_container(node, first)  # `np.mean(losses)`: numpy converts each tensor the list holds

    def _report_container(self, node: cst.Call, container: cst.BaseExpression) -> bool:
        """Report the list ``container`` converted by ``node`` when a tensor it holds
        requires grad (at the `.append(..)` that adds it, the line to change); whether one does."""
        if not isinstance(container, (cst.Name, cst.Attribute, cst.Subscript, cst.List, cst.Tuple, cst.ListComp)):
            return False
        found = self.ctx.grad_flow.item_requiring_grad(container)
        if found is None:
            return False
        item, source = found
        argument = self.ctx.parent(item)
        append = self.ctx.parent(argument) if isinstance(argument, cst.Arg) else None
        if not isinstance(append, cst.Call) or self.ctx.grad_flow.runs_without_grad(node):
            return self._report_source(node, container, source, None)
        if id(append) not in self._appends_reported:
            self._appends_reported.add(id(append))
            shown = self.ctx.snippet(item)
            detached = shown if isinstance(item, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({shown})"
            self.report(append, self.append_message, tensor=item, detached=detached, source=source.what,
                        line=self._line(source.node),
                        container=append.func.value, call=node, call_line=self._line(node), evidence=source.steps,
                        related=((node, "the conversion that raises"),),  # the run is judged once it got there
                        fix=Fix(Applicability.DISPLAY_ONLY, f"Append `{detached}.detach()` (or "
                                                            f"`.item()`) if nothing back-propagates through the list",
                                ()))
        return True

    def _report_tensor(self, node: cst.Call, tensor: cst.BaseExpression) -> bool:
        """Report ``node`` converting ``tensor`` when it requires grad (unless gradients are off
        there); whether it requires grad."""
        return self._report_source(node, tensor, self.ctx.grad_flow.requires_grad(tensor), self._fix(node, tensor))

    def _report_source(self, node: cst.Call, tensor: cst.BaseExpression, source, fix: Optional[Fix]) -> bool:
        if source is None:
            return False
        if not self.ctx.grad_flow.runs_without_grad(node):
            self.report(node, tensor=tensor, call=node, source=source.what, line=self._line(source.node),
                        evidence=source.steps, related=((source.node, "the gradient comes from here"),), fix=fix)
        return True

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]

    def _fix(self, call: cst.Call, tensor: cst.BaseExpression) -> Optional[Fix]:
        if isinstance(call.func, cst.Attribute) and call.func.value is tensor:
            return Fix(Applicability.SAFE, "Call `.detach()` before `.numpy()`",
                       (edits.insert_after(tensor, ".detach()"),))
        if isinstance(tensor, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            return Fix(Applicability.SAFE, "Detach the tensor before converting it",
                       (edits.insert_after(tensor, ".detach()"),))
        return None

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.raised_or("RuntimeError", "Can't call numpy() on Tensor that requires grad",
                             "the conversion ran: the tensor did not require grad on this run")
