#!/usr/bin/env python3
"""Fuzz torchlint through its real command line with mutated real files.

Every input is a real Python file (the fixtures, the examples, `tests/data/`, the
git-ignored `corpus/` that `scripts/pypi_corpus.py` fills, and any `--seeds DIR`) damaged
by one or more small named mutators (byte flips, truncation, line damage, bad bytes,
coding cookies, BOMs, newline and indentation damage, huge lines, deep nesting, legacy
and modern syntax, thousands of findings, notebooks, imports between the files, ...).
Inputs go into batch folders together with a few untouched seed files ("neighbours"),
and each folder is linted with

    python -m torchlint check --output-format json --no-cache --isolated --jobs 1 FOLDER
    python -m torchlint check --output-format json --no-cache --isolated --jobs 2 FOLDER

in a subprocess of its own process group, with a wall-clock timeout and a memory limit.
Checked for every run:

  crash                exit status other than 0, 1 (findings) and 2 (torchlint's own
                       error), a traceback on stderr, output that is not JSON, an exit
                       status that disagrees with the findings, or exit 2 unexplained
  hang                 the run did not finish within --timeout (its group is killed)
  internal error       a TL000 finding whose message says "internal error"
  jobs difference      --jobs 1 and --jobs 2 give different findings (sorted)
  lost neighbour       a neighbour's findings differ from those it gets linted alone
  parse disagreement   torchlint says TL000 for a file Python's `ast` parses, or lints
                       a file that `ast` rejects (judged by `ast.parse` on the same
                       bytes in a separate process; nesting-depth limits excepted)

A sample of the inputs that compile, and of the seeds, then goes through
`check --fix --unsafe-fixes` (alternately with --jobs 1 and 2): every file that compiled
before must compile after, torchlint must not refuse its own fixes, a second --fix must
change nothing, and no `#` comment may disappear (counted with `tokenize`) through the
safe fixes: a fix that drops a comment must be unsafe (as in ruff), so a comment lost only
with --unsafe-fixes is counted apart, not as a failure.

Special files (Linux): a FIFO named `x.py` in a folder and on the command line, symlink
loops, a folder symlink cycle, a link to /dev/zero, a socket, a folder named `d.py`;
each must not hang the run nor lose the good file beside it.

A failure's reproducer (the input, the command, torchlint's output, the mutator) is
saved under --keep; batch-level failures are narrowed to the guilty inputs by
bisection, and --minimize shrinks a single-file reproducer line by line.  The exit
status is 1 when anything failed, 0 otherwise.

    python scripts/fuzz.py --quick                # the small configuration CI runs
    python scripts/fuzz.py                        # the full campaign (10,000 inputs)
    python scripts/fuzz.py --inputs 2000 --seconds 900 --minimize --keep /tmp/fz

Only the standard library is used; the same --seed gives the same inputs.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
MAX_SEED_BYTES = 1 << 20
MAX_INPUT_BYTES = 1 << 20  # keeps a full run's disk and time bounded
PRELUDE = b"import torch\nx = torch.ones(3, requires_grad=True)\n"

# ======================================================================================
# Seeds


def find_seeds(extra: list[str], fixtures_only: bool) -> list[Path]:
    patterns = ["fixtures/**/*.py"]
    if not fixtures_only:
        patterns += ["examples/**/*.py", "tests/data/**/*.py", "corpus/**/*.py"]
    found: set[Path] = set()
    for pattern in patterns:
        found.update(Path(p) for p in glob.glob(str(REPO / pattern), recursive=True))
    for folder in extra:
        found.update(Path(p) for p in glob.glob(os.path.join(glob.escape(folder), "**", "*.py"), recursive=True))
    seeds = []
    for path in sorted(found):
        try:
            if path.is_file() and not path.is_symlink() and 0 < path.stat().st_size <= MAX_SEED_BYTES:
                seeds.append(path.resolve())
        except OSError:
            pass
    return seeds


def seed_label(path: Path) -> str:
    try:
        return path.relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


# ======================================================================================
# Mutators: each takes (rng, data, env) and returns the new bytes.


@dataclass
class Env:
    rng: random.Random
    seeds: list[Path]
    batch_names: list[str]  # module names of the other inputs of the batch
    self_name: str
    ext: str = ".py"


MUTATORS: dict[str, Callable[[random.Random, bytes, Env], bytes]] = {}


def mutator(function):
    MUTATORS[function.__name__[2:]] = function
    return function


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _top_level_offset(rng: random.Random, data: bytes) -> int:
    """A byte offset at the start of an unindented line (or the end), where a new
    statement can go; falls back to the end of the file."""
    offsets = [0]
    for match in re.finditer(rb"\n(?=[A-Za-z_@#\n]|$)", data):
        offsets.append(match.end())
    offset = rng.choice(offsets)
    return offset


def _insert_statement(rng: random.Random, data: bytes, snippet: bytes, indented: bool = True) -> bytes:
    """Insert ``snippet`` (lines ending in \\n) before a random line, with that line's
    indentation when ``indented`` (so it lands inside functions too), else at top level."""
    if not data.endswith(b"\n") and data:
        data += b"\n"
    if indented and rng.random() < 0.6:
        lines = _lines(data)
        index = rng.randrange(len(lines))
        indent = re.match(rb"[ \t]*", lines[index]).group(0)
        body = b"".join(indent + line if line.strip() else line for line in snippet.splitlines(keepends=True))
        return b"".join(lines[:index]) + body + b"".join(lines[index:])
    offset = _top_level_offset(rng, data)
    return data[:offset] + snippet + data[offset:]


@mutator
def m_byte_flip(rng, data, env):
    if not data:
        return bytes([rng.randrange(256)])
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        index = rng.randrange(len(buffer))
        buffer[index] = buffer[index] ^ (1 << rng.randrange(8)) if rng.random() < 0.7 else rng.randrange(256)
    return bytes(buffer)


@mutator
def m_truncate(rng, data, env):
    return data[: rng.randrange(len(data) + 1)]


@mutator
def m_line_delete(rng, data, env):
    lines = _lines(data)
    for _ in range(rng.randint(1, 3)):
        if len(lines) > 1:
            del lines[rng.randrange(len(lines))]
    return b"".join(lines)


@mutator
def m_line_duplicate(rng, data, env):
    lines = _lines(data)
    start = rng.randrange(len(lines))
    block = lines[start: start + rng.randint(1, 4)]
    where = rng.randrange(len(lines) + 1)
    return b"".join(lines[:where] + block * rng.randint(1, 3) + lines[where:])


@mutator
def m_line_swap(rng, data, env):
    lines = _lines(data)
    for _ in range(rng.randint(1, 3)):
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


SPECIAL_BYTES = [
    b"\x00", b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
    b"\x80", b"\x0c", b"\x1a", b"\x0b", b"\x1b[31m", b"\x7f", "\u2028".encode(), "\u0085".encode(),
    "\ufeff".encode(), "\u200b".encode(), "\u202e".encode(), "\U0001f600".encode(), "\u00e9".encode(),
    "e\u0301".encode(), b"\\", b"\r", b"\r\n", b"'", b'"', b'"""', b"#", b"\t", b"(", b")", b"[", b"}", b":",
    b"\n    ", b"\\\n",
]


@mutator
def m_insert_bytes(rng, data, env):
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.75:
            chunk = rng.choice(SPECIAL_BYTES)
        else:
            chunk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        where = rng.randrange(len(data) + 1)
        data = data[:where] + chunk + data[where:]
    return data


VALID_CODINGS = [
    "latin-1", "iso-8859-1", "iso-8859-15", "cp1252", "cp1251", "koi8-r", "utf-8", "utf8", "UTF-8", "U8",
    "utf_8", "ascii", "us-ascii", "shift_jis", "euc-jp", "gbk", "big5", "mac-roman", "utf-8-sig",
    "cp037", "utf-7", "iso2022_jp", "tis-620", "cp437",
]
HOSTILE_CODINGS = [
    "undefined", "punycode", "rot13", "rot_13", "utf-16", "utf-16-le", "utf-32", "unicode_escape",
    "raw_unicode_escape", "unicode_internal", "hex", "hex_codec", "base64", "zlib", "bz2", "uu", "quopri",
    "idna", "mbcs", "oem", "palmos", "cp65001", "no-such-codec", "latin-1-but-not", "x" * 300, "utf-8\x00",
    "string_escape", "charmap", "utf-8-variants", "..", "cp1252 ", "UTF-8-SIG",
]
COOKIE_FORMS = ["# -*- coding: {} -*-\n", "# coding={}\n", "# vim: set fileencoding={} :\n", "#coding:{}\n"]


@mutator
def m_coding_cookie(rng, data, env):
    name = rng.choice(VALID_CODINGS if rng.random() < 0.5 else HOSTILE_CODINGS)
    cookie = rng.choice(COOKIE_FORMS).format(name).encode("latin-1", "replace")
    if name in VALID_CODINGS and rng.random() < 0.5:
        # Make the encoding matter: a non-ASCII comment, and the text in that encoding.
        text = data.decode("utf-8", "replace") + "# caf\u00e9 \u00fcber \u00a3 \u20ac\n"
        try:
            data = text.encode(name)
        except (UnicodeError, LookupError):
            data = text.encode("utf-8", "surrogateescape")
    placement = rng.random()
    if placement < 0.5:
        return cookie + data
    if placement < 0.8:
        return rng.choice([b"#!/usr/bin/env python\n", b"# first line\n", b"\n", b"import torch\n"]) + cookie + data
    lines = _lines(data)
    where = min(len(lines), rng.randint(2, 4))
    return b"".join(lines[:where]) + cookie + b"".join(lines[where:])


