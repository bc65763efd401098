"""TL414 missing-eval: a model with Dropout or BatchNorm evaluated while it is still in training mode."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, TrainModeEvaluation, Verdict, cst, edits,
)


class MissingEval(Rule):
    code = "TL414"
    name = "missing-eval"
    summary = ("a model with Dropout/BatchNorm evaluated (under `no_grad`, in `predict`/`validate`) while the code "
               "shows it is in training mode: `model.eval()` never called on the way")
    message = (
        "`{model}` is evaluated {context} while in training mode ({how}); its `{layer}` {behaviour} in training "
        "mode, so the predictions are not the trained model's and change from call to call; call "
        "`{model}.eval()` before evaluating (and `.train()` before training again)"
    )
    fix = Applicability.UNSAFE
    requires = (r"\.train\(|no_grad|inference_mode|def _*(?:predict|classify|eval|valid|test|infer)|load_state_dict|backward"
                r"|pretrained|weights\s*=",
                r"Dropout|dropout|BatchNorm|torchvision|Transformer|MultiheadAttention")
    # The model's class (and its Dropout or BatchNorm) may come from the user's own modules
    # (`from models import Net`): a file that imports from its project is looked at too.
    requires_may_be_in_imports = (requires[1],)
    references = (
        ("torch.nn.Module.eval", "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval"),
        ("Autograd mechanics: locally disabling gradient computation (no_grad is not eval mode)",
         "https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation"),
        ("torch.nn.Dropout", "https://pytorch.org/docs/stable/generated/torch.nn.Dropout.html"),
        ("torch.nn.BatchNorm2d", "https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html"),
    )
    docs = """
    ## What it does
    Flags the forward of a model that has Dropout or BatchNorm layers, run to evaluate or
    predict (under `torch.no_grad()`/`torch.inference_mode()`, in a function whose name
    says it predicts, classifies, evaluates, validates or tests (`predict`, `run_inference`,
    `get_predictions`, `classify_text`) and that runs no backward, or, for a
    model holding trained weights, a forward whose output is read out of the graph with
    `.detach()`, `.item()`, `.numpy()`, `argmax`, `torch.max`, `.data` or `print` in code
    that runs no backward and lets no graph of it out, or under
    `torch.set_grad_enabled(phase == "train")` in a loop over the phases, in its other
    phases), while the code shows the model is in training mode:

    - it was built on the way there (`model = Net()`, or a function of the file, or a
      module-level function of another module of the project (`create_model(cfg)` of
      `from model import create_model`), that always returns a new module, or in the call
      of a function of the file that trains it and returns it (`net = fit(Net(), data)`);
      a module starts in training mode, and `load_state_dict` does
      not change that, nor does a torchvision builder given trained weights,
      `resnet18(pretrained=True)`), or
    - `model.train()` was called, training ran (a backward or an optimizer step), and no
      `eval()` came after: after the training loop, or in a loop whose training step
      calls `model.train()` and whose evaluation does not call `eval()`; or an
      `evaluate()` of the file put it back in training mode at its end (`eval()` ...
      `train()`) and nothing switched it since. A function of the file that is handed the
      model and calls `model.train()` in its training loop leaves it in training mode
      when it was in training mode before (the loop may run or not: training mode either
      way); `train()` (or `train(True)`) is no switch to eval mode, so a class, or a script,
      that only ever calls `train()` keeps the modules it builds in training mode. A plain
      class that builds its model in `__init__` (`self.model = Net()`), or in the one method
      that sets it up (`initialize(opt)`, `_load_model()`: the attribute's only assignment),
      and never switches it keeps it in training mode in its methods when every instance of
      it, made in this file or in a script beside it that imports it, stays with the name it
      is bound to. A classmethod of the file that builds `cls(..)`, loads weights and returns
      it (`Net.from_pretrained(path)`) builds a model as a builder function does. A builder
      that sets a new layer on the module it builds (`net.fc = nn.Linear(net.fc.in_features,
      n)`) still returns it in training mode; `self.define_graph()` builds what the
      `define_graph` of the class of each instance made here builds (a subclass's override);
      `self.net = model(shape)`, where every construction in the file hands a module class
      for `model` (`NeuralNet(data, Regressor)`), builds a new module; and a name bound to
      `None` on one path and to a new module on the other (`lm = None` / `lm = LM()`) holds
      that module wherever it holds one.

    In a file that never trains (no backward, no optimizer step anywhere), a model built
    here with trained weights loaded into it (`load_state_dict`, a torchvision builder given
    trained weights) is run for inference wherever its output is used, also by a method
    of a class that builds it in `__init__` (`self.model = load(path)`) or by a function
    of the file it is handed to; reported once a model, where it first runs.

    The mode is followed through the statements in the order they run, through both arms
    of an `if` (both must leave the model in training mode; only the arm a literal argument
    decides, in a function called with one: `run_epoch(model, val_loader, False)` runs no
    `if train:` step, so what is left of it may evaluate the caller's model), through loops,
    into the functions of the project's other modules that the file imports (`heatmap(net, image)` of
    `from utils import heatmap`, as that module reads it), and into this
    file's functions and methods (`self.validate(loader)`, `run_inference(model, data)`,
    `model.predict(x)`, `model = train_model(model, loader)`, `Evaluator(model, data).run()`,
    `validate(context)` evaluating `context.model` after `model = context.model; model.train()`
    and training (one module, two names, until either is rebound or the object holding it is
    handed to code not seen),
    a wrapper that passes on its `*args, **kwargs`, `train(epoch)` then `test()` on the
    module's own `model`, the closures of the function that builds the model, `policy(obs)`
    running the `__call__` of a plain object that holds the model, a builder that returns
    another builder's module (`def resnet18(): return _resnet(..)`), `model, opt =
    load_checkpoint(path, model)` handing the model back in a tuple, and a module-level
    `encoder = None` that a function binds through `global` to the module it builds). A
    switch of one name of a module (`m = model.to(device)`) is a switch of its other names.
    A parameter whose literal default no call of the file overrides holds it
    (`torch.set_grad_enabled(grad_enabled)` with `grad_enabled=False`). `torch.jit.trace(model,
    x)` (and `torch.export.export`) of a model holding trained weights records its layers as
    they behave in its mode: the trace of a model in training mode keeps dropout and batch
    statistics, so it is reported as an evaluation. Grad mode
    is the caller's: a method of the model called under `no_grad` (`model.generate(x)`,
    `model.encode_text(t)`, one that runs its blocks in a loop), or whose result is read out
    after training (`m.generate(ctx)[0].tolist()`), evaluates the submodules it
    runs, when one of them has such a layer; the finding is on the call (also where the
    method's own name says it evaluates, `model.inference(obs)`). A function of the file that only predicts
    (`accuracy(model, loader)`: its outputs read out, nothing back-propagated) is an
    evaluation of a model holding trained weights. A model of the module that nothing in the
    file can switch (no `eval()`/`train(False)` anywhere, never handed to a call, only the
    methods of classes of the file that switch nothing called on it) is in training mode in
    every function that uses it (a service's `predict`). Anything that may change
    the mode unseen keeps it quiet: `eval()`, `train(flag)` (also on another name of the
    model, or on the module a `DataParallel` wraps), handing the model (or the object
    holding it) to a function of another module; `copy.deepcopy(model)` does not change
    it, and `eval()` on the copy leaves the model in training mode; `nn.DataParallel(model)`
    (and `torch.compile(model)`) is in the mode of the model it wraps, and holds its
    weights; a model class taken from a registry of the file (`MODELS[args.model](...)`)
    builds a model, with a layer that behaves differently when each class of it has one;
    `print(model)` and
    `torch.save(model, path)` switch nothing (and `torch.load(path)` of the same path, or of
    a file object opened on it, gives the model back whole in the mode it was saved in, with
    its layers), and a function of the file that calls
    `load_state_dict` on the model it is handed loads trained weights; an object of a plain class
    of this file that switches no mode (`Predictor(model)`) keeps the model it is handed
    in the mode it had. A generator run on the
    noise its function draws (`netG(torch.randn(n, nz))`) samples, and is not a
    prediction; a forward whose output is dropped (a statement of its own) in a file that
    hooks no module only refreshes the batch-norm statistics, and is not an evaluation. The layers come from the model's class: `nn.Dropout*`,
    `nn.BatchNorm*` (not with `track_running_stats=False`), the Transformer layers,
    `nn.MultiheadAttention`/`nn.LSTM` given a dropout, `F.dropout(x, training=self.training)`,
    through `nn.Sequential`, this file's module classes and helper functions, the module
    classes of the project's other files (`from models import Net`: the layer is shown
    where that file writes it; also a model the scripts beside a module hand to it,
    `Trainer(UNet(), ..)` in train.py for the `self.model` of utils.py's `Trainer`, unless
    an argument of the construction may turn the layer off), and the
    models torchvision's builders make (`torchvision.models.resnet18()`: its BatchNorm2d;
    a table generated from torchvision itself, so torchvision need not be installed). A
    model built with its dropout turned off by a literal (`Net(dropout=0.0)`, where the
    class builds `nn.Dropout(dropout)`), or built on another path as a model without such
    a layer (`if no_bn: net = NetNoBN() else: net = NetBN()`), is not reported. A trainer
    keeps its model as `self.net` through what cannot switch it: moving tensors
    (`data.to(self.device)`) and filling lists it keeps (`self.outputs.append(out)`).

    `model.train()` followed by predictions without training in between is how Monte Carlo
    dropout is written, and is not flagged, except where it cannot be: `model.train()`
    written in the function that evaluates (named for evaluating, running no backward), or
    in a file that never trains, before predictions read out of the graph, when each
    forward gets a new input (Monte Carlo dropout runs one input again and again) and its
    output is used (a refresh of batch-norm statistics drops it). The finding is then on
    the `train()`, the line to change. So is a script's `model.train()` followed by the one
    forward whose output it uses (under `no_grad`, or read out), run once: no loop, no
    comprehension, its input not replicated (`x.repeat(n, 1)`). `model.eval` written without
    the call is reported
    where it is written, with the safe fix `model.eval()`.

    The finding is on the forward; where the model itself is handed to a function that
    evaluates it (`heatmap(model, x)`, `model.embed(x)`), that function runs whatever mode
    it is given, and the finding is on the call; but a method of a class named for evaluating
    (a `Predictor`'s `label_batch(model, batch)`) owns the mode it evaluates in, and the
    finding is on its forward. Where the forward runs inside a method of the model
    (`model.generate(x)` in the `no_grad` block of a `predict(processor, model, loader)` that
    `validate(context)` calls), the finding is on the call written in the code that evaluates
    (`model.generate(x)`), the calls that bring the model there as evidence. The evidence shows where the model was
    built or put in training mode (and its weights loaded), the calls that lead there, and
    a layer that behaves differently.

    ## Why is this bad?
    `torch.no_grad()` only stops recording the graph: it does not change how layers behave.
    In training mode Dropout zeroes a random part of the activations on every call (and
    scales the rest), and BatchNorm normalizes with the current batch's statistics (and
    updates its running averages with the evaluation data). Validation losses come out
    worse and noisy, two predictions of the same input differ, a batch of one gives
    garbage, and the running statistics learn the test set. Nothing raises.

    ## What to do instead
    Call `model.eval()` before evaluating, and `model.train()` before training again (at the
    top of the training step, where a loop alternates the two).

    ## Fix (unsafe)
    Inserts `model.eval()` at the start of the evaluating function (after its docstring),
    before the `with torch.no_grad():` block, before the call that hands the model over, or
    before the loop that makes the predictions. Unsafe: the model stays in eval mode after
    it, and code that trains afterwards without calling `model.train()` would then train
    with dropout off and BatchNorm frozen.
    """
    bad = (
        Bad(
            """
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 1))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.train()
            for x, y in [(torch.randn(16, 4), torch.randn(16, 1))] * 5:
                optimizer.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
            with torch.no_grad():
                prediction = model(torch.randn(2, 4))
            """,
            reported=((12, "model(torch.randn(2, 4))"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 1))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            model.train()
            for x, y in [(torch.randn(16, 4), torch.randn(16, 1))] * 5:
                optimizer.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                prediction = model(torch.randn(2, 4))
            """,
        ),
    )
    good = (
        """
        import torch
        from torch import nn

        def fit(net, batches, epochs=3):
            opt = torch.optim.Adam(net.parameters())
            for epoch in range(epochs):
                net.train()
                for inputs, targets in batches:
                    opt.zero_grad()
                    nn.functional.mse_loss(net(inputs), targets).backward()
                    opt.step()
                net.eval()
                with torch.no_grad():
                    print(epoch, net(batches[0][0]).mean().item())

        net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 1))
        fit(net, [(torch.randn(16, 4), torch.randn(16, 1))])
        net.train()  # Monte Carlo dropout: several stochastic predictions on purpose
        with torch.no_grad():
            samples = torch.stack([net(torch.randn(2, 4)) for _ in range(10)])
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in self.ctx.train_mode.evaluations():
            self._report(found)

    def _report(self, found: TrainModeEvaluation) -> None:
        mode = found.mode
        snippet = self.ctx.snippet
        if mode.built:
            how = f"built by `{snippet(mode.node)}`, and modules start in training mode"
            related = [(mode.node, "the model is built here, in training mode")]
        elif mode.trained:
            how = f"`{snippet(mode.node)}` put it there and training ran since"
            related = [(mode.node, "this puts the model in training mode")]
        elif mode.restores:
            how = (f"`{snippet(mode.node)}` (line {self.ctx.line_index.position(mode.node.start)[0]}) put it back "
                   f"there after an evaluation, and nothing switched it since")
            related = [(mode.node, "this puts the model back in training mode")]
        else:
            how = f"`{snippet(mode.node)}` (line {self.ctx.line_index.position(mode.node.start)[0]}) put it there"
            related = [(mode.node, "this puts the model in training mode")]
        for call in mode.via:
            related.append((call, "this call leaves the model in training mode"))
        if len(mode.saved) == 2:  # `torch.save(model, path)` ... `torch.load(path)`
            how += (f"; `{snippet(mode.saved[0])}` pickled it whole in that mode and `{snippet(mode.saved[1])}` "
                    f"gives it back in it")
            related += [(mode.saved[0], "the model is saved whole here, with its training mode"),
                        (mode.saved[1], "it is loaded back here in the mode it was saved in")]
        if mode.loaded is mode.node:  # `resnet18(pretrained=True)`
            related[0] = (mode.node, "the model is built here with trained weights, in training mode")
        elif mode.loaded is not None:
            related.append((mode.loaded, "trained weights are loaded here: the mode stays as it was"))
        for call in found.calls:
            related.append((call, "this call runs the evaluation with the model in training mode"))
        context = found.context
        if found.forward is not None:
            context = f"by `{snippet(found.node.func)}()` (its forward runs {found.context})"
            related.append((found.forward, f"the forward runs here, {found.context}"))
        related.append((found.layer, f"this builds {found.layer_where}, a layer that behaves differently in training "
                                     f"mode" if found.layer_where else "this layer behaves differently in training mode"))
        layer = found.layer_text
        behaviour = "normalizes with each batch's statistics" if "Norm" in layer or "norm" in layer else \
            "drops a random part of the activations"
        model = found.model or "model"
        if mode.uncalled is not None:
            self._report_uncalled(found, mode.uncalled, layer, behaviour, related)
            return
        switch = mode.node
        if not mode.built and not mode.trained and isinstance(switch, cst.Call) and not mode.via and \
                found.forward is None and found.scope_node.start <= switch.start < found.scope_node.end:
            # `model.train()` in the code that evaluates: the line to change.
            fix = Fix(Applicability.UNSAFE, "Put the model in eval mode here",
                      (edits.replace(switch.func.attr, "eval"),)) if isinstance(switch.func, cst.Attribute) \
                and not switch.args else None
            related = [(found.node, "the model is evaluated here"), *related[1:]]
            self.report(switch, model=model, context=context, how=how, layer=layer, behaviour=behaviour,
                        related=tuple(related), fix=fix)
            return
        if found.site is not None:  # in the function that evaluates: where `eval()` belongs
            self._report_site(found, model, context, how, layer, behaviour, related)
            return
        self.report(found.node, model=model, context=context, how=how, layer=layer, behaviour=behaviour,
                    related=tuple(related), fix=self._fix(found, model))

    def _report_site(self, found: TrainModeEvaluation, model: str, context: str, how: str, layer: str,
                     behaviour: str, related: list) -> None:
        """The evaluation is declared in a function the model is brought to (a `predict()` with its
        `no_grad` block, a method that reads the prediction out): the finding is on its call there."""
        site = found.site
        related = [(node, note) for node, note in related if node is not site]
        if found.node is not site:
            related.insert(0, (found.node, "the model is handed on to the evaluation here" if found.forward is not None
                               else "the forward runs here"))
        func = site.func
        if isinstance(func, cst.Attribute) and site is not found.node and site is not found.forward:
            func = func.value  # `model.generate(x)`: a method of the model
        written = self.ctx.snippet(func)
        model = written if written.replace(".", "").replace("_", "").isalnum() else model
        function = _function_of(site)
        where = f"at the start of `{function.name.value}()`" if function is not None else "before evaluating"
        self.report(site, model=model, context=context, how=how, layer=layer, behaviour=behaviour,
                    related=tuple(related),
                    fix=Fix(Applicability.DISPLAY_ONLY, f"Put the model in eval mode {where}", ()))

    def _report_uncalled(self, found: TrainModeEvaluation, uncalled: cst.Attribute, layer: str, behaviour: str,
                         related: list) -> None:
        """`model.eval` without `()` before the evaluation: the line to change."""
        shown = self.ctx.snippet(uncalled)
        message = (f"`{shown}` is not called: it only looks the method up, so `{found.model or 'model'}` is still in "
                   f"training mode when it is evaluated {found.context} (line "
                   f"{self.ctx.line_index.position(found.node.start)[0]}); its `{layer}` {behaviour} in training "
                   f"mode; call it: `{shown}()`")
        self.report(uncalled, message, related=((found.node, "the model is evaluated here"), *related),
                    fix=Fix(Applicability.SAFE, f"Call it: `{shown}()`", (edits.insert_after(uncalled, "()"),)))

    def _fix(self, found: TrainModeEvaluation, model: str) -> Fix:
        call = f"{model}.eval()"
        advice = f"Call `{call}` before evaluating"
        context = found.context_node
        if isinstance(context, cst.Comparison):  # `set_grad_enabled(phase == "train")`: the phases that do not train
            return Fix(Applicability.DISPLAY_ONLY, f"Call `{call}` in the phases that do not train (an `else:` "
                                                   f"after the `train()` of the training phase)", ())
        anchor: Optional[cst.CSTNode] = None
        if found.forward is not None:  # before the statement that hands the model over
            anchor = _statement(found.node)
        elif isinstance(context, cst.Call):  # a prediction read out: before its loop, or its statement
            anchor = _outermost_loop(found.node, found.scope_node) or _statement(found.node)
        elif isinstance(context, cst.With):
            anchor = context
        elif isinstance(context, (cst.Decorator, cst.Name)):  # the function itself evaluates
            function = context.parent
            while function is not None and not isinstance(function, cst.FunctionDef):
                function = function.parent
            if function is not None and isinstance(function.body, cst.IndentedBlock) and function.body.body:
                statements = function.body.body
                anchor = statements[0]
                if _is_docstring(anchor):
                    anchor = statements[1] if len(statements) > 1 else None
        if anchor is None or not model.replace(".", "").replace("_", "").isalnum():
            return Fix(Applicability.DISPLAY_ONLY, advice, ())
        indent = self.ctx.line_indent(anchor)
        return Fix(Applicability.UNSAFE, f"Insert `{call}` before the evaluation",
                   (edits.insert_before(anchor, call + self.ctx.newline + indent),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        mode = run.first("module-mode")
        if mode is None:
            return Verdict(NOT_REPRODUCED, "the model's mode could not be read at the evaluation")
        if mode["training"] and mode["layers"]:
            return Verdict(CONFIRMED, f"`{mode['model']}` was in training mode when the evaluation ran, with "
                                      f"{mode['count']} layer(s) that behave differently in training mode also in "
                                      f"training mode: {mode['layers']}")
        functional = run.first("functional-mode")
        if mode["training"] and functional is not None:
            line = f" (line {functional['line']})" if functional.get("line") else ""
            return Verdict(CONFIRMED, f"`{mode['model']}` was in training mode when the evaluation ran, and its "
                                      f"forward called `{functional['function']}` with `training=True`{line}")
        if mode["training"]:
            return Verdict(NOT_REPRODUCED, f"`{mode['model']}` was in training mode, but no Dropout/BatchNorm layer "
                                           f"of it was")
        return Verdict(NOT_REPRODUCED, f"`{mode['model']}` was in eval mode when the evaluation ran")


def _function_of(node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = node.parent
    return node


def _statement(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The statement ``node`` is part of, when code can be inserted before it (not an
    ``elif``, not a lambda's or a decorator's)."""
    while node is not None and not isinstance(node, cst.BaseStatement):
        if isinstance(node, (cst.Lambda, cst.Decorator)):
            return None
        node = node.parent
    if node is None or isinstance(node, cst.If) and isinstance(node.parent, cst.If):
        return None
    return node


def _outermost_loop(node: cst.CSTNode, scope: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The outermost ``for``/``while`` statement around ``node`` within ``scope``."""
    found = None
    while node is not None and node is not scope:
        if isinstance(node, (cst.For, cst.While)):
            found = node
        node = node.parent
    return found


def _is_docstring(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
