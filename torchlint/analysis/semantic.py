"""The semantic model of one module: scopes, bindings, imports, classes and functions.

Built by one walk over the tree before any rule runs, so that a rule looking at
``loss.data[0]`` can ask what ``loss`` is bound to, even when the evidence comes
later in the file (``loss.backward()``) or from another method (``self.weight``
assigned in ``__init__``).

Name resolution is flow-aware within a scope: a use sees the latest binding of the
name that comes before it in the source.  A use that no binding precedes (a loop
carrying a value around, a function reading a module global) sees all bindings.
"""

from __future__ import annotations

import bisect
import enum
import re
from typing import Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted
from torchlint.syntax.text_search import TextPattern
from torchlint.syntax.walk import walk


# Statements whose body may not run (or may run several times).
_BRANCHES = (cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler,
             cst.ExceptStarHandler, cst.Match, cst.IfExp)
# What `_exclusive` and `_conditional` look for among a use's ancestors: an `if`, its arms, branches.
_FLOW_NODES = (cst.BaseStatement, cst.BaseSuite, *_BRANCHES)


def _subclasses(bases: tuple[type, ...]) -> frozenset[type]:
    found, pending = set(), list(bases)
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)


# The same, as a set of classes: `_ancestor_ids` tests every node above every name read.
_FLOW_CLASSES = _subclasses(_FLOW_NODES)


class BindingKind(enum.Enum):
    ASSIGN = "assign"
    AUGASSIGN = "augmented assignment"
    FOR = "for"
    WITH = "with"
    PARAM = "parameter"
    IMPORT = "import"
    FUNCTION = "function"
    CLASS = "class"
    EXCEPT = "except"
    OTHER = "other"  # match patterns, del, type aliases: nothing to infer


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"
    COMPREHENSION = "comprehension"


class Scope:
    __slots__ = (
        "kind", "node", "parent", "exit_node", "bindings", "globals", "nonlocals",
        "attribute_uses", "loads", "chained_calls", "function", "class_info", "order",
    )

    def __init__(self, kind: ScopeKind, node: cst.CSTNode, parent: Optional[Scope]):
        self.kind = kind
        self.node = node
        self.parent = parent
        self.exit_node: Optional[cst.CSTNode] = None
        self.bindings: dict[str, list[Binding]] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        # name -> [(seq, attribute name, Attribute node)] for `name.attr` in this scope
        self.attribute_uses: dict[str, list[tuple[int, str, cst.Attribute]]] = {}
        # name -> [(seq, Name)] for every read of the name in this scope, in flow order
        self.loads: dict[str, list[tuple[int, cst.Name]]] = {}
        # method name -> calls `<expression>.method(..)` in this scope whose receiver is not a
        # plain name (`self.encoder.decode(..)`, `Solver().train(..)`), in walk order
        self.chained_calls: dict[str, list[cst.Call]] = {}
        self.function: Optional[FunctionInfo] = None
        self.class_info: Optional[ClassInfo] = None
        # Where the walk entered the scope, to keep model.scopes in walk order when a
        # lazy function's scopes come later: (seq,), or (the function's anchor, seq).
        self.order: tuple[int, ...] = (0,)


class Binding:
    """One place where a name gets a value."""

    __slots__ = (
        "name", "kind", "scope", "seq", "node", "value", "path", "iterates",
        "annotation", "qualname", "definition", "param_index",
    )

    def __init__(self, name: str, kind: BindingKind, scope: Scope, seq: int, node: cst.CSTNode):
        self.name = name
        self.kind = kind
        self.scope = scope
        self.seq = seq
        self.node = node  # the Name (or ImportAlias, Param) that binds
        self.value: Optional[cst.BaseExpression] = None
        # Position inside a tuple target: `a, (b, c) = v` gives b the path (1, 0);
        # None inside the path marks a starred element.
        self.path: tuple[Optional[int], ...] = ()
        self.iterates = False  # bound to the elements of `value` (for loops)
        self.annotation: Optional[cst.BaseExpression] = None
        self.qualname: Optional[str] = None  # imports: the dotted name imported
        self.definition: Optional[FunctionInfo | ClassInfo] = None
        self.param_index: int = -1

    def __repr__(self) -> str:
        return f"<Binding {self.name} {self.kind.value} seq={self.seq}>"


class AttributeAssignment:
    """``self.<name> = value`` inside a method: the class's view of its attributes."""

    __slots__ = ("value", "path", "annotation", "node", "function")

    def __init__(self, value, path, annotation, node, function):
        self.value: Optional[cst.BaseExpression] = value
        self.path: tuple[Optional[int], ...] = path
        self.annotation: Optional[cst.BaseExpression] = annotation
        self.node: cst.CSTNode = node
        self.function: FunctionInfo = function


