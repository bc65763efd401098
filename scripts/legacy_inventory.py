#!/usr/bin/env python3
"""The legacy APIs torch warns about or has removed, torchlint's rule for each, their occurrences in corpus/ (found with
`ast`, so never in comments or strings: names through each file's imports, methods where the receiver or arguments show
they are torch's).  `.venv/bin/python scripts/legacy_inventory.py [--details]`; standard library only."""
import ast, contextlib, mmap, re, sys, time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace as NS

REPO = Path(__file__).resolve().parent.parent
SITE = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
TORCH = SITE / "torch"
MODERN = ("transformers-", "timm-", "deepspeed-", "karpathy+minGPT", "facebookresearch+detr", "facebookresearch+dino")
WORDS = re.compile(r"deprecat|will be removed|is now removed|was removed", re.I)
NAMED = re.compile(r"`?((?:torch|nn|Tensor)\.[A-Za-z_][\w.]*\w)(?:\([^)]*\))?`? (?:is|has been|will be|is being)"
                   r"(?: now)? (?:deprecat|removed|renamed)")
IN_LIBS = re.compile(rb"[Dd]eprecat|will be removed|was removed|now removed|boolean masks|of a 0-dim|BoolTensor for")
# message regex -> API, torchlint rule, reaction (if the words do not say), matcher(node n, File.call c, File f) or None
SPECIAL = [
    (r"nn\.init\.\{old_name\}", "`nn.init.xavier_uniform` etc. (no trailing `_`)", "TL207", "",
     lambda n, c, f: c and c.callee.startswith("torch.nn.init.") and c.short in INIT_NAMES),
    (r"size_average and reduce args", "`size_average=` / `reduce=` of a loss", "TL208", "",
     lambda n, c, f: c and c.callee.startswith("torch.nn.") and bool({"size_average", "reduce"} & set(c.kw))),
    (r"reduction='elementwise_mean'", "`reduction='elementwise_mean'`", "TL208", "",
     lambda n, c, f: c and c.callee.startswith("torch.nn.") and c.kw.get("reduction") == "elementwise_mean"),
    (r"Implicit dimension choice", "`F.softmax(x)`, `nn.LogSoftmax()`... without `dim`", "TL209", "",  # dim: 2nd, 1st
     lambda n, c, f: c and c.callee.startswith("torch.nn.") and c.kw.get("dim") is None and c.short in ("softmax",
         "log_softmax", "softmin", "Softmax", "LogSoftmax", "Softmin") and len(c.args) < 2 - c.short[0].isupper()),
    (r"epoch parameter in `scheduler\.step", "`scheduler.step(epoch)`", "TL217", "", lambda n, c, f: c and c.name == "step"
     and c.method and "sched" in ast.unparse(n.func.value).lower() and ("epoch" in c.kw or c.args and re.fullmatch(
         r"[\w.]*epoch( [-+] \d+)?", ast.unparse(c.args[-1])))),  # the epoch last: not Plateau's step(metrics)
    (r"non-static forward", "`autograd.Function` with a non-static `forward`", "TL212", "", lambda n, c, f: isinstance(
        n, ast.ClassDef) and "torch.autograd.Function" in map(f.resolve, n.bases) and any(d.name == "forward" and
        "staticmethod" not in map(last, d.decorator_list) for d in n.body if isinstance(d, ast.FunctionDef))),
    (r"volatile was removed", "`Variable(x, volatile=True)`, `x.volatile`", "TL202", "", lambda n, c, f: c and c.callee
     == "torch.autograd.Variable" and "volatile" in c.kw or getattr(n, "attr", 0) == "volatile" and not f.resolve(n)),
    (r"'async' is deprecated|bool async=False", "`.cuda(async=True)` (`.to`, `.copy_`, `.type`)", "TL205", "warns; "
     "SyntaxError since Python 3.7", lambda n, c, f: c and "asyn_" in c.kw and c.name in ("cuda", "to", "copy_", "type")),
    (r"indexing with dtype torch\.uint8|uint8 condition|boolean masks|BoolTensor for mask|mask with dtype torch\.uint8",
     "uint8 masks: `x[m]`, `x[m] = v`, `masked_fill(m, v)`, `torch.where(m, ..)`", "TL211", "warns (`x[m]`, `where`) / "
     "raises", lambda n, c, f: isinstance(n, ast.Subscript) and f.is_byte(n.slice) or c and (c.name.startswith("masked_")
         or c.callee == "torch.where") and any(map(f.is_byte, c.args[c.callee.startswith("torch.masked"):][:1]))),
    (r"Byte tensor for `(attn|key_padding)_mask`", "uint8 `attn_mask` of `nn.MultiheadAttention`", "", "", None),
    (r"invalid index of a 0-dim", "`loss.data[0]` (index of a 0-dim tensor)", "TL203", "raises", None),
    (r"non-tuple sequence for multidimensional", "`x[[slice(..), ..]]` (a list as multi-dim index)", "", "", None),
    (r"`x\.T`|Tensor\.m?[TH] is deprecated|adjoint\(\) is deprecated", "`x.T` on a tensor not 2-D", "", "", None),
    (r"torch\.cross without specifying the dim", "`torch.cross(a, b)` without `dim`", "", "", None),
    (r"stft with return_complex=False", "`torch.stft` without `return_complex=True`", "", "", None),
    (r"TypedStorage is deprecated", "typed storages: `torch.FloatStorage`.., `x.storage()`", "TL216", "", lambda n, c, f: c and
     (re.fullmatch(r"torch(\.cuda)?\.(?!Untyped)\w+Storage", c.callee) or c.name == "storage" and c.method and not c.args)),
    (r"torch\.sparse\.SparseTensor\(", "`torch.sparse.FloatTensor(..)` (legacy sparse constructors)", "TL218", "",
     lambda n, c, f: c and re.fullmatch(r"torch(\.cuda)?\.sparse\.\w+Tensor", c.callee)),
]
# TL503's page spells these short: "`torch.cuda.amp.custom_fwd` and `custom_bwd`", "`memory_cached` and `max_memory_cached`"
HAND_RULES = {"torch.cuda.amp.custom_bwd": "TL503", "torch.cuda.max_memory_cached": "TL503"}
ENTRIES, INIT_NAMES, DROPPED, public = {}, set(), {}, str  # API -> entry; nn.init's old names; main() sets `public`

