"""Train and eval mode: where a module with Dropout or BatchNorm is evaluated while the code
shows it is still in training mode.

An ``nn.Module`` starts in training mode and stays there until ``eval()`` (or
``train(False)``); in training mode Dropout draws a new mask on every call and BatchNorm
normalizes with the batch's statistics (and updates its running ones), so predictions made
then are neither the trained model's nor repeatable:

    model = Net()                   # built: in training mode
    model.train()                   # or put there explicitly, then trained
    for x, y in loader: ...backward(); step()
    with torch.no_grad():
        prediction = model(x_test)  # still in training mode: dropout is on

The mode of each model is followed through the statements of a scope in the order they run
(both arms of an ``if``, a loop's body twice, a ``with``'s body), keyed by the expression that
holds the model (``model``, ``self.model``).  A construction or ``.train()`` puts it in
training mode; ``.eval()``, ``.train(flag)``, a new binding, or handing the model (or its
owner) to code the analysis cannot see into makes the mode unknown.  A call of this file's
functions and methods is followed through a summary of its body (two levels deep): what it
evaluates in the caller's mode (also a prediction read out, reported where the caller's model
holds trained weights), the mode it leaves behind, and the model it hands back
(``model = train_model(model, ..)``).  The module-level models a function reads are the
caller's there; a function walked on its own starts with a module-level model in training
mode when nothing in the file can switch it.  ``copy.deepcopy`` keeps the mode; a switch of a
model also switches its other names and the wrappers built around it.

Evaluation is a forward of the model under ``no_grad``/``inference_mode`` or in a function
whose name says it predicts, classifies, evaluates, validates or tests (and that runs no
backward); grad mode is the caller's, so a method of the model called under ``no_grad``
(``model.encode_text(t)``) evaluates the submodules it runs (its summary's ``forwards``).  A
forward whose output is dropped in a file that hooks no module refreshes batch-norm
statistics, and is no evaluation.  A
mode set by an explicit ``.train()`` counts only once training (a backward or an optimizer
step) has run since: ``model.train()`` just before predictions under ``no_grad`` is how
Monte Carlo dropout is written.

Which layers behave differently comes from the torch API tables (``TRAIN_MODE_LAYERS``);
modules of this file are searched through the layers their classes and helper functions build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import decide_test, dotted, keyword, tuple_element
from torchlint.syntax.walk import ancestors, iter_nodes
from torchlint.syntax.text_search import TextPattern
from torchlint.analysis import torch_api
from torchlint.analysis.semantic import BindingKind, ClassInfo, FunctionInfo
from torchlint.analysis.torchvision_layers import TRAIN_MODE_LAYERS
from torchlint.analysis.values import Kind, Step

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

# A function whose name says it evaluates: `predict`, `evaluate`, `validate`, `test`, `infer`.
# The word may come later in the name (`run_inference`, `get_predictions`, `runEval`).
_EVALUATING_NAME = re.compile(
    r"(?:^_*|_|(?<=[a-z0-9])(?=[A-Z]))(?i:predict|classify|eval|valid|test|infer|score)[a-z]*(?:_|[A-Z0-9]|$)")
# nn.Module methods that leave the training flag as it is.
_MODE_KEEPING = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "state_dict", "load_state_dict", "to", "cuda", "cpu", "float", "double", "half", "bfloat16",
    "type", "zero_grad", "requires_grad_", "register_buffer", "register_parameter", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "share_memory", "extra_repr", "add_module",
    "get_submodule", "get_parameter", "get_buffer", "__repr__", "size", "count_parameters",
})
# Methods returning the module itself: `model = model.to(device)` keeps its mode.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "requires_grad_",
                           "train", "share_memory"})
# Methods that take a value out of the graph to read it as a prediction.
_READ_OUT = frozenset({"detach", "item", "numpy", "tolist", "argmax"})
_READS_OUT = TextPattern(r"\bno_grad\b|\binference_mode\b|\.(?:%s)\s*\(" % "|".join(sorted(_READ_OUT)))
# Methods that keep their argument in a container that outlives the statement.
_READ_OUT_FUNCTION_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in torch_api.READ_OUT_FUNCTIONS)
_STORING = frozenset({"append", "extend", "insert", "add", "put", "update", "setdefault", "__setitem__"})
# Methods of the containers code keeps on an object (`self.outputs.append(out)`): they switch no module.
_CONTAINER_METHODS = _STORING | frozenset({"pop", "popitem", "clear", "remove", "get", "items", "keys", "values",
                                           "copy", "sort", "reverse", "index", "count"})
# Method names the walk reads as a switch, a load or a forward whatever their receiver.
_SWITCHING_NAMES = frozenset({"train", "eval", "load_state_dict", "forward"})
_MAY_EVALUATE = TextPattern(r"\bno_grad|inference_mode|def _*(?:predict|classify|eval|valid|test|infer)|load_state_dict|"
                            r"backward|pretrained|weights\s*=")
# Hooks see a forward's activations even where its output is dropped.
_HOOKED = TextPattern(r"\bregister_(?:module_)?forward_(?:pre_)?hook\b|\bregister_hook\b")
_GRAD_OFF = TextPattern(r"\bno_grad\b|\binference_mode\b")
# What a training step calls: `loss.backward()`, `optimizer.step()`.
_TRAINING_ATTRIBUTES = frozenset({"backward", "step"})
_SWITCHES = re.compile(r"\.\s*(?:eval|train)\s*\(")
# A switch that may put a module in eval mode: `eval()`, `train(False)`, `train(flag)`; not
# `train()`/`train(True)`, after which the module is in training mode, as it was built.
_EVAL_SWITCHES = re.compile(r"\.\s*eval\s*\(|\.\s*train\s*\(\s*(?!\)|True\s*\))")
# The key under which a scope's state keeps the mode a module was pickled in by `torch.save`.
_SAVED = "pickled#"
# Tensor methods that make a batch of copies of one input (Monte Carlo sampling in one forward).
_REPLICATING = frozenset({"repeat", "expand", "expand_as", "repeat_interleave", "tile"})
_STAR_POSITIONS = 8  # how many arguments handed through `*args` are followed
_NEW = "new#"  # the object a constructor call builds, in `Evaluator(model).run()`
_MAX_DEPTH = 3  # calls of this file's functions followed into, below the scope asked about
_MAX_LAYER_DEPTH = 6


@dataclass(frozen=True)
class Train:
    """A model known to be in training mode: ``node`` put it there (a construction, or a
    ``.train()`` call), ``via`` the calls of this file's functions through which that
    happened; ``trained`` when a backward or optimizer step ran since; ``loaded`` the
    ``load_state_dict`` call that gave it trained weights since; ``uncalled`` a
    ``model.eval`` written as a statement without the call, which changes nothing."""

    node: cst.CSTNode
    built: bool
    via: tuple[cst.Call, ...] = ()
    trained: bool = False
    loaded: Optional[cst.Call] = None
    uncalled: Optional[cst.Attribute] = None
    # The `train()` ends a function that put the model in eval mode first (`evaluate()`
    # restoring the mode): the model goes back to training, not to Monte Carlo sampling.
    restores: bool = False
    # Pickled whole by ``torch.save(model, path)`` in this mode and unpickled by
    # ``torch.load(path)`` in it: the two calls (the module keeps its training flag).
    saved: tuple[cst.Call, ...] = ()


_CALLER = "caller"  # in a summary: whatever mode the caller's model is in


@dataclass(frozen=True)
class CallerOrTrain:
    """In a summary: the caller's mode, or training mode put there by ``train``: a loop whose
    body calls ``model.train()`` (and trains) leaves the model in training mode when it ran,
    and as the caller had it when it did not. Where the caller's model is in training mode
    already, it is in training mode after the call either way."""

    train: Train


@dataclass(frozen=True)
class TrainModeEvaluation:
    """``node`` runs a forward of ``model`` in ``context`` (under ``no_grad``, in a function
    named ``validate``) while ``mode`` shows it is in training mode; ``calls`` are the calls
    of this file's functions (outermost first) that bring the model there; ``layer`` a layer
    of the model that behaves differently in training mode."""

    node: cst.Call
    model: str  # as written at node
    mode: Train
    context: str
    context_node: Optional[cst.CSTNode]
    calls: tuple[cst.Call, ...]
    layer: cst.CSTNode
    layer_text: str
    scope_node: cst.CSTNode  # the function (or module) whose code holds the evaluation
    # When the function that evaluates was handed the model itself (``predict(model, x)``,
    # ``model.predict(x)``), it evaluates whatever mode its caller gives: the finding is
    # then on that call (``node``), and ``forward`` is the forward inside it.
    forward: Optional[cst.Call] = None
    # The layer is built in another module of the project (the model's class is imported):
    # ``layer`` is then this file's construction of the model, and this says where the
    # layer is written ("`nn.Dropout(0.3)` (models.py:11)").
    layer_where: Optional[str] = None
    # The call written where the evaluation is declared (inside the `no_grad` block, the
    # function named for evaluating, the scope that reads the prediction out), when the
    # evaluation happens in a function the model is brought to: there `eval()` belongs.
    site: Optional[cst.Call] = None


@dataclass
class _Summary:
    """What a function does to the models it can reach (by parameter, or through ``self``):
    ``evaluates`` (relative key -> (evaluating node, context, context node, calls, whether
    only a prediction read out: an evaluation where the model holds trained weights)) in the
    caller's mode; ``exits``: the mode each key it changed is left in (None: unknown);
    ``trains``: it runs a backward or an optimizer step."""

    evaluates: dict[str, tuple] = field(default_factory=dict)
    exits: dict[str, Optional[object]] = field(default_factory=dict)
    trains: bool = False
    # The module-level names it reads as its own roots (`model` of a script whose `test()`
    # evaluates the global model): the caller's, unless the caller binds the name itself.
    globals: frozenset = frozenset()
    # The names of an enclosing function it reads (a closure: `def evaluate(): model(x)` in
    # the `main()` that builds `model`): name -> the enclosing function's node.
    closures: dict = field(default_factory=dict)
    # `self.model = model` in an `__init__`: the key that holds what the caller handed as a
    # root (relative key -> relative root key), when nothing rebinds or switches it after.
    aliases: dict[str, str] = field(default_factory=dict)
    # The keys it loads trained weights into (`model.load_state_dict(ckpt["state_dict"])` in a
    # `load_checkpoint(model, path)`): key -> the `load_state_dict` call.
    loads: dict[str, cst.Call] = field(default_factory=dict)
    # It calls `train()`/`eval()` on a module it reaches some other way (`for m in models:
    # m.eval()`): whatever it is handed may leave in another mode.
    switches_unknown: bool = False
    # The forwards it runs in the caller's mode outside any evaluation of its own, their
    # outputs used (`h = self.encoder(x)` in a model's `encode_text()`): relative key -> the
    # forward. Grad mode is the caller's too: called under `no_grad`, they are an evaluation.
    # (relative key -> (the forward, the layer of the module it runs)), one a root, each
    # running a module with a layer that behaves differently.
    forwards: dict[str, tuple] = field(default_factory=dict)


class _State:
    """The modes known at one point: key -> Train or _CALLER; ``changed``: keys written."""

    def __init__(self, modes: Optional[dict] = None, changed: Optional[set] = None, names: Optional[dict] = None,
                 nones: Optional[set] = None):
        self.modes: dict[str, object] = dict(modes or {})
        self.changed: set[str] = set(changed or ())
        # `model = context.model`: the name -> the path it was read from, while both still
        # name the same module (nothing rebound either since): a switch of one is a switch
        # of the other, and the mode known for the name is that of the path.
        self.names: dict[str, str] = dict(names or {})
        # The names bound to `None` (`rnnlm = None`): no module, so where paths meet, the
        # module another path binds the name to is the only one it may hold.
        self.nones: set[str] = set(nones or ())

    def copy(self) -> "_State":
        return _State(self.modes, self.changed, self.names, self.nones)

    def lookup(self, key: str) -> Optional[object]:
        """The mode of ``key``: its own, or that of the nearest module holding it (also
        through a name bound to that module, ``model`` for ``context.model``)."""
        whole = key
        while True:
            if key in self.modes:
                return self.modes[key]
            name = next((name for name, path in self.names.items() if path == key), None)
            if name is not None:  # (shorter each time: a name has no dot, a path has one)
                return self.lookup(name + whole[len(key):])
            if "." not in key:
                return None
            key = key.rsplit(".", 1)[0]

    def holds(self, key: str) -> bool:
        """``key`` holds a module whose mode is known, or may hold one (a path a name was read from)."""
        return self.lookup(key) is not None or any(known.startswith(key + ".") for known in self.modes) or \
            any(path == key or path.startswith(key + ".") for path in self.names.values())

    def unbind(self, name: str) -> None:
        """``name`` is bound to something new: it no longer names the module of its path."""
        self.names.pop(name, None)

    def forget(self, key: str) -> None:
        """``key`` (and what it holds, and what holds it) is in an unknown mode now."""
        for other in list(self.modes):
            if other == key or other.startswith(key + ".") or key.startswith(other + "."):
                del self.modes[other]
        for name, path in list(self.names.items()):
            if path == key or path.startswith(key + "."):  # rebound, or handed to code not seen
                del self.names[name]
                self.forget(name)
            elif key.startswith(path + "."):  # a submodule of it, also by its other name
                self.forget(name + key[len(path):])
        self.changed.add(key)

    def forget_value(self, key: str) -> None:
        """``key`` now holds a value that is no module (``self.outputs = []``): it and what
        it held are unknown; the object that holds it keeps its mode."""
        for other in list(self.modes):
            if other == key or other.startswith(key + "."):
                del self.modes[other]
        self.changed.add(key)

    def set(self, key: str, mode: object) -> None:
        self.forget(key)
        self.modes[key] = mode

    def join(self, other: "_State") -> "_State":
        modes = {}
        for key, mode in self.modes.items():
            theirs = other.modes.get(key)
            if theirs is None:
                continue
            if mode == theirs:
                modes[key] = mode
            elif isinstance(mode, Train) and isinstance(theirs, Train) and mode.built == theirs.built:
                modes[key] = replace(mode, trained=mode.trained or theirs.trained,
                                     loaded=mode.loaded if theirs.loaded is not None else None)
            elif {type(mode), type(theirs)} <= {Train, CallerOrTrain, str} and _CALLER in (mode, theirs) \
                    or isinstance(mode, CallerOrTrain) or isinstance(theirs, CallerOrTrain):
                # The caller's mode on one path, training mode on the other (a training loop
                # of a function that was handed the model, which may run zero times).
                train = next((m if isinstance(m, Train) else m.train for m in (mode, theirs)
                              if isinstance(m, (Train, CallerOrTrain))), None)
                if train is not None:
                    modes[key] = CallerOrTrain(train)
            elif isinstance(mode, Train) and isinstance(theirs, Train):
                # Built on one path, put in training mode by `train()` on the other (a loop
                # whose body calls `model.train()`, after it ran zero times or some): training
                # mode either way; the `train()` is the evidence, and it counts as it would
                # alone (a model built is reported wherever `train()` and training would be).
                explicit, built = (theirs, mode) if mode.built else (mode, theirs)
                modes[key] = replace(explicit, loaded=explicit.loaded if built.loaded is not None else None)
        for mine, theirs in ((self, other), (other, self)):
            # `if args.rnnlm: rnnlm = RNNLM(..) else: rnnlm = None`: the module, where there is one
            for key, mode in mine.modes.items():
                if key not in modes and key in theirs.nones and key not in theirs.modes and isinstance(mode, Train):
                    modes[key] = mode
        names = {name: path for name, path in self.names.items() if other.names.get(name) == path}
        return _State(modes, self.changed | other.changed, names, self.nones & other.nones)


class TrainModeModel:
    """The train-mode evaluations of one module, computed on first use."""

    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._summaries: dict[int, Optional[_Summary]] = {}
        self._layers: dict[int, Optional[tuple]] = {}
        self._training_calls: Optional[set[int]] = None
        # What the walks report (also the walks of summaries asked for by another module's
        # analysis, before or without this module's own walk), and whether that walk ran.
        self._found: list[TrainModeEvaluation] = []
        self._walked = False
        self._seen: set[int] = set()
        self._reported_modes: set[int] = set()  # the constructions or switches of the models reported
        self._built: dict[int, list[tuple[str, cst.Call, Optional[cst.Call]]]] = {}
        self._trains: Optional[bool] = None  # the file runs a backward or an optimizer step somewhere
        self._module_names: Optional[set[str]] = None
        self._function_names: Optional[frozenset[str]] = None
        self._scanned: dict[int, tuple[list, list, list]] = {}  # a scope's nodes the scans of its outputs read
        self._globals: dict[str, Optional[Train]] = {}
        self._keeping: Optional[set[str]] = None
        self._instantiated_classes: Optional[list[ClassInfo]] = None

    # --- the question ----------------------------------------------------------------------

    def evaluations(self) -> list[TrainModeEvaluation]:
        """Forwards of a model with Dropout/BatchNorm layers, in an evaluation, while the
        model is shown to be in training mode (one per evaluating call)."""
        if self._walked:
            return self._found
        self._walked = True
        text = self.analysis.text
        if ".train(" not in text and not _MAY_EVALUATE.search(text):
            return self._found
        self._walk_scope(self.analysis.module, self.analysis.module.body, None, _State())
        functions = [function for function in self.model.functions.values()
                     if function.model is self.model and isinstance(function.node, cst.FunctionDef)]
        # Only a scope that may hold an evaluation is walked: one under `no_grad`, one that
        # reads an output out of the graph, or one that calls an evaluating function of the
        # file (`predict(model, x)`); a model's own methods mostly are none of those.
        evaluating = {function.name for function in functions if _EVALUATING_NAME.search(function.name)
                      or _GRAD_OFF.search(text, function.node.start, function.node.end)}
        calls_evaluating = TextPattern(r"\b(?:%s)\s*\(" % "|".join(map(re.escape, sorted(evaluating)))) \
            if evaluating else None
        # A file that loads trained weights and never trains runs its models for inference anywhere.
        runs_loaded = not self._file_trains() and re.search(r"load_state_dict|pretrained|weights\s*=", text) is not None
        for function in functions:
            start, end = function.node.start, function.node.end
            if not (function.name in evaluating or _READS_OUT.search(text, start, end)
                    or (calls_evaluating is not None and calls_evaluating.search(text, start, end))
                    or runs_loaded and self._reaches_loaded(function)):
                continue
            if function.scope is None:
                continue
            state = self._method_start(function)
            for name in self._shared_globals(function):
                mode = self._kept_global(name)
                if mode is not None and name in function.scope.loads:
                    state.modes[name] = mode
            self._walk_scope(function.node, _body(function.node), function, state)
        return self._found

    def _reaches_loaded(self, function: FunctionInfo) -> bool:
        """``function`` starts with a model holding loaded weights: one its (plain) class builds
        in ``__init__`` and loads, or a module-level one it reads (what it is handed is
        followed from its callers)."""
        if function.cls is not None and function.self_name is not None and function.cls.model is self.model \
                and any(loaded is not None for _name, _built, loaded in self._built_attributes(function.cls)):
            return True
        if function.scope is None:
            return False
        for name in self._shared_globals(function):
            if name in function.scope.loads:
                mode = self._kept_global(name)
                if mode is not None and mode.loaded is not None:
                    return True
        return False

    def _method_start(self, function: FunctionInfo) -> _State:
        """The modes a method starts with: the modules its (plain, non-module) class builds
        in ``__init__``, in training mode, when nothing can have switched them since."""
        state = _State()
        cls = function.cls
        if cls is None or function.self_name is None or function.name == "__init__" or cls.model is not self.model:
            return state
        for name, construction, loaded in self._built_attributes(cls):
            state.modes[f"{function.self_name}.{name}"] = Train(construction, True, loaded=loaded)
        return state

    def _built_attributes(self, cls: ClassInfo) -> list[tuple[str, cst.Call, Optional[cst.Call]]]:
        """``self.<name> = Net()`` (or ``Net().to(device)``) in ``__init__`` of a class of this
        file, or of a class of this file it derives from, none of them with other bases (so no framework or
        ``nn.Module.eval()`` reaches its attributes), the only assignment of the attribute in
        them, where nothing in the file may change the module's mode: no ``.eval(``/``.train(``
        in those classes, none on a ``.<name>`` anywhere, the module never handed out of the
        class, and every instance of the class (or a subclass) made here and kept here."""
        key = id(cls.node)
        if key in self._built:
            return self._built[key]
        self._built[key] = found = []
        lineage = self._plain_lineage(cls)
        text = self.analysis.text
        # (`self.net.train()` in a training step leaves it in training mode, as it was built)
        if not lineage or any(_EVAL_SWITCHES.search(text, c.node.start, c.node.end) for c in lineage) \
                or not self._kept_instances(cls):
            return found
        # (In `__init__`, or in the method that sets the model up, `initialize(opt)` or
        # `_load_model()`: the only assignment, so whatever method reads it reads that module.)
        methods = [method for owner in lineage for method in owner.methods.values()
                   if method.self_name is not None and isinstance(method.node, cst.FunctionDef)]
        for init in methods:
            if init.lazy:  # (a class of an imported module)
                init.model.materialize(init)
            for node in iter_nodes(init.node.body):
                if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Call)):
                    continue
                target = node.targets[0].target
                if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == init.self_name):
                    continue
                name = target.attr.value
                built = _under_moves(node.value)  # `Net().to(device)`
                returned = self.built_and_returned(built) if isinstance(built, cst.Call) else None
                if sum(len(c.assignments(name)) for c in lineage) != 1 or not isinstance(built, cst.Call) \
                        or not (self.constructs(built) or returned is not None) or re.search(
                        rf"\.{re.escape(name)}\s*(?:\.\s*eval\s*\(|\.\s*train\s*\(\s*(?!\)|True\s*\)))", text) \
                        or any(not self._kept_by_lineage(match.start(1), lineage) for match in re.finditer(
                            rf"[(,=]\s*(\w+\.{re.escape(name)})\s*(?:[,)]|$)", text, re.MULTILINE)):
                    continue
                loader = self._lineage_loader(name, lineage)
                constructor = lineage[0].methods.get("__init__") if init.name != "__init__" else None
                found.append((name, built, self.pretrained(built) or _loaded_in(init, name) or loader
                              or (_loaded_in(constructor, name) if constructor is not None else None)
                              or (returned[1] if returned is not None and returned[1] is not None and
                                  returned[1].start >= 0 else None)))
        return found

    def _kept_by_lineage(self, offset: int, lineage: list[ClassInfo]) -> bool:
        """The ``self.<name>`` written at ``offset`` is handed to a method of the class's own
        lineage (``self.load_network(self.netG, 'G', epoch)``) that only calls methods on it
        that keep its mode (``load_state_dict``, ``to``): the module stays in the mode it had."""
        call = self._lineage_call(offset, lineage)
        return call is not None and self._keeping_param(*call)

    def _lineage_call(self, offset: int, lineage: list[ClassInfo]) -> Optional[tuple[FunctionInfo, str]]:
        """The method of ``lineage`` (and the parameter) the argument written at ``offset`` goes to."""
        for call in self.analysis.nodes_of(cst.Call):
            if not (call.start < offset < call.end and isinstance(call.func, cst.Attribute)):
                continue
            receiver = call.func.value
            cls = _self_class(self.model, receiver) if isinstance(receiver, cst.Name) else None
            if cls is None or cls not in lineage:
                continue
            method = self.inference.method_of(cls, call.func.attr.value)
            if method is None or method.self_name is None or not isinstance(method.node, cst.FunctionDef):
                return None
            positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
            names = [param.name.value for param in method.positional_params()][1:]
            for index, arg in enumerate(call.args):
                if arg.value.start <= offset < arg.value.end:
                    if arg.keyword is not None:
                        return method, arg.keyword.value
                    position = positional.index(arg) if arg in positional else -1
                    return (method, names[position]) if 0 <= position < len(names) else None
        return None

    def _keeping_param(self, method: FunctionInfo, param: str) -> bool:
        """Every use of ``param`` in ``method`` calls a mode-keeping method on it."""
        if method.scope is None:
            return False
        if any(binding.kind is not BindingKind.PARAM for binding in method.scope.bindings.get(param, ())):
            return False
        for _seq, read in method.scope.loads.get(param, ()):
            attribute = read.parent
            call = attribute.parent if isinstance(attribute, cst.Attribute) and attribute.value is read else None
            if not (isinstance(call, cst.Call) and call.func is attribute and attribute.attr.value in _MODE_KEEPING):
                return False
        return True

    def _lineage_loader(self, name: str, lineage: list[ClassInfo]) -> Optional[cst.Call]:
        """The ``load_state_dict`` of a method of the lineage that ``self.<name>`` is handed to."""
        for match in re.finditer(rf"[(,=]\s*(\w+\.{re.escape(name)})\s*(?:[,)]|$)", self.analysis.text, re.MULTILINE):
            call = self._lineage_call(match.start(1), lineage)
            if call is None:
                continue
            method, param = call
            for _seq, read in method.scope.loads.get(param, ()) if method.scope is not None else ():
                attribute = read.parent
                if isinstance(attribute, cst.Attribute) and attribute.attr.value == "load_state_dict" \
                        and isinstance(attribute.parent, cst.Call):
                    return attribute.parent
        return None

    def _plain_lineage(self, cls: ClassInfo) -> Optional[list[ClassInfo]]:
        """``cls`` and the classes of this file it derives from, when every base on the way is
        one of them or none (``object``): no framework's class in between."""
        lineage, whole = self.inference.file_lineage(cls, generations=7)
        return lineage if whole else None

    def _kept_instances(self, cls: ClassInfo) -> bool:
        """The class (or a class of this file derived from it) is instantiated in this file
        or in the scripts that import it, each instance bound to a name that is never handed
        to a call (where code out of sight might switch its modules)."""
        made = []
        # (Only a call named after a class of this file, or through a name assigned, can make one.)
        names = {other.name for other in self.model.classes.values() if other.model is self.model}
        for call in self.analysis.nodes_of(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value not in names or isinstance(func, cst.Name) \
                    and func.value not in names and not any(binding.kind is BindingKind.ASSIGN
                                                            for binding in self.model.resolve(func)):
                continue
            value = self.inference.infer(func)
            if value is not None and value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo) \
                    and value.cls.model is self.model:
                lineage = value.cls is cls or self._plain_lineage(value.cls)
                if lineage is True or lineage and cls in lineage:
                    made.append((call, self.analysis.text))
        init = self.inference.method_of(cls, "__init__")
        if init is not None:  # `tester = TesterOTB(frames, weights)` in test.py beside this module
            made += [(call, other.text) for other, call in self.analysis.callers_elsewhere(init)]
        if not made:
            return False
        for call, text in made:
            statement = call.parent
            if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0].target, cst.Name)):
                return False
            name = statement.targets[0].target.value
            if text is self.analysis.text:
                if self._handed_name(name):
                    return False
            elif re.search(rf"[(,=]\s*{re.escape(name)}\s*[,)]", text):
                return False
        return True

    def _handed_name(self, name: str) -> bool:
        """A name ``name`` of this file is handed to a call, bound to another name, or put in a
        container (``f(model)``, ``other = model``, ``[model]``): code out of sight may reach
        what it holds. (A parameter of that name in a signature is none of these.)"""
        for node in self.analysis.nodes_of(cst.Name):
            if node.value != name:
                continue
            parent = node.parent
            if isinstance(parent, (cst.Arg, cst.Element, cst.DictElement)) or \
                    isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and parent.value is node:
                return True
        return False

    # --- walking a scope -------------------------------------------------------------------------

    def _walk_scope(self, scope_node, body, function: Optional[FunctionInfo], state: _State,
                    summary: Optional[_Summary] = None, depth: int = 0, flags: Optional[dict] = None) -> _State:
        walker = _Walker(self, scope_node, function, summary, depth, flags or {})
        return walker.block(body, state)

    def report(self, walker: "_Walker", call: cst.Call, key: str, mode: Train, context: str,
               context_node, calls: tuple[cst.Call, ...], inner: cst.Call, inner_key: str,
               handed: bool = False, layer: Optional[tuple] = None) -> None:
        """``handed``: ``call`` hands the model itself to the function that evaluates it; the
        finding goes on ``call``, where the mode is the caller's choice."""
        seen = (id(inner), id(mode.node)) if handed else id(inner)
        if seen in self._seen or id(inner) in self._seen:
            return
        if not mode.built and not mode.trained and not (mode.restores and not _repeats_input(inner)) and \
                not self._train_then_evaluation(walker, inner, mode):
            return  # `model.train()` then predictions: Monte Carlo dropout, batch-norm statistics refreshed
        layer = layer or self.layer_of(cst_expression(inner), inner, key_node=_key_node(call, key))
        if layer is None:
            return
        self._seen.add(seen)
        self._reported_modes.add(id(mode.node))
        site = _site(context_node, calls, inner, handed) if calls else None
        if site is None and calls and not handed and isinstance(context_node, (cst.Name, cst.Decorator)) \
                and self._module_method(context_node.parent):
            # The model's own method named for evaluating (`model.inference(obs)`): it runs in
            # whatever mode the code that calls it chose; the line to change is that call.
            site = calls[-1]
        if handed:
            self._found.append(TrainModeEvaluation(call, key, mode, context, context_node, calls[1:], layer[0],
                                                   layer[1], _owner(call), forward=inner, layer_where=layer[2],
                                                   site=site))
            return
        self._found.append(TrainModeEvaluation(inner, inner_key, mode, context, context_node, calls, layer[0],
                                               layer[1], _owner(inner), layer_where=layer[2], site=site))

    def _module_method(self, node: Optional[cst.CSTNode]) -> bool:
        """``node`` is the definition of a method of an ``nn.Module`` class of this file."""
        if not isinstance(node, cst.FunctionDef):
            return False
        function = next((f for f in self.model.functions.values() if f.node is node), None)
        return function is not None and function.cls is not None and \
            self.inference.instance_of(function.cls).kind is Kind.MODULE

    def _train_then_evaluation(self, walker: "_Walker", call: cst.Call, mode: Train) -> bool:
        """``model.train()`` and then an evaluation that is neither Monte Carlo dropout (which
        runs one input again and again) nor a refresh of batch-norm statistics (which drops
        the outputs): in a function whose name says it evaluates (running no backward) that
        calls ``train()`` itself, or in a file that never trains, its output read out as a
        prediction."""
        if not isinstance(mode.node, cst.Call) or mode.via or _repeats_input(call):
            return False
        if walker.evaluating_name and walker.function is not None and \
                walker.function.node.start <= mode.node.start < walker.function.node.end:
            return True
        if walker.function is None and isinstance(_owner(mode.node), cst.Module) and _runs_once(call) and (
                walker.read_out(call) is not None or not isinstance(call.parent, cst.Expr)
                and self.inference.grad_disabled(call) is not None):
            # A script that calls `model.train()` and then uses the output of one forward, run
            # once (no loop, no comprehension, its input not replicated), read out or computed
            # under `no_grad`: one stochastic prediction, not the many samples of Monte Carlo
            # dropout (nor a refresh of batch-norm statistics, which drops the output).
            return True
        return not self._file_trains() and walker.read_out(call) is not None

    def _file_trains(self) -> bool:
        if self._trains is None:
            self._trains = any(node.attr.value in _TRAINING_ATTRIBUTES
                               for node in self.analysis.nodes_of(cst.Attribute))
        return self._trains

    def training_call(self, call: cst.Call) -> bool:
        """``call`` runs a backward or an optimizer step (itself or, one level deep, through
        a function of this file: the autograd model's events)."""
        if self._training_calls is None:
            found: set[int] = set()
            autograd = self.analysis.autograd
            for scope in self.model.scopes:
                for event in (*autograd.backwards(scope), *autograd.steps(scope)):
                    found.add(id(event.at))
                    found.add(id(event.node))
            self._training_calls = found
        if id(call) in self._training_calls:
            return True
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TRAINING_ATTRIBUTES:
            if func.attr.value == "backward":
                return self.inference.tensor(func.value) is not None
            value = self.inference.infer(func.value)
            return value is not None and value.kind is Kind.OPTIMIZER
        return False

    def constructs(self, call: cst.Call, depth: int = 0) -> bool:
        """``call`` builds a new module, which starts in training mode: a class of torch.nn
        or of this file, or a function of this file every ``return`` of which builds one
        (``def bagnet8(): return nn.Sequential(...)``), or a class taken from a registry of
        this file (``MODELS[args.model](...)``, every value of the dict a class that builds one)."""
        registry = self.registry_classes(call)
        if registry is not None:
            return True
        if self.handed_classes(call) is not None:
            return True
        built = self.inference.infer(call)
        if built is None or built.kind is not Kind.MODULE:
            return False
        func = call.func
        called = self.inference.infer(func)
        qualname = self.inference.qualname(func)
        if called is not None and called.kind is Kind.CLASS or qualname is not None and (
                torch_api.is_module_class(torch_api.normalize(qualname)) or _torchvision_layer(qualname)):
            return True
        if self._imported_class(call) is not None:  # `Net()` of `from models import Net`
            return True
        if depth == 0 and self.imported_builder(call) is not None:  # `create_model(cfg)` of `from models import ..`
            return True
        function = called.function if called is not None and called.kind is Kind.FUNCTION else None
        if function is None or function.model is not self.model or depth >= _MAX_DEPTH \
                or not isinstance(function.node, cst.FunctionDef) or function.is_generator:
            return False
        returns = function.returns
        return bool(returns) and _returns_always(function.node) and all(
            isinstance(value, cst.Call) and self.constructs(value, depth + 1) for value in returns)

    def handed_classes(self, call: cst.Call) -> Optional[list[cst.BaseExpression]]:
        """``model(shape)`` where ``model`` is a parameter (never rebound) of a function or of a
        class's ``__init__``, and every call of it in this file hands a torch.nn module class
        (``NeuralNet(data_set, cnn_reg)``): the classes it may instantiate, each call a new
        module in training mode."""
        if not isinstance(call.func, cst.Name):
            return None
        bindings = self.model.resolve(call.func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        passed = self._passed(bindings[0])
        if not passed:
            return None
        for value in passed:
            cls = self.inference.infer(value)
            qualname = self.inference.qualname(value)
            if not (cls is not None and cls.kind is Kind.CLASS and isinstance(cls.cls, ClassInfo)
                    and cls.cls.model is self.model and self.inference.instance_of(cls.cls).kind is Kind.MODULE
                    or qualname is not None and torch_api.is_module_class(torch_api.normalize(qualname))):
                return None
        return passed

    def registry_classes(self, call: cst.Call) -> Optional[list[cst.BaseExpression]]:
        """The classes of ``MODELS = {"cnn": SmallCNN, "mlp": nn.Sequential}`` (a dict bound
        once at module level, never changed) that ``MODELS[name](...)`` may instantiate, when
        each is a module class of this file or of torch.nn."""
        func = call.func
        if not (isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name)):
            return None
        bindings = self.model.resolve(func.value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path or \
                bindings[0].scope is not self.model.module_scope or not isinstance(bindings[0].value, cst.Dict) or \
                re.search(rf"\b{re.escape(func.value.value)}\s*(?:\[[^\]]*\]\s*=[^=]|\.\s*(?:update|setdefault)\b)",
                          self.analysis.text):
            return None
        values = [getattr(element, "value", None) for element in bindings[0].value.elements]
        if not values or any(value is None for value in values):
            return None
        for value in values:
            called = self.inference.infer(value)
            qualname = self.inference.qualname(value)
            if not (called is not None and called.kind is Kind.CLASS and isinstance(called.cls, ClassInfo)
                    and called.cls.model is self.model
                    or qualname is not None and torch_api.is_module_class(torch_api.normalize(qualname))):
                return None
        return values

    def plain_init(self, call: cst.Call) -> Optional[FunctionInfo]:
        """The ``__init__`` ``call`` runs when it instantiates a class of this file that is
        no module and derives from none (a predictor, a trainer holding a model): nothing of
        it switches modes (no `.eval(`/`.train(` in its classes), so what it is handed and
        keeps is in the mode it was given."""
        value = self.inference.infer(call.func)
        if value is None or value.kind is not Kind.CLASS or not isinstance(value.cls, ClassInfo) or \
                value.cls.model is not self.model:
            return None
        lineage = self._plain_lineage(value.cls)
        text = self.analysis.text
        if not lineage or any(_SWITCHES.search(text, c.node.start, c.node.end) for c in lineage):
            return None
        init = next((c.methods["__init__"] for c in lineage if "__init__" in c.methods), None)
        return init if init is not None and init.self_name is not None and \
            isinstance(init.node, cst.FunctionDef) else None

    def returns_argument(self, call: cst.Call, position: Optional[int] = None) -> Optional[cst.BaseExpression]:
        """The model ``call`` hands to a function of this file that returns it, as it was
        given (every ``return`` returns that parameter, never rebound): ``model`` of
        ``train_model(model, loader)``; its mode is the one the call leaves it in. With
        ``position``, every ``return`` is a tuple whose element there is that parameter
        (``model, optimizer, epoch = load_checkpoint(path, model)``)."""
        called = self.inference.infer(call.func)
        function = called.function if called is not None and called.kind is Kind.FUNCTION else None
        if function is None or function.model is not self.model or function.scope is None or \
                not isinstance(function.node, cst.FunctionDef) or function.is_generator or not function.returns \
                or not _returns_always(function.node):
            return None
        returns = function.returns
        if position is not None:
            returns = [tuple_element(value, (position,)) for value in returns]
        names = {value.value for value in returns if isinstance(value, cst.Name)}
        if len(names) != 1 or len(returns) != sum(isinstance(v, cst.Name) for v in returns):
            return None
        name = names.pop()
        params = [*function.node.params.posonly_params, *function.node.params.params]
        if any(binding.kind is not BindingKind.PARAM for binding in function.scope.bindings.get(name, ())) or \
                name not in [param.name.value for param in params]:
            return None
        argument = keyword(call, name)
        if argument is None:
            index = [param.name.value for param in params].index(name)
            if function.self_name is not None and isinstance(call.func, cst.Attribute):
                index -= 1
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            argument = positional[index] if 0 <= index < len(positional) else None
        return argument if isinstance(argument, (cst.Name, cst.Attribute, cst.Call)) else None

    def pretrained(self, call: cst.Call) -> Optional[cst.Call]:
        """``call`` itself when it is a torchvision builder given trained weights
        (`resnet18(pretrained=True)`, `resnet18(weights="IMAGENET1K_V1")`,
        `weights=ResNet18_Weights.DEFAULT`; not `weights=None`, nor a variable that may be None)."""
        qualname = self.inference.qualname(call.func)
        if qualname is None or _torchvision_layer(qualname) is None:
            return None
        pretrained, weights = keyword(call, "pretrained"), keyword(call, "weights")
        if pretrained is not None and _literal(pretrained) is True:
            return call
        if isinstance(weights, (cst.SimpleString, cst.Attribute)):  # a weights enum member or its name
            return call
        return None

    def saved_path(self, path: cst.BaseExpression) -> Optional[str]:
        """The file ``torch.save``/``torch.load`` is given, as a key that is the same at both
        ends: a string, a name (no dots), or the call that builds the path (``os.path.join(d,
        "m.pt")``); a file object opened by ``with open(p) as f`` is the file ``p``."""
        if isinstance(path, cst.Name):
            for binding in self.model.resolve(path):
                if binding.kind is BindingKind.WITH:
                    opened = binding.value
                    if isinstance(opened, cst.Call) and self.inference.qualname(opened.func) == "builtins.open" \
                            and opened.args:
                        return self.saved_path(opened.args[0].value)
                    return None
            return "name:" + path.value
        if isinstance(path, cst.SimpleString):
            return "str:" + str(path.evaluated_value).replace(".", "/")
        if isinstance(path, (cst.Call, cst.Attribute, cst.FormattedString, cst.BinaryOperation)):
            return "code:" + re.sub(r"\s+", "", self.analysis.snippet(path, 200)).replace(".", "/")
        return None

    def loaded_path(self, call: cst.Call) -> Optional[str]:
        """The file key of ``torch.load(path)`` loading a whole object (not ``weights_only=True``)."""
        func = call.func
        if not call.args or not (isinstance(func, cst.Attribute) and func.attr.value == "load"
                                 or isinstance(func, cst.Name) and func.value == "load") \
                or self.inference.qualname(func) != "torch.load":
            return None
        only = keyword(call, "weights_only")
        if only is not None and _literal(only) is not False:
            return None
        return self.saved_path(call.args[0].value)

    def saved_model(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The module ``torch.load(path)`` unpickles: the one every ``torch.save(model, path)``
        of this file pickles to that path (one model)."""
        path = self.loaded_path(call)
        if path is None:
            return None
        saved = set()
        found = None
        for save in self.analysis.nodes_of(cst.Call):
            if len(save.args) >= 2 and self.inference.qualname(save.func) == "torch.save" \
                    and self.saved_path(save.args[1].value) == path:
                found = save.args[0].value
                saved.add(self.analysis.snippet(found, 80))
        return found if len(saved) == 1 else None

    def built_and_returned(self, call: cst.Call, depth: int = 0) -> Optional[tuple[cst.Call, Optional[cst.Call]]]:
        """``call`` calls a function of this file that builds a module, does nothing to it
        that may change its mode (loads weights, moves it), and returns it
        (``model = Net(); model.load_state_dict(..); return model``): the construction, and
        the ``load_state_dict`` call if there is one."""
        called = self.inference.infer(call.func)
        function = called.function if called is not None and called.kind is Kind.FUNCTION else None
        if function is None and isinstance(call.func, cst.Attribute):
            function = self._class_builder(call.func)
        if function is None or function.model is not self.model:
            return None
        return self.function_builds(function, depth)

    def _class_builder(self, func: cst.Attribute) -> Optional[FunctionInfo]:
        """``Net.from_pretrained`` of ``Net.from_pretrained(path)``: a classmethod (or static
        method) of a class of this file, called on the class."""
        owner = self.inference.infer(func.value)
        if owner is None or owner.kind is not Kind.CLASS or not isinstance(owner.cls, ClassInfo) or \
                owner.cls.model is not self.model:
            return None
        method = self.inference.method_of(owner.cls, func.attr.value)
        return method if method is not None and method.kind in ("classmethod", "staticmethod") else None

    def function_builds(self, function: FunctionInfo, depth: int = 0) -> Optional[tuple[cst.Call, Optional[cst.Call]]]:
        """``function`` (of this file) builds a module, does nothing to it that may change its
        mode, and returns it: the construction, and the ``load_state_dict`` call if any. A
        function that returns what such a builder returns builds it too (``def resnet18(p):
        return _resnet("resnet18", p)``): a module is in training mode from its construction
        until something switches it, through any number of calls that only hand it back."""
        returned = _under_moves(function.returns[0]) if len(function.returns) == 1 else None  # `return model.to(d)`
        if function.scope is None or not isinstance(function.node, cst.FunctionDef) or function.is_generator:
            return None
        if isinstance(returned, cst.Call) and depth < _MAX_DEPTH and _returns_always(function.node):
            return self.built_and_returned(returned, depth + 1)
        if not isinstance(returned, cst.Name):
            return None
        bindings = function.scope.bindings.get(returned.value, [])
        if not bindings or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
            return None
        built = _under_moves(bindings[0].value)  # `Net().to(device)`
        moves = [binding.value for binding in bindings[1:]]
        if not isinstance(built, cst.Call) or not self.constructs(built) or not all(
                binding.kind is BindingKind.ASSIGN and not binding.path and isinstance(binding.value, cst.Call)
                and self._moved(binding.value, returned.value) for binding in bindings[1:]):
            return None  # only `model = model.to(device)`, `model = nn.DataParallel(model)` after it
        loaded = None
        for _seq, read in function.scope.loads.get(returned.value, ()):
            if read is returned or any(move.start <= read.start < move.end for move in moves):
                continue
            attribute = read.parent
            if self._submodule_set_or_read(read):
                continue  # `net.fc = nn.Linear(net.fc.in_features, n)`: a new head, in training mode too
            method = attribute.parent if isinstance(attribute, cst.Attribute) and attribute.value is read else None
            if not isinstance(method, cst.Call) or method.func is not attribute or \
                    attribute.attr.value not in _MODE_KEEPING:
                return None
            if attribute.attr.value == "load_state_dict":
                loaded = method
        return built, loaded

    def _submodule_set_or_read(self, read: cst.Name) -> bool:
        """``read`` (a name holding a module) is used in a way that switches no mode: a submodule of
        it is replaced by a new layer (``net.fc = nn.Linear(..)``: the new layer starts in training
        mode, as the module did), or an attribute of it is read to build one
        (``nn.Linear(net.fc.in_features, n)``: a torch.nn constructor switches nothing it is given)."""
        top: cst.CSTNode = read
        while isinstance(top.parent, cst.Attribute) and top.parent.value is top:
            top = top.parent
        if top is read:
            return False
        parent = top.parent
        if isinstance(parent, cst.AssignTarget):
            statement = parent.parent
            return isinstance(statement, cst.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.value, cst.Call) and self.constructs(statement.value)
        if isinstance(parent, cst.Call) and parent.func is top:
            return False  # a method of the module or of a submodule is called
        node: cst.CSTNode = top
        constructor = False
        while node is not None and not isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
            if isinstance(node, cst.Call) and node is not top:
                qualname = self.inference.qualname(node.func)
                if qualname is None or not torch_api.is_module_class(torch_api.normalize(qualname)):
                    return False
                constructor = True
            node = node.parent
        return constructor

    def _moved(self, value: cst.Call, name: str) -> bool:
        """``value`` hands back the module ``name`` holds, in its mode: `name.to(device)`,
        `name.cuda()`, `nn.DataParallel(name)`."""
        inner = _under_moves(value)
        if isinstance(inner, cst.Name):
            return inner.value == name
        return isinstance(inner, cst.Call) and self.inference.qualname(inner.func) in torch_api.MODE_SHARING_WRAPPERS \
            and bool(inner.args) and isinstance(inner.args[0].value, cst.Name) and inner.args[0].value.value == name

    # --- summaries of this file's functions -------------------------------------------------------

    def summary(self, function: FunctionInfo, depth: int, flags: frozenset = frozenset()) -> Optional[_Summary]:
        """What ``function`` does to the models it reaches; ``flags``: (parameter, literal) for the
        parameters a call hands a literal ``True``/``False``/``None`` (``run_epoch(loader,
        train=False)``): a branch on such a parameter runs only as that value decides."""
        key = (id(function.node), flags) if flags else id(function.node)
        if key in self._summaries:
            return self._summaries[key]
        if depth > _MAX_DEPTH or not isinstance(function.node, cst.FunctionDef) or function.scope is None:
            return None
        self._summaries[key] = None  # recursion: unknown
        roots = {param.name.value for param in (*function.node.params.posonly_params, *function.node.params.params,
                                                *function.node.params.kwonly_params)}
        shared = self._shared_globals(function) - roots
        closures = {name: node for name, node in self._closure_names(function).items() if name not in roots}
        roots |= shared | set(closures) | self._star_roots(function)
        state = _State({root: _CALLER for root in roots})
        found = _Summary(globals=frozenset(shared), closures=closures)
        end = self._walk_scope(function.node, _body(function.node), function, state, found, depth + 1, dict(flags))
        stars = [param.name.value for param in (function.node.params.star_arg, function.node.params.star_kwarg)
                 if isinstance(param, cst.Param)]
        if any(name in end.changed for name in stars):
            found.switches_unknown = True  # `*args` handed on whole to what is not followed
        for changed in sorted(end.changed):  # (a holder before what it holds: the same order on every run)
            if changed.split(".")[0] in roots:
                mode = end.lookup(changed)
                found.exits[changed] = mode
        found.aliases = {key: source for key, source in found.aliases.items()
                         if end.modes.get(key) is _CALLER and end.lookup(source) is _CALLER}
        self._summaries[key] = found
        return found

    def foreign_summary(self, call: cst.Call, function: FunctionInfo, depth: int) -> Optional[_Summary]:
        """The summary of a module-level function of another module of the project, as that
        module's analysis finds it, told in this file: what it evaluates, it evaluates at
        ``call`` (saying where its forward is); a mode it leaves other than the caller's, or
        weights it loads, are not known here."""
        other = self.analysis.defining(function)
        if other is None or function.cls is not None:
            return None
        # (Only the bodies the summary's walk reads are built: an imported module's are lazy.)
        summary = other.train_mode.summary(function, depth)
        if summary is None or summary.globals or summary.closures:
            return None
        evaluates = {relative: (call, f"{context} ({other.location(inner)})", None, (), prediction)
                     for relative, (inner, context, _node, _calls, prediction) in summary.evaluates.items()}
        exits = {key: mode if mode is _CALLER else None for key, mode in summary.exits.items()}
        exits.update((key, None) for key in summary.loads)
        return _Summary(evaluates=evaluates, exits=exits, trains=summary.trains,
                        switches_unknown=summary.switches_unknown)

    def _star_roots(self, function: FunctionInfo) -> set[str]:
        """The keys of what a call hands ``function`` through its ``*args`` (``*0``, ``*1``..)
        and ``**kwargs`` (``**name``, for the names of the parameters of the functions of this
        file it passes them on to), for the functions it passes them on to."""
        params = function.node.params
        found: set[str] = set()
        if isinstance(params.star_arg, cst.Param):
            found |= {f"*{index}" for index in range(_STAR_POSITIONS)}
        if isinstance(params.star_kwarg, cst.Param):
            name = params.star_kwarg.name.value
            for call in iter_nodes(function.node.body):
                if not isinstance(call, cst.Call) or not any(
                        arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value == name
                        for arg in call.args):
                    continue
                value = self.analysis.inference.infer(call.func)
                callee = value.function if value is not None and value.kind is Kind.FUNCTION else None
                if callee is not None and isinstance(callee.node, cst.FunctionDef):
                    found |= {f"**{param.name.value}" for param in callee.positional_params()}
        return found

    def _shared_globals(self, function: FunctionInfo) -> set[str]:
        """The module-level names bound to a call (a model, maybe) that ``function`` does not
        bind itself: what it and the functions it calls reach as the caller's."""
        scope = function.scope
        if scope is None:
            return set()
        return {name for name in self._module_calls() if name not in scope.bindings or name in scope.globals}

    def _closure_names(self, function: FunctionInfo) -> dict:
        """The names ``function`` reads from an enclosing function that binds them to a call
        (a model, maybe): name -> that function's node."""
        scope = function.scope
        found = {}
        if scope is None or scope.parent is None or scope.parent is self.model.module_scope:
            return found
        enclosing = set()
        outer = scope.parent
        while outer is not None and outer is not self.model.module_scope:
            enclosing.add(id(outer))
            outer = outer.parent
        for read in iter_nodes(function.node.body):  # (also in its comprehensions)
            if not isinstance(read, cst.Name) or read.value in scope.bindings or read.value in found:
                continue
            bindings = self.model.resolve(read)
            if bindings and all(binding.kind is BindingKind.ASSIGN and binding.scope is bindings[0].scope
                                for binding in bindings) and id(bindings[0].scope) in enclosing and \
                    any(isinstance(binding.value, cst.Call) for binding in bindings):
                found[read.value] = bindings[0].scope.node
        return found

    def scanned(self, scope_node: cst.CSTNode) -> tuple[list, list, list]:
        found = self._scanned.get(id(scope_node))
        if found is None:
            found = self._scanned[id(scope_node)] = _scope_scan(scope_node)
        return found

    def function_names(self) -> frozenset[str]:
        """The names of the functions and methods defined in this module."""
        if self._function_names is None:
            self._function_names = frozenset(function.name for function in self.model.functions.values())
        return self._function_names

    def _module_calls(self) -> set[str]:
        if self._module_names is None:
            self._module_names = {name for name, bindings in self.model.module_scope.bindings.items()
                                  if any(binding.kind is BindingKind.ASSIGN and isinstance(binding.value, cst.Call)
                                         for binding in bindings)}
        return self._module_names

    def _kept_global(self, name: str) -> Optional[Train]:
        """The mode of the module-level model ``name`` wherever this file's functions run:
        training mode, when it is built once at module level (`model = Net()`, moved with
        `model = model.to(device)` at most), and nothing in the file may switch it: no
        `.eval(`/`.train(` and no `.training =` anywhere, the model never handed to a call or
        bound to another name (only its own mode-keeping methods called). ``loaded``: the
        module-level ``load_state_dict`` that gives it trained weights."""
        if name in self._globals:
            return self._globals[name]
        self._globals[name] = None
        text = self.analysis.text
        bindings = self.model.module_scope.bindings.get(name, [])
        # `i3d_model = None` at module level, bound by a function (`global i3d_model`) to the
        # module it builds: a placeholder holds no module, so wherever the name holds one, it
        # is that module.
        placeholders = 0
        while placeholders < len(bindings) - 1 and bindings[placeholders].kind is BindingKind.ASSIGN \
                and isinstance(bindings[placeholders].value, cst.Name) and bindings[placeholders].value.value == "None":
            placeholders += 1
        bindings = bindings[placeholders:]
        if not bindings or _EVAL_SWITCHES.search(text) or re.search(r"\.training\s*=[^=]", text):
            return None  # (`model.train()` leaves it in training mode, as it was built)
        first, *moves = bindings
        built = _under_moves(first.value) if first.kind is BindingKind.ASSIGN and not first.path else None
        if not isinstance(built, cst.Call) or not self.constructs(built) or any(
                binding.kind is not BindingKind.ASSIGN or binding.path or not isinstance(binding.value, cst.Call)
                or dotted(_under_moves(binding.value)) != name for binding in moves):
            return None
        escaped = re.escape(name)
        keeping = _MODE_KEEPING | {"forward", "train"} | self._keeping_methods()  # (`model.encode(x)` of its class)
        # (`global model` in a function is no handing out: every binding it makes is one of `bindings`)
        if re.search(rf"(?:[(,=\[{{:]|\breturn|\byield|\bglobal(?!\s*{escaped}\s*$))\s*{escaped}\s*(?:[,)\]}}]|$)",
                     text, re.MULTILINE) or \
                re.search(rf"\b{escaped}\s*\.\s*(?!(?:{'|'.join(sorted(keeping))})\s*\()\w+\s*\(",
                          text):
            return None  # handed out, aliased, or a method that may switch it
        loaded = None
        for _seq, read in self.model.module_scope.loads.get(name, ()):
            attribute = read.parent
            if isinstance(attribute, cst.Attribute) and attribute.value is read and \
                    attribute.attr.value == "load_state_dict" and isinstance(attribute.parent, cst.Call):
                loaded = attribute.parent
        if loaded is None and placeholders:  # loaded by the function that builds it
            owner = _owner(first.node) if first.node is not None else None
            for node in iter_nodes(owner) if isinstance(owner, cst.FunctionDef) else ():
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                        node.func.attr.value == "load_state_dict" and dotted(node.func.value) == name:
                    loaded = node
        self._globals[name] = mode = Train(built, True, loaded=loaded or self.pretrained(built))
        return mode

    def _keeping_methods(self) -> set[str]:
        """The names of the methods of this file's classes that cannot switch a mode: no
        class that defines one of that name writes ``.eval(``/``.train(`` (``encode_text``
        of a model class)."""
        if self._keeping is None:
            text = self.analysis.text
            kept, switching = set(), set()
            for cls in self.model.classes.values():
                if cls.model is not self.model:
                    continue
                names = (switching if _SWITCHES.search(text, cls.node.start, cls.node.end) else kept)
                names.update(name for name in cls.methods if name.isidentifier())
            self._keeping = kept - switching
        return self._keeping

    # --- which models behave differently in training mode ------------------------------------------

    def layer_of(self, expression: Optional[cst.BaseExpression], at: cst.CSTNode,
                 key_node: Optional[cst.BaseExpression] = None) -> Optional[tuple[cst.CSTNode, str]]:
        """A layer of the model ``expression`` holds that behaves differently in training mode
        (its construction, and how it reads), or None when none is known."""
        for candidate in (expression, key_node):
            if candidate is None:
                continue
            found = self._expression_layer(candidate, 0)
            if found is not None:
                return found
        return None

    def _expression_layer(self, expression: cst.BaseExpression, depth: int) -> Optional[tuple]:
        if depth > _MAX_LAYER_DEPTH:
            return None
        expression = _under_moves(expression)  # `self.net = net.to(device)`: the module `net` holds
        if isinstance(expression, cst.Call):
            return self._construction_layer(expression, depth)
        built = self._constructions(expression, depth)
        registry = any(isinstance(value, cst.Call) and self.registry_classes(value) is not None for value in built)
        # (a registry: which class is not known; several constructions: each is looked at)
        value = None if registry or len(built) > 1 else self.inference.infer(expression)
        if value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo) \
                and value.cls.model is not self.model and not built:
            return self._imported_class_layer(expression, value.cls, depth + 1)  # (built where this file is not)
        if value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo):
            found = self._class_layer(value.cls, depth + 1)
            if found is not None and found[2] is None and self._built_off(built, found[0], value.cls, depth):
                return None  # `model = Net(dropout=0.0)`, also handed on as a parameter
            if found is not None:
                return found
        first = None
        for construction in built:
            found = self._expression_layer(construction, depth + 1)
            if found is None and len(built) > 1 and isinstance(construction, cst.Call) and \
                    self.constructs(construction) and not self._rewraps(construction, expression):
                return None  # built on another path as a model without such a layer (`DCGAN_G_nobn(..)`)
            first = first or found
        return first

    def _rewraps(self, value: cst.Call, expression: cst.BaseExpression) -> bool:
        """``value`` wraps the module ``expression`` already holds (`self.net =
        nn.DataParallel(self.net)`): the same model, not one built on another path."""
        inner = _under_moves(value)
        if not isinstance(inner, cst.Call) or not inner.args or \
                self.inference.qualname(inner.func) not in torch_api.MODE_SHARING_WRAPPERS:
            return False
        wrapped = dotted(_under_moves(inner.args[0].value))
        return wrapped is not None and wrapped == dotted(expression)

    def _built_off(self, built: list, layer: cst.CSTNode, cls: ClassInfo, depth: int) -> bool:
        """One of the constructions ``built`` (followed through the names and parameters
        they are handed by) builds ``cls`` with ``layer`` switched off."""
        for made in map(_under_moves, built):
            if depth > _MAX_LAYER_DEPTH:
                return False
            if isinstance(made, cst.Call) and self.switched_off(layer, cls, made):
                return True
            if isinstance(made, cst.Name) and self._built_off(self._constructions(made, depth), layer, cls, depth + 1):
                return True
        return False

    def _constructions(self, expression: cst.BaseExpression, depth: int) -> list[cst.BaseExpression]:
        """The values the name or ``self.<attribute>`` was given (for a parameter of
        ``__init__`` kept on the instance, what the class's constructions in this file pass)."""
        if isinstance(expression, cst.Name):
            values = []
            for binding in self.model.resolve(expression):
                if binding.kind is BindingKind.ASSIGN and not binding.iterates:
                    value = tuple_element(binding.value, binding.path)
                    if value is None and isinstance(binding.value, cst.Call) and len(binding.path) == 1 \
                            and binding.path[0] is not None:  # `model, _, _ = load_checkpoint(path, model)`
                        value = self.returns_argument(binding.value, binding.path[0])
                    given = self.returns_argument(value) if isinstance(value, cst.Call) else None
                    if given is not None and (not isinstance(given, cst.Call) or self.constructs(given)):
                        value = given  # `model = train_model(model, ...)`: the model it was given
                    if value is not None:
                        values.append(value)
                elif binding.kind is BindingKind.PARAM:
                    values.extend(self._passed(binding))
            return values
        if isinstance(expression, cst.Attribute) and isinstance(expression.value, cst.Name):
            cls = _self_class(self.model, expression.value)
            if cls is None:
                return []
            values = []
            lineage, _whole = self.inference.file_lineage(cls, generations=7)
            for owner in lineage:  # `self.model` set in the `__init__` of a base class of the file
                for assignment in owner.assignments(expression.attr.value):
                    value = tuple_element(assignment.value, assignment.path)
                    if value is not None:
                        values.append(value)
                if values:
                    break
            return values
        return []

    def _passed(self, binding) -> list[cst.BaseExpression]:
        """What the calls of this file pass for the parameter ``binding`` of a function or of
        a class's ``__init__``."""
        function = binding.scope.function
        if function is None or binding.param_index < 0:
            return []
        found = []
        for call in self.analysis.nodes_of(cst.Call):
            value = self.inference.infer(call.func)
            if value is None:
                continue
            if value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo) and function.name == "__init__" \
                    and value.cls is function.cls:
                offset = 1
            elif value.kind is Kind.FUNCTION and value.function is function:
                offset = 1 if function.self_name is not None and isinstance(call.func, cst.Attribute) else 0
            else:
                continue
            argument = keyword(call, binding.name)
            if argument is None:
                positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
                index = binding.param_index - offset
                if 0 <= index < len(positional):
                    argument = positional[index]
            if argument is not None:
                found.append(argument)
        return found

    def _construction_layer(self, call: cst.Call, depth: int) -> Optional[tuple]:
        key = id(call)
        if key in self._layers:
            return self._layers[key]
        self._layers[key] = None
        found = self._find_construction_layer(call, depth)
        self._layers[key] = found
        return found

    def _find_construction_layer(self, call: cst.Call, depth: int) -> Optional[tuple]:
        registry = self.registry_classes(call) or self.handed_classes(call)
        if registry is not None:  # `MODELS[name](...)`: a layer only when every class it may build has one
            classes = [self.inference.infer(value) for value in registry]
            found = [self._class_layer(cls.cls, depth + 1) if cls is not None and isinstance(cls.cls, ClassInfo)
                     else None for cls in classes]
            return found[0] if all(layer is not None for layer in found) else None
        qualname = self.inference.qualname(call.func)
        if qualname == "torch.load":  # a whole module unpickled: the one this file pickled to that file
            saved = self.saved_model(call)
            return self._expression_layer(saved, depth + 1) if saved is not None else None
        if qualname is not None:
            qualname = torch_api.normalize(qualname)
            if qualname in torch_api.TRAIN_MODE_LAYERS:
                return (call, self.analysis.snippet(call, 40), None) if _layer_on(call, qualname) else None
            if qualname in torch_api.TRAIN_MODE_FUNCTIONS:
                return (call, self.analysis.snippet(call, 40), None) if _reads_training(call, qualname) else None
            builder_layer = _torchvision_layer(qualname)
            if builder_layer is not None:  # `torchvision.models.resnet18()`: its BatchNorm2d layers
                return call, builder_layer, None
            if qualname in torch_api.TRAIN_MODE_CONTAINERS:
                for arg in call.args:
                    for node in _elements(arg.value, self):
                        found = self._expression_layer(node, depth + 1)
                        if found is not None:
                            return found
                return None
        imported = self._imported_class(call)
        if imported is not None:
            return self._imported_class_layer(call, imported, depth + 1)
        value = self.inference.infer(call.func)
        if value is not None and value.kind is Kind.EXTERNAL:
            return self._imported_builder_layer(call, depth)
        if value is None:
            builder = self._class_builder(call.func) if isinstance(call.func, cst.Attribute) else None
            built = self.function_builds(builder) if builder is not None else None
            return self._expression_layer(built[0], depth + 1) if built is not None else None
        if value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
            if value.cls.model is not self.model:  # a class of another module, named through `from models import *`
                return self._imported_class_layer(call, value.cls, depth + 1)
            found = self._class_layer(value.cls, depth + 1)
            return None if found is not None and found[2] is None and \
                self.switched_off(found[0], value.cls, call) else found
        if value.kind is Kind.FUNCTION and value.function is not None and value.function.model is self.model \
                and isinstance(value.function.node, cst.FunctionDef):
            dispatched = self._dispatched(call, value.function)
            if dispatched:  # `self.define_graph()`: the method of the class of each instance made
                found = [self._method_layer(method, depth) for method in dispatched]
                return found[0] if all(layer is not None for layer in found) else None
            return self._method_layer(value.function, depth)
        return None

    def _method_layer(self, function: FunctionInfo, depth: int) -> Optional[tuple]:
        self.model.materialize(function)
        return self._code_layer(function.node, depth + 1)

    def _dispatched(self, call: cst.Call, function: FunctionInfo) -> list[FunctionInfo]:
        """``self.<name>(..)`` in a method of a class of this file runs the ``<name>`` of the
        class of the instance: for each class of this file derived from (or equal to) the
        method's class that this file instantiates, the method it resolves ``<name>`` to (none
        when no such class is instantiated here, or one resolves it elsewhere)."""
        func = call.func
        info = self.model.functions.get(id(_owner(call)))
        if info is None or info.cls is None or info.self_name is None or not isinstance(func, cst.Attribute) \
                or not isinstance(func.value, cst.Name) or func.value.value != info.self_name:
            return []
        found = []
        for cls in self._instantiated():
            lineage, _whole = self.inference.file_lineage(cls, generations=7)
            if info.cls not in lineage:
                continue
            method = self.inference.method_of(cls, func.attr.value)
            if method is None or method.model is not self.model or not isinstance(method.node, cst.FunctionDef):
                return []
            found.append(method)
        return found

    def _instantiated(self) -> list[ClassInfo]:
        """The classes of this file that a call of this file instantiates (``Net(..)``)."""
        if self._instantiated_classes is None:
            found: dict[int, ClassInfo] = {}
            names = {cls.name for cls in self.model.classes.values() if cls.model is self.model}
            for call in self.analysis.nodes_of(cst.Call):
                func = call.func
                if not (isinstance(func, cst.Name) and func.value in names
                        or isinstance(func, cst.Attribute) and func.attr.value in names):
                    continue
                value = self.inference.infer(func)
                if value is not None and value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo) \
                        and value.cls.model is self.model:
                    found[id(value.cls)] = value.cls
            self._instantiated_classes = list(found.values())
        return self._instantiated_classes

    def imported_builder(self, call: cst.Call) -> Optional[tuple["ModuleAnalysis", cst.Call]]:
        """``create_model(cfg)`` of ``from model import create_model``: a function of another
        module of the project that builds a new module and returns it, doing nothing that may
        change its mode (that module's analysis says so): that analysis and the construction
        there. A new module starts in training mode, wherever it is built."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        called = self.inference.infer(call.func)
        project = self.inference.project
        if called is None or called.kind is not Kind.EXTERNAL or not called.qualname or project is None \
                or not self.inference.roots:
            return None
        found = project.resolve(called.qualname, self.inference.roots, consumer=self.analysis.file_path)
        if found is None:
            return None
        other, value = found
        function = value.function if value.kind is Kind.FUNCTION else None
        if other is self.analysis or function is None or function.model is not other.model \
                or function.cls is not None:
            return None  # (a class's own factory, `Net.from_config(..)`, is the class's to say)
        builds = other.train_mode
        if function.returns and _returns_always(function.node) and all(
                isinstance(returned, cst.Call) and builds.constructs(returned) for returned in function.returns):
            return other, function.returns[0]
        built = builds.function_builds(function)
        return (other, built[0]) if built is not None else None

    def _imported_builder_layer(self, call: cst.Call, depth: int) -> Optional[tuple]:
        found = self.imported_builder(call)
        if found is None or depth > _MAX_LAYER_DEPTH:
            return None
        other, built = found
        layer = other.train_mode._construction_layer(built, depth + 1)
        if layer is None:
            return None
        return call, layer[1], layer[2] or other.render(Step(layer[0], "`{code}`"))

    def _imported_class(self, call: cst.Call) -> Optional[ClassInfo]:
        """The module class of another module of the project that ``call`` instantiates
        (``Net(..)`` of ``from models import Net``, ``models.Net(..)``): the class the
        inference found for the call's value, named as the call names it (not a factory
        function of that module, which may hand back a module built and switched before)."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        called = self.inference.infer(call.func)
        if called is None or called.kind is not Kind.EXTERNAL or not called.qualname:
            return None
        built = self.inference.infer(call)
        cls = built.cls if built is not None and built.kind is Kind.MODULE else None
        if not isinstance(cls, ClassInfo) or cls.model is self.model or \
                called.qualname.rsplit(".", 1)[-1] != cls.name:
            return None
        return cls

    def _imported_class_layer(self, node: cst.BaseExpression, cls: ClassInfo, depth: int) -> Optional[tuple]:
        """A layer that ``cls``, a module class of another module of the project, builds, found
        by that module's own analysis; the layer is then ``node``, with where it is written.
        ``node`` is the construction (``Net()`` of ``from models import Net``), and one that
        turns the layer off (``Net(dropout=0.0)``) has none; or a model built where this file
        does not see it (``self.model`` of a trainer that train.py builds as ``Trainer(UNet3D(),
        ..)``), which has none when an argument of its construction may turn it off
        (``nn.Dropout(p=dropout)``)."""
        other = self.analysis.defining(cls)
        if other is None or depth > _MAX_LAYER_DEPTH:
            return None
        found = other.train_mode._class_layer(cls, depth)
        if found is None:
            return None
        layer = found[0]
        if isinstance(node, cst.Call):
            if other.train_mode.switched_off(layer, cls, node):
                return None
        elif found[2] is None and isinstance(layer, cst.Call):
            qualname = other.inference.qualname(layer.func)
            qualname = torch_api.normalize(qualname) if qualname is not None else None
            if qualname in torch_api.TRAIN_MODE_LAYERS:
                argument, starred = _switch_argument(layer, qualname)
                if starred or isinstance(argument, cst.Name):
                    return None
        return node, found[1], found[2] or other.render(Step(layer, "`{code}`"))

    def switched_off(self, layer: cst.CSTNode, cls: ClassInfo, construction: cst.Call) -> bool:
        """The layer ``layer`` of ``cls`` (a class of this module) reads its switch from a
        parameter of the class's ``__init__`` (`Dropout(p=dropout)`, `BatchNorm1d(n,
        track_running_stats=stats)`), and ``construction`` passes a literal that turns it off
        (`Elmo(.., dropout=0.0)`): the model it builds behaves the same in both modes."""
        if not isinstance(layer, cst.Call) or not cls.node.start <= layer.start < cls.node.end:
            return False
        qualname = self.inference.qualname(layer.func)
        qualname = torch_api.normalize(qualname) if qualname is not None else None
        if qualname not in torch_api.TRAIN_MODE_LAYERS:
            return False
        argument, _starred = _switch_argument(layer, qualname)
        init = cls.methods.get("__init__")
        if not isinstance(argument, cst.Name) or init is None or not isinstance(init.node, cst.FunctionDef):
            return False
        params = init.node.params
        param = next((param for param in (*params.posonly_params, *params.params, *params.kwonly_params)
                      if param.name.value == argument.value), None)
        if param is None:
            return False
        if keyword(construction, argument.value) is None and any(arg.star for arg in construction.args):
            return False  # a `*args` may give it
        passed = self.inference.passed_argument(construction, init, param)
        literal = _literal(passed) if passed is not None else None
        return literal is not None and not literal

    def _class_layer(self, cls: ClassInfo, depth: int) -> Optional[tuple]:
        if depth > _MAX_LAYER_DEPTH or cls.model is not self.model:
            return None
        key = id(cls.node)
        if key in self._layers:
            return self._layers[key]
        self._layers[key] = None
        self.model.materialize_methods(cls)  # (a module another file imports: its bodies are built on demand)
        found = self._code_layer(cls.node, depth)
        if found is None:
            for base in cls.node.bases:
                value = self.inference.infer(base.value)
                if value is not None and value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
                    found = self._class_layer(value.cls, depth + 1)
                    if found is not None:
                        break
        self._layers[key] = found
        return found

    def _code_layer(self, node: cst.CSTNode, depth: int) -> Optional[tuple]:
        """A layer that behaves differently in training mode built (or a functional dropout
        reading ``self.training`` called) in the code of a class or function."""
        for call in iter_nodes(node):
            if isinstance(call, cst.Call) and isinstance(call.func, (cst.Name, cst.Attribute)):
                found = self._construction_layer(call, depth)
                if found is not None:
                    return found
        return None