class ClassInfo:
    __slots__ = ("node", "name", "scope", "outer_scope", "methods", "attributes", "model", "lazy_methods",
                 "_built_for", "_unsorted")

    def __init__(self, node: cst.ClassDef, outer_scope: Scope, model: "SemanticModel"):
        self.model = model  # the module the class is defined in
        self.node = node
        self.name = node.name.value
        self.outer_scope = outer_scope
        self.scope: Optional[Scope] = None
        self.methods: dict[str, FunctionInfo] = {}
        # name -> `self.<name> = value` in the methods built so far: read assignments(name)
        self.attributes: dict[str, list[AttributeAssignment]] = {}
        self.lazy_methods: list[FunctionInfo] = []  # methods whose bodies are not built yet
        self._built_for: set[str] = set()  # names whose assigning methods are built
        self._unsorted = False  # a lazy method was built out of source order

    def defines(self, name: str) -> bool:
        """The class body binds ``name``: a method, a property, a class attribute."""
        return name in self.methods or (self.scope is not None and name in self.scope.bindings)

    def assignments(self, name: str) -> list[AttributeAssignment]:
        """Every ``self.<name> = value`` (or ``register_buffer("<name>", ..)``) in the
        methods, in source order."""
        if self.lazy_methods and name not in self._built_for:
            self._built_for.add(name)
            mention = re.compile(rf"\b(?:{re.escape(name)}|register_buffer|register_parameter)\b")
            text = self.model.module.code
            for method in [method for method in self.lazy_methods
                           if mention.search(text, _first_offset(method.node), method.node.end)]:
                self.model.materialize(method)
        found = self.attributes.get(name, [])
        if self._unsorted:
            found.sort(key=lambda assignment: assignment.node.start)
        return found

    def __repr__(self) -> str:
        return f"<class {self.name}>"


class FunctionInfo:
    __slots__ = ("node", "name", "outer_scope", "_scope", "cls", "_returns", "_is_generator", "self_name", "kind",
                 "model", "lazy", "anchor")

    def __init__(self, node, outer_scope: Scope, cls: Optional[ClassInfo], model: "SemanticModel"):
        self.model = model  # the module the function is defined in
        self.node: cst.FunctionDef | cst.Lambda = node
        self.name = node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>"
        self.outer_scope = outer_scope
        self._scope: Optional[Scope] = None
        self.cls = cls  # the class when this is a method
        self._returns: list[cst.BaseExpression] = []
        self._is_generator = False
        # "method", "classmethod", "staticmethod" or "function"
        self.kind = "function"
        self.self_name: Optional[str] = None
        # The body is a cst.LazyBody: what is inside (its scope, returns, yields) is
        # known once SemanticModel.materialize has built it, which reading them does.
        self.lazy = False
        self.anchor = 0  # the walk's seq after the function's header: see Scope.order

    @property
    def scope(self) -> Optional[Scope]:
        if self.lazy:
            self.model.materialize(self)
        return self._scope

    @scope.setter
    def scope(self, scope: Optional[Scope]) -> None:
        self._scope = scope

    @property
    def returns(self) -> list[cst.BaseExpression]:
        if self.lazy:
            self.model.materialize(self)
        return self._returns

    @property
    def is_generator(self) -> bool:
        if self.lazy:
            self.model.materialize(self)
        return self._is_generator

    @is_generator.setter
    def is_generator(self, value: bool) -> None:
        self._is_generator = value

    def positional_params(self) -> list[cst.Param]:
        params = self.node.params
        return list(params.posonly_params) + list(params.params)


class _PendingStore:
    """What a Name in a store position will be bound to once the walk reaches it."""

    __slots__ = ("kind", "value", "path", "iterates", "annotation")

    def __init__(self, kind, value, path, iterates, annotation):
        self.kind = kind
        self.value = value
        self.path = path
        self.iterates = iterates
        self.annotation = annotation


# Attribute names whose use is recorded as evidence about the object they are used on.
# Uses that only a tensor has: each is tensor-only in torch_facts (not `requires_grad_`,
# which nn.Module has too), and chosen from its 500-odd tensor-only names for being torch's
# own words (`size`, `log`, `name`, `clone` are tensor-only too, but a class of the user's
# may well have them): `x.backward()`, `x.new(..)` in an autograd Function, `x.resize_(..)`.
TENSOR_USE_ATTRIBUTES = frozenset({
    "backward", "retain_grad", "register_hook", "grad_fn", "is_leaf", "detach_", "grad", "requires_grad",
    "new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "resize_", "resize_as_",
    "masked_fill_", "index_select", "unsqueeze", "numel", "data_ptr", "element_size", "pin_memory", "topk",
    "is_contiguous", "type_as", "expand_as", "view_as",
})
# Uses that only a torch.nn module has.
MODULE_USE_ATTRIBUTES = frozenset({
    "parameters", "named_parameters", "modules", "named_modules", "children", "named_children",
    "register_buffer", "register_parameter", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook",
})
# The `name.attribute` uses each scope records, for evidence from how a name is used
# (`requires_grad_`: not of a kind, but that a tensor's grad is switched on from there).
EVIDENCE_ATTRIBUTES = TENSOR_USE_ATTRIBUTES | MODULE_USE_ATTRIBUTES | {"item", "size", "view", "data", "requires_grad_"}


# What a hook receives: a gradient (tensor hooks), or (module, grad_input, grad_output)
# (backward hooks), or the module and its inputs (forward hooks).
_HOOK_KINDS = {"register_hook": "tensor", "register_full_backward_hook": "backward",
               "register_backward_hook": "backward", "register_forward_hook": "forward",
               "register_forward_pre_hook": "forward"}