def add(key, label, kind, how, message, where, rules="", reaction="", match=None):
    e = ENTRIES.setdefault(key, NS(label=label, kind=kind, rules=rules or HAND_RULES.get(key, ""), match=match,
                                   reaction=reaction, how=set(), messages=[], hits=defaultdict(list)))
    e.how.add(how)
    e.messages.append((" ".join(message.split()), where))
    return e

def classify(message, how, where, target=None):
    """SPECIAL's API, one the message names, a parameter of `target` (path, params, func|method|usage), or target."""
    for pattern, label, rules, reaction, match in SPECIAL:
        if re.search(pattern, message):
            return add(label, label, "special" if match else "n/a", how, message, where, rules, reaction, match)
    if m := re.match(r"(\w+?)_?\(.*\)\|deprecated$", message):  # deprecated.yaml, python_arg_parser's signatures
        base, limit = m[1], 1 if m[1] in ("add", "sub") else 2  # tensors passed positionally to today's overloads
        return add(f"overload:{base}", f"`{base}(Number, ...)` scalar-first overload", "special", how, message, where,
                   "TL210", "", lambda n, c, f: c and c.name.rstrip("_") == base and (  # torch.add(x, 2, y), x.add_(2, y)
                       c.callee == f"torch.{c.name}" and len(c.args) > limit + 1 and any(map(scalar_like, c.args[:2]))
                       or not c.callee and c.method and len(c.args) > limit and scalar_like(c.args[0])))
    if m := NAMED.search(message):
        api = public(re.sub(r"^nn\.", "torch.nn.", m[1]))
        return add(api, f"`{api}`", "method" if api.startswith("Tensor.") else "func", how, message, where)
    if target:
        (path, params, kind), cut = target, m.start() if (m := WORDS.search(message)) else len(message)
        if named := [m[1] or m[2] for m in re.finditer(r"[`']{1,2}(\w+)[`']{1,2}|^(\w+)(?= argument| parameter)",
                                                       message) if m.start() < cut and (m[1] or m[2]) in params]:
            kind, path = ("method" if kind == "method" else "kwarg"), f"{path}({named[-1]}=)"  # "`eps` is deprecated"
        kind = "internal" if re.search(r"\._", path) else kind  # a private helper, not something users call
        return add(path, f"`{path}`" + " (some calls)" * (kind == "usage"), kind, how, message, where)