class _Walker:
    """One pass over the statements of a scope, in the order they run."""

    def __init__(self, owner: TrainModeModel, scope_node, function: Optional[FunctionInfo],
                 summary: Optional[_Summary], depth: int, flags: Optional[dict] = None):
        self.owner = owner
        # The parameters the call being summarized hands a literal: name -> "True", "False", "None".
        self.flags: dict[str, str] = flags or {}
        self.scope_node = scope_node
        self.function = function
        self.summary = summary
        self.depth = depth
        self.inference = owner.inference
        self.evaluating_name = function is not None and bool(_EVALUATING_NAME.search(function.name)) \
            and not _runs_backward(function.node)
        self.switched: set[str] = set()  # the models `eval()` (or `train(flag)`) was called on so far
        # `for block in self.blocks:` in a summary: the loop's name -> the key it iterates, and
        # the node written for it (`block(x)` runs a module of `self.blocks`).
        self.loops: dict[str, tuple[str, cst.BaseExpression]] = {}

    # --- statements -------------------------------------------------------------------------------

    def block(self, statements, state: _State) -> _State:
        for statement in statements:
            state = self.statement(statement, state)
        return state

    def statement(self, statement, state: _State) -> _State:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                state = self.small(small, state)
            return state
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return state
        if isinstance(statement, cst.If):
            self.expression(statement.test, state)
            decided = _decided(statement.test, self.flags)
            if decided is True:
                return self.block(_body(statement), state)
            if decided is False:
                return self.statement_or_block(statement.orelse, state)
            then = self.block(_body(statement), state.copy())
            other = self.statement_or_block(statement.orelse, state.copy())
            return then.join(other)
        if isinstance(statement, (cst.For, cst.While)):
            head = statement.iter if isinstance(statement, cst.For) else statement.test
            self.expression(head, state)
            if isinstance(statement, cst.For):
                self.assigned(statement.target, None, state)
                self._loop_over(statement, state)
            first = self.block(_body(statement), state.copy())
            top = state.join(first)
            again = self.block(_body(statement), top.copy())
            end = top.join(again)
            if statement.orelse is not None:
                end = self.statement_or_block(statement.orelse, end)
            return end
        if isinstance(statement, cst.With):
            for item in statement.items:
                self.expression(item.item, state)
                if item.asname is not None:
                    self.assigned(item.asname.name, None, state)
            return self.block(_body(statement), state)
        if isinstance(statement, cst.Try):
            body = self.block(_body(statement), state.copy())
            end = body
            for handler in statement.handlers:
                end = end.join(self.block(_body(handler), state.join(body)))
            if statement.orelse is not None:
                end = self.statement_or_block(statement.orelse, end)
            if statement.finalbody is not None:
                end = self.statement_or_block(statement.finalbody, end)
            return end
        # match and anything else: its expressions, then an unknown mode for what it binds
        for node in iter_nodes(statement):
            if isinstance(node, cst.Call):
                self.call(node, state)
        return state

    def _loop_over(self, statement: cst.For, state: _State) -> None:
        """``for block in self.blocks:`` in a summary, over modules the caller hands: ``block``
        is one of them, in the caller's mode."""
        iterated = statement.iter
        if self.summary is None or not isinstance(statement.target, cst.Name) or \
                not isinstance(iterated, (cst.Name, cst.Attribute)) or not dotted(iterated):
            return
        key = dotted(iterated)
        if state.lookup(key) is _CALLER:
            self.loops[statement.target.value] = (key, iterated)
            state.modes[statement.target.value] = _CALLER

    def _forward_seen(self, call: cst.Call, key: str) -> None:
        """A forward in the caller's mode outside an evaluation of this function's own: kept
        in the summary (one a root) when the module it runs has a layer that behaves
        differently; the caller's context decides whether it evaluates."""
        root, _, rest = key.partition(".")
        written: Optional[cst.BaseExpression] = cst_expression(call)
        if root in self.loops:
            looped, written = self.loops[root]
            key = looped + ("." + rest if rest else "")
            root = key.partition(".")[0]
        if any(known.partition(".")[0] == root for known in self.summary.forwards):
            return
        layer = self.owner.layer_of(written, call)
        if layer is not None:
            self.summary.forwards[key] = (call, layer)

    def statement_or_block(self, node, state: _State) -> _State:
        if node is None:
            return state
        if isinstance(node, cst.If):
            return self.statement(node, state)
        return self.block(_body(node), state)

    def small(self, small, state: _State) -> _State:
        if isinstance(small, cst.Assign):
            self.expression(small.value, state)
            for target in small.targets:
                self.assigned(target.target, small.value, state)
            return state
        if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            if small.value is not None:
                self.expression(small.value, state)
            self.assigned(small.target, small.value if isinstance(small, cst.AnnAssign) else None, state)
            return state
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Attribute) and small.value.attr.value == "eval":
            receiver = dotted(small.value.value)
            mode = state.modes.get(receiver) if receiver else None
            if isinstance(mode, Train):  # `model.eval` without `()`: the method is looked up, never called
                state.modes[receiver] = replace(mode, uncalled=small.value)
            return state
        self.expression(small, state)
        return state

    def assigned(self, target, value, state: _State) -> None:
        key = dotted(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if key is None:
            # `model, optimizer, epoch = load_checkpoint(path, model)`: a function of this file
            # that hands back, in a tuple, the module it was given hands back that module.
            handed_back = {}
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
                for position, element in enumerate(target.elements):
                    name = dotted(element.value) if isinstance(element.value, (cst.Name, cst.Attribute)) else None
                    given = self.owner.returns_argument(value, position) if name else None
                    mode = state.lookup(dotted(given)) if isinstance(given, (cst.Name, cst.Attribute)) \
                        and dotted(given) else None
                    if isinstance(mode, Train):
                        handed_back[name] = mode
            for node in iter_nodes(target):
                if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node):
                    state.unbind(dotted(node))
                    state.forget(dotted(node))
            for name, mode in handed_back.items():
                state.set(name, mode)
            return
        state.unbind(key)
        state.nones.discard(key)
        mode = self.value_mode(value, state)
        if mode is None and "." not in key and isinstance(value, cst.Name) and value.value == "None":
            state.forget(key)
            state.nones.add(key)
        elif mode is None and "." in key and _no_module(value):
            state.forget_value(key)  # `self.outputs = []` in a trainer's method: `self` keeps its mode
        elif mode is None:
            state.forget(key)
        elif "." in key and isinstance(mode, Train) and mode.built \
                and isinstance(state.lookup(key.rsplit(".", 1)[0]), Train):
            state.forget_value(key)  # `model.fc = nn.Linear(512, 10)`: a new head in training mode, like its model
            state.modes[key] = mode
        else:
            state.set(key, mode)
        if self.summary is not None:
            source = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            if mode is _CALLER and source:
                self.summary.aliases[key] = source  # `self.model = model`
            else:
                self.summary.aliases.pop(key, None)
        if isinstance(value, cst.Call):
            self.constructed(value, key, state)
        elif mode is None and "." not in key and isinstance(value, cst.Attribute) and dotted(value):
            state.names[key] = dotted(value)  # `model = context.model`: one module, two names

    def constructed(self, value: cst.Call, key: str, state: _State) -> bool:
        """``predictor = Predictor(model)`` of a plain class of this file: ``predictor._model``
        is ``model`` (in its mode); whether ``value`` is such a construction."""
        init = self.owner.plain_init(value)
        summary = self.owner.summary(init, self.depth) if init is not None else None
        if summary is None:
            return False
        arguments = {**_arguments(value, init), init.self_name: key}
        for relative, source in summary.aliases.items():
            held, given = _rebased(relative, arguments), _rebased(source, arguments)
            mode = state.lookup(given) if given else None
            if held and isinstance(mode, Train):
                state.modes[held] = mode
        return True

    def value_mode(self, value, state: _State) -> Optional[object]:
        """The mode of what ``value`` evaluates to: a new module (training mode), the same
        module as a tracked key (``model.to(device)``), or unknown."""
        if not isinstance(value, cst.Call):
            key = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            return state.lookup(key) if key else None
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _RETURNS_SELF:
            if func.attr.value == "train":
                return None
            # `model.to(device)`: the mode of `model`; `Net().to(device)`: of what the inner call gives
            inner = _under_moves(value)
            receiver = dotted(inner) if isinstance(inner, (cst.Name, cst.Attribute)) else None
            if receiver:
                return state.lookup(receiver)
            return self.value_mode(inner, state) if isinstance(inner, cst.Call) else None
        if self.inference.qualname(func) in torch_api.MODE_COPYING_FUNCTIONS and value.args:
            copied = value.args[0].value  # `best = copy.deepcopy(model)`: a copy in the same mode
            key = dotted(copied) if isinstance(copied, (cst.Name, cst.Attribute)) else None
            mode = state.lookup(key) if key else None
            return replace(mode, node=value, built=True) if isinstance(mode, Train) and mode.built else None
        if self.inference.qualname(func) in torch_api.MODE_SHARING_WRAPPERS and value.args:
            wrapped = value.args[0].value  # `nn.DataParallel(model)`: train()/eval() reach the module it wraps
            key = dotted(wrapped) if isinstance(wrapped, (cst.Name, cst.Attribute)) else None
            mode = state.lookup(key) if key else None
            if isinstance(mode, Train):
                return mode
        if self.owner.constructs(value):
            return Train(value, True, loaded=self.owner.pretrained(value))
        path = self.owner.loaded_path(value)
        if path is not None:  # `torch.load(path)` of what `torch.save(model, path)` pickled in training mode
            mode = state.lookup(_SAVED + path)
            return replace(mode, saved=(*mode.saved, value)) if isinstance(mode, Train) and mode.saved else None
        given = self.owner.returns_argument(value)  # `model = train_model(model, ...)`
        if isinstance(given, cst.Call):  # `net = train(Net(), data)`: the module built for it, as it leaves it
            mode = self._returned_built(value, given, state)
            if mode is not None:
                return mode
            given = None
        if given is not None:
            return state.lookup(dotted(given))
        built = self.owner.built_and_returned(value)
        return Train(value, True, loaded=built[1]) if built is not None else None

    def _returned_built(self, call: cst.Call, given: cst.Call, state: _State) -> Optional[object]:
        """The mode of the module ``given`` builds in the arguments of ``call``, a function of
        this file that returns it: training mode when the function leaves the mode it was
        handed, or puts it in training mode (trained, when the function trains)."""
        mode = self.value_mode(given, state)
        called = self.inference.infer(call.func)
        function = called.function if called is not None and called.kind is Kind.FUNCTION else None
        summary = self.owner.summary(function, self.depth) if function is not None else None
        if not isinstance(mode, Train) or summary is None or not function.returns:
            return None
        param = function.returns[0].value if isinstance(function.returns[0], cst.Name) else None
        left = summary.exits.get(param, _CALLER) if param else None
        if isinstance(left, Train):
            return replace(left, via=(call, *left.via))
        if left is _CALLER or isinstance(left, CallerOrTrain):
            return replace(mode, trained=mode.trained or summary.trains)
        return None

    # --- calls ------------------------------------------------------------------------------------

    def expression(self, node, state: _State) -> None:
        for child in iter_nodes(node):
            if isinstance(child, cst.Call):
                self.call(child, state)

    def call(self, call: cst.Call, state: _State) -> None:
        func = call.func
        if self.owner.training_call(call):
            for key, mode in list(state.modes.items()):
                if isinstance(mode, Train) and not mode.trained:
                    state.modes[key] = replace(mode, trained=True)
            if self.summary is not None:
                self.summary.trains = True
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if self._unaffected(call, func, name, state):
            return
        receiver = dotted(func.value) if isinstance(func, cst.Attribute) else None
        value = self.inference.infer(func)
        function = value.function if value is not None and value.kind is Kind.FUNCTION else None
        if function is None and name is not None and value is None:
            function = self._subclass_method(func, name)  # `self.apply_model(..)` written in the subclass
        called_object = None
        if function is None and value is not None and value.kind is Kind.INSTANCE and isinstance(value.cls, ClassInfo) \
                and value.cls.model is self.owner.model and isinstance(func, (cst.Name, cst.Attribute)) and dotted(func):
            # `policy(obs)`: calling an object of a plain class of this file runs its `__call__`
            method = self.inference.method_of(value.cls, "__call__")
            if method is not None and method.self_name is not None and isinstance(method.node, cst.FunctionDef):
                function, called_object = method, dotted(func)
        if name in ("train", "eval") and receiver and function is None:
            # `net.eval()` ... `net.train()`, both on every path through the function: the train()
            # restores a module the function knows (not after an eval() in another arm or iteration).
            restores = self.summary is not None and receiver in self.switched and _unconditional(call)
            if self.summary is not None and state.lookup(receiver) is None and not restores:
                self.summary.switches_unknown = True
            _forget_sharing(receiver, state)
            if name == "train" and (not call.args or _literal(call.args[0].value) is True):
                _set_sharing(receiver, Train(call, False, restores=restores), state)
            else:
                state.forget(receiver)
                if _unconditional(call):
                    self.switched.add(receiver)
            return
        if name == "load_state_dict" and receiver and function is None:
            mode = state.modes.get(receiver)
            if isinstance(mode, Train):  # trained weights: what follows uses the model, not its initialization
                state.modes[receiver] = replace(mode, loaded=call)
            elif mode is _CALLER and self.summary is not None:
                self.summary.loads.setdefault(receiver, call)
            return
        # A forward of a tracked model (or of one of its layers).
        key = dotted(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if name == "forward" and receiver:
            key = receiver
        if key is not None and (function is None or name == "forward"):  # `model.forward(x)` resolves to a method
            mode = state.lookup(key)
            if mode is not None:
                context = self.context(call)
                if context is None and isinstance(mode, Train):
                    context = self.phase(call) or self.prediction(call, mode) or self.inference_only(call, mode)
                elif context is None and mode is _CALLER and self.summary is not None:
                    # A prediction in whatever mode the caller gives: one whose model holds
                    # trained weights there (`accuracy(model, loader)` after training).
                    read_out = self.read_out(call)
                    if read_out is not None:
                        self.summary.evaluates.setdefault(key, (call, self._read_out_context(read_out), read_out, (),
                                                                True))
                        return
                    if not self.owner._file_trains() and not isinstance(call.parent, cst.Expr) and self.kept(call):
                        # In a file that never trains: an inference wherever the caller's model holds trained weights.
                        self.summary.evaluates.setdefault(key, (call, "for its outputs in a file that never trains "
                                                                      "it (nothing back-propagates)", None, (), True))
                        return
                    if not isinstance(call.parent, cst.Expr):  # (a forward whose output is dropped refreshes statistics)
                        self._forward_seen(call, key)
                if context is not None and not self.dropped(call):
                    self.evaluated(call, key, mode, context)
                return
        # A function or method of this file: through its summary.
        if function is not None and function.model is self.owner.model and isinstance(function.node, cst.FunctionDef):
            summary = self.owner.summary(function, self.depth, _flags(call, function))
            if summary is not None:
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
                        and self.constructed(func.value, _NEW, state):
                    # `Evaluator(model, loader).run()`: the method runs on the object just built
                    self.apply(call, function, summary, state, receiver=_NEW)
                    for key in [key for key in state.modes if key.startswith(_NEW)]:
                        del state.modes[key]
                else:
                    self.apply(call, function, summary, state, receiver=called_object)
                return
        if function is None and value is not None and value.kind is Kind.EXTERNAL:
            function = self.inference.project_function(func)  # `evaluate(model, data)` of `from utils import ..`
        # Another module's function acts only on what it is handed (its summary never puts a
        # model in training mode here, nor reads this module's globals): handed no model this
        # walk knows, there is nothing to ask it, and its module is not built for the question.
        summary = self.owner.foreign_summary(call, function, self.depth) \
            if function is not None and _hands_known(call, state) else None
        if summary is not None:
            self.apply(call, function, summary, state)
            return
        init = self.owner.plain_init(call)  # a plain class of this file: its `__init__`
        if init is not None:
            summary = self.owner.summary(init, self.depth)
            if summary is not None:
                self.apply(call, init, summary, state)
                return
        # Anything else that is handed a model, or its owner, may change its mode.
        if name in _MODE_KEEPING and receiver is not None and state.lookup(receiver) is not None:
            return
        if name in _MODE_KEEPING and name in _RETURNS_SELF and not any(
                isinstance(node, cst.Call) for arg in call.args for node in iter_nodes(arg.value)):
            return  # `data.to(self.device)`: a move, which switches nothing it is handed (`self` keeps its mode)
        qualname = self.inference.qualname(func)
        if qualname in torch_api.MODE_RECORDING_FUNCTIONS and call.args:
            # `torch.jit.trace(model, example)`: the trace records the layers as they behave in
            # the model's mode; a model holding trained weights is traced to be deployed.
            traced = dotted(call.args[0].value) if isinstance(call.args[0].value, (cst.Name, cst.Attribute)) else None
            mode = state.lookup(traced) if traced else None
            if isinstance(mode, Train) and (mode.loaded is not None or mode.trained):
                self.owner.report(self, call, traced, mode, f"by `{self.owner.analysis.snippet(func)}` (the trace "
                                  f"records its layers as they behave in that mode)", call, (), call, traced)
            if mode is not None:
                return  # tracing switches nothing
        if qualname == "torch.save" and len(call.args) >= 2:  # the module pickled with its training flag
            saved = dotted(call.args[0].value) if isinstance(call.args[0].value, (cst.Name, cst.Attribute)) else None
            path = self.owner.saved_path(call.args[1].value)
            mode = state.lookup(saved) if saved else None
            if path is not None and isinstance(mode, Train):
                state.set(_SAVED + path, replace(mode, saved=(call,)))
            elif path is not None:
                state.forget(_SAVED + path)
        if qualname in torch_api.MODE_KEEPING_FUNCTIONS or qualname in torch_api.MODE_SHARING_WRAPPERS \
                or torch_api.switches_no_module(qualname):
            return  # `print(model)`, `copy.deepcopy(model)`, `nn.DataParallel(model)`: the model keeps its mode
        handed = [arg.value for arg in call.args]
        if isinstance(func, cst.Attribute) and name in _CONTAINER_METHODS and receiver:
            state.forget_value(receiver)  # `self.outputs.append(out)`: a container; what holds it keeps its mode
        elif isinstance(func, cst.Attribute) and not self._instance_attribute(func):
            handed.append(func.value)  # a method: it may change what its object holds
        _forget_handed(handed, state)
        _forget_starred(call, state)

    def _unaffected(self, call: cst.Call, func, name: Optional[str], state: _State) -> bool:
        """``call`` can neither reach a function of this file nor touch a model this walk
        knows: it is handed none, is no method of one (nor of what holds one), and calls an
        imported or built-in name, or a method no function of this file is named after.
        Nothing needs inferring then (which may parse the modules it comes from)."""
        if isinstance(func, cst.Name):
            if any(binding.kind is not BindingKind.IMPORT for binding in self.owner.model.resolve(func)):
                return False
        elif not isinstance(func, cst.Attribute) or name in _SWITCHING_NAMES \
                or name in self.owner.function_names():
            return False
        for key in (dotted(func), dotted(func.value) if isinstance(func, cst.Attribute) else None):
            if key and state.holds(key):
                return False
        return not _hands_known(call, state)

    def _subclass_method(self, func: cst.Attribute, name: str) -> Optional[FunctionInfo]:
        """``self.<name>(..)`` in a method of a class of this file that does not have ``name``,
        where one class of this file derived from it defines it (and none other does): the
        method an instance of it runs."""
        own = self.function
        if own is None or own.cls is None or own.self_name is None or not isinstance(func.value, cst.Name) \
                or func.value.value != own.self_name:
            return None
        found = []
        for cls in self.owner.model.classes.values():
            if cls is own.cls or name not in cls.methods or cls.model is not self.owner.model:
                continue
            lineage, _whole = self.inference.file_lineage(cls, generations=7)
            if own.cls in lineage:
                found.append(cls.methods[name])
        return found[0] if len(found) == 1 else None

    def _instance_attribute(self, func: cst.Attribute) -> bool:
        """``self.criterion`` of ``self.criterion(out, y)``: an attribute the instances are
        given (a callable held, not a method that could reach the other attributes)."""
        if not isinstance(func.value, cst.Name):
            return False
        cls = _self_class(self.owner.model, func.value)
        return cls is not None and bool(cls.assignments(func.attr.value))

    def context(self, call: cst.Call) -> Optional[tuple[str, Optional[cst.CSTNode]]]:
        disabled = self.inference.grad_disabled(call)
        if disabled is not None:
            code = self.owner.analysis.snippet(disabled.decorator if isinstance(disabled, cst.Decorator) else
                                               disabled.items[0].item if isinstance(disabled, cst.With) else disabled)
            return f"under `{code}`", disabled
        if self.evaluating_name and not any(self._noise(arg.value, 0) for arg in call.args):
            return f"in `{self.function.name}()`", self.function.node.name  # (noise: a generator sampling)
        return None

    def prediction(self, call: cst.Call, mode: Train) -> Optional[tuple[str, cst.CSTNode]]:
        """A forward of a model holding trained weights (loaded, or trained since it was
        built; or put in training mode by ``train()`` in a file that never trains) whose output is read out of the graph (``.detach()``, ``.item()``,
        ``.numpy()``, ``argmax``) in a scope that runs no backward and lets no graph of it
        out (not returned, not stored, not appended): a prediction, even without ``no_grad``."""
        if not self.predicts_with(mode):
            return None
        read_out = self.read_out(call)
        if read_out is None:
            return None
        return self._read_out_context(read_out), read_out

    def inference_only(self, call: cst.Call, mode: Train) -> Optional[tuple[str, cst.CSTNode]]:
        """A forward of a model built here with trained weights loaded into it (or a zoo
        model built with trained weights), in a file that never trains (no backward, no
        optimizer step anywhere), whose output is used (not a statement of its own: a pass
        that only refreshes batch-norm statistics drops it): it runs the trained model for
        its outputs, an inference."""
        loaded = mode.loaded
        if not mode.built or loaded is None or mode.trained or self.owner._file_trains() \
                or isinstance(call.parent, cst.Expr) or id(mode.node) in self.owner._reported_modes \
                or not self.kept(call):
            return None  # (once a model: the fix is one `eval()` after loading; a graph let out may be trained)
        return (f"for its outputs in a file that never trains it (its trained weights are loaded by "
                f"`{self.owner.analysis.snippet(loaded, 40)}`, line "
                f"{self.owner.analysis.line_index.position(loaded.start)[0]}, and nothing back-propagates)"), loaded

    def phase(self, call: cst.Call) -> Optional[tuple[str, cst.CSTNode]]:
        """A forward under ``torch.set_grad_enabled(phase == "train")`` in a loop over the
        phases (``for phase in ["train", "val"]``): in the other phases it evaluates."""
        for ancestor in ancestors(call):
            if ancestor is self.scope_node or isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
            if not isinstance(ancestor, cst.With):
                continue
            for item in ancestor.items:
                switch = item.item
                qualname = self.inference.qualname(switch.func) if isinstance(switch, cst.Call) else None
                if qualname not in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                                    "torch.autograd.grad_mode.set_grad_enabled") or len(switch.args) != 1:
                    continue
                other = self._other_phase(switch.args[0].value, ancestor)
                if other is not None:
                    return (f"under `{self.owner.analysis.snippet(switch)}` in its `{other}` phase (gradients off: "
                            f"an evaluation)"), switch.args[0].value
        return None

    @staticmethod
    def _other_phase(condition: cst.BaseExpression, within: cst.CSTNode) -> Optional[str]:
        """For ``phase == "train"``, where ``phase`` is the target of a loop around ``within``
        over a literal list of phases: a phase in which the condition is false."""
        if not (isinstance(condition, cst.Comparison) and len(condition.comparisons) == 1
                and isinstance(condition.comparisons[0].operator, cst.Equal)):
            return None
        left, right = condition.left, condition.comparisons[0].comparator
        name, literal = (left, right) if isinstance(left, cst.Name) else (right, left)
        if not (isinstance(name, cst.Name) and isinstance(literal, cst.SimpleString)):
            return None
        for ancestor in ancestors(within):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
            if isinstance(ancestor, cst.For) and isinstance(ancestor.target, cst.Name) and \
                    ancestor.target.value == name.value and isinstance(ancestor.iter, (cst.List, cst.Tuple)):
                phases = [element.value for element in ancestor.iter.elements]
                if not all(isinstance(phase, cst.SimpleString) for phase in phases):
                    return None
                others = [phase.evaluated_value for phase in phases if phase.evaluated_value != literal.evaluated_value]
                return others[0] if others else None
        return None

    def predicts_with(self, mode: Train) -> bool:
        """A forward of a model in ``mode`` whose output is read out is a prediction: the
        model holds trained weights (trained since it was built or put in training mode by
        ``train()``, or loaded), or ``train()`` put it in training mode in a file that never
        trains."""
        explicit = not mode.built and not mode.trained and not self.owner._file_trains()  # `model.train()`
        return explicit or mode.trained or mode.built and mode.loaded is not None

    def _read_out_context(self, read_out: cst.CSTNode) -> str:
        code = self.owner.analysis.snippet(read_out, 40)
        return f"as a prediction (its output is read out by `{code}`, and nothing back-propagates through it)"

    def read_out(self, call: cst.Call) -> Optional[cst.Call]:
        """Where the output of the forward ``call`` is read out of the graph (``.detach()``,
        ``.item()``, ``.numpy()``, ``argmax``) in a scope that runs no backward of it and lets
        no graph of it out (not returned, not stored, not appended)."""
        found = self._scan(call)
        return found[1] if found is not None else None

    def dropped(self, call: cst.Call) -> bool:
        """The output of the forward ``call`` is dropped (a statement of its own) in a file that
        hooks no module: all it changes is the batch-norm running statistics, which a pass in
        training mode under ``no_grad`` refreshes on purpose."""
        return isinstance(call.parent, cst.Expr) and not _HOOKED.search(self.owner.analysis.text)

    def kept(self, call: cst.Call) -> bool:
        """The output of the forward ``call`` stays in its scope, which runs no backward of it
        (not returned, not stored, not appended): no graph of it goes anywhere."""
        for ancestor in ancestors(call):  # `return model(x)`, `self.out = model(x)`, `outs.append(model(x))`
            if isinstance(ancestor, cst.Return) or isinstance(ancestor, (cst.Assign, cst.AnnAssign)) and any(
                    _stores(target) for target in
                    ([t.target for t in ancestor.targets] if isinstance(ancestor, cst.Assign) else [ancestor.target])) \
                    or isinstance(ancestor, cst.Call) and isinstance(ancestor.func, cst.Attribute) \
                    and ancestor.func.attr.value in _STORING:
                return False
            if isinstance(ancestor, (cst.BaseStatement, cst.Lambda)):
                break
        return self._scan(call) is not None

    def _scan(self, call: cst.Call) -> Optional[tuple[None, Optional[cst.Call]]]:
        """None when the output of ``call`` may be back-propagated (a backward may follow, it
        leaves the scope); else (None, where it is read out of the graph, if it is)."""
        scope = self.function.scope if self.function is not None else self.owner.model.module_scope
        loops, backwards, candidates = self.owner.scanned(self.scope_node)
        if self.flags:
            backwards = [node for node in backwards if _decided_away(node, self.flags) is False]
        if scope is None or _backward_may_follow(loops, backwards, call) or \
                self.function is not None and any(self._noise(arg.value, 0) for arg in call.args):
            return None  # training goes on, or a function samples a generator on the noise it draws
        autograd = self.owner.analysis.autograd
        read_out = None
        for node in candidates:
            if node.end <= call.end:
                continue  # before it, or inside it; `net(x).detach()` ends after it
            if isinstance(node, cst.Return) and node.value is not None \
                    and autograd.flows_into(scope, call, node.value, node):
                return None  # the caller may back-propagate through it
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                if any(_stores(t) for t in targets) and autograd.flows_into(scope, call, node.value,
                                                                                             node):
                    return None  # stored on an object or into a container
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in _STORING and any(
                        autograd.flows_into(scope, call, arg.value, node) for arg in node.args):
                return None
            if read_out is None and isinstance(node, cst.Attribute) and node.attr.value in _READ_OUT \
                    and isinstance(node.parent, cst.Call) and node.parent.func is node \
                    and (autograd.flows_into(scope, call, node.value, node)):
                read_out = node.parent
            elif read_out is None and isinstance(node, cst.Call) and node.args and \
                    self.inference.qualname(node.func) in torch_api.READ_OUT_FUNCTIONS and \
                    autograd.flows_into(scope, call, node.args[0].value, node):
                read_out = node  # `torch.argmax(logits, 1)`, `_, predicted = torch.max(outputs, 1)`
            elif read_out is None and isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
                    and node.func.value == "print" and self.inference.qualname(node.func) in (None, "builtins.print") \
                    and any(not _metadata(arg.value) and autograd.flows_into(scope, call, arg.value, node)
                            for arg in node.args):
                read_out = node  # `print(F.softmax(model(image), 1))`: shown as the prediction
            elif read_out is None and isinstance(node, cst.Attribute) and node.attr.value == "data" \
                    and not (isinstance(node.parent, cst.Call) and node.parent.func is node) \
                    and not _assigned_to(node) and autograd.flows_into(scope, call, node.value, node):
                read_out = node  # `torch.max(outputs.data, 1)`: the tensor out of the graph
        return None, read_out

    def _noise(self, value: cst.BaseExpression, depth: int) -> bool:
        """``value`` is random noise drawn in this function (`torch.randn(n, nz)`,
        `Variable(noise.cuda())`, a name of the function bound to it): what a generator's
        forward samples from (`generate_image(netG)`)."""
        while isinstance(value, cst.Call) and depth < 6:
            depth += 1
            func = value.func
            qualname = self.inference.qualname(func)
            if qualname is not None and torch_api.normalize(qualname) in torch_api.NOISE_FACTORIES:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in torch_api.NOISE_FILLS:
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in torch_api.SAME_TENSOR_METHODS:
                value = func.value
            elif qualname in ("torch.autograd.Variable", "torch.autograd.variable.Variable") and value.args:
                value = value.args[0].value
            else:
                return False
        if isinstance(value, cst.Name) and depth < 6:
            bindings = self.owner.model.resolve(value)  # each binding that may reach it draws noise
            return bool(bindings) and all(binding.kind is BindingKind.ASSIGN and not binding.path
                                          and binding.scope.node is self.scope_node
                                          and binding.value is not None and self._noise(binding.value, depth + 1)
                                          for binding in bindings)
        return False

    def evaluated(self, call: cst.Call, key: str, mode, context) -> None:
        if mode is _CALLER:
            if self.summary is not None:
                self.summary.evaluates.setdefault(key, (call, context[0], context[1], (), False))
            return
        if isinstance(mode, Train):
            self.owner.report(self, call, key, mode, context[0], context[1], (), call, key)

    def _forwards_evaluated(self, call: cst.Call, summary: _Summary, arguments: dict, state: _State) -> None:
        """``call`` runs under ``no_grad`` (or in an evaluating function): the forwards the
        function runs in the caller's mode run there too (grad mode is the caller's), an
        evaluation of the model they belong to (``model.generate(x)``, ``model.encode_text(t)``
        under ``no_grad``); reported on ``call``."""
        declared = self.context(call)
        for relative, (inner, layer) in summary.forwards.items():
            key, root = _rebased(relative, arguments), _rebased(relative.partition(".")[0], arguments)
            mode = state.lookup(key) if key else None
            # Without `no_grad`: the method's result read out of the graph (`m.generate(x)[0].tolist()`)
            # by code that back-propagates nothing through it is a prediction of a model holding
            # trained weights, as a forward's would be.
            context = declared or (self.prediction(call, mode) if isinstance(mode, Train) else None)
            if context is None:
                continue
            if mode is _CALLER and self.summary is not None and root:  # (the model itself is what it hands on)
                self.summary.evaluates.setdefault(root, (inner, context[0], context[1], (call,), False))
            elif isinstance(mode, Train) and root:
                # (the module is the object the method runs on, or one a plain object holds: `self.netG`)
                shown = root if state.lookup(root) is not None else key
                self.owner.report(self, call, shown, mode, context[0], context[1], (call,), inner,
                                  _inner_key(inner), handed=True, layer=layer)

    def apply(self, call: cst.Call, function: FunctionInfo, summary: _Summary, state: _State,
              receiver: Optional[str] = None) -> None:
        explicit, args_of, kwargs_of = self.inference.passed_on(call)
        arguments = _arguments(call, function, explicit if args_of is not None and args_of is self.function else None,
                               kwargs_of is self.function and kwargs_of is not None)
        if receiver is not None and function.self_name is not None:
            arguments[function.self_name] = receiver
        own = self.function.scope.bindings if self.function is not None and self.function.scope is not None else {}
        for name in summary.globals:
            if name not in own or name in self.function.scope.globals:
                arguments.setdefault(name, name)
        for name, node in summary.closures.items():  # the enclosing function calls its closure
            if name not in own or self.function.scope.node is node:
                arguments.setdefault(name, name)
        if summary.trains:
            for key, mode in list(state.modes.items()):
                if isinstance(mode, Train) and not mode.trained:
                    state.modes[key] = replace(mode, trained=True)
            if self.summary is not None:
                self.summary.trains = True
        for relative, (inner, context, context_node, calls, prediction) in summary.evaluates.items():
            key = _rebased(relative, arguments)
            if key is None:
                continue
            mode = state.lookup(key)
            if mode is _CALLER and self.summary is not None:
                self.summary.evaluates.setdefault(key, (inner, context, context_node, (call, *calls), prediction))
            elif isinstance(mode, Train) and (not prediction or self.predicts_with(mode)):
                self.owner.report(self, call, key, mode, context, context_node, (call, *calls), inner,
                                  _inner_key(inner), handed="." not in relative and relative not in summary.globals
                                  and relative not in summary.closures)
        if summary.forwards and not summary.trains:
            self._forwards_evaluated(call, summary, arguments, state)
        for relative, loaded in summary.loads.items():
            key = _rebased(relative, arguments)
            mode = state.modes.get(key) if key else None
            if isinstance(mode, Train):
                state.modes[key] = replace(mode, loaded=loaded)
            elif mode is _CALLER and self.summary is not None:
                self.summary.loads.setdefault(key, loaded)
        if summary.switches_unknown:
            _forget_handed([arg.value for arg in call.args], state)
            _forget_starred(call, state)
        for relative, mode in summary.exits.items():
            key = _rebased(relative, arguments)
            if key is None:
                continue
            if isinstance(mode, Train):
                _set_sharing(key, replace(mode, via=(call, *mode.via)), state)
            elif mode is _CALLER:
                continue
            elif isinstance(mode, CallerOrTrain):
                mine = state.lookup(key)
                if isinstance(mine, Train):  # in training mode before the call, and after it either way
                    state.set(key, replace(mine, trained=mine.trained or summary.trains))
                elif mine is _CALLER or isinstance(mine, CallerOrTrain):
                    state.set(key, mode if mine is _CALLER else mine)
                else:
                    state.forget(key)
            else:
                state.forget(key)
        # What the function was handed and its summary does not know (an unknown callee) is
        # in the summary's exits as unknown; a root handed without a key of its own keeps its mode.