class SemanticModel:
    """Everything the inference needs to know about one module's names."""

    def __init__(self, module: cst.Module, module_name: str = "", is_package: bool = False):
        self.module = module
        # The dotted import name of this file (e.g. "allennlp.nn.util"), when known, so that
        # relative imports resolve to absolute names.
        self.module_name = module_name
        self.is_package = is_package
        self.analysis = None  # the ModuleAnalysis of this module, set by it
        # id(Name) -> (scope, seq) for every Name that is read
        self.references: dict[int, tuple[Scope, int]] = {}
        # id(Name) -> what `resolve` found: the analyses ask the same reads again and again
        # (emptied when a lazy body is built, which may bind names of the enclosing scopes).
        self._resolved: dict[int, list[Binding]] = {}
        self.classes: dict[int, ClassInfo] = {}
        self.functions: dict[int, FunctionInfo] = {}
        self.star_imports: list[tuple[str, int, cst.ImportFrom]] = []
        self.unwalked_children: list[cst.CSTNode] = []  # linked to their parent all the same
        # Every node the build walked, in evaluation order (what `iter_nodes(module)` gives
        # when no body was left lazy): the analyses' shared list of nodes, without a second walk.
        self.walked_nodes: list[cst.CSTNode] = []
        self.imports_torch = False
        # Names passed to `<something>.apply(fn)`: fn receives modules.
        self.applied_names: list[cst.Name] = []
        self._applied_functions: Optional[set[int]] = None
        # `x.register_hook(fn)`, `m.register_full_backward_hook(fn)`...: (which hook, the call).
        self.hook_calls: list[tuple[str, cst.Call]] = []
        self._hooks: Optional[dict[int, list[tuple[str, cst.Call]]]] = None
        self._flow_ancestors: dict[int, frozenset[int]] = {}  # see _ancestor_ids
        self.module_scope = Scope(ScopeKind.MODULE, module, None)
        self.scopes: list[Scope] = [self.module_scope]
        # Functions whose bodies the parse left lazy (cst.LazyBody), in source order.
        self.lazy_functions: list[FunctionInfo] = []
        self._mentioned: set[str] = set()  # names whose lazy mentions are built
        self._lazy_starts: Optional[list[int]] = None  # where each lazy function's text starts
        self._used_after_memo: dict[tuple[int, int], bool] = {}  # see bound_when_run
        self._last_seq = _Builder(self).build()
        if self.lazy_functions:  # bodies built later are walked apart: the list is not whole
            self.walked_nodes = []

    # --- queries -----------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return node.parent

    # --- lazy function bodies -------------------------------------------------------

    def materialize(self, function: FunctionInfo) -> None:
        """Build the body of a function the parse left lazy, with its scopes, bindings
        and reads, as the first walk would have."""
        if not function.lazy:
            return
        function.lazy = False
        self._resolved.clear()
        self.lazy_functions.remove(function)
        self._lazy_starts = None
        if function.cls is not None:
            function.cls.lazy_methods.remove(function)
            function.cls._unsorted = True
        node = function.node
        cst.build_lazy_body(self.module, node)
        builder = _Builder(self)
        builder.scope = function.outer_scope
        builder.seq = self._last_seq
        builder.anchor = function.anchor
        function.scope = builder._open_scope(ScopeKind.FUNCTION, node, node.body)
        function.scope.function = function
        node.body.parent = node
        known = len(self.scopes)
        walk(node.body, builder._enter, builder._leave, link_parents=True)
        self._last_seq = builder.seq
        # Move the new scopes to where the first walk would have put them.
        added = self.scopes[known:]
        del self.scopes[known:]
        at = bisect.bisect_left(self.scopes, added[0].order, key=lambda scope: scope.order)
        self.scopes[at:at] = added

    def materialize_all(self) -> None:
        """Build every body the parse left lazy: for a walk of the whole module."""
        for function in list(self.lazy_functions):
            self.materialize(function)

    def materialize_methods(self, cls: ClassInfo) -> None:
        """Build the bodies of the methods of ``cls`` the parse left lazy."""
        for method in list(cls.lazy_methods):
            self.materialize(method)

    def scopes_mentioning(self, name: str) -> list[Scope]:
        """Every scope in walk order, once the lazy functions whose text mentions
        ``name`` are built: what a search for reads of ``name`` must look through."""
        if self.lazy_functions and name not in self._mentioned:
            self._mentioned.add(name)
            for function in self._lazy_mentioning(name):
                self.materialize(function)
        return self.scopes

    def _lazy_mentioning(self, name: str) -> list[FunctionInfo]:
        """The lazy functions whose text holds ``name`` as a whole word.  The search jumps
        past a function once it is known to mention the name, so a common name (``self``)
        costs one search per function, not a step per occurrence: the query runs for
        hundreds of names per module, and a step per occurrence made it quadratic."""
        code = self.module.code
        if self._lazy_starts is None:
            self._lazy_starts = [_first_offset(function.node) for function in self.lazy_functions]
        word = TextPattern(rf"\b{re.escape(name)}\b")  # `str.find` for the name, then `\b` checked
        mentioning: list[FunctionInfo] = []
        found = word.search(code)
        while found is not None:
            offset = found.start()
            index = bisect.bisect_right(self._lazy_starts, offset) - 1
            function = self.lazy_functions[index] if index >= 0 else None
            if function is not None and offset < function.node.end:
                mentioning.append(function)
                found = word.search(code, function.node.end)
            else:
                found = word.search(code, found.end())
        return mentioning

    def scope_of(self, name: cst.Name) -> Optional[Scope]:
        ref = self.references.get(id(name))
        return ref[0] if ref else None

    def resolve(self, name: cst.Name) -> list[Binding]:
        """The bindings a read of ``name`` may see (empty for builtins and unknowns)."""
        found = self._resolved.get(id(name))
        if found is not None:
            return found
        ref = self.references.get(id(name))
        if ref is None:
            return []
        scope, seq = ref
        found = self._resolved[id(name)] = self.lookup(name.value, scope, seq, name)
        return found

    def assigned_values(self, name: cst.Name) -> Optional[tuple[cst.BaseExpression, ...]]:
        """The values of the plain assignments (``name = value``) that may bind this read of
        ``name``; None when one of its bindings is anything else (a parameter, an import, a
        loop target, an unpacking)."""
        bindings = self.resolve(name)
        if not bindings or any(b.kind is not BindingKind.ASSIGN or b.value is None or b.path or b.iterates
                               for b in bindings):
            return None
        return tuple(b.value for b in bindings)

    def reads_since_binding(self, name: cst.Name) -> list[cst.Name]:
        """The reads of ``name``, in its scope, after its one binding and before this read;
        empty when more than one binding reaches here."""
        bindings = self.resolve(name)
        reference = self.references.get(id(name))
        if len(bindings) != 1 or reference is None:
            return []
        scope, seq = reference
        return [load for load_seq, load in scope.loads.get(name.value, ()) if bindings[0].seq < load_seq < seq]

    def lookup(self, name: str, scope: Scope, seq: int, use: Optional[cst.CSTNode] = None) -> list[Binding]:
        flow_sensitive = True
        current: Optional[Scope] = scope
        from_function = False
        while current is not None:
            if name in current.globals and current is not self.module_scope:
                current = self.module_scope
                flow_sensitive = False
                continue
            if name in current.nonlocals and current.parent is not None:
                current = current.parent
                flow_sensitive = False
                continue
            if from_function and current.kind is ScopeKind.CLASS:
                # Functions (and comprehensions) do not see names bound in a class body.
                current = current.parent
                continue
            bindings = current.bindings.get(name)
            if bindings:
                if flow_sensitive:
                    reaching = self._reaching([b for b in bindings if b.seq < seq], use)
                    if reaching:
                        return reaching
                return bindings
            if current.kind is not ScopeKind.COMPREHENSION:
                # An enclosing scope's bindings may come after this one's code runs.
                flow_sensitive = False
            if current.kind is not ScopeKind.CLASS:
                from_function = True
            current = current.parent
        return []

    def _reaching(self, prior: list[Binding], use: Optional[cst.CSTNode]) -> list[Binding]:
        """The bindings before a use that may reach it: the latest one, and the ones before
        it as long as the later ones sit in a branch or loop the use is not part of
        (``x = []`` then ``if ordered: x = torch.cat(x)``: after the ``if`` it is either)."""
        if not prior:
            return []
        use_ancestors = self._ancestor_ids(use) if use is not None else set()
        reaching = []
        for binding in reversed(prior):
            if use is not None and self._exclusive(binding.node, use, use_ancestors):
                continue
            reaching.append(binding)
            if use is None or binding.kind is BindingKind.AUGASSIGN:
                break  # `total += t` already folds in the value it updates
            if not self._conditional(binding.node, use_ancestors):
                break
        return reaching

    def exclusive(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """``node`` and ``other`` are in different arms of one ``if``: one never runs after the other."""
        return self._exclusive(node, other, self._ancestor_ids(other))

    def _exclusive(self, node: cst.CSTNode, use: cst.CSTNode, use_ancestors: set[int]) -> bool:
        """``node`` is in one arm of an ``if`` and ``use`` in the other: it cannot reach it."""
        child = node
        parent = node.parent
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            if isinstance(parent, cst.If) and id(parent) in use_ancestors:
                arm = parent.body if child is parent.body else parent.orelse if child is parent.orelse else None
                return arm is not None and id(arm) not in use_ancestors and arm is not use
            child = parent
            parent = parent.parent
        return False

    def bound_when_run(self, name: cst.Name) -> list[Binding]:
        """The bindings a read of ``name`` sees when its code runs: for a read in a function of
        a module-level name bound several times (`y = []` .. `y = np.array(y)`), the last
        binding, where it is an unconditional module-level statement and every use of the
        top-level function or class holding the read comes after it (so no call can run
        before it); else what ``resolve`` gives."""
        bindings = self.resolve(name)
        if len(bindings) < 2 or any(binding.scope is not self.module_scope for binding in bindings):
            return bindings
        if any(_top_level_definition(binding.node, body=False) is not None for binding in bindings):
            return bindings  # `global y` in a function: bound when that function runs
        last = max(bindings, key=lambda binding: binding.node.start)
        if _in_flow(last.node):
            return bindings
        holder = _top_level_definition(name)
        if holder is None or not self._used_after(holder, last.node.start, 0):
            return bindings
        return [last]

    def _used_after(self, definition: cst.CSTNode, start: int, depth: int) -> bool:
        """Every read of the top-level function or class ``definition``'s name comes after
        the offset ``start``: at module level, or in another top-level definition whose own reads do."""
        key = (id(definition), start)
        if key not in self._used_after_memo:
            self._used_after_memo[key] = False  # a cycle of definitions: not shown
            self._used_after_memo[key] = self._find_used_after(definition, start, depth)
        return self._used_after_memo[key]

    def _find_used_after(self, definition: cst.CSTNode, start: int, depth: int) -> bool:
        name = definition.name.value  # type: ignore[attr-defined]
        reads = 0
        for scope in self.scopes_mentioning(name):
            for _, load in scope.loads.get(name, ()):
                if not any(binding.node is definition for binding in self.resolve(load)):
                    continue  # another thing of that name
                reads += 1
                if scope is self.module_scope:
                    if load.start < start:
                        return False
                    continue
                outer = _top_level_definition(load)
                if outer is definition:
                    continue  # `super(Net, self)`, a recursion: runs once it is used from outside
                if outer is None or depth >= 2 or not self._used_after(outer, start, depth + 1):
                    return False
        return reads > 0

    def _conditional(self, node: cst.CSTNode, use_ancestors: set[int]) -> bool:
        parent = node.parent
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            if isinstance(parent, _BRANCHES) and id(parent) not in use_ancestors:
                return True
            parent = parent.parent
        return False

    def _ancestor_ids(self, node: cst.CSTNode) -> frozenset[int]:
        """The ids of ``node``'s ancestors that the flow questions ask about (statements,
        suites, branches, conditional expressions).  Remembered for every node on the way
        up, so that the names of one deep expression cost one walk, not one walk each."""
        if node.parent is None:
            return frozenset()
        memo = self._flow_ancestors
        path = []
        current = node.parent
        found = frozenset()
        while current is not None:
            key = id(current)
            if key in memo:
                found = memo[key]
                break
            path.append((key, current))
            current = current.parent
        flow_classes = _FLOW_CLASSES
        for key, ancestor in reversed(path):
            if type(ancestor) in flow_classes:
                found = found | {key}
            memo[key] = found
        return found

    def star_import_source(self, name: str) -> Optional[str]:
        """The module a star import would have brought ``name`` from, if any."""
        found = self.star_import_of(name)
        return found[0] if found else None

    def star_import_of(self, name: str) -> Optional[tuple[str, int, cst.ImportFrom]]:
        """The ``from <module> import *`` that would have brought ``name``, if any."""
        from torchlint.analysis import torch_api

        for entry in reversed(self.star_imports):
            if name in torch_api.star_exports(entry[0]):
                return entry
        return None

    def later_bindings(self, binding: Binding) -> Optional[Binding]:
        """The next binding of the same name in the same scope, if any."""
        bindings = binding.scope.bindings.get(binding.name, [])
        for other in bindings:
            if other.seq > binding.seq:
                return other
        return None

    def uses_of(self, binding: Binding) -> list[tuple[int, str, cst.Attribute]]:
        """``name.attr`` uses in the binding's scope that read this binding."""
        uses = binding.scope.attribute_uses.get(binding.name, ())
        nxt = self.later_bindings(binding)
        end = nxt.seq if nxt is not None else None
        return [u for u in uses if u[0] > binding.seq and (end is None or u[0] < end)]

    def prior_binding(self, binding: Binding) -> Optional[Binding]:
        previous = None
        for other in binding.scope.bindings.get(binding.name, []):
            if other is binding:
                return previous
            previous = other
        return previous

    def hooks_of(self, function: FunctionInfo) -> list[tuple[str, cst.Call]]:
        """The hook registrations that pass ``function`` (by name, or as a lambda):
        ("tensor" | "backward" | "forward", the registering call)."""
        if self._hooks is None:
            self._hooks = {}
            for kind, call in self.hook_calls:
                registered = call.args[0].value
                nodes = [registered] if isinstance(registered, cst.Lambda) else [
                    binding.definition.node for binding in self.resolve(registered)
                    if binding.kind is BindingKind.FUNCTION and binding.definition is not None
                ] if isinstance(registered, cst.Name) else []
                for node in nodes:
                    self._hooks.setdefault(id(node), []).append((kind, call))
        return self._hooks.get(id(function.node), [])

    def is_applied_function(self, function: FunctionInfo) -> bool:
        """True when the function is passed to ``x.apply(fn)`` (so it receives modules)."""
        if self._applied_functions is None:
            self._applied_functions = set()
            for name in self.applied_names:
                for binding in self.resolve(name):
                    if binding.kind is BindingKind.FUNCTION and binding.definition is not None:
                        self._applied_functions.add(id(binding.definition.node))
        return id(function.node) in self._applied_functions


class _Builder:
    """Walks the module once and fills a SemanticModel."""

    def __init__(self, model: SemanticModel):
        self.model = model
        self.scope = model.module_scope
        self.seq = 0
        self.pending: dict[int, _PendingStore] = {}
        # id(node) -> scope to enter when the walk reaches that node
        self.scope_entries: dict[int, Scope] = {}
        # id(FunctionDef) -> its FunctionInfo, for a lazy function whose header is walked
        self.lazy_headers: dict[int, FunctionInfo] = {}
        self.anchor: Optional[int] = None  # in a lazy body: the function's anchor
        self.walked: list[cst.CSTNode] = []
        # Whether each node left gets its span in `walked` (`walk.iter_nodes` reads it): only
        # in the first walk, where `seq` counts the list, and while no body is left lazy (a
        # body built later is not in the list).
        self.spans = False

    def build(self) -> int:
        """Walk the module; the last seq given."""
        self.walked = self.model.walked_nodes
        self.spans = True
        walk(self.model.module, self._enter, self._leave, link_parents=True)
        return self.seq

    # --- walk callbacks ----------------------------------------------------------

    def _enter(self, node: cst.CSTNode, parent) -> None:
        self.walked.append(node)  # the shared list of nodes (ModuleAnalysis.nodes_of)
        node.span = self.seq  # where it is in that list; `_leave` says where its subtree ends
        node.walked_in = None  # a slice of an earlier walk's list no longer (a tree walked again)
        self.seq += 1
        entry = self.scope_entries.pop(id(node), None) if self.scope_entries else None
        if entry is not None:
            self._push(entry, node)
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)

    def _leave(self, node: cst.CSTNode) -> None:
        if self.spans and not self.model.lazy_functions:
            node.span_end = self.seq
            node.walked_in = self.walked
        while self.scope.exit_node is node:
            self.scope = self.scope.parent  # type: ignore[assignment]
        if self.lazy_headers:
            function = self.lazy_headers.pop(id(node), None)
            if function is not None:
                function.anchor = self.seq

    def _push(self, scope: Scope, entry_node: cst.CSTNode) -> None:
        scope.order = (self.seq,) if self.anchor is None else (self.anchor, self.seq)
        self.model.scopes.append(scope)
        scope.parent = self.scope
        self.scope = scope
        function = scope.function
        if function is not None and scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
            self._bind_parameters(function)

    # --- bindings ----------------------------------------------------------------

    def _bind(self, name: str, kind: BindingKind, node: cst.CSTNode, scope: Optional[Scope] = None) -> Binding:
        scope = scope or self.scope
        binding = Binding(name, kind, scope, self.seq, node)
        scope.bindings.setdefault(name, []).append(binding)
        return binding

    def _mark_targets(self, target, kind, value, path=(), iterates=False, annotation=None):
        if isinstance(target, cst.Name):
            self.pending[id(target)] = _PendingStore(kind, value, path, iterates, annotation)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for index, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):
                    self._mark_targets(element.value, kind, value, path + (None,), iterates)
                else:
                    self._mark_targets(element.value, kind, value, path + (index,), iterates)
        elif isinstance(target, cst.StarredElement):
            self._mark_targets(target.value, kind, value, path + (None,), iterates)
        elif isinstance(target, cst.Attribute) and not iterates:
            self._record_attribute_assignment(target.value, target.attr.value, value, path, annotation, target)

    def _record_attribute_assignment(self, owner, attribute: str, value, path, annotation, node) -> None:
        """``self.x = value`` inside a method (or a function nested in one)."""
        if not isinstance(owner, cst.Name):
            return
        scope = self.scope
        while scope is not None and scope.kind is not ScopeKind.MODULE:
            function = scope.function
            if function is not None and function.cls is not None and function.self_name:
                if owner.value == function.self_name:
                    function.cls.attributes.setdefault(attribute, []).append(
                        AttributeAssignment(value, path, annotation, node, function)
                    )
                return
            scope = scope.parent

    def _name(self, node: cst.Name) -> None:
        pending = self.pending.pop(id(node), None) if self.pending else None
        if pending is None or pending.kind is BindingKind.AUGASSIGN:
            self.model.references[id(node)] = (self.scope, self.seq)
            self.scope.loads.setdefault(node.value, []).append((self.seq, node))
            if pending is None:
                return
        scope = self.scope
        if pending.kind is BindingKind.ASSIGN and pending.value is not None and self._in_walrus(node):
            # PEP 572: `(y := v)` in a comprehension binds in the enclosing function.
            while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
                scope = scope.parent
        if node.value in scope.globals:
            scope = self.model.module_scope
        elif node.value in scope.nonlocals and scope.parent is not None:
            scope = scope.parent
        binding = self._bind(node.value, pending.kind, node, scope)
        binding.value = pending.value
        binding.path = pending.path
        binding.iterates = pending.iterates
        binding.annotation = pending.annotation

    def _in_walrus(self, node: cst.Name) -> bool:
        parent = node.parent
        return isinstance(parent, cst.NamedExpr)

    def _bind_parameters(self, function: FunctionInfo) -> None:
        params = function.node.params
        ordered = list(params.posonly_params) + list(params.params)
        for index, param in enumerate(ordered):
            binding = self._bind(param.name.value, BindingKind.PARAM, param)
            binding.annotation = param.annotation.annotation if param.annotation else None
            binding.param_index = index
            binding.definition = function
        extras = list(params.kwonly_params)
        if isinstance(params.star_arg, cst.Param):
            extras.append(params.star_arg)
        if params.star_kwarg is not None:
            extras.append(params.star_kwarg)
        for param in extras:
            binding = self._bind(param.name.value, BindingKind.PARAM, param)
            binding.definition = function
            if param is params.star_arg or param is params.star_kwarg:
                binding.path = (None,)  # *args / **kwargs: a container, not the value
            elif param.annotation is not None:
                binding.annotation = param.annotation.annotation

    # --- statements and expressions ----------------------------------------------

    def _assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._mark_targets(target.target, BindingKind.ASSIGN, node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self._mark_targets(node.target, BindingKind.ASSIGN, node.value, annotation=node.annotation.annotation)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.pending[id(node.target)] = _PendingStore(BindingKind.AUGASSIGN, node.value, (), False, None)

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self._mark_targets(node.target, BindingKind.ASSIGN, node.value)

    def _for(self, node: cst.For) -> None:
        self._mark_targets(node.target, BindingKind.FOR, node.iter, iterates=True)

    def _comp_for(self, node: cst.CompFor) -> None:
        self._mark_targets(node.target, BindingKind.FOR, node.iter, iterates=True)

    def _comprehension(self, node) -> None:
        # The first iterable is evaluated outside; the scope starts at its target.
        scope = Scope(ScopeKind.COMPREHENSION, node, None)
        scope.exit_node = node
        self.scope_entries[id(node.for_in.target)] = scope

    def _with(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._mark_targets(item.asname.name, BindingKind.WITH, item.item)

    def _except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._mark_targets(node.name.name, BindingKind.EXCEPT, node.type)

    def _delete(self, node: cst.Del) -> None:
        # `del x` unbinds `x`; it does not read it.
        if isinstance(node.target, (cst.Name, cst.Tuple, cst.List)):
            self._mark_targets(node.target, BindingKind.OTHER, None)

    def _match_capture(self, node) -> None:
        if node.name is not None:
            self._mark_targets(node.name, BindingKind.OTHER, None)

    def _type_alias(self, node: cst.TypeAlias) -> None:
        self._bind(node.name.value, BindingKind.OTHER, node)

    def _function_def(self, node: cst.FunctionDef) -> None:
        outer = self.scope
        cls = outer.class_info if outer.kind is ScopeKind.CLASS else None
        function = FunctionInfo(node, outer, cls, self.model)
        self._link(node.name, node)
        decorators = {_decorator_name(d.decorator) for d in node.decorators}
        if cls is not None:
            if "staticmethod" in decorators:
                function.kind = "staticmethod"
            elif "classmethod" in decorators:
                function.kind = "classmethod"
            elif "property" in decorators:
                function.kind = "property"
            else:
                function.kind = "method"
            params = function.positional_params()
            if function.kind != "staticmethod" and params:
                function.self_name = params[0].name.value
            cls.methods.setdefault(node.name.value, function)
        self.model.functions[id(node)] = function
        binding = self._bind(node.name.value, BindingKind.FUNCTION, node)
        binding.definition = function
        if isinstance(node.body, cst.LazyBody):
            function.lazy = True
            self.model.lazy_functions.append(function)
            if cls is not None:
                cls.lazy_methods.append(function)
            self.lazy_headers[id(node)] = function
            return
        function.scope = self._open_scope(ScopeKind.FUNCTION, node, node.body)
        function.scope.function = function

    def _lambda(self, node: cst.Lambda) -> None:
        function = FunctionInfo(node, self.scope, None, self.model)
        function.returns.append(node.body)
        self.model.functions[id(node)] = function
        function.scope = self._open_scope(ScopeKind.LAMBDA, node, node.body)
        function.scope.function = function

    def _class_def(self, node: cst.ClassDef) -> None:
        info = ClassInfo(node, self.scope, self.model)
        self.model.classes[id(node)] = info
        self._link(node.name, node)
        binding = self._bind(node.name.value, BindingKind.CLASS, node)
        binding.definition = info
        info.scope = self._open_scope(ScopeKind.CLASS, node, node.body)
        info.scope.class_info = info

    def _open_scope(self, kind: ScopeKind, node: cst.CSTNode, body: cst.CSTNode) -> Scope:
        """A scope for ``node`` that starts when the walk reaches ``body`` and ends after it."""
        scope = Scope(kind, node, None)
        scope.exit_node = body
        self.scope_entries[id(body)] = scope
        return scope

    def _current_function(self) -> Optional[FunctionInfo]:
        scope = self.scope
        while scope is not None:
            if scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return scope.function
            if scope.kind in (ScopeKind.CLASS, ScopeKind.MODULE):
                return None
            scope = scope.parent
        return None

    def _return(self, node: cst.Return) -> None:
        function = self._current_function()
        if function is not None and node.value is not None:
            function.returns.append(node.value)

    def _yield(self, node: cst.Yield) -> None:
        function = self._current_function()
        if function is not None:
            function.is_generator = True

    def _attribute(self, node: cst.Attribute) -> None:
        base = node.value
        if isinstance(base, cst.Name) and node.attr.value in EVIDENCE_ATTRIBUTES:
            self.scope.attribute_uses.setdefault(base.value, []).append(
                (self.seq, node.attr.value, node)
            )

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if not isinstance(func.value, cst.Name):
            self.scope.chained_calls.setdefault(method, []).append(node)
        if method == "apply" and node.args and isinstance(node.args[0].value, cst.Name):
            self.model.applied_names.append(node.args[0].value)
        elif method in _HOOK_KINDS and node.args and node.args[0].keyword is None:
            self.model.hook_calls.append((_HOOK_KINDS[method], node))
        elif method in ("register_buffer", "register_parameter") and len(node.args) >= 2:
            name_arg = node.args[0].value
            if isinstance(name_arg, cst.SimpleString):
                name = name_arg.evaluated_value
                if isinstance(name, str):
                    self._record_attribute_assignment(func.value, name, node.args[1].value, (), None, node)

    def _link(self, child: cst.CSTNode, node: cst.CSTNode) -> None:
        """Link a child the walk does not enter (an import's alias, a definition's name),
        which a finding's evidence may show, to its node."""
        child.parent = node
        self.model.unwalked_children.append(child)

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._link(alias, node)
            module = dotted(alias.name)
            if module.split(".")[0] == "torch":
                self.model.imports_torch = True
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                binding = self._bind(alias.asname.name.value, BindingKind.IMPORT, alias)
                binding.qualname = module
            else:
                top = module.split(".")[0]
                binding = self._bind(top, BindingKind.IMPORT, alias)
                binding.qualname = top

    def _import_from(self, node: cst.ImportFrom) -> None:
        module = dotted(node.module) if node.module is not None else ""
        prefix = "." * len(node.relative)
        full_module = self._absolute(len(node.relative), module) if prefix else module
        if module.split(".")[0] == "torch" and not prefix:
            self.model.imports_torch = True
        if isinstance(node.names, cst.ImportStar):
            if not full_module.startswith("."):
                self.model.star_imports.append((full_module, self.seq, node))
            return
        for alias in node.names:
            self._link(alias, node)
            imported = dotted(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            binding = self._bind(local, BindingKind.IMPORT, alias)
            binding.qualname = f"{full_module}.{imported}" if full_module else imported

    def _absolute(self, level: int, module: str) -> str:
        """``from ..a import b`` in ``pkg.sub.mod`` imports from ``pkg.a``; unresolvable
        relative imports keep their leading dots."""
        name = self.model.module_name
        if not name:
            return "." * level + module
        parts = name.split(".")
        package = parts if self.model.is_package else parts[:-1]
        if level - 1 > len(package) or (level - 1 == len(package) and not module):
            return "." * level + module
        base = package[: len(package) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    def _global(self, node: cst.Global) -> None:
        self.scope.globals.update(item.name.value for item in node.names)

    def _nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.nonlocals.update(item.name.value for item in node.names)


# What the walk records at each node class (plain functions: a table of bound methods
# on each builder would make it a reference cycle, left for the cycle collector).
_HANDLERS = {
    cst.Name: _Builder._name,
    cst.Attribute: _Builder._attribute,
    cst.Call: _Builder._call,
    cst.Assign: _Builder._assign,
    cst.AnnAssign: _Builder._ann_assign,
    cst.AugAssign: _Builder._aug_assign,
    cst.NamedExpr: _Builder._named_expr,
    cst.For: _Builder._for,
    cst.CompFor: _Builder._comp_for,
    cst.ListComp: _Builder._comprehension,
    cst.SetComp: _Builder._comprehension,
    cst.GeneratorExp: _Builder._comprehension,
    cst.DictComp: _Builder._comprehension,
    cst.With: _Builder._with,
    cst.ExceptHandler: _Builder._except,
    cst.FunctionDef: _Builder._function_def,
    cst.Lambda: _Builder._lambda,
    cst.ClassDef: _Builder._class_def,
    cst.Return: _Builder._return,
    cst.Yield: _Builder._yield,
    cst.Import: _Builder._import,
    cst.ImportFrom: _Builder._import_from,
    cst.Global: _Builder._global,
    cst.Nonlocal: _Builder._nonlocal,
    cst.Del: _Builder._delete,
    cst.MatchAs: _Builder._match_capture,
    cst.MatchStar: _Builder._match_capture,
    cst.TypeAlias: _Builder._type_alias,
}


def _top_level_definition(node: cst.CSTNode, body: bool = True) -> Optional[cst.CSTNode]:
    """The function or class definition at module level that holds ``node``, if any; with
    ``body``, only where ``node`` is in the body of a function (or lambda) in it, so that it
    runs when that is called, not as the definition runs (a default value, a class body)."""
    found = None
    in_body = False
    child, current = node, node.parent
    while current is not None and not isinstance(current, cst.Module):
        if isinstance(current, (cst.FunctionDef, cst.Lambda)) and child is current.body:
            in_body = True
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            found = current
        child, current = current, current.parent
    if found is None or not isinstance(found.parent, cst.Module) or body and not in_body:
        return None
    return found


def _in_flow(node: cst.CSTNode) -> bool:
    """``node`` sits in a branch, loop or ``try`` of its code (or in a function or class)."""
    current = node.parent
    while current is not None and not isinstance(current, cst.Module):
        if isinstance(current, (*_BRANCHES, cst.With, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return True
        current = current.parent
    return False


def _first_offset(node: cst.FunctionDef) -> int:
    """Where a function's text starts: at its first decorator."""
    return node.decorators[0].start if node.decorators else node.start


def _decorator_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return ""


def instance_attribute_assignments(model: "SemanticModel", node: cst.Attribute) -> Optional[list]:
    """For ``self.<attribute>`` read in a method: every plain ``self.<attribute> = ..`` of the
    class (``Binding``-like assignments with ``value`` and ``annotation``); None when ``self``
    is not the method's instance, or the class body also binds the name to something other
    than None (a method, a property, a class attribute), or an assignment unpacks a tuple."""
    if not isinstance(node.value, cst.Name):
        return None
    bindings = model.resolve(node.value)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or bindings[0].param_index != 0:
        return None
    function = bindings[0].definition
    cls = getattr(function, "cls", None)
    if cls is None or getattr(function, "kind", None) != "method":
        return None
    attribute = node.attr.value
    if cls.scope is not None and any(
            binding.kind is not BindingKind.ASSIGN or not (isinstance(binding.value, cst.Name)
                                                          and binding.value.value == "None")
            for binding in cls.scope.bindings.get(attribute, ())):
        return None
    assignments = cls.assignments(attribute)
    if any(assignment.path for assignment in assignments):
        return None
    return assignments