def last(func):
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")

def text_of(node, consts):  # the text of a string expression, `{...}` for what only the run knows
    if isinstance(node, (ast.Constant, ast.JoinedStr)):  # "...", f"...{x}..."
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{%s}" % ast.unparse(v.value)
                       for v in getattr(node, "values", [node]))
    if isinstance(node, ast.Call) and last(node.func) == "format":
        return text_of(node.func.value, consts)
    return consts.get(node.id) if isinstance(node, ast.Name) else None

def public_names():
    """The public path of a torch name: what an __init__.py above its module, or any for a private one, imports."""
    renamed = {}  # `torch.nn.modules.*` -> `torch.nn.*` for a star import
    for init in sorted(TORCH.rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(SITE).parts)
        for node in (n for n in ast.walk(ast.parse(init.read_text("utf-8"))) if isinstance(n, ast.ImportFrom)):
            module = ".".join(filter(None, [package.rsplit(".", node.level - 1)[0] * bool(node.level), node.module]))
            renamed.update({f"{module}.{a.name}": f"{package}.{a.asname or a.name}" for a in node.names
                            if module.startswith(package + ".") or "._" in module})  # not torch.mps.Tensor
    def resolve(path):
        for _ in range(4):
            module, _, name = path.rpartition(".")
            path = renamed.get(path) or (renamed.get(module + ".*", module + ".*")[:-1] + name if module else path)
        return path
    return resolve

def scan_python():
    """torch/**/*.py: warnings.warn, @deprecated, raise, docstrings, add_docstr (_torch_docs.py, _tensor_docs.py)."""
    for file in sorted(TORCH.rglob("*.py")):
        if not WORDS.search(source := file.read_text("utf-8")):
            continue
        module = ".".join(file.relative_to(SITE).with_suffix("").parts).removesuffix(".__init__")
        tree, where = ast.parse(source), str(file.relative_to(SITE))
        consts = {t.id: text_of(n.value, {}) for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                  if isinstance(t, ast.Name) and isinstance(n.value, (ast.Constant, ast.JoinedStr))}
        def visit(node, stack, target):
            line, is_def = f"{where}:{getattr(node, 'lineno', 0)}", isinstance(node, (ast.FunctionDef, ast.ClassDef))
            if target and target[2] == "func" and (is_def and hasattr(stack[-1], "args") or not any(
                    node in (s, getattr(s, "value", 0)) for s in stack[-1].body)):
                target = (*target[:2], "usage")  # under an `if`, or in a nested def: it warns on some calls only
            if is_def and (not target or target[2] != "usage"):
                path = target[0] if node.name == "__init__" else public(f"{target[0] if stack else module}.{node.name}")
                params = {a.arg for a in node.args.args + node.args.kwonlyargs} if hasattr(node, "args") else ()
                target = (path, params, "method" if stack and hasattr(node, "args") and node.name != "__init__" else "func")
                for dec in [d for d in node.decorator_list if last(getattr(d, "func", 0)) == "deprecated" and d.args]:
                    classify(text_of(dec.args[0], consts) or "", "warns", line, target)  # @typing_extensions.deprecated
            call = node.exc if isinstance(node, ast.Raise) else node
            message = text_of(call.args[0], consts) if isinstance(call, ast.Call) and call.args else None
            if message and WORDS.search(message) and (call is not node or last(call.func) in ("warn", "warn_once")):
                classify(message, "raises" if call is not node else "warns", line, target)
            doc = ast.get_docstring(node) if is_def else text_of(node.args[1], consts) if isinstance(
                node, ast.Call) and last(node.func).startswith("add_docstr") and node.args[1:] else None
            if m := re.search(r"This (?:function|class) is deprecated|((?:torch|nn|Tensor)\.[\w.]+)`? is deprec", doc or ""):
                classify(doc[m.start():].split("\n\n")[0], "docs", line, target if is_def else None)
            for child in node.body if is_def else ast.iter_child_nodes(node):
                visit(child, stack + [node] if is_def else stack, target)
        visit(tree, [], None)