# --- helpers --------------------------------------------------------------------------------------

def _site(context_node: Optional[cst.CSTNode], calls: tuple, inner: cst.Call, handed: bool) -> Optional[cst.Call]:
    """Where the evaluation the calls ``calls`` (outermost first) bring the model to is
    declared, when the finding belongs there rather than on ``calls[0]`` (handed: the call
    that hands the model over) or on ``inner`` (the forward): the first of them, and
    ``inner``, written in the ``no_grad`` block ``context_node``, or in the function whose
    name (or decorator) says it evaluates, or in the function that reads the prediction out.
    A forward inside a method of the model (its ``generate()`` called in a ``predict()``'s
    ``no_grad`` block) is no place to change; a function handed the model runs whatever mode
    its caller chose (the finding stays on the call), except a method of a class named for
    evaluating (a ``Predictor``'s): such an object owns the mode it evaluates in."""
    if context_node is None:
        return None
    if isinstance(context_node, cst.With):
        region = context_node
    elif isinstance(context_node, (cst.Decorator, cst.Name)) and isinstance(context_node.parent, cst.FunctionDef):
        region = context_node.parent
    else:
        region = _owner(context_node)
        if not isinstance(region, cst.FunctionDef):
            return None
    for candidate in (*calls, inner):
        if region.start <= candidate.start and candidate.end <= region.end:
            if candidate is calls[0] or not handed and candidate is inner:
                return None
            return candidate if not handed or _in_evaluating_class(candidate) else None
    return None


