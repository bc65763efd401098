"""TL418 module-list: layers kept in a plain list or dict of an ``nn.Module``, never registered."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, UnregisteredLayers, Verdict, cst, edits,
)


class ModuleList(Rule):
    code = "TL418"
    name = "module-list"
    summary = ("layers kept in a plain `list`/`dict` of an `nn.Module`: not registered, so not trained, moved or "
               "saved")
    message = (
        "`{target}` keeps layers (`{layer}`) in a plain {container}: `nn.Module` does not register them, so their "
        "parameters are missing from `parameters()` (the optimizer never updates them), `.to(device)` does not "
        "move them and `state_dict()` does not save them; use `{replacement}`"
    )
    fix = Applicability.UNSAFE
    requires = (r"\bself\.\w+\s*=\s*[\[{(]|\bappend\s*\(", r"\bnn\b|torch")
    references = (
        ("torch.nn.ModuleList", "https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html"),
        ("torch.nn.ModuleDict", "https://pytorch.org/docs/stable/generated/torch.nn.ModuleDict.html"),
    )
    docs = """
    ## What it does
    Flags an attribute of an `nn.Module` subclass that holds layers built in the class
    in a plain Python container: `self.layers = [nn.Linear(..) for _ in range(n)]`, a
    list literal or tuple of layers, `self.heads = {}` filled by key, `self.blocks = []`
    then `self.blocks.append(Block(..))` (also through a local list assigned at the end,
    and lists of lists). Layers that are references to registered ones
    (`[self.conv1, self.conv2]`) are not flagged, nor a class that registers by hand
    (`add_module`, `register_module`, `setattr`, `register_parameter` of their
    parameters) or turns the attribute into an
    `nn.ModuleList` later.

    ## Why is this bad?
    `nn.Module` finds its submodules through attribute assignment of modules and of
    its containers (`nn.ModuleList`, `nn.ModuleDict`, `nn.Sequential`); a Python list is
    none of those. The layers in it run in `forward`, but `model.parameters()` leaves
    their weights out: the optimizer never trains them (the loss still falls through the
    other layers, so nothing looks wrong), `model.to(device)` leaves them on the CPU
    (a device error at the first batch), `model.eval()` does not reach them, and
    `state_dict()` saves the model without them.

    ## What to do instead
    `nn.ModuleList([...])` for a list, `nn.ModuleDict({...})` for a dict keyed by strings.

    ## Fix (unsafe)
    Wraps a list literal, comprehension or tuple in `nn.ModuleList(..)` (an empty one
    becomes `nn.ModuleList()`, whose `append` works the same). Unsafe: the parameters
    now train, move and save, which is the point, but a checkpoint saved before has none
    of their keys and a `load_state_dict(strict=True)` of it fails. A dict, a list of
    lists and a local list get the advice only.
    """
    bad = (
        Bad(
            """
            import torch
            from torch import nn

            class MLP(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]

                def forward(self, x):
                    for layer in self.layers:
                        x = torch.relu(layer(x))
                    return x
            """,
            reported=((7, "self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            class MLP(nn.Module):
                def __init__(self, sizes):
                    super().__init__()
                    self.layers = torch.nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

                def forward(self, x):
                    for layer in self.layers:
                        x = torch.relu(layer(x))
                    return x
            """,
        ),
    )
    good = (
        """
        import torch
        from torch import nn

        class MLP(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
                self.first, self.last = nn.Linear(3, 3), nn.Linear(3, 3)
                self.ends = [self.first, self.last]  # references to registered layers
                self.sizes = [a for a in sizes]

            def forward(self, x):
                for layer in self.layers:
                    x = torch.relu(layer(x))
                return self.last(self.first(x))
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in self.ctx.autograd.unregistered_layers():
            fix, replacement = self._fix(found)
            related = ((found.layer, "a layer is built into it here"),) if found.layer is not found.assignment.value \
                else ()
            self.report(found.assignment, target=found.target, layer=found.layer, container=found.container,
                        replacement=replacement, related=related, fix=fix)

    def _fix(self, found: UnregisteredLayers) -> tuple[Optional[Fix], str]:
        value = found.assignment.value
        advice = "nn.ModuleDict({...})" if found.container == "dict" else "nn.ModuleList([...])"
        if isinstance(value, cst.List) and not value.elements:  # filled by `append` later
            if self._appends_lists(found):
                return None, advice
            text = "{torch}.nn.ModuleList()"
        elif isinstance(value, (cst.List, cst.ListComp, cst.Tuple)) and not any(
                isinstance(element.value, (cst.List, cst.Tuple)) for element in getattr(value, "elements", ())):
            code = self.ctx.code(value)
            text = "{torch}.nn.ModuleList(" + (code if code.startswith(("[", "(")) else f"[{code}]") + ")"
        else:
            return None, advice
        torch, imports = edits.torch_name(self.ctx)
        text = text.format(torch=torch)
        return Fix(Applicability.UNSAFE, f"Use `{torch}.nn.ModuleList`", (edits.replace(value, text), *imports)), \
            f"{torch}.nn.ModuleList(..)"

    def _appends_lists(self, found: UnregisteredLayers) -> bool:
        """The layer found is inside a list appended as one item (`append([linear, act])`):
        `ModuleList.append` takes modules, not lists."""
        parent = found.layer.parent
        while parent is not None and not isinstance(parent, (cst.Call, cst.SimpleStatementLine)):
            if isinstance(parent, (cst.List, cst.Tuple)):
                return True
            parent = parent.parent
        return False

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        missing = run.first("unregistered")
        if missing is not None:
            return Verdict(CONFIRMED, f"`{missing['attribute']}` held {missing['layers']} layers with "
                                      f"{missing['parameters']} parameter tensors that the module's `parameters()` "
                                      f"does not list")
        raised = run.raised
        if raised is not None and "optimizer got an empty parameter list" in raised["message"]:
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "every layer the container held was registered with the module on this run")