def scan_others():
    """Printable runs of >= 20 bytes in the libraries, deprecated.yaml, nn.init, and "What it does" of the rules."""
    for lib in ("libtorch_python.so", "libtorch_cpu.so"):
        with open(TORCH / "lib" / lib, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = {m[0].decode().strip() for m in re.finditer(rb"[ -~\t\n]{20,}", data) if IN_LIBS.search(m[0])}
        DROPPED[lib] = sum(not classify(s, "warns", lib) for s in sorted(found) if not re.match(r"\*?(_Z|N\d)", s))
    for name in re.findall(r"^- name: (.*) ->", (SITE / "torchgen/packaged/autograd/deprecated.yaml").read_text(), re.M):
        classify(name + "|deprecated", "warns", "deprecated.yaml")
    INIT_NAMES.update(re.findall(r"^(\w+) = _make_deprecate\(", (TORCH / "nn" / "init.py").read_text(), re.M))
    defs = re.findall(r"def (\w+)", (TORCH / "_C" / "_VariableFunctions.pyi").read_text())  # torch.X exists if here
    stubs = " ".join(defs) + (TORCH / "__init__.py").read_text()  # or here (`from torch._linalg_utils import solve`)
    for page in sorted((REPO / "docs" / "rules").glob("TL*.md")):
        section = page.read_text().split("## What it does")[-1].split("## Why")[0]
        for token in re.findall(r"`((?:torch|nn|F)\.[\w.]*\w)(?:\((?:\.\.\.?)?\))?`(?!')", section):
            api = public(re.sub(r"^F\.", "torch.nn.functional.", re.sub(r"^nn\.", "torch.nn.", token)))
            if page.name.startswith("TL501") and not re.search(rf"\b{api[6:]}\b", stubs):
                add(api, f"`{api}`", "func", "removed", f"AttributeError: module 'torch' has no attribute '{api[6:]}'",
                    "neither in torch/__init__.py nor in torch/_C/_VariableFunctions.pyi")
            if api in ENTRIES and ENTRIES[api].kind == "func" and "-import" not in page.name:
                ENTRIES[api].rules = " ".join(sorted(set(ENTRIES[api].rules.split()) | {page.name[:5]}))

class File:  # ---- the corpora --------------------------------------------------------------------------------------
    def __init__(self, tree):  # aliases: name -> what it imports
        nodes = list(ast.walk(tree))
        self.aliases = {a.asname or a.name.split(".")[0]: a.asname and a.name or a.name.split(".")[0] for node in nodes
                        if isinstance(node, ast.Import) for a in node.names}
        self.aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for node in nodes
                             if isinstance(node, ast.ImportFrom) and node.module and not node.level for a in node.names})

    def resolve(self, node):  # `F.upsample` -> `torch.nn.functional.upsample` after `import torch.nn.functional as F`
        parts = []
        while isinstance(node, ast.Attribute):
            parts, node = [node.attr] + parts, node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return public(".".join([self.aliases[node.id]] + parts))

    def is_byte(self, node):  # a uint8 tensor made right there: `.byte()`, `torch.ByteTensor(..)`, `dtype=torch.uint8`
        names = (node.func, *node.args, *(k.value for k in node.keywords)) if isinstance(node, ast.Call) else ()
        return any(re.fullmatch(r"torch(\.cuda)?\.(uint8|ByteTensor)", self.resolve(n) or "") for n in names) or \
            isinstance(node, ast.Call) and last(node.func) == "byte" and not node.args

    def call(self, node):  # what the matchers need to know of a call
        if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
            callee, receiver = self.resolve(node.func) or "", getattr(node.func, "value", None)
            return NS(callee=callee, short=callee.rsplit(".", 1)[-1], name=last(node.func), args=node.args,
                      kw={k.arg: getattr(k.value, "value", k.value) for k in node.keywords},  # a literal's value
                      method=receiver is not None and getattr(receiver, "id", None) not in self.aliases)  # not np.add