def _in_evaluating_class(node: cst.CSTNode) -> bool:
    """``node`` is written in a method of a class whose name says it evaluates (``Predictor``,
    ``Evaluator``, ``predict_w``)."""
    for ancestor in ancestors(node):
        if isinstance(ancestor, cst.ClassDef):
            return bool(_EVALUATING_NAME.search(ancestor.name.value))
    return False


def _torchvision_layer(qualname: str) -> Optional[str]:
    """The layer that behaves differently in training mode (``nn.BatchNorm2d``) of the model
    the torchvision builder ``qualname`` makes, if it is one (and the model has such a layer)."""
    if not qualname.startswith("torchvision.models."):
        return None
    layer = TRAIN_MODE_LAYERS.get(qualname.removeprefix("torchvision.models."))
    return layer.replace("torch.nn.", "nn.").replace("torchvision.ops.", "") if layer is not None else None


def _under_moves(node: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """``node`` without the calls around it that return the module itself in the same mode
    (`.to(device)`, `.cuda()`, `.float()`; not `.train()`): `Net()` of `Net().to(device).float()`."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value in _RETURNS_SELF and node.func.attr.value != "train":
        node = node.func.value
    return node


def cst_expression(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The module a forward call runs: ``model`` of ``model(x)`` or ``model.forward(x)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        return func.value
    return func


def _key_node(call: cst.Call, key: str) -> Optional[cst.BaseExpression]:
    """The argument (or receiver) of ``call`` written as ``key``: the model at the call site."""
    candidates = [arg.value for arg in call.args]
    if isinstance(call.func, cst.Attribute):
        candidates.append(call.func.value)
    candidates.append(call.func)
    for node in candidates:
        for inner in iter_nodes(node):
            if isinstance(inner, (cst.Name, cst.Attribute)) and dotted(inner) == key:
                return inner
    return None


def _inner_key(call: cst.Call) -> str:
    expression = cst_expression(call)
    return dotted(expression) or ""


def _arguments(call: cst.Call, function: FunctionInfo, passes_args: Optional[int] = None,
               passes_kwargs: bool = False) -> dict[str, str]:
    """The function's parameter names (and ``self``) -> the dotted expressions the call passes;
    ``passes_args``: the call passes on the ``*args`` of the function it is written in, after
    that many positional arguments (``passes_kwargs``: its ``**kwargs``), whose items are the
    keys ``*0``, ``*1``.. (``**name``) of that function's summary."""
    found: dict[str, str] = {}
    params = [*function.node.params.posonly_params, *function.node.params.params]
    names = [param.name.value for param in params]
    if function.self_name is not None and names and names[0] == function.self_name:
        if isinstance(call.func, cst.Attribute):
            receiver = dotted(call.func.value)
            if receiver:
                found[function.self_name] = receiver
        names = names[1:]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    for name, value in zip(names, positional):
        text = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if text:
            found[name] = text
    for arg in call.args:
        if arg.keyword is not None and isinstance(arg.value, (cst.Name, cst.Attribute)) and dotted(arg.value):
            found[arg.keyword.value] = dotted(arg.value)
    own = function.node.params
    if isinstance(own.star_arg, cst.Param):  # what lands in the callee's `*args`
        for index, value in enumerate(positional[len(names):len(names) + _STAR_POSITIONS]):
            text = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            if text:
                found[f"*{index}"] = text
    if isinstance(own.star_kwarg, cst.Param):  # and in its `**kwargs`
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value not in names and f"**{arg.keyword.value}" not in found:
                text = dotted(arg.value) if isinstance(arg.value, (cst.Name, cst.Attribute)) else None
                if text:
                    found[f"**{arg.keyword.value}"] = text
    # `evaluate(*args, **kwargs)` in a function that passes on its own: the callee's
    # parameters are what the caller's caller handed it there
    if passes_args is not None:
        for index, name in enumerate(names[passes_args:passes_args + _STAR_POSITIONS]):
            found.setdefault(name, f"*{index}")
    if passes_kwargs:
        for name in names:
            found.setdefault(name, f"**{name}")
    return found


def _hands_known(call: cst.Call, state: _State) -> bool:
    """``call`` hands on a model whose mode ``state`` knows, or what holds one, or may (a
    starred argument)."""
    for arg in call.args:
        if arg.star:
            return True
        key = dotted(arg.value) if isinstance(arg.value, (cst.Name, cst.Attribute)) else None
        if key and state.holds(key):
            return True
    return False


def _rebased(relative: str, arguments: dict[str, str]) -> Optional[str]:
    root, _, rest = relative.partition(".")
    given = arguments.get(root)
    if given is None:
        return None
    return f"{given}.{rest}" if rest else given


def _switch_argument(call: cst.Call, qualname: str) -> tuple[Optional[cst.BaseExpression], bool]:
    """The argument of the layer ``call`` builds that says whether it behaves differently in
    training mode (`p` of `nn.Dropout(p)`, `track_running_stats=`), and whether it may be
    hidden in a `*args`."""
    name, position, _default = torch_api.TRAIN_MODE_LAYERS[qualname]
    argument = keyword(call, name)
    if argument is None and position is not None:
        if any(arg.star for arg in call.args):
            return None, True
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        argument = positional[position] if position < len(positional) else None
    return argument, False


def _layer_on(call: cst.Call, qualname: str) -> bool:
    """Whether the layer ``call`` builds behaves differently in training mode."""
    default = torch_api.TRAIN_MODE_LAYERS[qualname][2]
    argument, starred = _switch_argument(call, qualname)
    if argument is None or starred:
        return default
    literal = _literal(argument)
    if literal is None:
        return default
    return bool(literal)


def _reads_training(call: cst.Call, qualname: str) -> bool:
    """``F.dropout(x, p, training=self.training)``: dropout exactly when the module trains."""
    argument = keyword(call, "training")
    position = torch_api.TRAIN_MODE_FUNCTIONS[qualname]
    if argument is None:
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        argument = positional[position] if position < len(positional) else None
    return argument is not None and any(isinstance(node, cst.Attribute) and node.attr.value == "training"
                                        for node in iter_nodes(argument))


def _literal(node: cst.BaseExpression):
    """The value of a literal number or boolean (None: not a literal)."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return None
    return None


def _elements(value: cst.BaseExpression, owner: TrainModeModel) -> list[cst.BaseExpression]:
    """The layers a container argument names: itself, the items of a list/tuple/dict
    literal, or of a list built in the same function (``*layers``)."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return [element.value for element in value.elements]
    if isinstance(value, cst.Dict):
        return [element.value for element in value.elements if getattr(element, "value", None) is not None]
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.Call) and owner.inference.qualname(value.func) in ("collections.OrderedDict", "dict") \
            and value.args:
        # `nn.Sequential(OrderedDict([("fc1", nn.Linear(..)), ("drop", nn.Dropout(..))]))`: the named layers
        return [element.value.elements[-1].value if isinstance(element.value, cst.Tuple) and element.value.elements
                else element.value for element in value.args[0].value.elements] \
            if isinstance(value.args[0].value, (cst.List, cst.Tuple)) else _elements(value.args[0].value, owner)
    if isinstance(value, cst.Name):
        found = []
        for binding in owner.model.resolve(value):
            if binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.path:
                if isinstance(binding.value, (cst.List, cst.Tuple, cst.ListComp)):
                    found.extend(_elements(binding.value, owner))
                    scope = binding.scope.node
                    for node in iter_nodes(scope):
                        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                                and node.func.attr.value in ("append", "extend", "insert") and node.args \
                                and isinstance(node.func.value, cst.Name) and node.func.value.value == value.value:
                            found.append(node.args[-1].value)
                else:
                    found.append(binding.value)
        return found
    return [value]