@mutator
def m_bom(rng, data, env):
    kind = rng.random()
    if kind < 0.35:
        return b"\xef\xbb\xbf" + data
    if kind < 0.55:
        return b"\xef\xbb\xbf\xef\xbb\xbf" + data
    if kind < 0.7:
        return b"\xef\xbb\xbf# -*- coding: " + rng.choice([b"latin-1", b"utf-8", b"cp1252", b"utf-16"]) + b" -*-\n" + data
    if kind < 0.85:
        return rng.choice([b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"]) + data
    where = rng.randrange(len(data) + 1)
    return data[:where] + b"\xef\xbb\xbf" + data[where:]


@mutator
def m_newline_mix(rng, data, env):
    kind = rng.random()
    if kind < 0.2:
        return data.replace(b"\n", b"\r\n")
    if kind < 0.4:
        return data.replace(b"\n", b"\r")
    if kind < 0.5:
        return data.rstrip(b"\n") + b"\r"
    out = bytearray()
    for byte in data:
        if byte == 0x0A and rng.random() < 0.3:
            out += rng.choice([b"\r\n", b"\r", b"\r\r\n", b"\n\r", b"\x0c\n"])
        else:
            out.append(byte)
    return bytes(out)


@mutator
def m_tab_damage(rng, data, env):
    lines = _lines(data)
    for _ in range(rng.randint(1, 5)):
        index = rng.randrange(len(lines))
        line = lines[index]
        choice = rng.random()
        if choice < 0.35:
            lines[index] = line.replace(b"    ", b"\t", 1)
        elif choice < 0.55:
            lines[index] = b" " + line
        elif choice < 0.7:
            lines[index] = b"\t" + line
        elif choice < 0.85:
            lines[index] = b"\x0c" + line
        else:
            lines[index] = line.lstrip(b" \t")
    return b"".join(lines)


def _filler(rng: random.Random, size: int, non_ascii: bool) -> str:
    if not non_ascii:
        return rng.choice("ab_x") * size
    alphabet = rng.choice(["\u00e9", "\u6f22", "\U0001f600", "a\u00e9\U0001f600\u6f22", "\u0301"])
    return (alphabet * (size // len(alphabet) + 1))[:size]


@mutator
def m_long_line(rng, data, env):
    size = rng.randint(100_000, 300_000)
    non_ascii = rng.random() < 0.5
    fill = _filler(rng, size // (4 if non_ascii else 1), non_ascii)
    kind = rng.randrange(6)
    if kind == 0:
        line = f'y = "{fill}"; z = x.data\n'
    elif kind == 1:
        line = f"z = x.data  # {fill}\n"
    elif kind == 2:
        line = f"{fill if not non_ascii else 'v' + fill.replace(chr(0x301), 'e')} = x.data\n"
    elif kind == 3:
        line = "y = [" + ", ".join(["x.data"] * (size // 8)) + "]\n"
    elif kind == 4:
        line = f'y = f"{fill}{{x.data}}" + "{fill[:1000]}"\n'
    else:
        line = f"# {fill}\n"
    snippet = PRELUDE + line.encode("utf-8", "surrogateescape")
    return _insert_statement(rng, data, snippet, indented=False)


DEPTHS = [10, 50, 99, 100, 101, 199, 200, 201, 255, 256, 500, 999, 1000, 1001, 1500, 2000, 2900, 3000, 4000,
          5000, 5999, 6000, 6001, 8000, 9990, 10_000, 10_001, 15_000, 20_000]


def _nested(kind: str, depth: int) -> str:
    if kind == "paren":
        return "y = " + "(" * depth + "x.data" + ")" * depth
    if kind == "bracket":
        return "y = " + "[" * depth + "x.data" + "]" * depth
    if kind == "dict":
        return "y = " + "{1: " * depth + "x.data" + "}" * depth
    if kind == "attr":
        return "y = x" + ".data" * depth
    if kind == "plus":
        return "y = (" + "+".join(["x.data"] * depth) + ")"
    if kind == "call":
        return "y = " + "torch.relu(" * depth + "x.data" + ")" * depth
    if kind == "subscript":
        return "y = x.data" + "[0]" * depth
    if kind == "not":
        return "y = " + "not " * depth + "x.data"
    if kind == "minus":
        return "y = " + "-" * depth + "x.data"
    if kind == "lambda":
        return "f = " + "lambda: " * depth + "x.data"
    if kind == "ifexp":
        return "y = " + "x.data if x else " * depth + "x.data"
    if kind == "compare":
        return "y = " + " < ".join(["x.data"] * depth)
    if kind == "and":
        return "y = " + " and ".join(["x.data"] * depth)
    if kind == "concat":
        return "s = " + ' "a"' * depth
    if kind == "method":
        return "y = x" + ".data.add_(1)" * depth
    if kind == "power":
        return "y = " + "**".join(["x.data"] * depth)
    if kind == "fstring":
        return "y = " + 'f"{' * min(depth, 4) + "x.data" + '}"' * min(depth, 4)
    if kind == "blocks":
        depth = min(depth, 120)
        return "".join("    " * i + "if x:\n" for i in range(depth)) + "    " * depth + "y = x.data"
    if kind == "defs":
        depth = min(depth, 120)
        return "".join("    " * i + f"def f{i}():\n" for i in range(depth)) + "    " * depth + "return x.data"
    raise ValueError(kind)


NEST_KINDS = ["paren", "bracket", "dict", "attr", "plus", "call", "subscript", "not", "minus", "lambda", "ifexp",
              "compare", "and", "concat", "method", "power", "fstring", "blocks", "defs"]


@mutator
def m_deep_nesting(rng, data, env):
    depth = max(1, rng.choice(DEPTHS) + rng.choice([0, 0, 0, -1, 1, rng.randint(-50, 50)]))
    kind = rng.choice(NEST_KINDS)
    snippet = PRELUDE + _nested(kind, depth).encode() + b"\n"
    return _insert_statement(rng, data, snippet, indented=False)


@mutator
def m_overlapping_fixes(rng, data, env):
    """Findings nested inside findings: fixes whose edits overlap or touch."""
    n = rng.choice([1, 2, 3, 5, 8, 20, 50])
    kind = rng.randrange(8)
    head = "import torch\nfrom torch.autograd import Variable\nx = torch.ones(3, requires_grad=True)\n"
    if kind == 0:
        body = "y = " + "Variable(" * n + "x" + ")" * n
    elif kind == 1:
        body = "y = " + "torch.tensor(" * n + "x" + ")" * n
    elif kind == 2:
        body = "y = x" + ".clone().detach()" * n
    elif kind == 3:
        body = "loss = torch.nn.functional.mse_loss(x, x)\ny = loss" + ".data[0]" * n
    elif kind == 4:
        body = "x" + ".data" * n + ".add_(1)"
    elif kind == 5:
        body = "y = Variable(torch.FloatTensor(" + ", ".join(["2"] * n) + "), volatile=True).data"
    elif kind == 6:
        body = "; ".join(["x.data.mul_(2)"] * n)
    else:
        body = "y = " + " + ".join(["Variable(x.data).data"] * n)
    snippet = (head + body + "\n").encode()
    return _insert_statement(rng, data, snippet, indented=rng.random() < 0.5)


LEGACY_SNIPPETS = [
    b'print "x"\n', b'print >>sys.stderr, "x", x.data\n', b'exec "y = x.data"\n', b"y = `x.data`\n",
    b"x = x.cuda(async=True)\n", b"try:\n    pass\nexcept Exception, e:\n    y = x.data\n",
    b'raise ValueError, "bad"\n', b"y = 0777L\n", b"if x <> 1:\n    pass\n", b"def f((a, b)):\n    return a.data\n",
    b'y = ur"x"\n', b"y = 10L\n", b"print\n", b'print "loss: %f" % loss.data[0]\n', b"exec code in ns\n",
    b"y = x.data.cuda(async=True)\n", b"class Old:\n    __metaclass__ = M\n",
]
LEGACY_IDIOMS = [
    b"from torch.autograd import Variable\nv = Variable(torch.randn(3), volatile=True)\n",
    b"loss = torch.nn.functional.nll_loss(x, x)\nprint(loss.data[0])\n",
    b"x.data.add_(1)  # keep this comment\n", b"x.data = torch.zeros(3)\n", b"w = torch.FloatTensor(2, 3)\n",
    b"z = x.new(2)\n", b"y = x.clone().detach()\n", b"y = torch.tensor(x)\n", b"t = x.data.numpy()\n",
    b"if id(x) == id(x.data):\n    pass\n", b"total = 0\nfor i in range(3):\n    total += torch.nn.functional.mse_loss(x, x)\n",
    b"y = x.clone()\nprint(y.grad)\n", b"d = x.detach()\nd.add_(1)\nprint(x)\n",
    b"from torch.autograd import Variable as V, Function\ny = V(x, requires_grad=True)  # noqa: TL999\n",
]


@mutator
def m_legacy_syntax(rng, data, env):
    if rng.random() < 0.5:
        lines = _lines(data)
        index = rng.randrange(len(lines))
        indent = re.match(rb"[ \t]*", lines[index]).group(0)
        lines[index] = indent + rng.choice(LEGACY_SNIPPETS)
        return b"".join(lines)
    return _insert_statement(rng, data, PRELUDE + rng.choice(LEGACY_SNIPPETS))


@mutator
def m_legacy_idioms(rng, data, env):
    for _ in range(rng.randint(1, 3)):
        data = _insert_statement(rng, data, rng.choice(LEGACY_IDIOMS))
    if b"import torch" not in data:
        data = b"import torch\n" + data
    return data


MODERN_SNIPPETS = [
    b"match x.data:\n    case [a, *rest] if a.data > 0:\n        y = a.data\n    case {'k': v, **kw}:\n        v.data.add_(1)\n"
    b"    case Point(x=0) | None:\n        pass\n    case _:\n        pass\n",
    b"type Alias[T] = list[T]\n", b"def f[T: torch.Tensor](t: T) -> T:\n    return t.data\n",
    b"class C[T]:\n    def m(self, t: T):\n        return t.data\n", b'y = f"{d["k"]}"\n', b'y = f"{x.data=}"\n',
    b'y = f"{x.data!r:>{w}}"\n', b'y = f"{f"{x.data}"}"\n', b"try:\n    pass\nexcept* ValueError as eg:\n    y = x.data\n",
    b"if (n := x.data) is not None:\n    n.add_(1)\n",
    b"async def g():\n    async with a as b:\n        await b.data\n    y = [i async for i in x.data]\n",
    b"def h(a, /, b, *, c):\n    return a.data\n", b"y = x.data[*idx]\n", b"with (open(a) as f, open(b) as g):\n    pass\n",
    b"@x.data.add_\ndef d():\n    pass\n", b"del x.data\n", b"print(*x.data, **{})\n", b"x.data: torch.Tensor = y\n",
    b"z = [x.data for x.data in y]\n", b"nonlocal q\n", b"y = x.data if (x := torch.ones(1, requires_grad=True)) else x.data\n",
    b'y = f"{x.data:{"nested"}}"\n', b"x.data @= w\n", b"x.data **= 2\n", b"x.data[::2] = 0\n",
    b'y = f"""{\nx.data\n}"""\n', b"def g():\n    return (yield x.data)\n", b"*a, b = x.data\n",
    b'y = f"\\N{DEGREE SIGN} {x.data}"\n', "y = f\"\U0001f600\u00e9{x.data} {x.data.add_(1)}\"\n".encode(),
    b'y = f"{x.data}" f"{x.data}" "{x.data}"\n', b'y = f"{  x.data  }"\n', b"y = f'{x.data!s}'\n",
    b'y = rf"{x.data}\\d"\n', b"lambda: (yield)\n", b"y = [x.data for _ in range(3) if (z := x.data)]\n",
    b"global q\nq = x.data\n", b"y = x.data[1:2, ..., None]\n", "\u00e9t\u00e9 = x.data\n".encode(),
    "\U0001d431 = x.data\n".encode(), b'y = f"{x.data = !r:^20}"\n', b"print(x.data, end='')\n",
]


@mutator
def m_modern_syntax(rng, data, env):
    for _ in range(rng.randint(1, 3)):
        data = _insert_statement(rng, data, PRELUDE + rng.choice(MODERN_SNIPPETS))
    return data


@mutator
def m_many_findings(rng, data, env):
    count = rng.randint(1000, 5000)
    templates = ["y{i} = x.data\n", "x.data.add_({i})\n", "v{i} = Variable(x)\n", "l{i} = loss.data[0]\n",
                 "w{i} = torch.FloatTensor({i})\n", "c{i} = x.clone().detach()\n", "y{i} = x.data  # noqa: TL101\n"]
    chosen = rng.sample(templates, rng.randint(1, len(templates)))
    head = ("import torch\nfrom torch.autograd import Variable\nx = torch.ones(3, requires_grad=True)\n"
            "loss = torch.nn.functional.mse_loss(x, x)\n")
    if rng.random() < 0.2:
        body = "y = [" + ", ".join(["x.data"] * count) + "]\n"
    else:
        body = "".join(rng.choice(chosen).format(i=i) for i in range(count))
    return (head + body).encode() if rng.random() < 0.5 else data + b"\n" + (head + body).encode()


@mutator
def m_empty(rng, data, env):
    return b""


@mutator
def m_whitespace_only(rng, data, env):
    return rng.choice([b"\n", b" ", b"\t", b"\r\n", b"\x0c", b"\n\n\n", b"   \n\t\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n",
                       b"\\\n", b"\\", b"#", b"# coding: latin-1\n", b"\r", b" \r \n \x0c", b"\n" * 10_000,
                       b" " * 100_000, b"\t\n" * 5000, b"# comment only", b'"""docstring only"""'])


_FULLWIDTH = {c: chr(ord(c) - ord("a") + 0xFF41) for c in "abcdefghijklmnopqrstuvwxyz"}
_BOLD = {c: chr(ord(c) - ord("a") + 0x1D41A) for c in "abcdefghijklmnopqrstuvwxyz"}


@mutator
def m_unicode_identifiers(rng, data, env):
    """Identifiers Python normalizes (NFKC) to the same name: `ｘ.ｄａｔａ` is `x.data`."""
    text = data.decode("utf-8", "surrogateescape")

    def replace(match):
        if rng.random() < 0.5:
            return match.group(0)
        table = rng.choice([_FULLWIDTH, _BOLD])
        return "".join(table.get(c, c) for c in match.group(0))

    text = re.sub(r"\b(x|data|loss|w|p|torch|detach|clone|grad|volatile|item)\b", replace, text)
    return text.encode("utf-8", "surrogateescape")


@mutator
def m_noqa_comments(rng, data, env):
    comments = [b"  # noqa", b"  # noqa: TL101", b"  # noqa:TL1,TL2", b"  # noqa: TL999, garbage", b"  # noqa:",
                b"  # torchlint: noqa", b"  # type: ignore  # noqa: TL102", b"  # noqa: \xc3\xa9", b"  #noqa:ALL",
                b"  # noqa: TL102 TL101", b"  # noqa: data-read"]
    lines = _lines(data)
    for _ in range(rng.randint(1, 6)):
        index = rng.randrange(len(lines))
        line = lines[index]
        body = line.rstrip(b"\r\n")
        lines[index] = body + rng.choice(comments) + line[len(body):]
    if rng.random() < 0.3:
        lines.insert(0, rng.choice([b"# torchlint: noqa\n", b"# torchlint: noqa: TL101, TL201\n", b"# torchlint: noqa:\n"]))
    return b"".join(lines)


@mutator
def m_splice(rng, data, env):
    other = rng.choice(env.seeds).read_bytes()
    a, b = _lines(data), _lines(other)
    return b"".join(a[: rng.randrange(len(a) + 1)] + b[rng.randrange(len(b) + 1):])


@mutator
def m_cross_import(rng, data, env):
    """Imports between the inputs of one batch: star imports, cycles, rename chains."""
    names = env.batch_names or [env.self_name]
    lines = []
    for _ in range(rng.randint(1, 4)):
        other = rng.choice(names + [env.self_name])
        k = rng.randrange(10)
        lines.append(rng.choice([
            f"from {other} import *\n", f"from {other} import make as m{k}\n", f"import {other} as q{k}\n",
            f"from . import {other}\n", f"from .{other} import *\n", f"from {other} import V{k} as V{k + 1}\n",
            f"from {other} import Variable as V{k}\n", f"V{k} = q{k}.V{k}\n",
        ]))
    tail = rng.choice([
        "from torch.autograd import Variable as V0\ndef make():\n    return torch.ones(2, requires_grad=True)\n",
        "y = V1(make()).data\n", "m0().data.add_(1)\n", f"y = V{rng.randrange(10)}(x)\n", "",
    ])
    return PRELUDE + "".join(lines).encode() + data + b"\n" + tail.encode()


@mutator
def m_notebook(rng, data, env):
    """The text as the code cells of a notebook (with magics), sometimes damaged."""
    env.ext = ".ipynb"
    text = data.decode("utf-8", "surrogateescape").encode("utf-8", "replace").decode("utf-8")
    chunks = re.split(r"\n\s*\n", text) or [""]
    cells = []
    for number, chunk in enumerate(chunks):
        if rng.random() < 0.15:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": ["# notes\n", "x.data"]})
        source = chunk
        if rng.random() < 0.2:
            source = rng.choice(["%time ", "!pip install torch\n", "%%time\n", "%%bash\n", "files = !ls\n", "x?\n",
                                 "%%capture\n", "%matplotlib inline\n"]) + source
        cells.append({"cell_type": "code", "execution_count": number if rng.random() < 0.5 else None,
                      "metadata": {}, "outputs": [],
                      "source": source.splitlines(keepends=True) if rng.random() < 0.8 else source})
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    out = json.dumps(notebook, indent=rng.choice([1, 2, None]), ensure_ascii=rng.random() < 0.5).encode()
    if rng.random() < 0.3:
        out = rng.choice([m_byte_flip, m_truncate, m_insert_bytes, m_bom])(rng, out, env)
    return out


MUTATOR_NAMES = sorted(MUTATORS)
# Mutators that make a whole new file: not stacked on others.
_STANDALONE = {"empty", "whitespace_only", "notebook"}


@dataclass
class Input:
    index: int
    name: str  # file name in the batch folder
    data: bytes
    mutator: str
    seed: str

    @property
    def module(self) -> str:
        return self.name.rsplit(".", 1)[0]


def input_name(index: int) -> str:
    return f"fz{index:05d}"


def make_input(index: int, seeds: list[Path], campaign_seed: int, batch_names: list[str],
               allowed: Optional[list[str]] = None) -> Input:
    rng = random.Random(f"{campaign_seed}/{index}")
    seed = rng.choice(seeds)
    data = seed.read_bytes()
    allowed = allowed or MUTATOR_NAMES
    stackable = [n for n in allowed if n not in _STANDALONE] or allowed
    names = [rng.choice(allowed)]
    while names[0] not in _STANDALONE and len(names) < 3 and rng.random() < 0.25:
        names.append(rng.choice(stackable))
    if names[0] == "notebook" and rng.random() < 0.5 and stackable != allowed:  # damaged Python inside a notebook
        names.insert(0, rng.choice(stackable))
    env = Env(rng, seeds, [n for n in batch_names if n != input_name(index)], input_name(index))
    for name in names:
        data = MUTATORS[name](rng, data, env)
    label = "+".join(names)
    if len(data) > MAX_INPUT_BYTES:
        data = data[:MAX_INPUT_BYTES]
        label += "+cap"
    return Input(index, input_name(index) + env.ext, data, label, seed_label(seed))


# ======================================================================================
# Running torchlint


@dataclass
class Run:
    argv: list[str]
    returncode: Optional[int]
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    items: Optional[list] = None  # parsed JSON
    stdout_size: int = 0  # bytes written to stdout (stdout holds at most Runner.cap of them)
    too_big: bool = False  # stdout went over Runner.cap (the rest was cut off)


class Runner:
    def __init__(self, args, work: Path):
        self.timeout = args.timeout
        self.memory = args.memory_mb
        self.neutral = work / "cwd"  # never the batch folder: `python -m` puts cwd on sys.path
        self.neutral.mkdir(exist_ok=True)
        self.env = dict(os.environ)
        self.env.pop("GITHUB_ACTIONS", None)
        self.env.pop("TORCHLINT_CACHE_DIR", None)
        self.env["PYTHONFAULTHANDLER"] = "1"
        self.cap = args.max_output_mb << 20
        self.work = work
        self.runs = 0
        self.seconds = 0.0

    def _limits(self):
        if self.memory:
            try:
                import resource
                limit = self.memory * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ImportError, ValueError, OSError):
                pass
        try:
            import resource
            # Output goes to a file: a run that writes more than the cap gets SIGXFSZ.
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.cap + 1, self.cap + 1))
        except (ImportError, ValueError, OSError):
            pass

    def torchlint(self, *args: str, timeout: Optional[float] = None) -> Run:
        argv = [sys.executable, "-m", "torchlint", "check", *args]
        return self.run(argv, timeout or self.timeout)

    def run(self, argv: list[str], timeout: float, stdin: Optional[bytes] = None) -> Run:
        started = time.monotonic()
        # Files, not pipes: nothing blocks on a full pipe, and a run that floods its output
        # (gigabytes) is measured and cut off rather than held in memory.
        with tempfile.TemporaryFile(dir=self.work) as out_file, tempfile.TemporaryFile(dir=self.work) as err_file:
            process = subprocess.Popen(argv, cwd=self.neutral, env=self.env,
                                       stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                       stdout=out_file, stderr=err_file, start_new_session=True, preexec_fn=self._limits)
            timed_out = False
            try:
                process.communicate(stdin, timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            finally:
                _kill_group(process)  # leftover workers of a finished run
            seconds = time.monotonic() - started
            size = out_file.seek(0, os.SEEK_END)
            out_file.seek(0)
            out = out_file.read(self.cap)
            err_size = err_file.seek(0, os.SEEK_END)
            err_file.seek(max(0, err_size - (1 << 20)))
            err = err_file.read()  # its last MiB
        self.runs += 1
        self.seconds += seconds
        too_big = size > self.cap or (process.returncode == -getattr(signal, "SIGXFSZ", -999))
        return Run(argv, None if timed_out else process.returncode, out.decode("utf-8", "replace"),
                   err.decode("utf-8", "replace"), seconds, timed_out, stdout_size=size, too_big=too_big)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------------------------
# Judging one run

_TRACEBACK = "Traceback (most recent call last)"
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration)\w*)\b:?", re.M)


def _where(text: str) -> str:
    """The innermost frame of a traceback in ``text`` as file:line:function."""
    frames = _FRAME.findall(text)
    if not frames:
        return "?"
    path, line, function = frames[-1]
    return f"{Path(path).name}:{line}:{function}"


def _exception(text: str) -> str:
    found = _EXCEPTION_LINE.findall(text)
    return found[-1] if found else "?"


@dataclass
class Problem:
    kind: str  # crash, hang, internal error
    signature: str
    filename: Optional[str]  # the file it names, when it names one
    detail: str


def judge(run: Run, folder: Optional[Path] = None) -> list[Problem]:
    """What is wrong with one check run (parses its JSON into run.items)."""
    if run.timed_out:
        return [Problem("hang", "hang", None, f"no result within {run.seconds:.0f} s")]
    if run.too_big:
        return [Problem("huge output", "huge-output", None,
                        f"more than {len(run.stdout) >> 20} MiB on stdout (cut off there; exit {run.returncode})")]
    if run.returncode not in (0, 1, 2):
        tail = run.stderr[-3000:]
        reason = f"signal {-run.returncode}" if run.returncode < 0 else f"exit {run.returncode}"
        where = _where(tail) if _TRACEBACK in tail or "most recent call first" in tail else ""
        return [Problem("crash", f"crash:{reason}{':' + _exception(tail) if _TRACEBACK in tail else ''}"
                        f"{'@' + where if where else ''}", None, tail)]
    problems = []
    if _TRACEBACK in run.stderr:
        tail = run.stderr[run.stderr.rindex(_TRACEBACK):]
        problems.append(Problem("crash", f"traceback:{_exception(tail)}@{_where(tail)}", None, run.stderr[-4000:]))
    try:
        items = json.loads(run.stdout)
        if not isinstance(items, list):
            raise ValueError("not a list")
    except ValueError as error:
        problems.append(Problem("crash", f"invalid-json:exit {run.returncode}", None,
                                f"{error}\nstdout: {run.stdout[:2000]!r}\nstderr: {run.stderr[-3000:]}"))
        return problems
    run.items = items
    internal = 0
    for item in items:
        message = str(item.get("message", ""))
        if item.get("code") == "TL000" and re.search(r"took longer than|needed more than .* of memory", message):
            # torchlint's own per-file limit (--file-timeout, --file-memory) stopped it: on the
            # inputs made here (at most 1 MiB) that is a hang or a blow-up all the same.
            internal += 1
            what = "time" if "took longer" in message else "memory"
            problems.append(Problem("hang", f"own-limit:{what}", Path(item.get("filename", "?")).name, message))
            continue
        if item.get("code") == "TL000" and "internal error" in message:
            internal += 1
            filename = Path(item.get("filename", "?")).name
            # stderr has the last frames: "torchlint: internal error in rule X while linting F: E: m\n  File ..."
            block = ""
            for chunk in re.split(r"(?m)^torchlint: ", run.stderr):
                if filename in chunk.split("\n", 1)[0]:
                    block = chunk
                    break
            rule = re.search(r"internal error in rule (\S+?)[: ]", message)
            exc = re.search(r"internal error(?: in rule \S+)?: ([\w.]+)", message)
            signature = (f"internal:{rule.group(1) if rule else '-'}:{exc.group(1) if exc else '?'}"
                         f"@{_where(block) if block else '?'}")
            if "worker process" in message:
                signature = "internal:worker-died"
            problems.append(Problem("internal error", signature, filename, message + "\n" + block))
    if run.returncode == 2 and "did not stop within" in run.stderr:
        name = re.search(r"linting (.*?) did not stop", run.stderr)
        problems.append(Problem("hang", "watchdog:stuck-in-C", Path(name.group(1)).name if name else None, run.stderr[-3000:]))
        internal += 1
    if run.returncode == 2 and not internal and not problems:
        first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else ""
        problems.append(Problem("crash", f"exit-2:{re.sub(r'/[^ :]+', '<path>', first)[:120]}", None, run.stderr[-4000:]))
    if run.returncode == 0 and items or run.returncode == 1 and not items:
        problems.append(Problem("crash", f"exit-status:{run.returncode} with {len(items)} findings", None, run.stderr[-2000:]))
    return problems


def normalized(items: list, folder: Path) -> list[str]:
    """Findings as sorted JSON strings, with the folder's path replaced."""
    prefix = str(folder)

    def strip(value):
        if isinstance(value, str):
            return value.replace(prefix + os.sep, "<DIR>/").replace(prefix, "<DIR>")
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        return value

    return sorted(json.dumps(strip(item), sort_keys=True) for item in items)


def by_file(lines: list[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for line in lines:
        grouped.setdefault(Path(json.loads(line).get("filename", "?")).name, []).append(line)
    return grouped


# --------------------------------------------------------------------------------------
# Python's own verdict on the same bytes, in a separate process (a deeply nested file
# may take the parser down with it).

ORACLE = r"""
import ast, io, json, sys, tokenize, warnings
warnings.simplefilter("ignore")
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))  # as torchlint's linter does
for path in sys.stdin.read().split("\0"):
    if not path:
        continue
    result = {"path": path}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            ast.parse(data, path)
            result["ast"] = None
        except BaseException as error:
            result["ast"] = f"{type(error).__name__}: {error}"
        try:
            compile(data, path, "exec", dont_inherit=True)
            result["compile"] = None
        except BaseException as error:
            result["compile"] = f"{type(error).__name__}: {error}"
        try:
            result["comments"] = sum(1 for t in tokenize.tokenize(io.BytesIO(data).readline) if t.type == tokenize.COMMENT)
        except BaseException:
            result["comments"] = None
    except BaseException as error:
        result["ast"] = result["compile"] = f"{type(error).__name__}: {error}"
        result["comments"] = None
    print(json.dumps(result), flush=True)
"""


def oracle(runner: Runner, paths: list[Path]) -> dict[str, dict]:
    """{path: {"ast": error or None, "compile": error or None, "comments": n or None}}.

    On a Python older than the newest whose syntax torchlint lints (torchlint/syntax/parsing.py),
    torchlint lints through libcst a file this Python refuses and a newer one parses:
    "ast" is then the newest Python's verdict ("newer_python" says which)."""
    results = _oracle(runner, paths, sys.executable)
    newest = _newest_python()
    if newest is not None:
        refused = [Path(path) for path, result in results.items()
                   if (result.get("ast") or "").startswith("SyntaxError") and not result.get("unknown")]
        for path, result in _oracle(runner, refused, newest).items():
            if result.get("ast") is None and not result.get("unknown"):
                results[path]["ast"] = None
                results[path]["newer_python"] = newest
    return results


def _newest_python() -> Optional[str]:
    """An interpreter of the newest Python torchlint mirrors, when this one is older."""
    newest = (3, 13)
    if sys.version_info[:2] >= newest:
        return None
    name = f"python{newest[0]}.{newest[1]}"
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for candidate in sorted(glob.glob(os.path.join(root, "versions", f"{newest[0]}.{newest[1]}.*", "bin", name))):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _oracle(runner: Runner, paths: list[Path], python: str) -> dict[str, dict]:
    results: dict[str, dict] = {}
    todo = [str(p) for p in paths]
    while todo:
        run = runner.run([python, "-c", ORACLE], timeout=max(60.0, runner.timeout),
                         stdin="\0".join(todo).encode("utf-8", "surrogateescape"))
        for line in run.stdout.splitlines():
            try:
                result = json.loads(line)
            except ValueError:
                continue
            results[result["path"]] = result
        rest = [p for p in todo if p not in results]
        if not rest:
            break
        # The first one left took the oracle down (or its time): it stays unjudged.
        results[rest[0]] = {"ast": "oracle died", "compile": "oracle died", "comments": None, "unknown": True}
        todo = rest[1:]
    return results


_DEPTH_LIMITED = re.compile(r"RecursionError|too many nested|too complex|MemoryError|too many levels of indentation|"
                            r"stack overflow|recursion", re.I)


# ======================================================================================
# Failures and reproducers


@dataclass
class Failure:
    kind: str
    signature: str
    files: dict[str, bytes]  # what goes into the reproducer's input/ folder
    mutators: list[str]
    seeds: list[str]
    command: str
    output: str
    note: str = ""
    saved: Optional[Path] = None
    minimized: Optional[bytes] = None


class Recorder:
    KINDS = ["crash", "hang", "huge output", "internal error", "jobs difference", "lost neighbour", "parse disagreement",
             "fix failure", "non-idempotent fix", "lost comments"]

    def __init__(self, keep: Path, per_class: int):
        self.keep = keep
        self.per_class = per_class
        self.failures: list[Failure] = []
        self.by_signature: dict[tuple[str, str], int] = {}
        self.seen_files: set[tuple[str, str, str]] = set()  # (kind, signature, file): count once

    def is_new(self, kind: str, signature: str, key: str) -> bool:
        return (kind, signature, key) not in self.seen_files

    def add(self, failure: Failure, key: Optional[str] = None) -> bool:
        dedup = (failure.kind, failure.signature, key or ",".join(sorted(failure.files)))
        if dedup in self.seen_files:
            return False
        self.seen_files.add(dedup)
        self.failures.append(failure)
        count = self.by_signature.get((failure.kind, failure.signature), 0) + 1
        self.by_signature[(failure.kind, failure.signature)] = count
        if count <= self.per_class:
            self._save(failure)
        return True

    def count(self, kind: str) -> int:
        return sum(1 for f in self.failures if f.kind == kind)

    def _save(self, failure: Failure) -> None:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{failure.kind}-{failure.signature}")[:60].strip("-")
        folder = self.keep / f"{len(self.failures):04d}-{slug}"
        (folder / "input").mkdir(parents=True, exist_ok=True)
        for name, data in failure.files.items():
            target = folder / "input" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        script = folder / "repro.sh"
        script.write_text("#!/bin/sh\n# " + failure.kind + ": " + failure.signature.replace("\n", " ") + "\n"
                          'cd "$(dirname "$0")" || exit 2\n' + failure.command + "\n")
        script.chmod(0o755)
        info = [f"kind:      {failure.kind}", f"signature: {failure.signature}", f"mutators:  {', '.join(failure.mutators)}",
                f"seeds:     {', '.join(failure.seeds)}", f"command:   {failure.command}", ""]
        if failure.note:
            info += [failure.note, ""]
        info += ["output:", failure.output[-12000:]]
        (folder / "info.txt").write_text("\n".join(info), errors="replace")
        failure.saved = folder

    def save_minimized(self, failure: Failure, data: bytes) -> None:
        failure.minimized = data
        if failure.saved:
            (failure.saved / "minimized.bin").write_bytes(data)
            with open(failure.saved / "info.txt", "a", errors="replace") as handle:
                handle.write(f"\n\nminimized ({len(data)} bytes; the file named in input/ reduced to):\n{data[:4000]!r}\n")


LIMIT_OPTIONS: list[str] = []  # --file-timeout N, when used: reproducers repeat it


def check_command(jobs: int, folder: str = "input", extra: tuple = ()) -> str:
    return " ".join(["python -m torchlint check --output-format json --no-cache --isolated", *LIMIT_OPTIONS, *extra,
                     "--jobs", str(jobs), folder])


# ======================================================================================
# The campaign


@dataclass
class Stats:
    inputs: int = 0
    batches: int = 0
    neighbours: int = 0
    tl000: dict = field(default_factory=dict)
    per_mutator: dict = field(default_factory=dict)
    failing_mutator: dict = field(default_factory=dict)
    informational: dict = field(default_factory=dict)
    fix_files: int = 0
    fix_changed: int = 0
    fix_batches: int = 0
    specials: int = 0
    bisect_runs: int = 0


class Campaign:
    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        self.work = Path(tempfile.mkdtemp(prefix="torchlint-fuzz-work-"))
        self.keep = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="torchlint-fuzz-"))
        self.keep.mkdir(parents=True, exist_ok=True)
        self.runner = Runner(args, self.work)
        self.recorder = Recorder(self.keep, args.keep_per_class)
        self.stats = Stats()
        self.seeds = find_seeds(args.seeds, args.quick)
        self.alone_cache: dict[str, Optional[list[str]]] = {}
        self.fix_pool: list[tuple[str, bytes, str, str]] = []  # (name, data, mutator, seed)
        self.fix_pool_seen = 0
        self.bisect_deadline = 0.0
        self.manifest = open(self.keep / "manifest.jsonl", "w")
        self.log = sys.stderr
        self.limit_options: tuple = ()
        self.mutators = [n for n in (args.mutators or MUTATOR_NAMES) if n not in args.skip_mutators]

    # -- helpers -------------------------------------------------------------------

    def say(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:6.0f}s] {text}", file=self.log, flush=True)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def folder(self, name: str, files: dict[str, bytes]) -> Path:
        folder = self.work / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for filename, data in files.items():
            (folder / filename).write_bytes(data)
        return folder

    def check(self, folder: Path, jobs: int, timeout: Optional[float] = None, extra: tuple = ()) -> Run:
        return self.runner.torchlint("--output-format", "json", "--no-cache", "--isolated", *self.limit_options, *extra,
                                     "--jobs", str(jobs), str(folder), timeout=timeout)

    # -- neighbours ----------------------------------------------------------------

    def neighbour_name(self, seed: Path) -> str:
        stem = re.sub(r"\W", "_", seed.stem)
        return f"nb_{hashlib.sha1(str(seed).encode()).hexdigest()[:6]}_{stem}.py"

    def alone(self, seed: Path) -> Optional[list[str]]:
        """The findings of a seed file linted alone (None when that run itself fails)."""
        key = str(seed)
        if key not in self.alone_cache:
            name = self.neighbour_name(seed)
            folder = self.folder("alone", {name: seed.read_bytes()})
            run = self.check(folder, 1)
            problems = judge(run, folder)
            if problems:
                for problem in problems:
                    self.recorder.add(Failure(problem.kind, problem.signature, {name: seed.read_bytes()}, ["(none: seed)"],
                                              [seed_label(seed)], check_command(1), problem.detail,
                                              "an unmodified seed file, linted alone"))
                self.alone_cache[key] = None
            else:
                self.alone_cache[key] = normalized(run.items, folder)
        return self.alone_cache[key]

    # -- bisection -----------------------------------------------------------------

    def narrow(self, required: list[str], candidates: list[str], failing: Callable[[list[str]], bool]) -> list[str]:
        """A small subset S of candidates with failing(required + S), assuming
        failing(required + candidates); gives up (returning all) when out of time."""
        if not candidates or time.monotonic() > self.bisect_deadline:
            return candidates
        if len(candidates) == 1:
            return candidates
        half = len(candidates) // 2
        a, b = candidates[:half], candidates[half:]
        if failing(required + a):
            return self.narrow(required, a, failing)
        if failing(required + b):
            return self.narrow(required, b, failing)
        kept_a = self.narrow(required + b, a, failing)
        kept_b = self.narrow(required + kept_a, b, failing)
        return kept_a + kept_b

    def subset_runner(self, files: dict[str, bytes], jobs: int, timeout: float):
        def run_subset(names: list[str]) -> tuple[Path, Run]:
            self.stats.bisect_runs += 1
            folder = self.folder("bisect", {n: files[n] for n in names})
            return folder, self.check(folder, jobs, timeout=timeout)
        return run_subset

    # -- one batch -----------------------------------------------------------------

    def batch(self, number: int, inputs: list[Input]) -> None:
        args = self.args
        rng = random.Random(f"{args.seed}/batch/{number}")
        neighbours = rng.sample(self.seeds, min(args.neighbours, len(self.seeds)))
        files = {i.name: i.data for i in inputs}
        meta = {i.name: i for i in inputs}
        nb_names = {}
        for seed in neighbours:
            name = self.neighbour_name(seed)
            files[name] = seed.read_bytes()
            nb_names[name] = seed
        folder = self.folder("batch", files)
        for item in inputs:
            self.manifest.write(json.dumps({"batch": number, "file": item.name, "mutator": item.mutator, "seed": item.seed,
                                            "bytes": len(item.data), "sha1": hashlib.sha1(item.data).hexdigest()}) + "\n")
            self.stats.per_mutator[item.mutator.split("+")[0]] = self.stats.per_mutator.get(item.mutator.split("+")[0], 0) + 1
        verdicts = oracle(self.runner, [folder / i.name for i in inputs if i.name.endswith(".py")])
        job_counts = [1, 2] if args.jobs_compare else [1]
        runs = {jobs: self.check(folder, jobs) for jobs in job_counts}
        bad_files: set[str] = set()
        self.batch_level_seen: set[tuple[str, str]] = set()
        for jobs, run in runs.items():
            for problem in judge(run, folder):
                self.report_problem(problem, run, jobs, files, meta, nb_names, bad_files)
        healthy = {jobs: run for jobs, run in runs.items() if run.items is not None}
        lines = {jobs: normalized(run.items, folder) for jobs, run in healthy.items()}
        grouped = {jobs: by_file(found) for jobs, found in lines.items()}
        # --jobs 1 against --jobs 2
        if len(healthy) == 2 and lines[1] != lines[2]:
            names = sorted(set(grouped[1]) | set(grouped[2]))
            # A file that went over a limit in one run only is a hang already, not a difference.
            differing = [n for n in names if grouped[1].get(n) != grouped[2].get(n) and n not in bad_files]
            for name in differing:
                diff = _diff(grouped[1].get(name, []), grouped[2].get(name, []))
                signature = f"jobs:{_first_code(diff)}"
                if not self.recorder.is_new("jobs difference", signature, name):
                    continue
                others = self.narrow_jobs_difference(name, files) if name in files else sorted(files)
                chosen = {n: files[n] for n in ([name] if name in files else []) + others}
                self.recorder.add(Failure("jobs difference", signature, chosen,
                                          [meta[name].mutator] if name in meta else ["(neighbour)"],
                                          [meta[name].seed] if name in meta else [seed_label(nb_names.get(name, Path("?")))],
                                          check_command(1) + " > j1.json; " + check_command(2) + " > j2.json; diff j1.json j2.json",
                                          "--jobs 1 (-) against --jobs 2 (+):\n" + diff,
                                          f"file that differs: {name}; input/ holds it and {len(others)} other files it needs"),
                                  key=name)
                self.note_failing(meta.get(name))
        # the other output formats: no crash, and output that parses
        if args.formats:
            # Files that already failed (a limit, a crash) stay out: each would only fail again.
            kept = {n: d for n, d in files.items() if n not in bad_files}
            format_folder = self.folder("formats", kept)
            for output_format in args.formats:
                self.other_format(format_folder, output_format, kept, meta, bad_files)
        # neighbours against themselves alone
        for name, seed in nb_names.items():
            expected = self.alone(seed)
            self.stats.neighbours += 1
            if expected is None:
                continue
            for jobs, found in grouped.items():
                got = found.get(name, [])
                if got != expected:
                    self.lost_neighbour(name, seed, expected, got, jobs, files, meta)
                    break
        # TL000 against Python's own parser
        if 1 in grouped or 2 in grouped:
            found = grouped.get(1) or grouped.get(2)
            for item in inputs:
                self.compare_parse(item, found.get(item.name, []), verdicts.get(str(folder / item.name)), bad_files)
        # the fix pool: inputs that compile
        for item in inputs:
            verdict = verdicts.get(str(folder / item.name))
            usable = item.name.endswith(".ipynb") or (verdict and verdict.get("compile") is None)
            if usable and len(item.data) <= args.fix_max_bytes and item.name not in bad_files:
                self.add_to_fix_pool((item.name, item.data, item.mutator, item.seed))
        self.stats.batches += 1
        self.stats.inputs += len(inputs)

    def format_problems(self, folder: Path, output_format: str, timeout: Optional[float] = None) -> tuple[Run, list[Problem]]:
        """One run in ``output_format`` and what is wrong with it: a crash, output that does
        not parse, output far larger than the JSON of the same files, or far slower."""
        run = self.runner.torchlint("--output-format", output_format, "--no-cache", "--isolated", *self.limit_options,
                                    "--jobs", "1", str(folder), timeout=timeout)
        problems = [p for p in judge(run) if not p.signature.startswith(("invalid-json", "exit-status"))]
        problems = [p for p in problems if not (p.filename or p.kind == "internal error")]  # the JSON runs have those
        if run.timed_out or run.too_big or run.returncode not in (0, 1, 2) or "internal error" in run.stderr:
            return run, problems
        why = _format_error(output_format, run.stdout)
        if why:
            problems.append(Problem("crash", f"unparsable:{why[:60]}", None, why + "\n" + run.stdout[-3000:]))
        if run.stdout_size > (10 << 20) or run.seconds > 10:
            reference = self.runner.torchlint("--output-format", "json", "--no-cache", "--isolated", *self.limit_options,
                                              "--jobs", "1", str(folder), timeout=timeout)
            if not reference.timed_out and run.stdout_size > 20 * reference.stdout_size + (10 << 20):
                problems.append(Problem("huge output", "huge-output",
                                        None, f"{run.stdout_size / (1 << 20):.0f} MiB of {output_format} output for "
                                              f"{reference.stdout_size / (1 << 20):.1f} MiB of JSON with the same findings"))
            if not reference.timed_out and run.seconds > max(10.0, 5 * reference.seconds):
                problems.append(Problem("hang", "slow-format", None, f"{run.seconds:.1f} s in {output_format} against "
                                                                     f"{reference.seconds:.1f} s for JSON, same files"))
        return run, problems

    def other_format(self, folder: Path, output_format: str, files: dict[str, bytes], meta: dict[str, Input],
                     bad_files: set[str]) -> None:
        run, problems = self.format_problems(folder, output_format)
        for problem in problems:
            signature = f"format:{output_format}:{problem.signature}"
            if (problem.kind, signature) in self.batch_level_seen:
                continue
            self.batch_level_seen.add((problem.kind, signature))
            if self.recorder.by_signature.get((problem.kind, signature), 0) >= self.args.keep_per_class:
                # A known class: count it for this batch, and spend no more time narrowing it.
                self.recorder.add(Failure(problem.kind, signature, {}, ["(not narrowed)"], [], "", problem.detail,
                                          "a known class, not narrowed again"), key=f"{folder}#{self.stats.batches}")
                continue
            timeout = min(self.args.timeout, self.args.bisect_timeout) if problem.kind == "hang" else self.args.timeout

            def failing(names: list[str], wanted=problem.signature) -> bool:
                self.stats.bisect_runs += 1
                sub = self.folder("bisect", {n: files[n] for n in names})
                _, found = self.format_problems(sub, output_format, timeout)
                return any(p.signature == wanted or p.kind == "hang" and wanted == "hang" for p in found)

            self.bisect_deadline = time.monotonic() + self.args.bisect_seconds
            culprits = self.narrow([], sorted(files), failing)
            bad_files.update(culprits)
            chosen = {n: files[n] for n in culprits}
            self.recorder.add(Failure(problem.kind, signature, chosen,
                                      [meta[n].mutator if n in meta else "(neighbour)" for n in chosen],
                                      [meta[n].seed for n in chosen if n in meta],
                                      check_command(1).replace("--output-format json", f"--output-format {output_format}"),
                                      problem.detail + "\n--- stderr ---\n" + run.stderr[-5000:],
                                      f"--output-format {output_format}, --jobs 1; narrowed to {len(chosen)} of {len(files)} files"),
                              key=",".join(sorted(culprits)))
            for name in culprits:
                self.note_failing(meta.get(name))

    def add_to_fix_pool(self, entry) -> None:
        self.fix_pool_seen += 1
        size = max(self.args.fix_sample, 1)
        if len(self.fix_pool) < size:
            self.fix_pool.append(entry)
        else:
            slot = random.Random(f"{self.args.seed}/pool/{self.fix_pool_seen}").randrange(self.fix_pool_seen)
            if slot < size:
                self.fix_pool[slot] = entry

    def note_failing(self, item: Optional[Input]) -> None:
        if item is not None:
            key = item.mutator.split("+")[0]
            self.stats.failing_mutator[key] = self.stats.failing_mutator.get(key, 0) + 1

    def report_problem(self, problem: Problem, run: Run, jobs: int, files: dict[str, bytes], meta: dict[str, Input],
                       nb_names: dict[str, Path], bad_files: set[str]) -> None:
        if problem.filename:
            culprits = [problem.filename]
            if not self.recorder.is_new(problem.kind, problem.signature, problem.filename):
                return
        else:
            if (problem.kind, problem.signature) in self.batch_level_seen:
                return  # the other job count failed the same way: narrowed once
            self.batch_level_seen.add((problem.kind, problem.signature))
            if self.recorder.by_signature.get((problem.kind, problem.signature), 0) >= self.args.keep_per_class:
                culprits = sorted(files)  # a known class: not narrowed again (it costs runs)
            else:
                culprits = self.bisect_problem(problem, files, jobs)
        bad_files.update(culprits)
        chosen = {n: files[n] for n in culprits if n in files} or files
        note = f"--jobs {jobs}; " + (f"narrowed to {len(chosen)} of {len(files)} files by bisection" if not problem.filename
                                     else f"named by the finding: {problem.filename}")
        if problem.filename and problem.filename in files:
            # Does it fail alone?  (A failure that needs other files keeps the batch.)
            folder = self.folder("alone-check", {problem.filename: files[problem.filename]})
            alone = self.check(folder, jobs)
            if not any(p.signature == problem.signature for p in judge(alone, folder)):
                chosen = files
                note += "; does NOT reproduce alone: the whole batch is in input/"
        mutators = [meta[n].mutator if n in meta else "(neighbour)" for n in chosen if n in culprits] or ["?"]
        seeds = [meta[n].seed if n in meta else seed_label(nb_names.get(n, Path("?"))) for n in chosen if n in culprits]
        failure = Failure(problem.kind, problem.signature, chosen, mutators, seeds, check_command(jobs),
                          problem.detail + "\n\n--- stderr ---\n" + run.stderr[-6000:], note)
        if self.recorder.add(failure, key=",".join(sorted(culprits))):
            for name in culprits:
                self.note_failing(meta.get(name))
            first_of_class = self.recorder.by_signature.get((problem.kind, problem.signature)) == 1
            if self.args.minimize and first_of_class and len(chosen) == 1 and problem.kind in ("crash", "internal error"):
                self.minimize(failure, problem, jobs)

    def bisect_problem(self, problem: Problem, files: dict[str, bytes], jobs: int) -> list[str]:
        timeout = min(self.args.timeout, self.args.bisect_timeout) if problem.kind == "hang" else self.args.timeout
        run_subset = self.subset_runner(files, jobs, timeout)

        def failing(names: list[str]) -> bool:
            folder, run = run_subset(names)
            return any(p.kind == problem.kind for p in judge(run, folder))

        self.bisect_deadline = time.monotonic() + self.args.bisect_seconds
        return self.narrow([], sorted(files), failing)

    def narrow_jobs_difference(self, name: str, files: dict[str, bytes]) -> list[str]:
        def failing(names: list[str]) -> bool:
            self.stats.bisect_runs += 1
            folder = self.folder("bisect", {n: files[n] for n in names})
            found = []
            for jobs in (1, 2):
                run = self.check(folder, jobs)
                judge(run, folder)
                if run.items is None:
                    return False
                found.append(by_file(normalized(run.items, folder)).get(name, []))
            return found[0] != found[1]

        self.bisect_deadline = time.monotonic() + self.args.bisect_seconds
        if failing([name]):
            return []
        return self.narrow([name], sorted(n for n in files if n != name), failing)

    def lost_neighbour(self, name: str, seed: Path, expected: list[str], got: list[str], jobs: int,
                       files: dict[str, bytes], meta: dict[str, Input]) -> None:
        run_subset = self.subset_runner(files, jobs, self.args.timeout)

        def failing(names: list[str]) -> bool:
            folder, run = run_subset(names)
            judge(run, folder)
            if run.items is None:
                return False
            return by_file(normalized(run.items, folder)).get(name, []) != expected

        self.bisect_deadline = time.monotonic() + self.args.bisect_seconds
        others = sorted(n for n in files if n != name)
        culprits = self.narrow([name], others, failing)
        chosen = {n: files[n] for n in [name] + culprits}
        diff = _diff(expected, got)
        self.recorder.add(Failure("lost neighbour", f"neighbour:{_first_code(diff)}", chosen,
                                  [meta[n].mutator for n in culprits if n in meta] or ["(none)"],
                                  [seed_label(seed)] + [meta[n].seed for n in culprits if n in meta],
                                  check_command(jobs), "alone (-) against in the batch (+):\n" + diff,
                                  f"--jobs {jobs}; the neighbour {name} (an untouched copy of {seed_label(seed)}) "
                                  f"loses findings next to {', '.join(culprits) or 'the batch'}"), key=name + "@" + ",".join(culprits))
        for n in culprits:
            self.note_failing(meta.get(n))

    def inform(self, what: str) -> None:
        self.stats.informational[what] = self.stats.informational.get(what, 0) + 1

    def compare_parse(self, item: Input, found: list[str], verdict: Optional[dict], bad_files: set[str]) -> None:
        # Only the TL000s that say the file was not linted (not e.g. a cap on the number of findings).
        reasons = [m for m in (json.loads(line) for line in found)
                   if m.get("code") == "TL000" and " was not linted: " in m.get("message", "")]
        reasons = [m["message"] for m in reasons]
        for reason in reasons:
            short = re.sub(r"^.*? was not linted: ", "", reason)
            short = re.sub(r"\d+", "N", re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", short))[:70]
            self.stats.tl000[short] = self.stats.tl000.get(short, 0) + 1
        if item.name in bad_files or verdict is None or verdict.get("unknown") or not item.name.endswith(".py"):
            return
        python_error = verdict.get("ast")
        if python_error is not None and any(
                m.get("code") == "TL205" or (m.get("code") == "TL000" and "has syntax that Python 3 refuses" in
                                             m.get("message", "")) for m in (json.loads(line) for line in found)):
            self.inform("read legacy syntax that ast rejects (TL000 note or TL205)")
            return
        torchlint_says = " | ".join(reasons)
        if python_error is None and reasons:
            if _DEPTH_LIMITED.search(torchlint_says) or "binary" in torchlint_says or "too large" in torchlint_says:
                self.inform("TL000 on a file ast parses (depth/binary/size)")
                return
            if _undecodable_in_comment(item.data, reasons[0]):
                # CPython 3.11's tokenizer does not decode comments; torchlint decodes the whole
                # file, as documented (README, "Files that cannot be linted").
                self.inform("TL000 for undecodable bytes in a comment (CPython 3.11 skips them)")
                return
            signature = "parse:TL000-but-ast-parses:" + re.sub(r"\d+", "N", re.sub(r"^.*? was not linted: ", "", reasons[0]))[:80]
        elif python_error is not None and not reasons:
            if _DEPTH_LIMITED.search(python_error):
                self.inform("linted a file ast rejects for depth")
                return
            signature = "parse:linted-but-ast-rejects:" + re.sub(r"\d+", "N", python_error)[:80]
        else:
            return
        self.recorder.add(Failure("parse disagreement", signature, {item.name: item.data}, [item.mutator], [item.seed],
                                  check_command(1), f"torchlint: {torchlint_says or '(linted it)'}\n"
                                  f"python ast.parse: {python_error or 'parses'}"), key=item.name)
        self.note_failing(item)

    # -- minimizing ------------------------------------------------------------------

    def minimize(self, failure: Failure, problem: Problem, jobs: int) -> None:
        (name, data), = failure.files.items()
        deadline = time.monotonic() + self.args.minimize_seconds

        def still_fails(candidate: bytes) -> bool:
            folder = self.folder("minimize", {name: candidate})
            run = self.check(folder, jobs, timeout=min(self.args.timeout, 60))
            return any(p.signature == problem.signature for p in judge(run, folder))

        units = data.splitlines(keepends=True)
        granularity = 2
        while len(units) >= 2 and time.monotonic() < deadline:
            size = max(1, len(units) // granularity)
            reduced = False
            for start in range(0, len(units), size):
                if time.monotonic() > deadline:
                    break
                candidate = units[:start] + units[start + size:]
                if candidate and still_fails(b"".join(candidate)):
                    units = candidate
                    granularity = max(granularity - 1, 2)
                    reduced = True
                    break
            if not reduced:
                if size == 1:
                    break
                granularity = min(len(units), granularity * 2)
        result = b"".join(units)
        if len(result) < len(data):
            self.recorder.save_minimized(failure, result)

    # -- special files ---------------------------------------------------------------

    def specials(self) -> None:
        if not hasattr(os, "mkfifo"):
            return
        good = b"import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.data)\n"

        def fifo(folder: Path):
            os.mkfifo(folder / "x.py")
            return "mkfifo input/x.py"

        def self_loop(folder: Path):
            os.symlink("loop.py", folder / "loop.py")
            return "ln -s loop.py input/loop.py"

        def mutual_loop(folder: Path):
            os.symlink("b.py", folder / "a.py")
            os.symlink("a.py", folder / "b.py")
            return "ln -s b.py input/a.py; ln -s a.py input/b.py"

        def folder_cycle(folder: Path):
            (folder / "sub").mkdir()
            (folder / "sub" / "inner.py").write_bytes(b"x = 1\n")
            os.symlink("..", folder / "sub" / "up")
            os.symlink(str(folder), folder / "sub" / "abs_up")
            return "mkdir input/sub; echo 'x = 1' > input/sub/inner.py; ln -s .. input/sub/up; ln -s \"$PWD/input\" input/sub/abs_up"

        def dev_zero(folder: Path):
            os.symlink("/dev/zero", folder / "zero.py")
            return "ln -s /dev/zero input/zero.py"

        def dev_random(folder: Path):
            os.symlink("/dev/urandom", folder / "random.py")
            return "ln -s /dev/urandom input/random.py"

        def socket_file(folder: Path):
            sock = socket.socket(socket.AF_UNIX)
            try:
                sock.bind(str(folder / "s.py"))
            finally:
                sock.close()
            return "python -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"input/s.py\")'"

        def folder_named_py(folder: Path):
            (folder / "d.py").mkdir()
            (folder / "d.py" / "inner.py").write_bytes(good)
            return "mkdir input/d.py; cp input/good.py input/d.py/inner.py"

        def dangling(folder: Path):
            os.symlink("missing.py", folder / "gone.py")
            return "ln -s missing.py input/gone.py"

        cases = [("fifo", fifo, None), ("fifo-named", fifo, "x.py"), ("symlink-self-loop", self_loop, None),
                 ("symlink-mutual-loop", mutual_loop, None), ("folder-symlink-cycle", folder_cycle, None),
                 ("dev-zero", dev_zero, None), ("dev-urandom", dev_random, None), ("socket", socket_file, None),
                 ("folder-named-x.py", folder_named_py, None), ("dangling-symlink", dangling, None)]
        job_counts = [1, 2] if self.args.jobs_compare else [1]
        for label, make, named in cases:
            for jobs in job_counts:
                folder = self.work / "special"
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir()
                (folder / "good.py").write_bytes(good)
                try:
                    setup = make(folder)
                except OSError as error:
                    self.say(f"special {label}: cannot set up ({error}); skipped")
                    break
                targets = [str(folder)] if named is None else [str(folder / "good.py"), str(folder / named)]
                run = self.runner.torchlint("--output-format", "json", "--no-cache", "--isolated", *self.limit_options,
                                            "--jobs", str(jobs), *targets, timeout=self.args.special_timeout)
                self.stats.specials += 1
                problems = judge(run)
                if run.items is not None:
                    found = [i for i in run.items if Path(i.get("filename", "")).name == "good.py" and i.get("code") == "TL101"]
                    if not found:
                        problems.append(Problem("lost neighbour", "special:good.py lost", None, run.stdout[:3000]))
                targets_text = "input" if named is None else f"input/good.py input/{named}"
                command = (f"rm -rf input && mkdir input && printf '{good.decode().encode('unicode_escape').decode()}' > input/good.py"
                           f" && {setup} && timeout {int(self.args.special_timeout)} "
                           + check_command(jobs, targets_text))
                for problem in problems:
                    self.recorder.add(Failure(problem.kind, f"special:{label}:{problem.signature}", {}, [f"special:{label}"],
                                              [], command, f"{problem.detail}\n--- stderr ---\n{run.stderr[-4000:]}",
                                              f"--jobs {jobs}; special file case `{label}` (timeout {self.args.special_timeout:.0f} s)"),
                                      key=f"{label}@{jobs}")
            shutil.rmtree(self.work / "special", ignore_errors=True)

    # -- --fix -----------------------------------------------------------------------

    def fix_phase(self) -> None:
        args = self.args
        rng = random.Random(f"{args.seed}/fix")
        seeds = [("sd_" + self.neighbour_name(s)[3:], s.read_bytes(), "(seed)", seed_label(s)) for s in self.seeds
                 if s.stat().st_size <= args.fix_max_bytes]
        pool = list(self.fix_pool)
        rng.shuffle(seeds)
        rng.shuffle(pool)
        # Half seeds (real files, unmodified), half compiling mutated inputs; either fills in for the other.
        from_pool = min(len(pool), args.fix_sample - min(len(seeds), args.fix_sample // 2))
        sample = seeds[: args.fix_sample - from_pool] + pool[:from_pool]
        deadline = time.monotonic() + args.fix_seconds
        for start in range(0, len(sample), args.fix_batch_size):
            if time.monotonic() > deadline:
                self.say("fix phase: out of time")
                break
            self.fix_batch(sample[start: start + args.fix_batch_size], 1 + (self.stats.fix_batches % 2))

    def safe_fix_comments(self, name: str, data: bytes, jobs: int) -> Optional[int]:
        """How many comments ``data`` keeps after `--fix` with the safe fixes only (None: unknown)."""
        folder = self.folder("safe-fix", {name: data})
        self.check(folder, jobs, extra=("--fix",))
        return oracle(self.runner, [folder / name]).get(str(folder / name), {}).get("comments")

    def fix_batch(self, entries: list, jobs: int) -> None:
        files = {name: data for name, data, _, _ in entries}
        meta = {name: (mut, seed) for name, _, mut, seed in entries}
        folder = self.folder("fix", files)
        before = oracle(self.runner, [folder / n for n in files if n.endswith(".py")])
        extra = ("--fix", "--unsafe-fixes")
        first = self.check(folder, jobs, extra=extra)
        self.stats.fix_batches += 1
        self.stats.fix_files += len(files)
        command = check_command(jobs, extra=extra)
        problems = judge(first, folder)
        # A file stopped by a limit in either run is a hang; its other checks would only be noise.
        limited = {p.filename for p in problems if p.filename}
        # torchlint refusing its own fix: "torchlint: error: PATH: not fixed, file left unchanged: ..."
        refused = {}
        for line in first.stderr.splitlines():
            match = re.match(r"torchlint: error: (.*?): (not fixed.*|.*)$", line)
            if match and "internal error" not in line:
                refused[Path(match.group(1)).name] = line
        for problem in problems:
            if problem.signature.startswith("exit-2") and refused:
                continue  # explained by the refusals below
            name = problem.filename
            chosen = {name: files[name]} if name in files else files
            self.recorder.add(Failure(problem.kind, "fix:" + problem.signature, chosen,
                                      [meta[n][0] for n in chosen], [meta[n][1] for n in chosen], command,
                                      problem.detail + "\n--- stderr ---\n" + first.stderr[-5000:],
                                      f"--fix run, --jobs {jobs}"), key=name)
        for name, line in refused.items():
            if name not in files:
                continue
            reason = re.sub(r"^.*?left unchanged: ", "", line)
            signature = "fix:refused:" + re.sub(r"\d+", "N", re.sub(r"\(.*", "", reason))[:90]
            self.recorder.add(Failure("fix failure", signature, {name: files[name]}, [meta[name][0]], [meta[name][1]],
                                      command, line, f"torchlint refused its own fix (--jobs {jobs}); the file was left unchanged"),
                              key=name)
        if first.returncode not in (0, 1, 2):
            return
        after = {n: (folder / n).read_bytes() for n in files}
        self.stats.fix_changed += sum(1 for n in files if after[n] != files[n])
        verdict_after = oracle(self.runner, [folder / n for n in files if n.endswith(".py")])
        for name in files:
            if not name.endswith(".py") or after[name] == files[name] or name in limited:
                continue
            b, a = before.get(str(folder / name), {}), verdict_after.get(str(folder / name), {})
            if b.get("unknown") or a.get("unknown"):
                continue
            diff = _text_diff(files[name], after[name])
            if b.get("compile") is None and a.get("compile") is not None:
                self.recorder.add(Failure("fix failure", "fix:broke-compile:" + re.sub(r"\d+", "N", str(a.get("compile")))[:80],
                                          {name: files[name]}, [meta[name][0]], [meta[name][1]], command,
                                          f"after the fix: {a.get('compile')}\n\n{diff}", f"--jobs {jobs}"), key=name)
            if b.get("comments") is not None and a.get("comments") is not None and a["comments"] < b["comments"]:
                # A fix that drops a comment must be unsafe (as in ruff): a failure only if the
                # safe fixes alone drop it.
                safe_after = self.safe_fix_comments(name, files[name], jobs)
                if safe_after is not None and safe_after < b["comments"]:
                    self.recorder.add(Failure("lost comments", "fix:lost-comments", {name: files[name]}, [meta[name][0]],
                                              [meta[name][1]], check_command(jobs, extra=("--fix",)),
                                              f"comments before {b['comments']}, after safe fixes {safe_after}\n\n{diff}",
                                              f"--jobs {jobs}"), key=name)
                else:
                    self.inform("comments dropped by unsafe fixes")
        second = self.check(folder, jobs, extra=extra)
        for problem in judge(second, folder):
            if problem.filename in limited or problem.signature.startswith("exit-2") and refused:
                continue
            name = problem.filename
            chosen = {name: after[name]} if name in files else dict(after)
            self.recorder.add(Failure(problem.kind, "fix2:" + problem.signature, chosen,
                                      [meta[n][0] for n in chosen], [meta[n][1] for n in chosen], command,
                                      problem.detail + "\n--- stderr ---\n" + second.stderr[-5000:],
                                      f"the second --fix run (--jobs {jobs}); input/ holds the output of the first"),
                              key=name or "second")
            if name:
                limited.add(name)
        if second.timed_out or second.returncode not in (0, 1, 2):
            return
        for name in files:
            if name in limited:
                continue
            again = (folder / name).read_bytes()
            if again != after[name]:
                self.recorder.add(Failure("non-idempotent fix", "fix:not-idempotent", {name: files[name]}, [meta[name][0]],
                                          [meta[name][1]], command + "; cp -r input first && " + command,
                                          "first --fix (-) against second --fix (+):\n" + _text_diff(after[name], again),
                                          f"--jobs {jobs}"), key=name)

    # -- the whole run ------------------------------------------------------------------

    def run(self) -> int:
        args = self.args
        if not self.seeds:
            print("fuzz: no seed files found", file=sys.stderr)
            return 2
        if args.file_timeout:
            # Where torchlint has a per-file time limit, a slow file is named by its own TL000
            # rather than found by bisection after the whole run timed out.
            helptext = self.runner.torchlint("--help", timeout=120).stdout
            if "--file-timeout" in helptext:
                self.limit_options = ("--file-timeout", f"{args.file_timeout:g}")
                LIMIT_OPTIONS[:] = self.limit_options
        probe_folder = self.folder("probe", {"ok.py": b"x = 1\n"})
        probe = self.check(probe_folder, 1)
        if probe.returncode != 0 or probe.stdout.strip() != "[]":
            print(f"fuzz: torchlint does not run here (exit {probe.returncode}):\n{probe.stderr[-3000:]}", file=sys.stderr)
            return 2
        self.say(f"{len(self.seeds)} seeds, {args.inputs} inputs in batches of {args.batch_size}; work {self.work}; keep {self.keep}")
        batches = [list(range(start, min(start + args.batch_size, args.inputs))) for start in range(0, args.inputs, args.batch_size)]
        stopped_early = False
        for number, indexes in enumerate(batches):
            if self.elapsed() > args.seconds:
                stopped_early = True
                self.say(f"--seconds {args.seconds:.0f} reached: stopping after {number} batches")
                break
            names = [input_name(i) for i in indexes]
            inputs = [make_input(i, self.seeds, args.seed, names, self.mutators) for i in indexes]
            before = len(self.recorder.failures)
            self.batch(number, inputs)
            new = len(self.recorder.failures) - before
            self.say(f"batch {number + 1}/{len(batches)}: {len(inputs)} inputs, {new} new failures "
                     f"({len(self.recorder.failures)} in all)")
        if args.specials:
            self.say("special files")
            self.specials()
        if args.fix_sample:
            self.say(f"--fix on a sample of {args.fix_sample} ({len(self.fix_pool)} compiling inputs pooled)")
            self.fix_phase()
        self.manifest.close()
        return self.report(stopped_early)

    def report(self, stopped_early: bool) -> int:
        r, s = self.recorder, self.stats
        rows = [("inputs", s.inputs), ("batches", s.batches), ("neighbour checks", s.neighbours),
                ("torchlint runs", self.runner.runs), ("special-file runs", s.specials),
                ("crashes", r.count("crash")), ("hangs", r.count("hang")), ("huge outputs", r.count("huge output")),
                ("internal errors", r.count("internal error")),
                ("jobs-1/jobs-2 differences", r.count("jobs difference")), ("lost neighbours", r.count("lost neighbour")),
                ("parse disagreements", r.count("parse disagreement")),
                ("fix sample (files / changed)", f"{s.fix_files} / {s.fix_changed}"),
                ("fix failures", r.count("fix failure")), ("non-idempotent fixes", r.count("non-idempotent fix")),
                ("lost comments", r.count("lost comments")), ("time", f"{self.elapsed():.0f} s")]
        width = max(len(k) for k, _ in rows)
        print("\ntorchlint fuzz summary" + (" (stopped early by --seconds)" if stopped_early else ""))
        print("-" * (width + 14))
        for key, value in rows:
            print(f"{key:<{width}}  {value:>10}")
        print("-" * (width + 14))
        if s.informational:
            print("not counted as failures: " + "; ".join(f"{k}: {v}" for k, v in sorted(s.informational.items())))
        if self.args.verbose:
            print("\ninputs per mutator: " + ", ".join(f"{k} {v}" for k, v in sorted(s.per_mutator.items())))
            print("TL000 reasons: " + "; ".join(f"{k} ({v})" for k, v in sorted(s.tl000.items(), key=lambda kv: -kv[1])[:25]))
        if s.failing_mutator:
            print("failing inputs per mutator: " + ", ".join(f"{k} {v}" for k, v in sorted(s.failing_mutator.items())))
        if r.failures:
            print(f"\n{len(r.failures)} failures in {len(r.by_signature)} classes:")
            for (kind, signature), count in sorted(r.by_signature.items(), key=lambda kv: (kv[0][0], -kv[1])):
                example = next(f for f in r.failures if f.kind == kind and f.signature == signature)
                print(f"  [{kind}] x{count}  {signature}")
                print(f"      mutator {_some(example.mutators)}; seed {_some(example.seeds) or '-'}")
                print(f"      reproducer {example.saved or '(not saved)'}; {example.command}")
                if example.minimized is not None:
                    print(f"      minimized: {example.minimized[:300]!r}")
        print(f"\nreproducers and manifest: {self.keep}")
        summary = {"inputs": s.inputs, "batches": s.batches, "runs": self.runner.runs, "seconds": round(self.elapsed(), 1),
                   "counts": {kind: r.count(kind) for kind in Recorder.KINDS}, "fix_files": s.fix_files,
                   "fix_changed": s.fix_changed, "specials": s.specials, "informational": s.informational,
                   "classes": [{"kind": k, "signature": sig, "count": n,
                                "example": str(next(f.saved for f in r.failures if f.kind == k and f.signature == sig))}
                               for (k, sig), n in r.by_signature.items()],
                   "keep": str(self.keep), "stopped_early": stopped_early}
        (self.keep / "summary.json").write_text(json.dumps(summary, indent=2))
        if self.args.summary_json:
            Path(self.args.summary_json).write_text(json.dumps(summary, indent=2))
        shutil.rmtree(self.work, ignore_errors=True)
        return 1 if r.failures else 0


def _format_error(output_format: str, text: str) -> Optional[str]:
    """Why ``text`` is not valid output in ``output_format`` (None when it is)."""
    try:
        if output_format == "sarif":
            data = json.loads(text)
            if not isinstance(data, dict) or "runs" not in data:
                return "no runs"
        elif output_format == "json-lines":
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)
        elif output_format == "junit":
            import xml.etree.ElementTree as ElementTree
            ElementTree.fromstring(text)
        elif output_format == "json":
            json.loads(text)
    except Exception as error:  # noqa: BLE001 - any reason is the answer
        return f"{type(error).__name__}: {error}"
    if "\ud800" <= max(text, default="a") and re.search("[\ud800-\udfff]", text):
        return "lone surrogate in the output"
    return None


def _undecodable_in_comment(data: bytes, reason: str) -> bool:
    """Whether a "cannot decode byte at line L, column C" TL000 points into a comment."""
    match = re.search(r"cannot decode byte 0x[0-9a-f]+ at line (\d+), column (\d+)", reason)
    if not match:
        return False
    row, column = int(match.group(1)), int(match.group(2))
    lines = data.split(b"\n")
    if row > len(lines):
        return False
    before = lines[row - 1].decode("utf-8", "replace")[: column - 1]
    return "#" in before and not re.search(r"[\"']", before.split("#", 1)[0])


def _some(names: list[str], shown: int = 4) -> str:
    return ", ".join(names[:shown]) + (f" (+{len(names) - shown} more)" if len(names) > shown else "")


def _first_code(diff: str) -> str:
    match = re.search(r'"code": "(\w+)"', diff)
    return match.group(1) if match else "-"


def _diff(a: list[str], b: list[str]) -> str:
    import difflib
    return "\n".join(difflib.unified_diff(a, b, "expected", "got", lineterm="", n=0))[:8000]


def _text_diff(a: bytes, b: bytes) -> str:
    import difflib
    return "\n".join(difflib.unified_diff(a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines(),
                                          "before", "after", lineterm="", n=1))[:6000]


# ======================================================================================


def parse_args(argv: Optional[list[str]] = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="The full campaign is the default; --quick is the CI configuration.")
    parser.add_argument("--quick", action="store_true",
                        help="the small CI configuration: 150 inputs from fixtures/, 40 --fix files, short timeouts")
    parser.add_argument("--inputs", type=int, help="mutated files in all (default 10000; --quick 150)")
    parser.add_argument("--batch-size", type=int, help="mutated files per batch folder (default 200; --quick 25)")
    parser.add_argument("--neighbours", type=int, default=3, help="untouched seed files per batch (default 3)")
    parser.add_argument("--seconds", type=float, help="start no batch after this many seconds (default 3600; --quick 45)")
    parser.add_argument("--timeout", type=float, help="wall-clock limit of one torchlint run, a hang past it (default 300; --quick 120)")
    parser.add_argument("--special-timeout", type=float, help="the limit for the special-file runs (default 20; --quick 10)")
    parser.add_argument("--bisect-timeout", type=float, default=20.0, help="the limit of a run while narrowing a hang (default 20)")
    parser.add_argument("--bisect-seconds", type=float, default=120.0, help="time to narrow one batch-level failure (default 120)")
    parser.add_argument("--file-timeout", type=float,
                        help="pass --file-timeout to torchlint where it has it: a file over it is a hang "
                             "(default 30; 0: leave torchlint's default)")
    parser.add_argument("--max-output-mb", type=int, default=256,
                        help="a run that writes more than this to stdout is cut off there and counted (default 256)")
    parser.add_argument("--memory-mb", type=int, default=8192, help="address-space limit of each torchlint process (0: none)")
    parser.add_argument("--jobs-compare", dest="jobs_compare", action="store_true", default=True,
                        help="run every batch with --jobs 1 and --jobs 2 and compare (the default)")
    parser.add_argument("--no-jobs-compare", dest="jobs_compare", action="store_false", help="only --jobs 1")
    parser.add_argument("--fix-sample", type=int, help="files for the --fix checks (default 500; --quick 40; 0: none)")
    parser.add_argument("--fix-batch-size", type=int, default=50, help="files per --fix folder (default 50)")
    parser.add_argument("--fix-max-bytes", type=int, default=200_000, help="larger inputs stay out of the --fix sample")
    parser.add_argument("--fix-seconds", type=float, default=600.0, help="time allowed for the --fix phase (default 600; --quick 30)")
    parser.add_argument("--no-specials", dest="specials", action="store_false", default=True, help="skip the special files")
    parser.add_argument("--mutators", type=lambda text: text.split(","), metavar="A,B",
                        help=f"only these mutators (of: {', '.join(MUTATOR_NAMES)})")
    parser.add_argument("--skip-mutators", type=lambda text: text.split(","), default=[], metavar="A,B",
                        help="leave these out, e.g. one whose failure class is known and slow")
    parser.add_argument("--formats", type=lambda text: [f for f in text.split(",") if f], metavar="F,G",
                        help="also run every batch once in these output formats (--jobs 1) and check that the output "
                             "parses: full, concise, github, sarif, junit, json-lines (default sarif,junit,full; "
                             "--quick full,sarif; '' for none)")
    parser.add_argument("--seeds", action="append", default=[], metavar="DIR", help="more folders of seed .py files (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: the same seed makes the same inputs (default 0)")
    parser.add_argument("--keep", metavar="DIR", help="where reproducers, manifest.jsonl and summary.json go (default: a new temp dir)")
    parser.add_argument("--keep-per-class", type=int, default=3, help="reproducers saved per failure class (default 3)")
    parser.add_argument("--minimize", action="store_true", help="shrink single-file crash and internal-error reproducers")
    parser.add_argument("--minimize-seconds", type=float, default=60.0, help="time to shrink one reproducer (default 60)")
    parser.add_argument("--summary-json", metavar="PATH", help="also write the summary as JSON here")
    parser.add_argument("-v", "--verbose", action="store_true", help="inputs per mutator and TL000 reasons in the summary")
    args = parser.parse_args(argv)
    defaults = dict(inputs=150, batch_size=25, seconds=45.0, timeout=120.0, special_timeout=10.0, fix_sample=40,
                    file_timeout=30.0, formats=["full", "sarif"]) if args.quick \
        else dict(inputs=10_000, batch_size=200, seconds=3600.0, timeout=300.0, special_timeout=20.0, fix_sample=500,
                  file_timeout=30.0, formats=["sarif", "junit", "full"])
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.quick:
        args.bisect_seconds = min(args.bisect_seconds, 30.0)
        args.fix_seconds = min(args.fix_seconds, 30.0)
    unknown = [n for n in (args.mutators or []) + args.skip_mutators if n not in MUTATORS]
    if unknown:
        parser.error(f"unknown mutators: {', '.join(unknown)} (known: {', '.join(MUTATOR_NAMES)})")
    if args.inputs < 0 or args.batch_size < 1:
        parser.error("--inputs must be >= 0 and --batch-size >= 1")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    campaign = Campaign(args)
    try:
        return campaign.run()
    finally:
        shutil.rmtree(campaign.work, ignore_errors=True)  # also when interrupted


if __name__ == "__main__":
    sys.exit(main())