def scalar_like(node):  # -lr, 1 - beta1, 0.9, group['lr'], self.lr, lr
    if isinstance(node, (ast.UnaryOp, ast.BinOp)):
        return isinstance(node, ast.UnaryOp) or scalar_like(node.left) or scalar_like(node.right)
    name = node.slice.value if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) else \
        getattr(node, "attr", getattr(node, "id", None))
    return type(getattr(node, "value", None)) in (int, float) or isinstance(name, str) and bool(re.search(
        r"(^|_)(lr|alpha|beta\d?|eps|step_size|weight_decay|momentum|decay|scale|rate|value|gamma)$", name))

def count():
    """Occurrences in `scripts`, `legacy` (PyPI) and `MODERN` files (not `runtime/`: the script repositories again,
    whole); files that do not parse even reading `async=`."""
    parsed, skipped, matchers = defaultdict(int), [], [e for e in ENTRIES.values() if e.match]
    for path in sorted((REPO / "corpus").glob("*/**/*.py")):
        where, tree = str(path.relative_to(REPO / "corpus")), None
        if where.startswith("runtime/"):  # the same repositories as scripts/, whole, for the runtime check
            continue
        source = path.read_text("utf-8", errors="replace")
        top = where.split("/")[where.startswith("scripts/")]  # the package, or the repository of a script
        group = "modern" if top.startswith(MODERN) else "scripts" if where.startswith("scripts/") else "legacy"
        for text in (source, re.sub(r"\basync\b(?![ \t]+(?:def|with|for)\b)", "asyn_", source)):
            with contextlib.suppress(SyntaxError, ValueError):
                tree = tree or ast.parse(text)
        if tree is None:
            skipped.append(where)
            continue
        parsed[group], f = parsed[group] + 1, File(tree)
        def visit(node):
            name = f.resolve(node) if isinstance(getattr(node, "ctx", None), ast.Load) else None
            found = [ENTRIES[name]] if name in ENTRIES and ENTRIES[name].kind == "func" else []
            if c := f.call(node):  # `torch.autograd.grad(.., only_inputs=True)`
                found += [ENTRIES[k] for k in (f"{c.callee}({k.arg}=)" for k in node.keywords) if k in ENTRIES]
            for e in found + [e for e in matchers if e.match(node, c, f)]:
                e.hits[group].append(f"{where}:{node.lineno}")
            for child in [] if name in ENTRIES else ast.iter_child_nodes(node):
                visit(child)
        visit(tree)
    return parsed, skipped

def main():
    global public
    start, public = time.perf_counter(), public_names()
    scan_python()
    scan_others()
    parsed, skipped = count()
    shown = [e for e in ENTRIES.values() if e.kind != "internal"]
    n = lambda e, group: str(len(e.hits[group])) if e.kind in ("func", "kwarg", "special") else "n/a"
    shown.sort(key=lambda e: (-len(e.hits["scripts"]) - len(e.hits["legacy"]), -len(e.hits["modern"]),
                              n(e, "scripts") == "n/a", e.label.lower()))
    version = re.search(r"__version__ = '([^']+)'", (TORCH / "version.py").read_text())[1]
    print(f"| API | torch {version} | torchlint rule | scripts corpus | legacy PyPI | modern |\n|---|---|---|--:|--:|--:|")
    for e in shown:
        how = e.reaction or " / ".join(h for h in ("warns", "raises", "removed") if h in e.how) or "docs only"
        print(f"| {e.label} | {how} | {e.rules or '—'} | {n(e, 'scripts')} | {n(e, 'legacy')} | {n(e, 'modern')} |")
    print(f"\n{len(shown)} APIs; left out: {sum(len(e.messages) for e in ENTRIES.values() if e.kind == 'internal')} "
          f"messages about private helpers, strings naming no API {DROPPED}.\nFiles parsed: {dict(parsed)}; not "
          f"parsed: {len(skipped)} ({', '.join(skipped)})\n{time.perf_counter() - start:.0f} s")
    for e in shown if "--details" in sys.argv else []:  # each API's messages and occurrences
        print(f"\n## {e.label}", *[f"{w}: {m[:400]}" for m, w in e.messages[:4]], *sum(e.hits.values(), []), sep="\n   ")

if __name__ == "__main__":
    main()
