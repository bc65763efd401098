"""TL416 device-mismatch: a tensor that moving its module to a device leaves behind."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, DeviceMismatch as Found, Fix, Observation, Rule, Verdict, cst,
    edits, torch_api,
)

# What torch 2.13 says when an operation mixes devices (the meta device stands in for a GPU on CPU torch).
DEVICE_ERRORS = ("is not on the expected device", "Expected all tensors to be on the same device",
                 "must be on the same device", "should be the same device", "Tensor for argument",
                 "are not at the same device", "to be on the same device")  # `Expected b and A to be on ..`


class DeviceMismatch(Rule):
    code = "TL416"
    name = "device-mismatch"
    summary = ("a tensor a module's `.to(device)`/`.cuda()` leaves behind: a plain tensor attribute (not a "
               "buffer) or a tensor made in `forward` without `device=`")
    message = "{what}; {advice}"
    fix = Applicability.UNSAFE
    raised_where_used = True
    # (a module class may be moved by another module of the project that imports it)
    requires = (r"\.to\(|\.cuda\(|\bModule\b|\bdevice\s*=",)
    references = (
        ("torch.nn.Module.register_buffer",
         "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer"),
        ("CUDA semantics: device-agnostic code", "https://pytorch.org/docs/stable/notes/cuda.html#best-practices"),
    )
    docs = """
    ## What it does
    In an `nn.Module` subclass whose instances the file moves to a device (`model.to(device)`,
    `.cuda()`; also a module built as a submodule of a moved one, or handed to the constructor
    of a moved one that keeps it in an attribute (`Net(Standardize(stats)).to(device)`), or as a layer of an
    `nn.Sequential` that is moved, or returned by a factory function of the file:
    `build_model(cfg).to(cfg.device)`; or that another module of the project moves,
    `TinyLM(50).to(device)` in train.py after `from layers import TinyLM`, the move then shown
    with where it is), flags:

    - a plain tensor attribute made while the module is built (`self.mask = torch.ones(..)`
      in `__init__` or a method it calls, also one handed to the constructor and shown on the
      CPU, `self.mean = stats[0]`, also the `__init__` of a base class of the file it
      runs through `super().__init__()`, or made by a helper function of the file that makes
      the tensor it returns, `self.bias = get_alibi(heads, n)`, or by a parameter whose default
      and call sites give a torch factory, `self.window = window_fn(n_fft)` with
      `window_fn=torch.hann_window`; `torch.zeros(.., device=x_example.device)`, a tuple
      of those such as an LSTM's `(h0, c0)`, a `torch.distributions` object built from CPU
      tensors or Python numbers, whose samples are on the CPU), that `forward` computes with
      before replacing it (also in a method `forward` calls through `self`, looked up in the
      instance's class: a base class's `forward` runs the subclass's `self.apply_to(x)`);
    - a plain attribute holding a dict of CPU tensors (`self.stats = {"shift": torch.zeros(4)}`,
      even when the same tensors are also registered as buffers: the move replaces the buffers
      by moved copies and leaves the dict's entries), reported where `forward` reads an entry;
    - a plain attribute that `forward` (or a method it calls) fills with a tensor under an
      `if` on the module's own state, a cache (`if self.mask is None: self.mask = ..`,
      `if n != self.n_cached:`), when the file runs the module before it moves it
      (`model(x)` as a check on the CPU, then `model.to(device)`) and again after: the cache
      stays where the first call made it (reported where `__init__` sets it to None);
    - `self.to(device)` or `self.cuda()` in `__init__` before the layers are built: it moves
      only what is registered by then, and the layers built after it stay on the CPU (when
      nothing else in the file moves the module);
    - modules handed to a moved module's constructor and kept in a plain list or tuple
      (`self.metrics = [*metrics, self.criterion]`): the move does not reach them, and one
      built on the CPU, whose `forward` computes with its own buffers or a layer with
      weights, is called with the moved module's output (layers built in the class itself
      are TL418's);
    - a tensor made in `forward` (or a method it calls, also one inherited from a base class
      of the file, or returned by a helper such as
      `init_hidden`; also a method the file calls on the instance after the move,
      `flow.inverse(z)`, and what it calls) by a factory without `device=` or a conversion
      of numpy or Python data (`torch.from_numpy(table)`), (`torch.zeros(..)`, also wrapped in
      `nn.Parameter(..)`, which registers nothing there; also the default of a parameter,
      `torch.ones(..) if mask is None else mask`, when a call leaves it out, also a call of
      the module whose `forward` passes its `*args`/`**kwargs` on to the method:
      `self.update(*args, **kwargs)`), given to one of the module's layers (also inside the
      arithmetic of the layer's input), or meeting the module's input, a layer's output or a
      tensor the module registers (a buffer `register_buffer("w", ..)` or an `nn.Parameter`
      attribute, never set otherwise: the move takes it along, or what a method of the module
      returns from those) through arithmetic, `torch.cat`, a torch function or a
      tensor method (`x + 0.1 * torch.randn(x.shape)`, `scores.masked_fill(mask, ..)`), also
      through the name it is bound to (`values = torch.cat([torch.zeros(n), ..])` then
      `values * self.weights()`); an `nn.Sequential` holding a layer with weights is a layer;
    - a tensor shown on the CPU given to a module moved before the call (also a module
      `self.encoder` that the object moves as it is built, in `__init__` or a method it
      calls; reported at the factory that makes the tensor in the calling function, or at
      `x.to(device)` written as a statement of its own, whose moved copy is dropped): a batch of a
      `DataLoader` (of a `TensorDataset` or a `Dataset` whose `__getitem__` moves nothing),
      a factory or conversion without `device=` (also a legacy constructor such as
      `torch.FloatTensor(state)`, always on the CPU, and `torch.stack` or `pad_sequence` of a
      list of those; also what an instance of a plain class of the file returns from `__call__`,
      a tokenizer's dict of CPU tensors),
      the tuple an `init_hidden` helper returns, a dict batch unpacked into the call
      (`model(**batch)`) or given by keyword, also through the parameters of a
      `train(model, loader)` function, and in a helper given the module (`x = torch.zeros(1, *size)`
      then `m.eval()(x)`), also given to a method of the module's class that runs the module
      on it (`rnn.predict(x)`, whose body calls `self(x)`), moved where it is built or by the
      object that holds it (`learn.body` of a `Learner` whose `__init__` moves it);
    - class weights shown on the CPU of a loss (`nn.CrossEntropyLoss(weight=..)`,
      `F.cross_entropy(.., weight)`, also made in a loss module's `forward` from the list
      it was built with; also a loss handed to a `fit(model, loader, loss_fn)` function) that
      gets the output of a moved module, and a target
      shown on the CPU (with dimensions) given to a loss of torch with such an output (also a
      loss module held as an attribute, `self.loss_fct`);
    - a module built in the file and never moved (no `.to`/`.cuda` on it, not handed to
      any call, no `device=`, no default device set; also through `model = model.eval()` and a
      builder function of the file that moves nothing, `model = build()`), that holds
      parameters or buffers, given a tensor moved to a device just before (`x = x.to(device)`
      then `model(x)`);
    - anywhere else, a tensor shown on the CPU with dimensions computed with one shown on a
      device (moved there, the output of a module moved there or given an input moved there,
      `self(x.to(self.device))`, or computed from those, a comparison's mask too:
      `(scores > cut).long() != labels`):
      arithmetic, a comparison (`pred == labels` with the labels never moved), an
      arithmetic or comparison method (`pred.eq(target)`), `gather`/`masked_fill`/
      `index_select`, torch's arithmetic functions, `torch.cat`/`torch.stack` of a list
      written out (the rows a loop takes from a tensor are where it is, and so is
      `x.to(torch.float32)`); also through a helper's parameters (`accuracy(out, labels)`; the
      tensor on the device may come from one call site: `self.combine(mask, layer_mask)`
      in a method given batches moved to the device), a mask a helper function makes
      (reported in the helper when it makes it from the shape of a tensor it is given,
      `torch.eye(mask.size(1))`: `device=mask.device` is at hand there), the output of a loss module of
      torch given a tensor on the device, and a plain tensor attribute of a loss module or
      of a plain class (a metric called through `__call__`) given device inputs
      (`self.alpha = torch.tensor(alpha)`, with a list at every call site: a 0-dim tensor
      would mix with any device), also one a method resets and grows from itself
      (`self.losses = torch.tensor([])` in `reset()`, then
      `self.losses = torch.cat([self.losses, loss])`: reported where it is reset).

    Anywhere, `x.to(device)` or `x.cuda()` written as a statement of its own on a value
    shown to be a tensor, with a device (not something that may be a dtype): the moved copy
    is dropped and `x` stays where it was.

    The input of a submodule's `forward` is on the device when every `forward` of the file
    that calls it gives it a tensor there (a layer's output); the input of a moved module's
    `forward`, when every call of it elsewhere gives it a tensor moved there. A layer's
    `weight` and `bias` (`orthogonality(model.weight)`) are where the layer is moved.

    A move to `"cpu"`, a class that defines `to`/`cuda`/`_apply`, an attribute registered by
    name (`register_buffer("mask", ..)`) and a use that moves or reads metadata
    (`self.mask.to(x.device)`, `.shape`) are not flagged. The finding names the move and the use.

    ## Why is this bad?
    `Module.to()` moves parameters and buffers, the tensors the module registered; a tensor
    kept in a plain attribute stays where it was made, and a tensor made without `device=`
    is made on the CPU. At the first batch on the GPU: `RuntimeError: Expected all tensors to
    be on the same device`.

    ## What to do instead
    Register the attribute: `self.register_buffer("mask", torch.ones(..), persistent=False)`
    (moved with the module, left out of `state_dict`); make tensors in `forward` on the
    device of the input: `torch.zeros(.., device=x.device)`; move the batches and the class
    weights with `.to(device)` (or the loss module: `criterion.to(device)` moves its weights).
    A tensor's `.to()` returns the moved copy: keep it (`x = x.to(device)`).

    ## Fix (unsafe)
    For an attribute, `self.register_buffer("<name>", <value>, persistent=False)`: unsafe,
    as `model.half()`/`.double()` now convert it too (none for a tuple: a buffer is one
    tensor). For a tensor made in `forward` from the shape of a parameter
    (`torch.zeros(x.shape[0], ..)`), adds `device=x.device`: unsafe, as it assumes that
    parameter is on the module's device. For a batch, a target or class weights
    given to a module moved to `device`, appends `.to(device)`: unsafe, as it assumes the
    name still means that device there. For a module never moved, appends `.to(device)`
    to its construction when `device` is bound before it: unsafe, for the same reason.
    """
    bad = (
        Bad(
            """
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)
                    self.mask = torch.ones(8)

                def forward(self, x):
                    return self.proj(x) * self.mask

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = Decoder().to(device)
            out = model(torch.randn(2, 8, device=device))
            """,
            reported=((8, "self.mask = torch.ones(8)"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)
                    self.register_buffer("mask", torch.ones(8), persistent=False)

                def forward(self, x):
                    return self.proj(x) * self.mask

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = Decoder().to(device)
            out = model(torch.randn(2, 8, device=device))
            """,
        ),
        Bad(
            """
            import torch
            from torch import nn

            class Cell(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.GRUCell(4, 8)
                    self.out = nn.Linear(8, 1)

                def forward(self, x):
                    h = torch.zeros(x.shape[0], 8)
                    return self.out(self.rnn(x, h))

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = Cell().to(device)
            """,
            reported=((11, "torch.zeros(x.shape[0], 8)"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            class Cell(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.GRUCell(4, 8)
                    self.out = nn.Linear(8, 1)

                def forward(self, x):
                    h = torch.zeros(x.shape[0], 8, device=x.device)
                    return self.out(self.rnn(x, h))

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = Cell().to(device)
            """,
        ),
        Bad(
            """
            import torch
            from torch import nn

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = nn.Linear(4, 2).to(device)
            for x, y in [(torch.randn(3, 4), torch.randn(3, 2))]:
                x.to(device)
                loss = (model(x) - y.to(device)).pow(2).mean()
            """,
            reported=((7, "x.to(device)"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            device = torch.device("cuda" if torch.cuda.is_available() else "meta")
            model = nn.Linear(4, 2).to(device)
            for x, y in [(torch.randn(3, 4), torch.randn(3, 2))]:
                x = x.to(device)
                loss = (model(x) - y.to(device)).pow(2).mean()
            """,
        ),
    )
    good = (
        """
        import torch
        from torch import nn

        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)
                self.register_buffer("mask", torch.ones(8))
                self.scale = torch.ones(8)

            def forward(self, x):
                h = torch.zeros(x.shape[0], 8, device=x.device)
                return self.proj(x + h) * self.mask * self.scale.to(x.device)

        model = Decoder().to("cpu")
        other = Decoder().to(torch.device("cuda"))
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        if not self.ctx.inference.uses_torch:
            return
        self._reported: set[int] = set()
        for found in self.ctx.placement.device_mismatches():
            if found.kind in ("input", "weight", "target", "module", "operand"):
                self._report_unmoved(found)
                continue
            if found.kind == "early":
                self._report_early_move(found)
                continue
            if found.kind == "held":
                self._report_held(found)
                continue
            related = [(found.used, "it meets the module's tensors here")]
            if not found.moved_where:  # (a move in another module is shown with where it is)
                related.insert(0, (found.moved, "the module is moved here: parameters and buffers only"))
            if found.made is not found.node and found.attribute is not None and \
                    not (found.node.start <= found.made.start and found.made.end <= found.node.end):
                related.insert(0, (found.made, "the tensor is made here"))
            move = found.moved_where or f"`{self.ctx.snippet(found.moved)}`"
            if found.attribute is not None:
                what = (f"`self.{found.attribute}` of `{found.cls.name}` is a plain tensor attribute, not a buffer: "
                        f"{move} does not move it, and `forward` computes with it on the device it was made on")
                advice = f"register it with `self.register_buffer(\"{found.attribute}\", ..)`"
                fix = self._buffer_fix(found)
                if found.kind == "cache":  # filled by `forward` at a call before the move
                    related.insert(0, (found.ran, "the module runs here before the move: the cache is made on the "
                                                  "device of this call"))
                    what = (f"`self.{found.attribute}` of `{found.cls.name}` is a plain attribute caching a tensor "
                            f"that `forward` makes at its first call (`{self.ctx.snippet(found.ran)}`, before the "
                            f"move) and keeps: {move} does not move it, and `forward` computes with it where it "
                            f"was made")
                    advice = (f"register it with `self.register_buffer(\"{found.attribute}\", None, "
                              f"persistent=False)` so that the move takes it along")
                    if found.node is found.made:  # filled in `forward`: registered where it is first set
                        fix = None
                if found.kind == "tuple":  # a buffer holds one tensor
                    what = what.replace("is a plain tensor attribute", "is a plain attribute holding CPU tensors")
                    advice = "make its tensors in `forward` on the device of the input (`device=x.device`)"
                    fix = None
                if found.kind == "dict":  # read here; the dict keeps the tensors it was built with
                    related = [(found.made, "the tensor is made here, in a plain dict"),
                               *(item for item in related if item[0] is not found.made and item[0] is not found.used)]
                    what = (f"`self.{found.attribute}` of `{found.cls.name}` is a plain dict of CPU tensors: {move} "
                            f"moves parameters and buffers (and replaces registered buffers by moved copies), "
                            f"not the tensors the dict holds, and `forward` computes with them here")
                    advice = ("register each tensor as a buffer and read it through the module's attribute, or "
                              "move it here with `.to(x.device)`")
                    fix = None
            else:
                what = (f"`{self.ctx.snippet(found.node)}` makes a tensor on the CPU (no `device=`) in a method of "
                        f"`{found.cls.name}`, which {move} moves, and " +
                        ("computes with it and the module's input, a layer's output or a tensor the module "
                         "registers" if found.kind == "met"
                         else "gives it to the module's layers"))
                advice = f"make it with `device={found.device_of}.device`" if found.device_of else \
                    "make it on the device of the module's input (`device=x.device`)"
                if not self._takes_device(found):  # `torch.from_numpy(..)`: moved after it is made
                    advice = f"move it with `.to({found.device_of}.device)`" if found.device_of else \
                        "move it to the device of the module's input (`.to(x.device)`)"
                fix = self._device_fix(found)
            self.report(found.node, what=what, advice=advice, related=tuple(related), fix=fix)
        for dropped in self.ctx.placement.dropped_moves():
            if id(dropped) not in self._reported:
                tensor = self.ctx.snippet(dropped.func.value)  # type: ignore[attr-defined]
                self._report_dropped(dropped, f"`{tensor}` stays on the device it was on")

    def _report_unmoved(self, found: Found) -> None:
        """A CPU tensor given to a moved module, or CPU class weights meeting its output."""
        move = self.ctx.snippet(found.moved)
        tensor = self.ctx.snippet(found.node)
        related = [(found.moved, "the module is moved here")]
        if found.made is not found.node:
            related.insert(0, (found.made, f"it is on the CPU: {found.why}"))
        if found.kind == "input":
            what = (f"`{tensor}` is on the CPU ({found.why}), but the module it is given to was moved with "
                    f"`{move}`")
            related.append((found.used, "they meet here"))
        elif found.kind == "module":
            related = [(found.made, "the module is built here, on the CPU, and never moved"),
                       (found.moved, "the input is moved here")]
            what = (f"`{tensor}` is never moved to a device (its parameters stay on the CPU), but it is given a "
                    f"tensor moved with `{move}`")
        elif found.kind == "operand":
            what = (f"`{tensor}` is on the CPU ({found.why}), but `{self.ctx.snippet(found.used)}` computes it with a "
                    f"tensor on the device of `{move}`")
            related = [*related[:-1], (found.moved, "the other tensor is put on the device here"),
                       (found.used, "they meet here")]
        elif found.kind == "target":
            what = (f"the target `{tensor}` is on the CPU ({found.why}), but the loss gets the output of a module "
                    f"moved with `{move}`")
            related.append((found.used, "the loss is computed here"))
        else:
            what = (f"the class weights `{tensor}` are on the CPU ({found.why}), but the loss gets the output of a "
                    f"module moved with `{move}`")
            related.append((found.used, "the loss is computed here"))
        device = self.ctx.snippet(found.device) if found.device is not None else None
        tensor = found.node
        while isinstance(tensor, cst.Subscript):  # `t[:, None]`
            tensor = tensor.value
        dropped = self.ctx.placement.dropped_move(tensor) if isinstance(tensor, cst.Name) and \
            found.kind != "module" else None
        if dropped is not None:
            self._report_dropped(dropped, f"{what[0].lower() + what[1:]}: RuntimeError at the first batch", related)
            return
        if found.kind == "input" and self._made_here(found) or found.kind == "operand" and self._made_elsewhere(found):
            self._report_made(found, what, device, related)
            return
        advice = f"move it with `.to({device})`" if device else "move it to the module's device"
        fix = None
        if found.attribute == "()":  # a tuple of tensors: each is moved
            advice = f"make its tensors with `device={device}`" if device else "make its tensors on the module's device"
        elif found.attribute == "**":  # a dict of tensors unpacked into the call: each is moved
            advice = f"move each of its tensors: `{{k: v.to({device or 'device'}) for k, v in {self.ctx.snippet(found.node)}.items()}}`"
        elif found.kind == "module":
            advice = f"move the module where it is built: `.to({device})`" if device else \
                "move the module to the device of its inputs where it is built"
            if device and isinstance(found.device, cst.Name):
                fix = Fix(Applicability.UNSAFE, f"Move the module with `.to({device})` where it is built",
                          (edits.insert_after(found.made, f".to({device})"),))
        elif device and isinstance(found.device, cst.Name) and isinstance(found.node, (cst.Name, cst.Attribute,
                                                                                    cst.Call, cst.Subscript)):
            fix = Fix(Applicability.UNSAFE, f"Move it with `.to({device})`",
                      (edits.insert_after(found.node, f".to({device})"),))
        self.report(found.node, what=what + ": RuntimeError at the first batch", advice=advice,
                    related=tuple(related), fix=fix)

    def _report_early_move(self, found: Found) -> None:
        """`self.to(device)` in `__init__` before the layers are built: it moves nothing."""
        move = self.ctx.snippet(found.moved)
        what = (f"`{move}` runs in `{found.cls.name}.__init__` before the layers are built, so it moves only what is "
                f"registered by then: `self.{found.attribute}`, built after it, stays on the CPU")
        related = ((found.made, f"`self.{found.attribute}` is built here, after the move, on the CPU"),
                   (found.used, "the module computes with it here"))
        self.report(found.node, what=what + ": RuntimeError at the first batch on the device",
                    advice=f"build the layers first and call `{move}` at the end of `__init__`", related=related)

    def _report_held(self, found: Found) -> None:
        """Modules given from outside and kept in a plain list of a moved module."""
        move = self.ctx.snippet(found.moved)
        container = "tuple" if isinstance(found.node.value, cst.Tuple) else "list"  # type: ignore[attr-defined]
        what = (f"`self.{found.attribute}` of `{found.cls.name}` keeps modules in a plain {container}: `{move}` "
                f"does not move them, and `{self.ctx.snippet(found.made)}`, built on the CPU and never moved, keeps "
                f"its parameters and buffers there while `{self.ctx.snippet(found.used)}` gives it the module's "
                f"output, on the device")
        related = ((found.made, "the module is built here, on the CPU"),
                   (found.moved, "the module holding the list is moved here: registered submodules only"),
                   (found.used, "it computes with the device tensors here"))
        self.report(found.node, what=what, related=related,
                    advice=("hold them in `nn.ModuleList(..)` so that the move takes them along (or move each "
                            "to the device)"))

    def _made_here(self, found: Found) -> bool:
        """The CPU tensor given to the module is made by a factory (`torch.zeros(..)`) in the
        function that calls it, before the call: where `device=` belongs."""
        made = found.made
        return isinstance(made, cst.Call) and found.node is not made and made.end <= found.used.start and \
            self.ctx.qualname(made.func) in torch_api.TORCH_SIZED_FACTORIES and \
            self.ctx.enclosing_function(made) is self.ctx.enclosing_function(found.used)

    def _made_elsewhere(self, found: Found) -> bool:
        """The CPU tensor that meets the device is made by a factory in a helper, another
        function than the one where they meet, that can make it on the device: a method that
        resets a plain attribute (`self.losses = torch.tensor([])` in `reset()`), a helper that
        makes a mask from the shape of a tensor it is given (`torch.eye(mask.size(1))`: it has
        `mask.device` at hand). Reported there, where `device=` belongs (not in `__init__`, whose
        attribute is reported where it is used, nor in a module's `forward`, whose output its
        caller moves, nor in a helper given only sizes: the caller moves what it returns)."""
        made = found.made
        function = self.ctx.enclosing_function(made)
        return (isinstance(found.node, cst.Attribute) or found.device_of is not None) and \
            isinstance(made, cst.Call) and self.ctx.qualname(made.func) in (*torch_api.TORCH_SIZED_FACTORIES, *torch_api.TORCH_CONVERTERS) and \
            function is not None and function.name.value not in ("__init__", "forward") and \
            function is not self.ctx.enclosing_function(found.used)

    def _report_made(self, found: Found, what: str, device: Optional[str], related: list) -> None:
        made = found.made
        fix = None
        if device and isinstance(found.device, cst.Name) and not any(arg.star for arg in made.args) \
                and self.ctx.placement.device_visible_at(found.device, found.moved, made):
            fix = Fix(Applicability.UNSAFE, f"Make it with `device={device}`",
                      (edits.replace(made, edits.call_text(self.ctx, made, added=f"device={device}")),))
        related = [(found.node, "it is given to the module here" if found.kind == "input" else
                    "it meets the tensor on the device here"),
                   *[(node, why) for node, why in related if node is not made and node is not found.used]]
        advice = f"make it with `device={device}`" if device else "make it on the module's device"
        if found.kind == "operand" and found.device_of is not None:
            advice = f"make it with `device={found.device_of}.device`"
            fix = None if any(arg.star for arg in made.args) else Fix(
                Applicability.UNSAFE, f"Make it on `{found.device_of}.device`",
                (edits.replace(made, edits.call_text(self.ctx, made, added=f"device={found.device_of}.device")),))
        self.report(made, what=what + ": RuntimeError at the first batch", advice=advice,
                    related=tuple(related), fix=fix)

    def _report_dropped(self, dropped: cst.Call, consequence: str, related: list = ()) -> None:
        """``x.to(device)`` as a statement: the tensor's move returns a copy, which is dropped,
        ``consequence`` says what follows."""
        self._reported.add(id(dropped))
        name, move = self.ctx.snippet(dropped.func.value), self.ctx.snippet(dropped)  # type: ignore[attr-defined]
        fix = Fix(Applicability.UNSAFE, f"Keep the moved copy: `{name} = {move}`",
                  (edits.replace(dropped, f"{name} = {move}"),))
        self.report(dropped, what=f"`{move}` returns a moved copy and drops it: a tensor's `.to()` is not in place, "
                                  f"so {consequence}",
                    advice=f"keep the copy: `{name} = {move}`", related=tuple(related), fix=fix)

    def _buffer_fix(self, found: Found) -> Optional[Fix]:
        statement = found.node
        line = edits.own_line(self.ctx, statement)
        if not isinstance(statement, cst.Assign) or line is None:
            return None
        target = statement.targets[0].target
        receiver = self.ctx.snippet(target.value)
        value = self.ctx.text[self.ctx.span(statement.value)[0]:self.ctx.span(statement.value)[1]]
        text = f"{receiver}.register_buffer(\"{found.attribute}\", {value}, persistent=False)"
        return Fix(Applicability.UNSAFE, "Register it as a buffer", (edits.replace(statement, text),))

    def _takes_device(self, found: Found) -> bool:
        call = found.node
        return not (isinstance(call, cst.Call) and
                    self.ctx.inference.qualname(call.func) in torch_api.DEVICELESS_CONVERTERS)

    def _device_fix(self, found: Found) -> Optional[Fix]:
        call = found.node
        if found.device_of is None or not isinstance(call, cst.Call) or any(arg.star for arg in call.args):
            return None
        if not self._takes_device(found):
            return Fix(Applicability.UNSAFE, f"Move it to `{found.device_of}.device`",
                       (edits.insert_after(call, f".to({found.device_of}.device)"),))
        text = edits.call_text(self.ctx, call, added=f"device={found.device_of}.device")
        return Fix(Applicability.UNSAFE, f"Make it on `{found.device_of}.device`", (edits.replace(call, text),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and any(
                signature in raised["message"] for signature in DEVICE_ERRORS):
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "no operation mixed devices on this run")
