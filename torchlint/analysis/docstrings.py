"""What a function's docstring declares about a parameter: a tensor (and how many
dimensions), or a number.

Research code documents shapes where it does not annotate them::

    Args
    ----
    - l: a 2D Tensor of shape (B, 2).
    - size: a scalar defining the size of the extracted patch.

Google (``x (Tensor): ..``), numpy (``x : Tensor``), Sphinx (``:param x: ..`` and
``:type x: ..``) and dash-list entries are read.  Only the entry's leading phrase counts,
and a phrase that offers alternatives (``Tensor or list``) or a container (``list of
tensors``) declares nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from torchlint.syntax import cst


@dataclass(frozen=True)
class Declared:
    is_tensor: bool  # False: a number
    dims: Optional[int]  # for tensors, when the docstring gives them
    phrase: str  # the words that say so, to quote in evidence


_TENSOR_WORD = r"(?:torch\.)?(?:cuda\.)?(?:Float|Double|Half|Long|Int|Short|Byte|Bool|Char)?(?:Tensor|tensor|Variable)"
_DIMS_WORD = r"(?P<dims>[0-9])\s*-?\s*(?:D|d|dim|dims|dimensional)"
_TENSOR_PHRASE = re.compile(
    rf"^(?:(?:a|an|the|one)\s+)?(?:{_DIMS_WORD}\s+)?(?P<scalar>scalar\s+)?{_TENSOR_WORD}(?![\w.\[])")
_NUMBER_PHRASE = re.compile(r"^(?:(?:a|an|the|one)\s+)?(?:int|integer|float|scalar|number|bool|boolean)(?![\w.\[])")
_SHAPE = re.compile(r"\bshape\s*(?:of|is|=|:)?\s*[`]*[(\[](?P<items>[^()\[\]]*)[)\]]")
# Words that make a phrase something other than one tensor or one number.
_NOT_ONE = re.compile(r"\b(?:or|list|lists|tuple|tuples|sequence|sequences|iterable|dict|dicts|array|ndarray|"
                      r"tensors|numbers|ints|floats|optional tensor)\b|\|")
_SECTION = re.compile(r"^\s*(?:Args|Arguments|Parameters|Params|Inputs|Input|Keyword Args|Keyword Arguments)\s*:?\s*$")


def function_docstring(function: cst.CSTNode) -> Optional[str]:
    if not isinstance(function, cst.FunctionDef):
        return None  # a lambda has no docstring
    body = getattr(function.body, "body", None)
    if not isinstance(body, (list, tuple)) or not body:
        return None  # `def f(x): return x` on one line
    first = body[0]
    if not (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
            and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString)):
        return None
    try:
        text = first.body[0].value.evaluated_value
    except Exception:  # a malformed escape: no docstring to read
        return None
    return text if isinstance(text, str) else None


def declared(docstring: str, name: str) -> Optional[Declared]:
    """What ``docstring`` says ``name`` is, when its entry says one tensor or one number."""
    entry = _entry(docstring, name)
    if entry is None:
        return None
    kind, description = entry
    clause = _first_clause(description) if description else ""
    if kind:
        found = _classify(_first_clause(kind))
        if found is None:
            return None  # a stated type that is neither: the description cannot overrule it
        if found.is_tensor and found.dims is None and clause and not _NOT_ONE.search(clause):
            dims = _shape_dims(clause)
            if dims is not None:
                return Declared(True, dims, f"{found.phrase}: {clause}")
        return found
    return _classify(clause) if clause else None


def _classify(phrase: str) -> Optional[Declared]:
    if _NOT_ONE.search(phrase):
        return None
    match = _TENSOR_PHRASE.match(phrase)
    if match is not None:
        dims = int(match.group("dims")) if match.group("dims") else None
        if match.group("scalar"):
            dims = 0
        counted = _shape_dims(phrase)
        if dims is not None and counted is not None and counted != dims:
            return None  # the docstring contradicts itself
        return Declared(True, dims if dims is not None else counted, phrase)
    if _NUMBER_PHRASE.match(phrase) and not re.search(r"\b(?:Tensor|tensor|Variable)\b", phrase):
        return Declared(False, None, phrase)
    return None


def _shape_dims(phrase: str) -> Optional[int]:
    """How many dimensions ``of shape (B, 2)`` gives (2); None for ``(B, *)`` or ``(..., C)``."""
    shape = _SHAPE.search(phrase)
    if shape is None:
        return None
    items = [item.strip(" `") for item in shape.group("items").split(",")]
    items = [item for item in items if item]
    if not items or any("..." in item or "*" in item for item in items):
        return None
    return len(items)


def _first_clause(text: str) -> str:
    """The leading phrase: up to the end of the first sentence (a period followed by a
    space or the end; ``torch.Tensor`` keeps its dot)."""
    text = " ".join(text.replace("`", "").split())
    match = re.search(r"\.(?:\s|$)|;", text)
    return text[:match.start()].strip() if match else text.strip()


_SPHINX_TYPE, _SPHINX_PARAM, _LISTED, _NUMPY = range(4)


@lru_cache(maxsize=4096)
def _entry_pattern(name: str, style: int) -> re.Pattern:
    """The pattern of a parameter's entry in one style (the same names come back: `x`,
    `input`, `weight`), compiled only where a line may hold it: most names never need all."""
    escaped = re.escape(name)
    if style == _SPHINX_TYPE:  # :type x: Tensor
        return re.compile(rf"^\s*:type\s+{escaped}\s*:\s*(.+)$")
    if style == _SPHINX_PARAM:  # :param x: desc / :param Tensor x: desc
        return re.compile(rf"^(?P<indent>\s*):param\s+(?:(?P<type>[\w.\[\], ]+?)\s+)?{escaped}\s*:\s*(?P<desc>.*)$")
    if style == _LISTED:  # - x: desc / * x (Tensor): desc / x (Tensor): desc / x: desc (Google, after a section header)
        return re.compile(rf"^(?P<indent>\s*)(?:[-*]\s+)?`*{escaped}`*\s*(?:\((?P<type>[^()]*(?:\([^()]*\)[^()]*)*)\))?"
                          rf"\s*:(?:\s+|$)(?P<desc>.*)$")
    return re.compile(rf"^(?P<indent>\s*){escaped}\s+:\s*(?P<type>.+)$")  # numpy: x : Tensor


def _may_hold(line: str, name: str, style: int) -> bool:
    """Whether ``line`` has what the entry pattern of ``style`` needs before any matching:
    ``:param``, or (Google, numpy) the name first after the indentation, a bullet and
    backticks."""
    if style == _SPHINX_PARAM:
        return ":param" in line
    text = line.lstrip()
    if text.lstrip("`").startswith(name):
        return True
    return text[:1] in "-*" and text[1:].lstrip().lstrip("`").startswith(name)


def _entry(docstring: str, name: str) -> Optional[tuple[str, str]]:
    """(stated type, description) of the parameter's entry, the description joined across
    its continuation lines."""
    if name not in docstring:
        return None
    lines = docstring.expandtabs().splitlines()
    sphinx_type = None
    if ":type" in docstring:
        sphinx = _entry_pattern(name, _SPHINX_TYPE)
        for line in lines:
            match = sphinx.match(line)
            if match:
                sphinx_type = match.group(1).strip()
    in_section = False
    for number, line in enumerate(lines):
        if _SECTION.match(line):
            in_section = True
        if name not in line:
            continue
        for style in (_SPHINX_PARAM, _LISTED, _NUMPY):
            if not _may_hold(line, name, style):
                continue
            match = _entry_pattern(name, style).match(line)
            if match is None:
                continue
            bulleted = line.lstrip()[:1] in "-*"
            if style == _LISTED and not (bulleted or in_section or match.group("type")):
                continue  # `name: text` in prose is not an entry
            indent = len(match.group("indent"))
            following = _continuation(lines[number + 1:], indent)
            if style == _NUMPY:
                return match.group("type").strip(), following
            description = " ".join([match.group("desc").strip(), following]).strip()
            kind = (match.group("type") or sphinx_type or "").strip()
            return kind, description
    return None


def _continuation(lines: list[str], indent: int) -> str:
    taken = []
    for line in lines:
        if not line.strip() or len(line) - len(line.lstrip()) <= indent:
            break
        taken.append(line.strip())
    return " ".join(taken)