def _self_class(model, name: cst.Name) -> Optional[ClassInfo]:
    for binding in model.resolve(name):
        function = binding.scope.function
        if binding.kind is BindingKind.PARAM and function is not None and function.cls is not None \
                and function.self_name == name.value:
            return function.cls
    return None


def _returns_always(function: cst.FunctionDef) -> bool:
    """The function's body ends in a ``return`` with a value or a ``raise`` (it cannot fall
    off its end and return None), and no bare ``return`` is in it."""
    body = _body(function)
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and (isinstance(last.body[-1], cst.Return)
            and last.body[-1].value is not None or isinstance(last.body[-1], cst.Raise))):
        return False  # (a builder ending in `raise ValueError(name)` returns a module whenever it returns)
    for node in iter_nodes(function):
        if type(node) is cst.Return and node.value is None and _owner(node) is function:
            return False
    return True


def _loaded_in(init: FunctionInfo, name: str) -> Optional[cst.Call]:
    """``self.<name>.load_state_dict(..)`` written in ``__init__``: trained weights loaded."""
    for node in iter_nodes(init.node.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "load_state_dict" and isinstance(node.func.value, cst.Attribute) and \
                node.func.value.attr.value == name and dotted(node.func.value.value) == init.self_name:
            return node
    return None


def _set_sharing(key: str, mode: Train, state: _State) -> None:
    """``key`` is put in ``mode``; so are the other names of the module it held (``m =
    model.to(device)``: the same module, known by the same construction or switch)."""
    old = state.lookup(key)
    state.set(key, mode)
    if isinstance(old, Train):
        for other, theirs in list(state.modes.items()):
            if other != key and isinstance(theirs, Train) and theirs.node is old.node and "." not in other \
                    and "." not in key:
                state.modes[other] = mode


def _forget_sharing(key: str, state: _State) -> None:
    """Forget the other names of the module ``key`` holds (`model = net.to(device)`: the same
    module) and the modules built around it (`model = nn.DataParallel(net)`): a switch of
    ``key`` switches them too."""
    mode = state.lookup(key)
    for other, theirs in list(state.modes.items()):
        if other == key or not isinstance(theirs, Train):
            continue
        if isinstance(mode, Train) and theirs.node is mode.node or isinstance(theirs.node, cst.Call) and any(
                isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == key
                for arg in theirs.node.args for node in iter_nodes(arg.value)):
            state.forget(other)


def _forget_handed(handed: list, state: _State) -> None:
    """Forget the mode of the models ``handed`` names, also inside a list, tuple, set or dict
    written in the call (`set_mode("eval", [encoder, decoder])`), and of what they hold."""
    for value in handed:
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            _forget_handed([element.value for element in value.elements], state)
            continue
        if isinstance(value, cst.Dict):
            _forget_handed([element.value for element in value.elements if hasattr(element, "value")], state)
            continue
        text = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if text is None:
            continue
        for key in list(state.modes):
            if key == text or key.startswith(text + ".") or text.startswith(key + "."):
                state.forget(key)
        if any(path == text or path.startswith(text + ".") for path in state.names.values()):
            state.forget(text)


def _forget_starred(call: cst.Call, state: _State) -> None:
    """``f(*args, **kwargs)`` hands on whatever the caller's caller put there."""
    if any(arg.star for arg in call.args):
        for key in [key for key in state.modes if key.startswith("*")]:
            state.forget(key)


def _repeats_input(call: cst.Call) -> bool:
    """``call`` sits in a loop (or comprehension) that gives it the same inputs on every
    iteration: its arguments read neither the loop's targets nor a name bound in its body
    (`[model(x) for _ in range(20)]`, how Monte Carlo dropout samples)."""
    read = {node.value for arg in call.args for node in iter_nodes(arg.value) if isinstance(node, cst.Name)}
    for ancestor in ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.While):
            return True  # what changes between iterations is not known
        if isinstance(ancestor, (cst.For, cst.CompFor)):
            bound = {node.value for node in iter_nodes(ancestor.target) if isinstance(node, cst.Name)}
            if isinstance(ancestor, cst.For):
                bound |= _assigned_names(ancestor.body)
            return not (read & bound)
        if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            comp = ancestor.for_in
            bound = set()
            while comp is not None:
                bound |= {node.value for node in iter_nodes(comp.target) if isinstance(node, cst.Name)}
                comp = comp.inner_for_in
            return not (read & bound)
    return False


