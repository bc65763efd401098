"""TL413 dtype-mismatch: a tensor whose dtype (shown from where it was made) an operation does not take."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, DtypeMismatch as Found, Fix, Kind, Observation, Rule, Verdict, cst, edits,
    keyword, torch_api,
)

# What torch 2.13 says when an operation gets a dtype it does not take.
_SIGNATURES = (
    "expected scalar type", "but expected Float", "can't be cast to the desired output type",
    "must have the same dtype", "should be the same", "does not match weight dtype",
    "mixed dtype", "to have the same dtype", "to have one of the following scalar types",
    "only applicable to index tensor", "expected target dtype to be",
)


class DtypeMismatch(Rule):
    code = "TL413"
    name = "dtype-mismatch"
    summary = ("a tensor of the wrong dtype for the operation it reaches (float64 from numpy into float32 layers "
               "or class weights, integer targets of a binary cross entropy, mixed matrix products): RuntimeError")
    message = "{lead}; it reaches {what}, which takes {needed}: RuntimeError at the first batch; {advice}"
    fix = Applicability.SAFE
    raised_where_used = True
    requires = (r"numpy|np\.|pandas|pd\.|dtype|torch\.(full|arange|tensor|as_tensor|from_numpy|randint)"
                r"|\.(double|long|float|half|bfloat16)\(|\.to\((float|int)\)|Tensor\(|state_dict\(",)
    references = (
        ("Tensor attributes: torch.dtype", "https://pytorch.org/docs/stable/tensor_attributes.html#torch-dtype"),
        ("torch.from_numpy", "https://pytorch.org/docs/stable/generated/torch.from_numpy.html"),
        ("torch.nn.BCELoss", "https://pytorch.org/docs/stable/generated/torch.nn.BCELoss.html"),
    )
    docs = """
    ## What it does
    Flags a tensor whose dtype the analysis can show, from the call that made it, when it
    reaches an operation that does not take that dtype:

    - float64 or integer input to a layer with float32 weights (`nn.Linear`, `nn.Conv*d`,
      `nn.RNN`/`LSTM`/`GRU`, the affine norms `nn.LayerNorm`/`nn.BatchNorm*d`/`nn.GroupNorm`,
      `nn.MultiheadAttention` and the transformer layers): a numpy array is float64 by default
      (`np.random.randn`, `rng.normal(..)` of `rng = np.random.default_rng()`, `np.loadtxt`,
      the true division of integer counts), and `torch.from_numpy`, `torch.tensor` and
      `torch.as_tensor` keep its dtype; also the input of a model class of the file (or of
      another module of the project, `from models import Net`) whose `forward` carries it to such a layer (through views, `torch.cat`, layers without weights,
      submodules of the file, and for float64 arithmetic with the module's float32 parameters:
      float64 wins), called as `model(x)` or `self.forward(x)`;
    - an initial hidden state of `nn.RNN`/`LSTM`/`GRU` (`(h0, c0)`) that is not float32;
    - floating index tensors of `scatter_`, `gather`, `index_select`, `index_add_` and the like
      (label masks read as floats);
    - a value with dimensions of another dtype written into a tensor through a tensor or list
      index (`scores[mask] = torch.from_numpy(rows)`: an index put copies without converting,
      "Index put requires the source and destination dtypes match"; a 0-dim value, a plain
      index or a slice converts);
    - float64 class weights of `nn.CrossEntropyLoss`/`nn.NLLLoss`/`F.cross_entropy`/`F.nll_loss`
      (also those scikit-learn's `compute_class_weight` returns: a float64 array);
    - an integer target of `nn.BCELoss`/`nn.BCEWithLogitsLoss` and their functions
      (`torch.full((n,), 1)` takes the dtype of its fill value: int64; `torch.randint` class ids),
      and a float64 target of `BCELoss`;
    - operands of different dtypes in the products that do not promote: `torch.mm`/`bmm`/
      `matmul`, `@`, the tensor methods `a.mm(b)`/`bmm`/`matmul`/`dot`/`mv`, `torch.einsum`,
      `torch.addmm`/`baddbmm`/`addbmm`/`addmv`/`dot`/`mv`; and the input and weight of
      `F.conv*d`/`F.linear` (one of them float32, such as an `nn.Parameter` of a float32
      tensor);
    - floating indices given to `nn.Embedding`/`nn.EmbeddingBag`/`F.embedding`/`F.one_hot`
      (token ids made with `torch.Tensor(..)`: float32), also to a model class of the file
      whose `forward` gives its input to such a layer first;
    - class indices made floating for `nn.CrossEntropyLoss`/`nn.NLLLoss` and their functions
      (`criterion(out, y.float())` with `y` shown to be int64, or one-dimensional integer
      labels made floating where they become a tensor: `torch.Tensor(labels)`,
      `torch.tensor(labels, dtype=torch.float32)`, `.astype(np.float32)` before
      `torch.from_numpy`, with `labels` drawn by `np.random.randint(0, k, n)` or written as a
      list of ints: a floating target must hold per-class probabilities, in the input's
      shape), any floating target of `nn.NLLLoss`/
      `F.nll_loss` (they take no probabilities), and class indices of an integer dtype other
      than int64 and uint8 (`labels.astype(np.int32)`, `y.int()`: "expected target dtype to
      be Long or Byte");
    - in-place float arithmetic (`v.mul_(decay)`, `add_`, `sub_`, `div_`) on every entry of a
      module's `state_dict()` (`for v in ema.state_dict().values()`, also through `zip` and
      `list(..)`) when the module builds a BatchNorm that tracks its statistics: its
      `num_batches_tracked` entry is int64 and cannot take the float result (not where the
      loop tests anything, such as `if v.is_floating_point():`);
    - in-place arithmetic into a tensor shown to be of an integer dtype with a floating operand
      (`gj.clamp_(0, gain[3] - 1)` of a float32 `gain`, `idx += 0.5`, `x += eta / n`): an
      in-place operation keeps the tensor's dtype, and the promoted floating result cannot be
      written back (an integer divided in place by an integer, `x /= 2`, is TL220's
      integer-true-division); a true division is floating whatever its
      operands, and so is arithmetic with a floating value (`acc[name] * (eta / n)` added to
      every `state_dict()` entry meets `num_batches_tracked`; a loop test that compares the key
      with a string naming another entry does not skip it);
    - a float32 input to a model converted as it is built (`Net().half()`,
      `nn.Sequential(..).double()`) or by a statement of its own before the call
      (`model.double()`), whose input meets a layer with weights first;
    - a float64 (or integer) tensor given to a function or method of the file that carries
      that parameter to a layer with float32 weights (`model.encode(torch.tensor(x))`), judged
      at each call: one call giving float64 raises whatever the others give;
    - an `nn.Sequential` the file calls that gives a layer taking indices (`nn.Embedding`)
      the floating output of the layer with weights before it.

    numpy promotes arrays as torch does not: a float32 array with an int64 (or int32) one is
    float64 (`points - coords` of float32 points and int64 voxel coordinates), and arrays joined
    by `np.hstack`/`np.concatenate`/`np.array` take the widest dtype (float64 wins).
    A Python number type given as a torch dtype is one of its own: `dtype=float` and
    `.to(float)` make float64, `dtype=int` int64. Arrays come from numpy, from pandas (the values of a `pd.read_csv` table are float64, or
    int64 for whole numbers: never float32, which a float32 layer alone takes; a `DataFrame`
    of an array keeps its dtype) and from scikit-learn (`train_test_split` keeps each array's
    dtype). `torch.tensor` of a list written out takes the dtype its items promote to: numpy
    float64 values (`torch.tensor([v, u])` of values computed from a float64 array) make
    float64, Python floats (`math.cos(angle)`) the default float32. Tensor arithmetic promotes
    (a float64 tensor with dimensions times a layer's output
    is float64), a comparison of tensors is bool and its `sum` int64, `torch.stack`/`torch.cat`
    keep the dtype of what they join, an in-place method (`.normal_()`) the tensor's,
    `Variable(x)` and `x.data` the dtype of `x`. The dtype
    is followed through names, attributes, the functions and methods of the file (also the
    tuples they return: `xb, yb = data.batch(n)`), a module-level name bound several times
    and read in a function or class used only after its last binding (`y = []` .. `y =
    np.array(y, dtype=np.int32)` read by a `Dataset`), dicts of
    arrays per split (`X["train"]`, `for part, x in X.items()`), and the
    data pipeline: the batches of a `DataLoader` have the dtype of its dataset's items (the
    rows of a `TensorDataset`'s tensors, what a `Dataset` class's `__getitem__` returns;
    `default_collate` stacks numpy arrays with their dtype and Python floats as float64),
    also through `enumerate` and `next(iter(loader))`, and the entries of dict items
    (`batch["image"]`); an `nn.Sequential` takes its input in its first layer with weights. An
    attribute set in `__init__` from a parameter holds what the instance's construction passed
    (`Table(np.log1p(x)).values`), and a `DataFrame` of a dict of int64 and float64 columns
    has int64 or float64 values (never float32).

    The finding is where the dtype was chosen in a torch call of the file (a `dtype=`, the
    conversion of a numpy array, `.double()`, a conversion to an integer dtype such as
    `labels.long()` or `y.int()`), or in numpy where a call names it and the conversion only
    keeps it (`torch.from_numpy(image.astype(float))`: the `astype`), else, for a batch of a
    `Dataset` class, where its `__getitem__` returns the item (once, for every layer the batches
    reach), else where the value is used; it says where the dtype comes
    from (a related location). In a file that converts a
    module (`model.double()`) only the calls of a model shown converted are judged; a file that
    changes the default dtype is not judged.

    ## Why is this bad?
    torch does not promote dtypes inside these operations (the RNNs raise `ValueError: RNN
    input dtype (torch.float64) does not match weight dtype`): `RuntimeError: expected scalar
    type Float but found Double`, `mat1 and mat2 must have the same dtype`, `Found dtype Long
    but expected Float`, at the first batch.

    ## What to do instead
    Make the tensor float32 where its dtype is chosen: `dtype=torch.float32` in
    `torch.tensor`/`torch.as_tensor`/`torch.full`, `.float()` after `torch.from_numpy`,
    `.astype(np.float32)` on the array; or convert it where it is used (`target.float()`).

    ## Fix
    Where the dtype is chosen in a torch call of the file (a conversion of a numpy array, a
    `dtype=`, a fill value), asks for float32 there: unsafe, as every other use of the
    tensor gets float32 too. Otherwise converts the value where it is used with `.float()`
    (safe: that use raised before).
    """
    bad = (
        Bad(
            """
            import numpy as np
            import torch
            import torch.nn.functional as F

            counts = np.bincount(np.random.randint(0, 3, 64), minlength=3)
            weight = torch.tensor(counts.sum() / (3 * counts))
            logits = torch.randn(8, 3, requires_grad=True)
            loss = F.cross_entropy(logits, torch.randint(0, 3, (8,)), weight)
            """,
            reported=((6, "torch.tensor(counts.sum() / (3 * counts))"),),
            unsafe=True,
            fixed="""
            import numpy as np
            import torch
            import torch.nn.functional as F

            counts = np.bincount(np.random.randint(0, 3, 64), minlength=3)
            weight = torch.tensor(counts.sum() / (3 * counts), dtype=torch.float32)
            logits = torch.randn(8, 3, requires_grad=True)
            loss = F.cross_entropy(logits, torch.randint(0, 3, (8,)), weight)
            """,
        ),
        Bad(
            """
            import torch
            from torch import nn

            model = nn.Linear(4, 1)
            criterion = nn.BCEWithLogitsLoss()
            labels = torch.randint(0, 2, (8,))
            loss = criterion(model(torch.randn(8, 4)).squeeze(1), labels)
            """,
            reported=((7, "labels"),),
            fixed="""
            import torch
            from torch import nn

            model = nn.Linear(4, 1)
            criterion = nn.BCEWithLogitsLoss()
            labels = torch.randint(0, 2, (8,))
            loss = criterion(model(torch.randn(8, 4)).squeeze(1), labels.float())
            """,
        ),
    )
    good = (
        """
        import numpy as np
        import torch
        from torch import nn
        import torch.nn.functional as F

        x = torch.from_numpy(np.random.randn(8, 4).astype(np.float32))
        out = nn.Linear(4, 3)(x)
        weight = torch.tensor(np.ones(3), dtype=torch.float32)
        loss = F.cross_entropy(out, torch.randint(0, 3, (8,)), weight)
        labels = torch.full((8,), 1.0)
        loss2 = nn.BCEWithLogitsLoss()(out[:, 0], labels)
        double = nn.Linear(4, 3).double()
        y = double(torch.from_numpy(np.random.randn(8, 4)))
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        if not self.ctx.inference.uses_torch:
            return
        reported: set[int] = set()
        for found in self.ctx.placement.dtype_mismatches():
            origin = found.dtype.origin
            at_origin = found.dtype.chosen and isinstance(origin, cst.Call) and (
                self._torch_call(origin) or self.ctx.placement.numpy_dtype_argument(origin) is not None)
            # A value from a Dataset's `__getitem__`: where that returns it, for every batch.
            entry = found.dtype.entry if not at_origin else None
            where = origin if at_origin else entry or found.value
            if id(where) in reported:
                continue
            reported.add(id(where))
            related = []
            if origin is not None and origin is not where:
                related.append((origin, f"the dtype comes from here: {found.dtype.why}"))
            related.append((found.sink, f"it reaches {found.what} here"))
            for call in self._loss_calls(found):
                related.append((call, "the loss is computed here"))
            method = _conversion(found.wanted)
            advice = f"make it {found.wanted} where it is made" if at_origin else \
                f"convert it with `.{method}()` here"
            lead = found.dtype.why if at_origin else \
                f"`{self.ctx.snippet(entry or found.value)}` is {found.dtype.name} ({found.dtype.why})"
            value_text = f"`{self.ctx.snippet(found.value)}`"
            if lead.endswith(f"({found.dtype.why})") and found.dtype.why.startswith(value_text):
                lead = found.dtype.why  # `y.float()` is float32 (`y.float()` is float32)
            fix = self._origin_fix(origin, found.wanted) if at_origin else self._use_fix(found.value, found.wanted)
            if entry is not None:
                advice, fix = f"make it {found.wanted} where `__getitem__` returns it", None
            if found.advice:  # converting the value is not the fix
                advice, fix = found.advice, None
            if fix is not None and fix.message.startswith("Drop"):
                advice = f"drop the conversion: `{self.ctx.snippet(found.value.func.value)}` is {found.wanted} already"
            self.report(where, lead=lead, what=found.what, needed=found.needed, advice=advice, related=tuple(related),
                        fix=fix)

    def _torch_call(self, call: cst.Call) -> bool:
        qualname = self.ctx.qualname(call.func) or ""
        if qualname.startswith("torch."):
            return True
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) and not qualname else None
        # `.double()`, `.to(..)`, and a conversion to an integer dtype (`labels.long()` into a binary
        # cross entropy): the conversion chose the dtype the operation refuses.
        return method in ("double", "to", "type") or method in torch_api.DTYPE_METHODS and \
            torch_api.DTYPE_METHODS[method] not in ("float32", "float16", "bfloat16") and not call.args

    def _loss_calls(self, found: Found) -> list[cst.Call]:
        """For class weights given to a loss module's constructor: the calls of such losses,
        where the error comes."""
        sink = found.sink
        if not isinstance(sink, cst.Call) or keyword(sink, "weight") is None and not sink.args:
            return []
        qualname = self.ctx.qualname(sink.func)
        if qualname not in ("torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss"):
            return []
        calls = []
        for call in self.ctx.analysis.nodes_of(cst.Call):
            value = self.ctx.infer(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
            if value is not None and value.kind is Kind.MODULE and value.qualname == qualname and call is not sink:
                calls.append(call)
        return calls[:3]

    def _origin_fix(self, origin: cst.Call, wanted: str) -> Optional[Fix]:
        chosen = self.ctx.placement.numpy_dtype_argument(origin)
        if chosen is not None:  # `x.astype(float)`, `np.array(y, dtype=np.int32)`: name the dtype wanted
            text = edits.replace(chosen.attr, wanted) if isinstance(chosen, cst.Attribute) else \
                edits.replace(chosen, f'"{wanted}"')
            return Fix(Applicability.UNSAFE, f"Make the array {wanted}", (text,))
        torch, imports = edits.torch_name(self.ctx)
        func = origin.func
        qualname = self.ctx.qualname(func) or ""
        method = _conversion(wanted)
        if isinstance(func, cst.Attribute) and not qualname and func.attr.value in torch_api.DTYPE_METHODS \
                and not origin.args and func.attr.value != method:  # `.double()` → `.float()`, `.int()` → `.long()`
            return Fix(Applicability.UNSAFE, f"Use `.{method}()`", (edits.replace(func.attr, method),))
        if qualname == "torch.from_numpy":
            return Fix(Applicability.UNSAFE, f"Convert to {wanted} with `.{method}()`",
                       (edits.insert_after(origin, f".{method}()"),))
        if not qualname.startswith("torch.") or any(arg.star for arg in origin.args) or \
                torch_api.is_tensor_type(qualname):
            return None
        text = edits.call_text(self.ctx, origin, dropped=lambda arg: arg.keyword is not None
                               and arg.keyword.value == "dtype", added=f"dtype={torch}.{wanted}")
        return Fix(Applicability.UNSAFE, f"Make it {wanted} (`dtype=torch.{wanted}`)",
                   (edits.replace(origin, text), *imports))

    def _use_fix(self, value: cst.BaseExpression, wanted: str) -> Optional[Fix]:
        method = _conversion(wanted)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in torch_api.DTYPE_METHODS and not value.args and \
                torch_api.DTYPE_METHODS[value.func.attr.value] != wanted and wanted == "int64":
            # `y.float()` of int64 class indices: the conversion is the bug.
            return Fix(Applicability.SAFE, f"Drop `.{value.func.attr.value}()`",
                       (edits.replace(value, self.ctx.snippet(value.func.value)),))
        return Fix(Applicability.SAFE, f"Convert with `.{method}()`",
                   (edits.replace(value, edits.method_call(self.ctx, value, f"{method}()")),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] in ("RuntimeError", "ValueError") and any(
                signature in raised["message"] for signature in _SIGNATURES):  # the RNNs raise ValueError
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "no operation raised on the dtype on this run")


def _conversion(dtype: str) -> str:
    """The tensor method that converts to ``dtype`` (`float` for float32, `long` for int64)."""
    return next(method for method, made in torch_api.DTYPE_METHODS.items() if made == dtype)