def _flags(call: cst.Call, function: FunctionInfo) -> frozenset:
    """(parameter, literal) for each parameter of ``function`` that ``call`` hands a literal
    ``True``, ``False`` or ``None`` (by keyword or position)."""
    if any(arg.star for arg in call.args):
        return frozenset()
    params = [param.name.value for param in (*function.node.params.posonly_params, *function.node.params.params)]
    if function.self_name is not None and isinstance(call.func, cst.Attribute) and params:
        params = params[1:]
    found = set()
    for index, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword is not None else params[index] if index < len(params) else None
        value = arg.value
        if name is not None and isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
            found.add((name, value.value))
    return frozenset(found)


def _decided(test: cst.BaseExpression, flags: dict) -> Optional[bool]:
    """The truth of an ``if`` test the flags decide: ``flag``, ``not flag``, ``flag is None``,
    ``flag is not None`` (None: not decided)."""
    if not flags:
        return None
    decided = decide_test(test, lambda name: (flags[name] == "None", flags[name] == "True", None)
                          if name in flags else None)
    return None if decided is None else decided[0]


def _decided_away(node: cst.CSTNode, flags: dict) -> bool:
    """``node`` sits in an arm of an ``if`` that the flags rule out."""
    child = node
    for ancestor in ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        if isinstance(ancestor, cst.If):
            decided = _decided(ancestor.test, flags)
            if decided is True and child is ancestor.orelse or decided is False and child is ancestor.body:
                return True
        child = ancestor
    return False


def _unconditional(node: cst.CSTNode) -> bool:
    """``node`` runs on every call of its function: under no ``if``, loop, ``try`` or
    comprehension of it."""
    for ancestor in ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return True
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.For, cst.While, cst.Try, cst.TryStar, cst.Match, cst.CompFor)):
            return False
    return True


def _runs_once(call: cst.Call) -> bool:
    """``call`` runs once where it is written: in no loop or comprehension of its scope, its
    arguments not replicated (``x.repeat(n, 1)``, ``x.expand(..)``: a batch of copies of one
    input samples like a loop)."""
    for ancestor in ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            break
        if isinstance(ancestor, (cst.For, cst.While, cst.CompFor)):
            return False
    return not any(isinstance(node, cst.Attribute) and node.attr.value in _REPLICATING
                   for arg in call.args for node in iter_nodes(arg.value))


def _no_module(value: Optional[cst.BaseExpression]) -> bool:
    """``value`` is written as a value that cannot be a module: a literal number, string or
    container, a comprehension, ``None``/``True``/``False``."""
    return isinstance(value, (cst.List, cst.Dict, cst.Tuple, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp,
                              cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString,
                              cst.ConcatenatedString)) or \
        isinstance(value, cst.Name) and value.value in ("None", "True", "False")


def _metadata(value: cst.BaseExpression) -> bool:
    """``value`` reads a tensor's metadata, not its values (`out.shape`, `out.size(1)`)."""
    if isinstance(value, cst.Call):
        value = value.func
        return isinstance(value, cst.Attribute) and value.attr.value in ("size", "dim", "numel")
    return isinstance(value, cst.Attribute) and value.attr.value in ("shape", "dtype", "device", "ndim")


def _assigned_to(node: cst.CSTNode) -> bool:
    """``node`` is the target of an assignment (`x.data = ...`), not a read."""
    parent = node.parent
    return isinstance(parent, cst.AssignTarget) or isinstance(parent, (cst.AugAssign, cst.AnnAssign)) \
        and parent.target is node


def _stores(target: cst.BaseExpression) -> bool:
    """Assigning to ``target`` keeps the value on an object or in a container (``self.out =``,
    ``outs[i] =``), not in names of the scope (``out =``, ``logits, dists =``)."""
    if isinstance(target, cst.Name):
        return False
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_stores(element.value) for element in target.elements)
    return True


def _assigned_names(body: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for node in iter_nodes(body):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
            [node.target] if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) else []
        for target in targets:
            names |= {name.value for name in iter_nodes(target) if isinstance(name, cst.Name)}
    return names


def _runs_backward(node: cst.CSTNode) -> bool:
    return any(isinstance(child, cst.Attribute) and child.attr.value in _TRAINING_ATTRIBUTES
               for child in iter_nodes(node))


_VALUE_STATEMENTS = frozenset({cst.Return, cst.Assign, cst.AugAssign, cst.AnnAssign})


def _scope_scan(scope_node: cst.CSTNode) -> tuple[list, list, list]:
    """The loops of ``scope_node``, its ``.backward()`` attributes, and, in walk order, the
    nodes ``_Walker._scan`` asks about (each of its tests implies this one)."""
    loops, backwards, candidates = [], [], []
    for node in iter_nodes(scope_node):
        cls = type(node)  # classes without subclasses, compared by identity: every node of the scope
        if cls is cst.For or cls is cst.While:
            loops.append(node)
        elif cls is cst.Attribute:
            if node.attr.value == "backward" and isinstance(node.parent, cst.Call) and node.parent.func is node:
                backwards.append(node)
            elif node.attr.value in _READ_OUT or node.attr.value == "data":
                candidates.append(node)
        elif cls in _VALUE_STATEMENTS:
            if node.value is not None:
                candidates.append(node)
        elif cls is cst.Call and (isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in _STORING or node.args and node.func.attr.value in _READ_OUT_FUNCTION_NAMES)
                or isinstance(node.func, cst.Name) and node.args):
            candidates.append(node)
    return loops, backwards, candidates


def _backward_may_follow(scope_loops: list, backwards: list, call: cst.Call) -> bool:
    """A backward of the scope (``backwards``: its ``.backward`` attributes) may use the
    output of ``call``: one written after it (training goes on), or one earlier in a loop
    around it that reads a name the output is bound to (on the next iteration).  The backward
    of a training loop that ran before the prediction (or beside it, in the epoch loop) does not."""
    loops = [node for node in scope_loops if node.start <= call.start and call.end <= node.end]
    bound = _bound_names(call)
    for child in backwards:
        if _owner(child) is not _owner(call):
            continue
        if child.start > call.end:
            return True  # training goes on after it (`fake = G(z).detach()` feeds a later step)
        if any(loop.start <= child.start and child.end <= loop.end for loop in loops) and any(
                isinstance(node, cst.Name) and node.value in bound for node in iter_nodes(child.parent)):
            return True
    return False


def _bound_names(call: cst.Call) -> set[str]:
    """The names the statement holding ``call`` binds (`out = model(x)`, `a, b = ..`)."""
    statement = call.parent
    while statement is not None and not isinstance(statement, (cst.Assign, cst.AugAssign, cst.AnnAssign,
                                                                 cst.SimpleStatementLine)):
        statement = statement.parent
    if isinstance(statement, cst.Assign):
        return {node.value for target in statement.targets for node in iter_nodes(target.target)
                if isinstance(node, cst.Name)}
    if isinstance(statement, (cst.AugAssign, cst.AnnAssign)) and isinstance(statement.target, cst.Name):
        return {statement.target.value}
    return set()


def _body(node) -> list:
    body = node.body
    if isinstance(body, cst.IndentedBlock) or hasattr(body, "body"):
        inner = body.body
        return list(inner) if isinstance(inner, (list, tuple)) else [inner]
    return list(body) if isinstance(body, (list, tuple)) else [body]


def _owner(node: cst.CSTNode) -> cst.CSTNode:
    parent = node.parent
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        parent = parent.parent
    return parent if parent is not None else node
