"""A light syntax tree with libcst's shape, built from CPython's ``ast``.

libcst's parser keeps every space and comma as a node and costs about nine times
``ast.parse``.  torchlint only reads a tree (fixes are built as text), so this module
parses with ``ast`` and converts the result in one pass into small ``__slots__``
objects whose class and field names are libcst's: ``Name.value``, ``Call.args[i].keyword``,
``Subscript.slice[i].slice.value``, ``BooleanOperation.left``...

What it adds to ``ast``: libcst's grouping (statements on one line in a
``SimpleStatementLine``, implicit string concatenation as ``ConcatenatedString``,
subscript tuples as ``SubscriptElement``s, chains of ``and``/``or`` nested to the left),
operators as nodes, and positions.  Every node has ``start``/``end``, character offsets
into the text equal to libcst's syntactic range (``PositionProvider``); expressions
have ``lpar``/``rpar`` with one entry per parenthesis libcst gives them, and
``outer_start``/``outer_end`` including those.  ``parent`` is None until the semantic
model's walk links the tree (torchlint/analysis/semantic.py); nodes the walk does not enter
(the names in an import) keep None.

There is no code generation, no whitespace and no punctuation: fixes are text.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import gc
import re
import sys
import warnings
from typing import Optional

from torchlint.syntax.source import LINE_BREAK, line_start as _start_of_line, line_starts

# ------------------------------------------------------------------------------------
# Errors


# What CPython's parser and compiler say of text past their nesting limits.
NESTING_LIMIT_MESSAGES = re.compile(r"too many nested|too many levels of indentation|too many statically nested|"
                                    r"too complex")


class ParserSyntaxError(Exception):
    """The text is not Python this interpreter parses; lines and columns are 1-based."""

    def __init__(self, message: str, editor_line: int = 1, editor_column: int = 1, syntax: bool = True,
                 too_deep: bool = False):
        super().__init__(message)
        self.message = message
        self.editor_line = editor_line
        self.editor_column = editor_column
        # False: not a syntax error but text ast cannot take (a null byte, too deep nesting).
        self.syntax = syntax
        # The text is nested past what a parser or compiler takes (every Python refuses it).
        self.too_deep = too_deep

    @classmethod
    def of(cls, error: SyntaxError) -> "ParserSyntaxError":
        """Python's own syntax error, in these terms."""
        message = str(error.msg)
        return cls(message, error.lineno or 1, max(error.offset or 1, 1),
                   too_deep=bool(NESTING_LIMIT_MESSAGES.search(message)))

    @property
    def reason(self) -> str:
        """Why the text cannot be linted, as torchlint reports it."""
        return f"syntax error: {self.message}" if self.syntax else f"cannot parse: {self.message}"

    def __str__(self) -> str:
        return self.message


# ------------------------------------------------------------------------------------
# Node classes


# The slots the semantic walk sets on a node: links and positions, not children.
WALK_SLOTS = frozenset({"parent", "span", "span_end", "walked_in"})


class CSTNode:
    # parent: set by the walk (semantic.py); walked_in[span:span_end]: the node and its
    # descendants in that walk's list of nodes, read by `walk.iter_nodes` (set by the same
    # walk).  Two ints and a reference rather than one tuple: a tuple per node is a
    # quarter of a million more objects for the collector to walk on a large project.
    __slots__ = ("start", "end", "parent", "span", "span_end", "walked_in")
    _init_fields: tuple[str, ...] = ()
    #: The child fields, in the order torchlint's walk visits them (evaluation order).
    _fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}@{self.start}:{self.end}"


class _Parenthesized:
    """Nodes that may have parentheses of their own (``lpar``/``rpar``)."""

    __slots__ = ()

    @property
    def outer_start(self) -> int:
        return self.lpar[0].start if self.lpar else self.start

    @property
    def outer_end(self) -> int:
        return self.rpar[-1].end if self.rpar else self.end


class BaseExpression(_Parenthesized, CSTNode):
    __slots__ = ("lpar", "rpar")


class BaseStatement(CSTNode):
    __slots__ = ()


class BaseSmallStatement(CSTNode):
    __slots__ = ()


class BaseCompoundStatement(BaseStatement):
    __slots__ = ()


class BaseSuite(CSTNode):
    __slots__ = ()


class BaseString(BaseExpression):
    __slots__ = ()


class BaseNumber(BaseExpression):
    __slots__ = ()

    @property
    def evaluated_value(self):
        return ast.literal_eval(self.value)


class BaseComp(BaseExpression):
    __slots__ = ()


class BaseSimpleComp(BaseComp):
    __slots__ = ()


class BaseElement(CSTNode):
    __slots__ = ()


class BaseDictElement(CSTNode):
    __slots__ = ()


class BaseSlice(CSTNode):
    __slots__ = ()


class BaseFormattedStringContent(CSTNode):
    __slots__ = ()


class MatchPattern(CSTNode):
    __slots__ = ()


class BaseOp(CSTNode):
    __slots__ = ()
    #: The operator's text ("+=", "is not"...).
    token = ""


class BaseBinaryOp(BaseOp):
    __slots__ = ()


class BaseAugOp(BaseOp):
    __slots__ = ()


class BaseUnaryOp(BaseOp):
    __slots__ = ()


class BaseBooleanOp(BaseOp):
    __slots__ = ()


class BaseCompOp(BaseOp):
    __slots__ = ()


def _node(name: str, base: type, fields: str = "", children: Optional[str] = None,
          parens: bool = False, **attributes) -> type:
    """A node class: ``__slots__`` for ``fields`` (and ``lpar``/``rpar`` when
    ``parens``), a positional ``__init__(*fields, start, end)`` and ``_fields`` (the
    node-valued fields in walk order, ``fields`` when not given)."""
    names = fields.split()
    assigned = [*names, "start", "end", *(("lpar", "rpar") if parens else ())]
    signature = ", ".join([*names, "start", "end", *(("lpar=()", "rpar=()") if parens else ())])
    source = (f"def __init__(self, {signature}):\n" + "".join(f"    self.{a} = {a}\n" for a in assigned)
              + "    self.parent = None\n")
    namespace: dict = {}
    exec(source, namespace)  # as dataclasses do: a plain function, no loop over fields
    own_parens = parens and not issubclass(base, _Parenthesized)
    return type(name, (_Parenthesized, base) if own_parens else (base,), {
        "__slots__": (*names, *(("lpar", "rpar") if own_parens else ())),
        "__init__": namespace["__init__"],
        "__module__": __name__,
        "_fields": tuple(names if children is None else children.split()),
        "_init_fields": tuple(names),  # the fields __init__ takes before start and end
        **attributes,
    })


def _expr(name: str, fields: str = "", children: Optional[str] = None, base: type = BaseExpression,
          **attributes) -> type:
    return _node(name, base, fields, children, parens=True, **attributes)


# Module and statements.
Module = _node("Module", CSTNode, "body code default_indent default_newline has_trailing_newline",
               "body", encoding="utf-8")
SimpleStatementLine = _node("SimpleStatementLine", BaseStatement, "body")
SimpleStatementSuite = _node("SimpleStatementSuite", BaseSuite, "body")
IndentedBlock = _node("IndentedBlock", BaseSuite, "body")

Expr = _node("Expr", BaseSmallStatement, "value")
Assign = _node("Assign", BaseSmallStatement, "targets value", "value targets")
AssignTarget = _node("AssignTarget", CSTNode, "target")
AnnAssign = _node("AnnAssign", BaseSmallStatement, "target annotation value", "annotation value target")
AugAssign = _node("AugAssign", BaseSmallStatement, "target operator value", "value target")
Annotation = _node("Annotation", CSTNode, "annotation")
Return = _node("Return", BaseSmallStatement, "value")
Raise = _node("Raise", BaseSmallStatement, "exc cause")
Assert = _node("Assert", BaseSmallStatement, "test msg")
Del = _node("Del", BaseSmallStatement, "target")
Pass = _node("Pass", BaseSmallStatement)
Break = _node("Break", BaseSmallStatement)
Continue = _node("Continue", BaseSmallStatement)
Global = _node("Global", BaseSmallStatement, "names", "")
Nonlocal = _node("Nonlocal", BaseSmallStatement, "names", "")
NameItem = _node("NameItem", CSTNode, "name")
Import = _node("Import", BaseSmallStatement, "names", "")
ImportFrom = _node("ImportFrom", BaseSmallStatement, "module names relative", "")
ImportAlias = _node("ImportAlias", CSTNode, "name asname")
ImportStar = _node("ImportStar", CSTNode)
AsName = _node("AsName", CSTNode, "name")
Dot = _node("Dot", CSTNode)

If = _node("If", BaseCompoundStatement, "test body orelse")
Else = _node("Else", CSTNode, "body")
For = _node("For", BaseCompoundStatement, "target iter body orelse asynchronous", "iter target body orelse")
While = _node("While", BaseCompoundStatement, "test body orelse")
With = _node("With", BaseCompoundStatement, "items body asynchronous", "items body")
WithItem = _node("WithItem", CSTNode, "item asname")
Try = _node("Try", BaseCompoundStatement, "body handlers orelse finalbody")
TryStar = _node("TryStar", BaseCompoundStatement, "body handlers orelse finalbody")
ExceptHandler = _node("ExceptHandler", CSTNode, "body type name", "type name body")
ExceptStarHandler = _node("ExceptStarHandler", CSTNode, "body type name")
Finally = _node("Finally", CSTNode, "body")
FunctionDef = _node("FunctionDef", BaseCompoundStatement,
                    "name params body decorators returns asynchronous type_parameters",
                    "decorators type_parameters params returns body")
ClassDef = _node("ClassDef", BaseCompoundStatement, "name body bases keywords decorators type_parameters",
                 "decorators type_parameters bases keywords body")
Decorator = _node("Decorator", CSTNode, "decorator")
Asynchronous = _node("Asynchronous", CSTNode)
Parameters = _node("Parameters", CSTNode, "params star_arg kwonly_params star_kwarg posonly_params posonly_ind")
Param = _node("Param", CSTNode, "name annotation default star", "annotation default")
ParamStar = _node("ParamStar", CSTNode)
ParamSlash = _node("ParamSlash", CSTNode)

# Type parameters and `type` statements (Python 3.12; defaults 3.13).  ``TypeParam.star``
# is "*" for the unpacked default of a ``TypeVarTuple`` (``*Ts = *tuple[int, ...]``).
TypeAlias = _node("TypeAlias", BaseSmallStatement, "name value type_parameters", "type_parameters value")
TypeParameters = _node("TypeParameters", CSTNode, "params")
TypeParam = _node("TypeParam", CSTNode, "param default star", "param default")
TypeVar = _node("TypeVar", CSTNode, "name bound", "bound")
TypeVarTuple = _node("TypeVarTuple", CSTNode, "name", "")
ParamSpec = _node("ParamSpec", CSTNode, "name", "")

# Match statements.
Match = _node("Match", BaseCompoundStatement, "subject cases")
MatchCase = _node("MatchCase", CSTNode, "pattern body guard")
MatchValue = _node("MatchValue", MatchPattern, "value")
MatchSingleton = _node("MatchSingleton", MatchPattern, "value")
MatchSequenceElement = _node("MatchSequenceElement", CSTNode, "value")
MatchStar = _node("MatchStar", CSTNode, "name")
MatchList = _node("MatchList", MatchPattern, "patterns", parens=True)
MatchTuple = _node("MatchTuple", MatchPattern, "patterns", parens=True)
MatchMappingElement = _node("MatchMappingElement", CSTNode, "key pattern")
MatchMapping = _node("MatchMapping", MatchPattern, "elements rest", parens=True)
MatchKeywordElement = _node("MatchKeywordElement", CSTNode, "key pattern")
MatchClass = _node("MatchClass", MatchPattern, "cls patterns kwds", parens=True)
MatchAs = _node("MatchAs", MatchPattern, "pattern name", parens=True)
MatchOrElement = _node("MatchOrElement", CSTNode, "pattern")
MatchOr = _node("MatchOr", MatchPattern, "patterns", parens=True)

# Expressions.
Name = _expr("Name", "value", "")
Attribute = _expr("Attribute", "value attr", "value")
Call = _expr("Call", "func args")
Arg = _node("Arg", CSTNode, "value keyword star", "value")
Subscript = _expr("Subscript", "value slice")
SubscriptElement = _node("SubscriptElement", CSTNode, "slice")
Index = _node("Index", BaseSlice, "value star", "value")
Slice = _node("Slice", BaseSlice, "lower upper step")
Tuple = _expr("Tuple", "elements")
List = _expr("List", "elements")
Set = _expr("Set", "elements")
Dict = _expr("Dict", "elements")
Element = _node("Element", BaseElement, "value")
StarredElement = _expr("StarredElement", "value")
DictElement = _node("DictElement", BaseDictElement, "key value")
StarredDictElement = _node("StarredDictElement", BaseDictElement, "value")
ListComp = _expr("ListComp", "elt for_in", "for_in elt", base=BaseSimpleComp)
SetComp = _expr("SetComp", "elt for_in", "for_in elt", base=BaseSimpleComp)
GeneratorExp = _expr("GeneratorExp", "elt for_in", "for_in elt", base=BaseSimpleComp)
DictComp = _expr("DictComp", "key value for_in", "for_in key value", base=BaseComp)
CompFor = _node("CompFor", CSTNode, "target iter ifs inner_for_in asynchronous", "iter target ifs inner_for_in")
CompIf = _node("CompIf", CSTNode, "test")
IfExp = _expr("IfExp", "test body orelse")
Lambda = _expr("Lambda", "params body")
NamedExpr = _expr("NamedExpr", "target value", "value target")
BinaryOperation = _expr("BinaryOperation", "left operator right", "left right")
UnaryOperation = _expr("UnaryOperation", "operator expression", "expression")
BooleanOperation = _expr("BooleanOperation", "left operator right", "left right")
Comparison = _expr("Comparison", "left comparisons")
ComparisonTarget = _node("ComparisonTarget", CSTNode, "operator comparator", "comparator")
Yield = _expr("Yield", "value")
From = _node("From", CSTNode, "item")
Await = _expr("Await", "expression")
Integer = _expr("Integer", "value", "", base=BaseNumber)
Float = _expr("Float", "value", "", base=BaseNumber)
Imaginary = _expr("Imaginary", "value", "", base=BaseNumber)
Ellipsis = _expr("Ellipsis")
LeftParen = _node("LeftParen", CSTNode)
RightParen = _node("RightParen", CSTNode)


def _string_prefix(self) -> str:
    value = self.value
    return value[: len(value) - len(value.lstrip("rRbBuUfF"))].lower()


def _string_quote(self) -> str:
    body = self.value[len(self.prefix):]
    return body[:3] if body[:3] in ('"""', "'''") and len(body) >= 6 else body[:1]


def _string_raw_value(self) -> str:
    quote = len(self.quote)
    return self.value[len(self.prefix) + quote: -quote]


def _concatenated_value(self):
    left = self.left.evaluated_value
    right = self.right.evaluated_value
    if left is None or right is None or type(left) is not type(right):
        return None
    return left + right


# ``value`` is the token's source text, prefix and quotes included.
SimpleString = _expr("SimpleString", "value", "", base=BaseString, prefix=property(_string_prefix),
                     quote=property(_string_quote), raw_value=property(_string_raw_value),
                     evaluated_value=property(lambda self: ast.literal_eval(self.value)))
ConcatenatedString = _expr("ConcatenatedString", "left right", base=BaseString,
                           evaluated_value=property(_concatenated_value))
# ``prefix`` as libcst's (lower case), ``quote`` the opening quote; no evaluated value.
FormattedString = _expr("FormattedString", "parts prefix quote", "parts", base=BaseString,
                        evaluated_value=None)
FormattedStringText = _node("FormattedStringText", BaseFormattedStringContent, "value", "")
FormattedStringExpression = _node("FormattedStringExpression", BaseFormattedStringContent,
                                  "expression conversion format_spec", "expression format_spec")


def _op(name: str, base: type, token: str) -> type:
    return _node(name, base, token=token)


Add = _op("Add", BaseBinaryOp, "+")
Subtract = _op("Subtract", BaseBinaryOp, "-")
Multiply = _op("Multiply", BaseBinaryOp, "*")
Divide = _op("Divide", BaseBinaryOp, "/")
FloorDivide = _op("FloorDivide", BaseBinaryOp, "//")
Modulo = _op("Modulo", BaseBinaryOp, "%")
Power = _op("Power", BaseBinaryOp, "**")
MatrixMultiply = _op("MatrixMultiply", BaseBinaryOp, "@")
LeftShift = _op("LeftShift", BaseBinaryOp, "<<")
RightShift = _op("RightShift", BaseBinaryOp, ">>")
BitOr = _op("BitOr", BaseBinaryOp, "|")
BitAnd = _op("BitAnd", BaseBinaryOp, "&")
BitXor = _op("BitXor", BaseBinaryOp, "^")

AddAssign = _op("AddAssign", BaseAugOp, "+=")
SubtractAssign = _op("SubtractAssign", BaseAugOp, "-=")
MultiplyAssign = _op("MultiplyAssign", BaseAugOp, "*=")
DivideAssign = _op("DivideAssign", BaseAugOp, "/=")
FloorDivideAssign = _op("FloorDivideAssign", BaseAugOp, "//=")
ModuloAssign = _op("ModuloAssign", BaseAugOp, "%=")
PowerAssign = _op("PowerAssign", BaseAugOp, "**=")
MatrixMultiplyAssign = _op("MatrixMultiplyAssign", BaseAugOp, "@=")
LeftShiftAssign = _op("LeftShiftAssign", BaseAugOp, "<<=")
RightShiftAssign = _op("RightShiftAssign", BaseAugOp, ">>=")
BitOrAssign = _op("BitOrAssign", BaseAugOp, "|=")
BitAndAssign = _op("BitAndAssign", BaseAugOp, "&=")
BitXorAssign = _op("BitXorAssign", BaseAugOp, "^=")

Plus = _op("Plus", BaseUnaryOp, "+")
Minus = _op("Minus", BaseUnaryOp, "-")
BitInvert = _op("BitInvert", BaseUnaryOp, "~")
Not = _op("Not", BaseUnaryOp, "not")

And = _op("And", BaseBooleanOp, "and")
Or = _op("Or", BaseBooleanOp, "or")

Equal = _op("Equal", BaseCompOp, "==")
# ``value``: "!=" (or "<>" under barry_as_FLUFL).
NotEqual = _node("NotEqual", BaseCompOp, "value", "", token="!=")
LessThan = _op("LessThan", BaseCompOp, "<")
LessThanEqual = _op("LessThanEqual", BaseCompOp, "<=")
GreaterThan = _op("GreaterThan", BaseCompOp, ">")
GreaterThanEqual = _op("GreaterThanEqual", BaseCompOp, ">=")
In = _op("In", BaseCompOp, "in")
NotIn = _op("NotIn", BaseCompOp, "not in")
Is = _op("Is", BaseCompOp, "is")
IsNot = _op("IsNot", BaseCompOp, "is not")


# ------------------------------------------------------------------------------------
# Parsing


class LazyBody:
    """The body of a function that is not built yet (``parse_module(lazy_bodies=True)``):
    the line of the function's first decorator (or ``def``) and the indentation of its
    ``def`` line.  ``build_lazy_body`` builds it."""

    __slots__ = ("first_line", "indent")

    def __init__(self, first_line: int, indent: str):
        self.first_line = first_line
        self.indent = indent


def parse_module(text: str, lazy_bodies: bool = False) -> Module:
    """Parse ``text`` (a whole file) into a ``Module``; ``ParserSyntaxError`` if it is
    not Python.

    With ``lazy_bodies``, the body of each outermost function (module-level functions,
    methods) is left as a ``LazyBody`` unless its text mentions ``global``,
    ``nonlocal``, ``apply`` or an import of torch, which reach beyond the function (see
    semantic.py).  For a module analysed only because another file imports it, where
    most functions are never looked into: it takes less than half the memory."""
    return _without_collector(lambda: _parse(text, lazy_bodies))


def build_lazy_body(module: Module, function: "FunctionDef") -> None:
    """Build the body of ``function`` (a ``LazyBody``) as ``parse_module`` would have.

    Only the function's text is parsed again (from the start of its first line to its
    end, which the first parse computed), inside ``if 1:`` when the ``def`` is indented,
    with ast's line numbers moved to where they are in the file; the conversion reads
    positions off the whole text, as the first one did."""
    lazy = function.body
    text = module.code
    bom = text.startswith("\ufeff")

    def build() -> None:
        builder = _Builder(text, bom)
        builder.default_indent = module.default_indent
        starts = builder.line_starts
        segment = text[starts[lazy.first_line - 1]:function.end]
        if lazy.indent:
            tree = parse_ast("if 1:\n" + segment)
            ast.increment_lineno(tree, lazy.first_line - 2)
            definition = tree.body[0].body[0]
        else:
            tree = parse_ast(segment)
            ast.increment_lineno(tree, lazy.first_line - 1)
            definition = tree.body[0]
        builder.function_depth = 1
        function.body, function.end = builder._suite(definition.body, lazy.indent)

    _without_collector(lambda: _deep(build))


def _without_collector(build):
    # Neither tree has cycles: the collector would only walk them again and again while
    # they grow (a fifth of the parse's time, a third of the conversion's).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return build()
    finally:
        if collecting:
            gc.enable()


def without_byte_order_mark(text: str) -> str:
    """``text`` as Python reads a file: one leading byte-order mark skipped (``compile`` and
    ``ast`` refuse it in a string)."""
    return text[1:] if text.startswith("\ufeff") else text


def parse_ast(text: str) -> ast.Module:
    """``ast.parse(text)``, or ``ParserSyntaxError`` when it is not Python this
    interpreter parses.  A leading byte-order mark is skipped (ast refuses it)."""
    try:
        # Under the recursion limit `python file.py` has: a nesting too deep for Python
        # (a chain of 3,000 attributes on 3.11) is refused here as it is there.
        with _recursion_limit(_PYTHON_RECURSION_LIMIT + _stack_depth()):
            return ast.parse(without_byte_order_mark(text), type_comments=False)
    except SyntaxError as error:
        raise ParserSyntaxError.of(error) from None
    except RecursionError as error:
        raise ParserSyntaxError(_too_deep(error), syntax=False, too_deep=True) from None
    except (ValueError, MemoryError) as error:
        raise ParserSyntaxError(f"{type(error).__name__}: {error}", syntax=False) from None


def _too_deep(error: RecursionError) -> str:
    return f"its expressions are nested too deeply for Python to compile it (RecursionError: {error})"


def _parse(text: str, lazy_bodies: bool) -> Module:
    bom = text.startswith("\ufeff")  # libcst skips it too; offsets still count it
    tree = parse_ast(text)
    return _deep(lambda: _Builder(text, bom, lazy_bodies).module(tree), text)


def _deep(build, text: Optional[str] = None):
    """``build()``, with room for the deepest nesting Python compiles.  A tree that needs
    more room than a shallow one is first checked to compile as Python would compile it:
    ast accepts some nestings that the compiler refuses (all of them on Python 3.10)."""
    try:
        with _recursion_limit(_stack_depth() + _SHALLOW_BUILD_FRAMES):
            return build()
    except RecursionError:
        pass
    if text is not None:
        _check_compiles(text)
    with _recursion_limit(_DEEP_RECURSION_LIMIT):
        try:
            return build()
        except RecursionError as error:
            raise ParserSyntaxError(f"RecursionError: {error}", syntax=False, too_deep=True) from None


def _check_compiles(text: str) -> None:
    """``ParserSyntaxError`` when the compiler refuses ``text`` for its nesting.  Its other
    complaints (a late ``from __future__`` import, ``return`` outside a function) are not
    asked of a shallow file either, whose ``ast`` is enough: they do not stop the lint."""
    try:
        with _recursion_limit(_PYTHON_RECURSION_LIMIT + _stack_depth()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(without_byte_order_mark(text), "<file>", "exec", dont_inherit=True)
    except SyntaxError as error:
        refused = ParserSyntaxError.of(error)
        if refused.too_deep:
            raise refused from None
    except RecursionError as error:
        raise ParserSyntaxError(_too_deep(error), syntax=False, too_deep=True) from None
    except (ValueError, MemoryError) as error:
        raise ParserSyntaxError(f"{type(error).__name__}: {error}", syntax=False) from None


@contextlib.contextmanager
def _recursion_limit(limit: int):
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _stack_depth() -> int:
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


# Python's own default, under which it compiles the file it runs.
_PYTHON_RECURSION_LIMIT = 1000
# The tree builder recurses about two frames per level of nesting: with this room, a
# tree whose nesting Python might refuse (about 3,000 levels) needs the deep path.
_SHALLOW_BUILD_FRAMES = 5000
_DEEP_RECURSION_LIMIT = 50_000


# What may come between a node and a parenthesis before it, besides spaces.
_BEFORE_PARENTHESIS = frozenset("\t\f\r\n\\")
# What may come right after a node that has parentheses.
_AFTER_NODE = frozenset(") \t\f\r\n\\#")
# Whitespace, comments and line continuations between two tokens.
_GAP = re.compile(r"(?:[ \t\f\r\n]+|\\(?:\r\n?|\n)|#[^\r\n]*)*")
# The rest of a line after a statement: spaces, a comment, the line break.
_LINE_REST = re.compile(r"[ \t\f]*(?:\\(?:\r\n?|\n)[ \t\f]*)*(?:#[^\r\n]*)?(?:\r\n?|\n)?")
_INDENT = re.compile(r"[ \t\f]*")
_WHITESPACE = re.compile(r"[ \t\f\r\n]*")
_SPACES = re.compile(r"[ \t\f]*(?:\\(?:\r\n?|\n)[ \t\f]*)*")
_IDENTIFIER = re.compile(r"\w+")
_STRING_BODY = (
    r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'"
    r'|"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"'
)
_STRING = re.compile(r"[A-Za-z]*(?:" + _STRING_BODY + ")", re.S)
# Comments, skipping strings (a "#" inside a string is no comment).
_COMMENT_OR_STRING = re.compile(r"#[^\r\n]*|" + _STRING_BODY, re.S)

_BINARY_OPS = {
    ast.Add: Add, ast.Sub: Subtract, ast.Mult: Multiply, ast.Div: Divide, ast.FloorDiv: FloorDivide,
    ast.Mod: Modulo, ast.Pow: Power, ast.MatMult: MatrixMultiply, ast.LShift: LeftShift,
    ast.RShift: RightShift, ast.BitOr: BitOr, ast.BitAnd: BitAnd, ast.BitXor: BitXor,
}
_AUGMENTED_OPS = {
    ast.Add: AddAssign, ast.Sub: SubtractAssign, ast.Mult: MultiplyAssign, ast.Div: DivideAssign,
    ast.FloorDiv: FloorDivideAssign, ast.Mod: ModuloAssign, ast.Pow: PowerAssign,
    ast.MatMult: MatrixMultiplyAssign, ast.LShift: LeftShiftAssign, ast.RShift: RightShiftAssign,
    ast.BitOr: BitOrAssign, ast.BitAnd: BitAndAssign, ast.BitXor: BitXorAssign,
}
_UNARY_OPS = {ast.UAdd: Plus, ast.USub: Minus, ast.Invert: BitInvert, ast.Not: Not}
_COMPARISON_OPS = {
    ast.Eq: Equal, ast.NotEq: NotEqual, ast.Lt: LessThan, ast.LtE: LessThanEqual, ast.Gt: GreaterThan,
    ast.GtE: GreaterThanEqual, ast.In: In, ast.NotIn: NotIn, ast.Is: Is, ast.IsNot: IsNot,
}
# What in a function's text can change the analysis of the rest of its module (semantic.py):
# names it binds there, torch imports, functions passed to `.apply()`.
_REACHES_OUT = re.compile(r"\b(?:global|nonlocal|apply)\b|\b(?:import|from)\s+torch\b")
# ast classes of newer Pythons than the oldest supported (3.10); a stand-in class that no
# node has where this Python has none.
_TryStar = getattr(ast, "TryStar", type("TryStar", (), {}))
_TypeAlias = getattr(ast, "TypeAlias", type("TypeAlias", (), {}))
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, _TryStar,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


class _Builder:
    """Converts one module's ``ast`` into nodes, reading positions off ``text``."""

    def __init__(self, text: str, bom: bool = False, lazy_bodies: bool = False):
        self.lazy_bodies = lazy_bodies
        self.function_depth = 0  # how many function bodies the conversion is in
        # A sentinel after the text lets the scans look one character past a token at
        # the very end without a bounds check.
        self.text = text + "\0"
        self.size = len(text)
        self.line_starts = line_starts(text)
        if bom:  # ast's first line started after it
            self.line_starts[0] = 1
        # ast's columns count UTF-8 bytes; its identifiers are NFKC-normalized.
        self.ascii = text.isascii()
        self._wide: dict[int, Optional[tuple[list[int], list[int], list[int]]]] = {}
        self._comments: Optional[list[int]] = None
        self.default_indent: Optional[str] = None

    # --- positions ---------------------------------------------------------------

    def _offset(self, line: int, column: int) -> int:
        """The character offset of ``ast``'s (line, UTF-8 byte column)."""
        start = self.line_starts[line - 1]
        if self.ascii:
            return start + column
        wide = self._wide.get(start, False)
        if wide is False:
            wide = self._wide[start] = self._wide_characters(start)
        if wide is None:
            return start + column
        byte_starts, byte_ends, char_ends = wide
        before = bisect.bisect_left(byte_starts, column)  # wide characters that start before the column
        if not before:
            return start + column
        # A column inside a character counts it whole, as decoding its bytes up to the
        # column with "replace" would.
        return start + char_ends[before - 1] + max(0, column - byte_ends[before - 1])

    def _wide_characters(self, start: int) -> Optional[tuple[list[int], list[int], list[int]]]:
        """For the line at ``start``, unless it is ASCII: the byte offsets at which its
        non-ASCII characters start and end, and the character offsets at which they end."""
        text = self.text
        end = LINE_BREAK.search(text, start)
        line = text[start:end.start() if end else len(text)]
        if line.isascii():
            return None
        byte_starts, byte_ends, char_ends = [], [], []
        extra = 0  # the bytes beyond one per character so far
        for match in _NON_ASCII.finditer(line):
            index = match.start()
            byte_starts.append(index + extra)
            extra += len(match.group().encode("utf-8")) - 1
            byte_ends.append(index + 1 + extra)
            char_ends.append(index + 1)
        return byte_starts, byte_ends, char_ends

    def _range(self, n: ast.AST) -> tuple[int, int]:
        if self.ascii:
            starts = self.line_starts
            return starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset
        return self._offset(n.lineno, n.col_offset), self._offset(n.end_lineno, n.end_col_offset)

    def _skip(self, offset: int) -> int:
        """The offset of the next token at or after ``offset``."""
        return _GAP.match(self.text, offset).end()

    def _back(self, offset: int) -> int:
        """The offset of the last character of the token before ``offset`` (-1: none)."""
        text = self.text
        i = offset - 1
        while i >= 0:
            char = text[i]
            if char in " \t\f":
                i -= 1
            elif char == "\n" or char == "\r":
                i -= 2 if char == "\n" and i > 0 and text[i - 1] == "\r" else 1
                line_start = _start_of_line(text, i + 1)
                if "#" in text[line_start:i + 1]:
                    comment = self._comment_in(line_start, i + 1)
                    if comment is not None:
                        i = comment - 1
                        continue
                if i >= 0 and text[i] == "\\":
                    i -= 1
            else:
                return i
        return -1

    def _comment_in(self, start: int, end: int) -> Optional[int]:
        """Where the comment in text[start:end] starts, if there is one."""
        if self._comments is None:
            self._comments = [m.start() for m in _COMMENT_OR_STRING.finditer(self.text) if m.group()[0] == "#"]
        index = bisect.bisect_left(self._comments, start)
        if index < len(self._comments) and self._comments[index] < end:
            return self._comments[index]
        return None

    def _ident_end(self, offset: int) -> int:
        return _IDENTIFIER.match(self.text, offset).end()

    def _name_at(self, offset: int, value: Optional[str] = None) -> Name:
        """The identifier that starts at ``offset`` (``value``, as ast has it)."""
        if self.ascii and value is not None:
            return Name(value, offset, offset + len(value))
        end = self._ident_end(offset)
        return Name(self.text[offset:end], offset, end)

    def _keyword_end(self, offset: int, keyword: str) -> int:
        """After ``keyword``, which is the next token at or after ``offset``."""
        return self._skip(offset) + len(keyword)

    def _parens(self, node, lo: int = 0):
        """Give ``node`` the parentheses around it (none that open before ``lo``)."""
        text = self.text
        start = node.lpar[0].start if node.lpar else node.start
        end = node.rpar[-1].end if node.rpar else node.end
        lpar, rpar = list(node.lpar), list(node.rpar)
        while True:
            before = start - 1
            while text[before] == " ":  # the sentinel at -1 stops it
                before -= 1
            if text[before] != "(":
                before = self._back(start)
            if before < lo or text[before] != "(":
                break
            after = _GAP.match(text, end).end()
            if text[after] != ")":
                break
            lpar.insert(0, LeftParen(before, before + 1))
            rpar.append(RightParen(after, after + 1))
            start, end = before, after + 1
        if len(lpar) != len(node.lpar):
            node.lpar, node.rpar = tuple(lpar), tuple(rpar)
        return node

    # --- module and statements ---------------------------------------------------

    def module(self, tree: ast.Module) -> Module:
        text = self.text[:self.size]
        body, _ = self._statements(tree.body)
        newline = LINE_BREAK.search(text)
        return Module(body, text, self.default_indent or "    ", newline.group() if newline else "\n",
                      text.endswith(("\n", "\r")), 0, self.size)

    def _statements(self, stmts: list) -> tuple[list, int]:
        """The statements of a block, small ones grouped by line, and where the last one's
        code (with its line break) ends."""
        text = self.text
        out = []
        end = 0
        index = 0
        count = len(stmts)
        while index < count:
            stmt = stmts[index]
            if isinstance(stmt, _COMPOUND):
                node, end = _STATEMENTS[type(stmt)](self, stmt)
                out.append(node)
                index += 1
                continue
            line, last, index = self._small_statements(stmts, index)
            out.append(SimpleStatementLine(line, line[0].start, last))
            end = _LINE_REST.match(text, last).end()
        return out, end

    def _small_statements(self, stmts: list, index: int) -> tuple[list, int, int]:
        """The small statements from ``stmts[index]`` on that share its line; where their
        code ends (after a final ``;``); the index after them."""
        text = self.text
        line = []
        while True:
            node = _STATEMENTS[type(stmts[index])](self, stmts[index])
            line.append(node)
            index += 1
            after = _SPACES.match(text, node.end).end()
            if text[after] != ";":
                return line, node.end, index
            following = _SPACES.match(text, after + 1).end()
            if index < len(stmts) and not isinstance(stmts[index], _COMPOUND) \
                    and text[following] not in "#\r\n\0":
                continue
            return line, following, index

    def _suite(self, stmts: list, indent: str = "", lazy: Optional[int] = None) -> tuple[Optional[BaseSuite], int]:
        """The body of a compound statement, and where its code ends (footer included).
        With ``lazy`` (where the last statement's last token ends), an indented block
        is not built: None, and where it would end."""
        text = self.text
        first = stmts[0]
        decorators = getattr(first, "decorator_list", None)
        if decorators:  # only an indented block starts with a decorator
            first_line = decorators[0].lineno
            line_start = self.line_starts[first_line - 1]
            prefix = _INDENT.match(text, line_start).group()
        else:
            first_line = first.lineno
            line_start = self.line_starts[first_line - 1]
            prefix = text[line_start:self._offset(first_line, first.col_offset)]
        if prefix.strip(" \t\f") or self._continued(line_start):
            line, last, _ = self._small_statements(stmts, 0)
            return SimpleStatementSuite(line, line[0].start, last), _LINE_REST.match(text, last).end()
        if self.default_indent is None:
            self.default_indent = prefix[len(indent):] if prefix.startswith(indent) else prefix
        if lazy is not None:
            # Where _statements would end: after the last statement's line (a final `;`
            # included), and the comment lines after it that keep the block's
            # indentation (those of nested blocks keep it too).
            after = _SPACES.match(text, lazy).end()
            if text[after] == ";":
                lazy = _SPACES.match(text, after + 1).end()
            return None, self._footer_end(_LINE_REST.match(text, lazy).end(), prefix)
        body, end = self._statements(stmts)
        block = IndentedBlock(body, self._block_start(first_line), end)
        return block, self._footer_end(end, prefix)

    def _continued(self, line_start: int) -> bool:
        """Whether the line before the one at ``line_start`` ends with a backslash that
        joins the two (``if a: \\`` then ``pass``)."""
        text = self.text
        end = line_start - 1
        if end > 0 and text[end] == "\n" and text[end - 1] == "\r":
            end -= 1
        if end < 1 or text[end - 1] != "\\":
            return False
        previous = _start_of_line(text, end)
        return "#" not in text[previous:end] or self._comment_in(previous, end) is None

    def _block_start(self, line: int) -> int:
        """Where an indented block whose first statement is on ``line`` starts: after the
        header's line, so the comment and blank lines before the statement are in it."""
        text = self.text
        starts = self.line_starts
        index = line - 1
        while index > 0:
            previous = text[starts[index - 1]:starts[index]].lstrip(" \t\f")
            if previous and previous[0] not in "#\r\n":
                break
            index -= 1
        return starts[index]

    def _footer_end(self, offset: int, indent: str) -> int:
        """libcst gives a block the comment lines after it that keep its indentation."""
        text = self.text
        end = offset
        size = self.size
        while offset < size:
            line_end = LINE_BREAK.search(text, offset)
            stop = line_end.end() if line_end else size
            content = text[offset:line_end.start() if line_end else size]
            stripped = content.lstrip(" \t\f")
            if stripped and stripped[0] != "#":
                break
            if content.startswith(indent):
                end = stop
            offset = stop
        return end

    def _expr_stmt(self, n):
        value = self.expr(n.value)
        return Expr(value, value.outer_start, value.outer_end)

    def _assign(self, n):
        targets = []
        for target in n.targets:
            node = self.expr(target)
            targets.append(AssignTarget(node, node.outer_start, node.outer_end))
        value = self.expr(n.value)
        return Assign(targets, value, targets[0].start, value.outer_end)

    def _aug_assign(self, n):
        target = self.expr(n.target)
        op_start = self._skip(target.outer_end)
        operator_class = _AUGMENTED_OPS[type(n.op)]
        operator = operator_class(op_start, op_start + len(operator_class.token))
        value = self.expr(n.value)
        return AugAssign(target, operator, value, target.outer_start, value.outer_end)

    def _ann_assign(self, n):
        target = self.expr(n.target)
        annotation = self._annotation(n.annotation)
        value = self.expr(n.value) if n.value is not None else None
        end = value.outer_end if value is not None else annotation.end
        return AnnAssign(target, annotation, value, target.outer_start, end)

    def _annotation(self, n) -> Annotation:
        node = self.expr(n)
        return Annotation(node, node.outer_start, node.outer_end)

    def _return(self, n):
        start, end = self._range(n)
        return Return(self.expr(n.value) if n.value is not None else None, start, end)

    def _raise(self, n):
        start, end = self._range(n)
        exc = self.expr(n.exc) if n.exc is not None else None
        cause = None
        if n.cause is not None:
            item = self.expr(n.cause)
            cause = From(item, self._skip(exc.outer_end), item.outer_end)
        return Raise(exc, cause, start, end)

    def _assert(self, n):
        start, end = self._range(n)
        return Assert(self.expr(n.test), self.expr(n.msg) if n.msg is not None else None, start, end)

    def _delete(self, n):
        start, end = self._range(n)
        targets = [self.expr(target) for target in n.targets]
        if len(targets) == 1 and self.text[self._skip(targets[0].outer_end)] != ",":
            target = targets[0]
        else:  # `del a, b` (or `del a,`)
            target = Tuple([Element(t, t.outer_start, t.outer_end) for t in targets],
                           targets[0].outer_start, end)
        return Del(target, start, end)

    def _keyword_stmt(self, n):
        start, end = self._range(n)
        return _SIMPLE_KEYWORDS[type(n)](start, end)

    def _global(self, n):
        start, end = self._range(n)
        offset = start + (6 if type(n) is ast.Global else 8)
        items = []
        for name in n.names:
            offset = self._skip(offset)
            if self.text[offset] == ",":
                offset = self._skip(offset + 1)
            node = self._name_at(offset, name)
            items.append(NameItem(node, node.start, node.end))
            offset = node.end
        return (Global if type(n) is ast.Global else Nonlocal)(items, start, end)

    def _dotted(self, offset: int, dotted: str):
        """``a.b.c`` starting at ``offset`` as a Name or a chain of Attributes."""
        parts = dotted.split(".")
        node = self._name_at(offset, parts[0])
        for part in parts[1:]:
            attr = self._name_at(self._skip(self._skip(node.end) + 1), part)
            node = Attribute(node, attr, node.start, attr.end)
        return node

    def _alias(self, n) -> ImportAlias:
        start, end = self._range(n)
        name = self._dotted(start, n.name)
        asname = None
        if n.asname is not None:
            target = self._name_at(self._skip(self._keyword_end(name.end, "as")), n.asname)
            asname = AsName(target, name.end, target.end)
        return ImportAlias(name, asname, start, end)

    def _import(self, n):
        start, end = self._range(n)
        return Import([self._alias(alias) for alias in n.names], start, end)

    def _import_from(self, n):
        start, end = self._range(n)
        offset = start + 4
        relative = []
        for _ in range(n.level):
            offset = self._skip(offset)
            relative.append(Dot(offset, offset + 1))
            offset += 1
        module = self._dotted(self._skip(offset), n.module) if n.module is not None else None
        if n.names[0].name == "*":
            star_start, star_end = self._range(n.names[0])
            names = ImportStar(star_start, star_end)
        else:
            names = [self._alias(alias) for alias in n.names]
        return ImportFrom(module, names, relative, start, end)

    # Compound statements.

    def _indent_of(self, n) -> str:
        start = self.line_starts[n.lineno - 1]
        return self.text[start:self._offset(n.lineno, n.col_offset)]

    def _orelse(self, stmts, after: int, indent: str):
        """The ``else:`` clause of a for/while/try (``after``: where the code before it ends)."""
        if not stmts:
            return None, after
        start = self._skip(after)
        body, end = self._suite(stmts, indent)
        return Else(body, start, end), end

    def _if(self, n, indent=None):
        start = self._offset(n.lineno, n.col_offset)
        if indent is None:
            indent = self._indent_of(n)
        test = self.expr(n.test)
        body, end = self._suite(n.body, indent)
        orelse = None
        if n.orelse:
            first = n.orelse[0]
            if len(n.orelse) == 1 and type(first) is ast.If \
                    and self.text.startswith("elif", self._offset(first.lineno, first.col_offset)):
                orelse, end = self._if(first, indent)
            else:
                orelse, end = self._orelse(n.orelse, end, indent)
        return If(test, body, orelse, start, end), end

    def _asynchronous(self, start: int, n):
        if type(n) in (ast.AsyncFor, ast.AsyncWith, ast.AsyncFunctionDef):
            return Asynchronous(start, start + 5)
        return None

    def _for(self, n):
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        target = self.expr(n.target)
        iterable = self.expr(n.iter)
        body, end = self._suite(n.body, indent)
        orelse, end = self._orelse(n.orelse, end, indent)
        return For(target, iterable, body, orelse, self._asynchronous(start, n), start, end), end

    def _while(self, n):
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        test = self.expr(n.test)
        body, end = self._suite(n.body, indent)
        orelse, end = self._orelse(n.orelse, end, indent)
        return While(test, body, orelse, start, end), end

    def _with(self, n):
        text = self.text
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        keyword_end = self._keyword_end(start + 5, "with") if type(n) is ast.AsyncWith else start + 4
        paren = self._skip(keyword_end)
        # `with (a, b):` - the parentheses are the statement's unless they belong to
        # the first item (`with (a) as b:`, `with (a, b) as c:`, `with (yield):`).
        lo = paren + 1 if text[paren] == "(" else 0
        items = []
        for item in n.items:
            value = self.expr(item.context_expr, lo)
            asname = None
            item_end = value.outer_end
            if item.optional_vars is not None:
                target = self.expr(item.optional_vars)
                asname = AsName(target, value.outer_end, target.outer_end)
                item_end = target.outer_end
            items.append(WithItem(value, asname, value.outer_start, item_end))
        if lo:
            last = items[-1]
            closing = self._skip(last.end)
            first = items[0].item
            own = text[closing] == ")" and text[self._skip(closing + 1)] == ":" \
                and first.outer_start > paren
            if own and len(items) == 1 and not first.lpar and isinstance(first, (Yield, NamedExpr)) \
                    and text[self._skip(first.end)] == ")":
                own = False
            if not own:
                for item in items:
                    self._parens(item.item)
                    item.start = item.item.outer_start
                    if item.asname is None:
                        item.end = item.item.outer_end
                    else:
                        item.asname.start = item.item.outer_end
        body, end = self._suite(n.body, indent)
        return With(items, body, self._asynchronous(start, n), start, end), end

    def _try(self, n):
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        body, end = self._suite(n.body, indent)
        handlers = []
        handler_class = ExceptStarHandler if type(n) is _TryStar else ExceptHandler
        for handler in n.handlers:
            handler_start = self._offset(handler.lineno, handler.col_offset)
            kind = self.expr(handler.type) if handler.type is not None else None
            name = None
            if handler.name is not None:
                as_end = self._keyword_end(kind.outer_end, "as")
                target = self._name_at(self._skip(as_end), handler.name)
                name = AsName(target, kind.outer_end, target.end)
            handler_body, end = self._suite(handler.body, indent)
            handlers.append(handler_class(handler_body, kind, name, handler_start, end))
        orelse, end = self._orelse(n.orelse, end, indent)
        finalbody = None
        if n.finalbody:
            final_start = self._skip(end)
            final_block, end = self._suite(n.finalbody, indent)
            finalbody = Finally(final_block, final_start, end)
        return (TryStar if type(n) is _TryStar else Try)(body, handlers, orelse, finalbody, start, end), end

    def _decorators(self, n) -> list:
        decorators = []
        for decorator in n.decorator_list:
            node = self.expr(decorator)
            decorators.append(Decorator(node, self._back(node.outer_start), node.outer_end))
        return decorators

    def _function_def(self, n):
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        decorators = self._decorators(n)
        asynchronous = self._asynchronous(start, n)
        def_end = self._keyword_end(start + 5, "def") if asynchronous else start + 3
        name = self._name_at(self._skip(def_end), n.name)
        type_parameters, paren = self._type_parameters(n, name.end)
        params = self._parameters(n.args, paren + 1)
        returns = self._annotation(n.returns) if n.returns is not None else None
        # The line of the first `@` (ast's line is its expression's, maybe in parentheses).
        first_line = bisect.bisect_right(self.line_starts, decorators[0].start) if decorators else n.lineno
        body = None
        if self.lazy_bodies and not self.function_depth and not _REACHES_OUT.search(
                self.text, self.line_starts[first_line - 1], self._offset(n.end_lineno, n.end_col_offset)):
            body, end = self._suite(n.body, indent, lazy=self._offset(n.end_lineno, n.end_col_offset))
            if body is None:
                body = LazyBody(first_line, indent)
        if body is None:
            self.function_depth += 1
            body, end = self._suite(n.body, indent)
            self.function_depth -= 1
        return FunctionDef(name, params, body, decorators, returns, asynchronous, type_parameters, start, end), end

    def _class_def(self, n):
        text = self.text
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        decorators = self._decorators(n)
        name = self._name_at(self._skip(start + 5), n.name)
        type_parameters, paren = self._type_parameters(n, name.end)
        args = self._arguments(n.bases, n.keywords, paren + 1) if text[paren] == "(" else []
        bases = [arg for arg in args if arg.keyword is None and arg.star != "**"]
        keywords = [arg for arg in args if arg.keyword is not None or arg.star == "**"]
        body, end = self._suite(n.body, indent)
        return ClassDef(name, body, bases, keywords, decorators, type_parameters, start, end), end

    def _type_alias(self, n):
        start, end = self._range(n)
        name = self._name_at(self._skip(start + 4), n.name.id)
        type_parameters, _ = self._type_parameters(n, name.end)
        value = self.expr(n.value)
        return TypeAlias(name, value, type_parameters, start, end)

    def _type_parameters(self, n, name_end: int) -> tuple[Optional[TypeParameters], int]:
        """The ``[T, *Ts, **P]`` after the name (ending at ``name_end``) of a function,
        class or ``type`` statement, and the offset of the next token after it."""
        after = self._skip(name_end)
        params = getattr(n, "type_params", None)  # Python 3.12
        if not params:
            return None, after
        text = self.text
        nodes = []
        for p in params:
            start = self._offset(p.lineno, p.col_offset)
            kind = type(p).__name__
            stars = 0 if kind == "TypeVar" else 1 if kind == "TypeVarTuple" else 2
            name = self._name_at(self._skip(start + stars), p.name)
            if kind == "TypeVar":
                bound = self.expr(p.bound) if p.bound is not None else None
                param = TypeVar(name, bound, start, bound.outer_end if bound is not None else name.end)
            elif kind == "TypeVarTuple":
                param = TypeVarTuple(name, start, name.end)
            else:
                param = ParamSpec(name, start, name.end)
            default, star = getattr(p, "default_value", None), ""  # Python 3.13
            if default is not None:
                if type(default) is ast.Starred:
                    default, star = default.value, "*"
                default = self.expr(default)
            end = default.outer_end if default is not None else param.end
            comma = self._skip(end)
            # libcst's range of a parameter runs over its comma and the space after it.
            nodes.append(TypeParam(param, default, star, start, self._skip(comma + 1) if text[comma] == "," else end))
        closing = self._skip(nodes[-1].end)
        return TypeParameters(nodes, after, closing + 1), self._skip(closing + 1)

    def _match(self, n):
        start = self._offset(n.lineno, n.col_offset)
        indent = self._indent_of(n)
        subject = self.expr(n.subject)
        cases = []
        case_indent = indent
        end = subject.outer_end
        for case in n.cases:
            pattern = self.pattern(case.pattern)
            case_start = self._back(_outer_start(pattern)) - 3  # `case`
            if not cases:
                # The cases are a block of their own, indented like statements.
                line = self.line_starts[bisect.bisect_right(self.line_starts, case_start) - 1]
                case_indent = self.text[line:case_start]
                if self.default_indent is None:
                    self.default_indent = case_indent[len(indent):]
            guard = self.expr(case.guard) if case.guard is not None else None
            body, end = self._suite(case.body, case_indent)
            cases.append(MatchCase(pattern, body, guard, case_start, end))
        end = self._footer_end(end, case_indent)
        return Match(subject, cases, start, end), end

    # --- parameters and arguments ------------------------------------------------

    def _parameters(self, args: ast.arguments, offset: int) -> Parameters:
        """``offset``: just after the ``(`` of a ``def``, or after ``lambda``."""
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + args.defaults
        params = [self._param(arg, default, "") for arg, default in zip(positional, defaults)]
        posonly = params[:len(args.posonlyargs)]
        regular = params[len(args.posonlyargs):]
        elements = list(posonly)  # every parameter and marker in order, for the positions
        slash = None
        if posonly:
            slash_start = self._skip(self._skip(self._param_end(posonly[-1])) + 1)
            slash = ParamSlash(slash_start, slash_start + 1)
            elements.append(slash)
        elements.extend(regular)
        star_arg = None
        if args.vararg is not None:
            star_arg = self._param(args.vararg, None, "*")
            elements.append(star_arg)
        elif args.kwonlyargs:
            star_start = self._skip(offset) if not elements else \
                self._skip(self._skip(self._param_end(elements[-1])) + 1)
            star_arg = ParamStar(star_start, star_start + 1)
            elements.append(star_arg)
        kwonly = [self._param(arg, default, "") for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
        elements.extend(kwonly)
        star_kwarg = self._param(args.kwarg, None, "**") if args.kwarg is not None else None
        if star_kwarg is not None:
            elements.append(star_kwarg)
        # Markers run to the next parameter (their comma and the space after it).
        for index, element in enumerate(elements):
            if type(element) in (ParamStar, ParamSlash):
                if index + 1 < len(elements):
                    element.end = elements[index + 1].start
                else:
                    element.end = self._closing(element.start + 1)
        if elements:
            start = elements[0].start
            last = elements[-1]
            end = last.end if type(last) in (ParamStar, ParamSlash) else self._closing(self._param_end(last))
        else:  # `lambda: ...` has no space to skip, `def f( ):` has
            start = end = self._skip(offset) if self.text[offset - 1] == "(" else offset
        return Parameters(regular, star_arg, kwonly, star_kwarg, posonly, slash, start, end)

    def _closing(self, offset: int) -> int:
        """Where the ``)`` (or ``:``) after the last parameter (ending at ``offset``) is:
        the parameters' range runs over the comma and space after it."""
        after = self._skip(offset)
        if self.text[after] == ",":
            return self._skip(after + 1)
        return after

    def _param_end(self, param) -> int:
        if type(param) is not Param:
            return param.start + 1
        if param.default is not None:
            return param.default.outer_end
        if param.annotation is not None:
            return param.annotation.end
        return param.name.end

    def _param(self, arg: ast.arg, default, star: str) -> Param:
        start = self._offset(arg.lineno, arg.col_offset)
        name = self._name_at(start, arg.arg)
        annotation = self._annotation(arg.annotation) if arg.annotation is not None else None
        default_node = self.expr(default) if default is not None else None
        param_start = start
        if star:
            param_start = self._back(start) - len(star) + 1
        return Param(name, annotation, default_node, star, param_start, name.end)

    def _arguments(self, args: list, keywords: list, lo: int) -> list:
        """Call (or class) arguments in source order; ``lo``: just after the ``(``."""
        out = []
        items = args + keywords if keywords and args else args or keywords
        if keywords and args and _position(args[-1]) > _position(keywords[0]):
            items.sort(key=_position)  # `f(a=1, *b)`
        for item in items:
            kind = type(item)
            if kind is ast.Starred:
                value = self.expr(item.value, lo)
                start = self._offset(item.lineno, item.col_offset)
                out.append(Arg(value, None, "*", start, value.outer_end))
            elif kind is ast.keyword:
                value = self.expr(item.value, lo)
                start = self._offset(item.lineno, item.col_offset)
                if item.arg is None:
                    out.append(Arg(value, None, "**", start, value.outer_end))
                else:
                    keyword = self._name_at(start, item.arg)
                    out.append(Arg(value, keyword, "", start, value.outer_end))
            else:
                value = self.expr(item, lo)
                out.append(Arg(value, None, "", value.outer_start, value.outer_end))
        return out

    # --- expressions -------------------------------------------------------------

    def expr(self, n, lo: int = 0):
        """The node for expression ``n``, with its parentheses (none opening before ``lo``)."""
        node = _EXPRESSIONS[type(n)](self, n)
        text = self.text
        before = node.start - 1
        char = text[before]  # the sentinel at -1
        while char == " ":
            before -= 1
            char = text[before]
        if node.lpar or (char == "(" or char in _BEFORE_PARENTHESIS) and text[node.end] in _AFTER_NODE:
            return self._parens(node, lo)
        return node

    def _name(self, n):
        if self.ascii:
            start = self.line_starts[n.lineno - 1] + n.col_offset
            value = n.id
            return Name(value, start, start + len(value))
        start, end = self._range(n)
        return Name(self.text[start:end], start, end)

    def _constant(self, n):
        value = n.value
        kind = type(value)
        if kind is str or kind is bytes:
            return self._string(n)
        if self.ascii:
            starts = self.line_starts
            start = starts[n.lineno - 1] + n.col_offset
            end = starts[n.end_lineno - 1] + n.end_col_offset
        else:
            start, end = self._range(n)
        if kind is int:
            return Integer(self.text[start:end], start, end)
        if kind is float:
            return Float(self.text[start:end], start, end)
        if kind is complex:
            return Imaginary(self.text[start:end], start, end)
        if value is ...:
            return Ellipsis(start, end)
        return Name(self.text[start:end], start, end)  # True, False, None

    def _attribute(self, n):
        value = self.expr(n.value)
        attr = n.attr
        if self.ascii:
            starts = self.line_starts
            end = starts[n.end_lineno - 1] + n.end_col_offset
            attr_node = Name(attr, end - len(attr), end)
            return Attribute(value, attr_node, value.outer_start, end)
        start, end = self._range(n)
        attr_node = self._name_at(self._skip(self._skip(value.outer_end) + 1))
        return Attribute(value, attr_node, start, end)

    def _call(self, n):
        start, end = self._range(n)
        func = self.expr(n.func)
        paren = func.outer_end
        if self.text[paren] != "(":
            paren = self._skip(paren)
        args = self._arguments(n.args, n.keywords, paren + 1)
        if len(args) == 1 and type(args[0].value) is GeneratorExp:
            value = args[0].value
            if value.lpar and value.lpar[0].start == paren:  # `f(x for x in y)`: the call's
                value.lpar = value.rpar = ()
                args[0].start, args[0].end = value.start, value.end
        return Call(func, args, start, end)

    def _subscript(self, n):
        start, end = self._range(n)
        value = self.expr(n.value)
        index = n.slice
        node = self._slice(index) if type(index) is ast.Slice else self.expr(index)
        if type(node) is Tuple and not node.lpar and type(index) is ast.Tuple:
            elements = [self._subscript_element(element) for element in node.elements]
        else:
            elements = [self._subscript_element(node)]
        return Subscript(value, elements, start, end)

    def _subscript_element(self, node) -> SubscriptElement:
        kind = type(node)
        if kind is Slice:
            inner = node
        elif kind is StarredElement:
            inner = Index(node.value, "*", node.outer_start, node.value.outer_end)
        else:
            if kind is Element:
                node = node.value
            inner = Index(node, None, node.outer_start, node.outer_end)
        return SubscriptElement(inner, inner.start, inner.end)

    def _slice(self, n):
        start, end = self._range(n)
        if self.text[end - 1] == ":":  # libcst's range has the space after a final colon
            end = self._skip(end)
        lower = self.expr(n.lower) if n.lower is not None else None
        upper = self.expr(n.upper) if n.upper is not None else None
        step = self.expr(n.step) if n.step is not None else None
        return Slice(lower, upper, step, start, end)

    def _elements(self, elts: list) -> list:
        out = []
        for elt in elts:
            if type(elt) is ast.Slice:  # in a subscript
                out.append(self._slice(elt))
                continue
            node = self.expr(elt)
            kind = type(node)
            if kind is StarredElement:
                out.append(node)
            else:
                out.append(Element(node, node.outer_start, node.outer_end))
        return out

    def _starred(self, n):
        start, end = self._range(n)
        return StarredElement(self.expr(n.value), start, end)

    def _tuple(self, n):
        start, end = self._range(n)
        elements = self._elements(n.elts)
        text = self.text
        if text[start] == "(" and (not elements or elements[0].start > start):
            # `(a, b)`: ast's range has the tuple's own parentheses, libcst's has not.
            inner_start, inner_end = self._inside(elements, start)
            return Tuple(elements, inner_start, inner_end, (LeftParen(start, start + 1),),
                         (RightParen(end - 1, end),))
        return Tuple(elements, start, end)

    def _inside(self, elements: list, start: int) -> tuple[int, int]:
        """The range of a parenthesized tuple (starting at ``start``) inside its parentheses:
        from its first element to its last one's comma."""
        if not elements:
            inner = self._skip(start + 1)
            return inner, inner
        end = elements[-1].end
        comma = self._skip(end)
        return elements[0].start, comma + 1 if self.text[comma] == "," else end

    def _list(self, n):
        start, end = self._range(n)
        return List(self._elements(n.elts), start, end)

    def _set(self, n):
        start, end = self._range(n)
        return Set(self._elements(n.elts), start, end)

    def _dict(self, n):
        start, end = self._range(n)
        elements = []
        for key, value in zip(n.keys, n.values):
            value_node = self.expr(value)
            if key is None:
                stars = self._back(value_node.outer_start) - 1
                elements.append(StarredDictElement(value_node, stars, value_node.outer_end))
            else:
                key_node = self.expr(key)
                elements.append(DictElement(key_node, value_node, key_node.outer_start, value_node.outer_end))
        return Dict(elements, start, end)

    def _bin_op(self, n):
        start, end = self._range(n)
        left = self.expr(n.left)
        op_start = self._skip(left.outer_end)
        operator_class = _BINARY_OPS[type(n.op)]
        operator = operator_class(op_start, op_start + len(operator_class.token))
        return BinaryOperation(left, operator, self.expr(n.right), start, end)

    def _unary_op(self, n):
        start, end = self._range(n)
        operand = self.expr(n.operand)
        return UnaryOperation(_UNARY_OPS[type(n.op)](start, operand.outer_start), operand, start, end)

    def _bool_op(self, n):
        start, end = self._range(n)
        operator_class = And if type(n.op) is ast.And else Or
        size = len(operator_class.token)
        values = n.values
        node = self.expr(values[0])
        for value in values[1:]:
            op_start = self._skip(node.outer_end)
            right = self.expr(value)
            node = BooleanOperation(node, operator_class(op_start, op_start + size), right,
                                    node.outer_start, right.outer_end)
        node.start, node.end = start, end
        return node

    def _compare(self, n):
        start, end = self._range(n)
        left = self.expr(n.left)
        previous = left.outer_end
        targets = []
        for op, comparator in zip(n.ops, n.comparators):
            op_start = self._skip(previous)
            operator_class = _COMPARISON_OPS[type(op)]
            if operator_class is IsNot or operator_class is NotIn:
                op_end = self._skip(op_start + 3 if operator_class is NotIn else op_start + 2)
                op_end += 2 if operator_class is NotIn else 3
            elif operator_class is NotEqual:
                op_end = op_start + 2  # "!=" (or "<>")
            else:
                op_end = op_start + len(operator_class.token)
            node = self.expr(comparator)
            if operator_class is NotEqual:
                operator = NotEqual(self.text[op_start:op_end], op_start, op_end)
            else:
                operator = operator_class(op_start, op_end)
            targets.append(ComparisonTarget(operator, node, previous, node.outer_end))
            previous = node.outer_end
        return Comparison(left, targets, start, end)

    def _lambda(self, n):
        start, end = self._range(n)
        params = self._parameters(n.args, start + 6)
        return Lambda(params, self.expr(n.body), start, end)

    def _if_exp(self, n):
        start, end = self._range(n)
        body = self.expr(n.body)
        test = self.expr(n.test)
        return IfExp(test, body, self.expr(n.orelse), start, end)

    def _comprehension(self, generators: list, offset: int) -> CompFor:
        """The ``for`` clauses after the element, which ends at ``offset``.  libcst's range
        of a clause (and of an ``if``) starts with the space before its keyword, and a
        clause runs to the end of the last one."""
        clauses = []
        for generator in generators:
            start = offset
            keyword = self._skip(offset)
            asynchronous = Asynchronous(keyword, keyword + 5) if generator.is_async else None
            target = self.expr(generator.target)
            iterable = self.expr(generator.iter)
            offset = iterable.outer_end
            ifs = []
            for condition in generator.ifs:
                test = self.expr(condition)
                ifs.append(CompIf(test, offset, test.outer_end))
                offset = test.outer_end
            clauses.append((target, iterable, ifs, asynchronous, start))
        inner = None
        for target, iterable, ifs, asynchronous, start in reversed(clauses):
            inner = CompFor(target, iterable, ifs, inner, asynchronous, start, offset)
        return inner

    def _comp(self, cls, n, start, end):
        elt = self.expr(n.elt)
        return cls(elt, self._comprehension(n.generators, elt.outer_end), start, end)

    def _list_comp(self, n):
        start, end = self._range(n)
        return self._comp(ListComp, n, start, end)

    def _set_comp(self, n):
        start, end = self._range(n)
        return self._comp(SetComp, n, start, end)

    def _generator_exp(self, n):
        start, end = self._range(n)
        # ast's range has the parentheses; they are the generator's own (unless it is
        # a call's only argument, which the call sorts out).
        node = self._comp(GeneratorExp, n, start, end)
        node.start = node.elt.outer_start
        node.end = node.for_in.end
        node.lpar = (LeftParen(start, start + 1),)
        node.rpar = (RightParen(end - 1, end),)
        return node

    def _dict_comp(self, n):
        start, end = self._range(n)
        key = self.expr(n.key)
        value = self.expr(n.value)
        return DictComp(key, value, self._comprehension(n.generators, value.outer_end), start, end)

    def _yield(self, n):
        start, end = self._range(n)
        return Yield(self.expr(n.value) if n.value is not None else None, start, end)

    def _yield_from(self, n):
        start, end = self._range(n)
        item = self.expr(n.value)
        return Yield(From(item, self._skip(start + 5), item.outer_end), start, end)

    def _await(self, n):
        start, end = self._range(n)
        return Await(self.expr(n.value), start, end)

    def _named_expr(self, n):
        start, end = self._range(n)
        target = self.expr(n.target)
        return NamedExpr(target, self.expr(n.value), start, end)

    # --- strings -----------------------------------------------------------------

    def _string(self, n):
        """A string literal, a concatenation of several or an f-string: ast merges
        ``"a" "b"`` into one constant, so the tokens are read off the text."""
        start, end = self._range(n)
        text = self.text
        token_end = self._string_end(start)
        if token_end == end:
            return self._string_token(start, end)
        pieces = []
        while True:
            pieces.append(self._string_token(start, token_end))
            start = _GAP.match(text, token_end).end()
            if start >= end:
                break
            token_end = self._string_end(start)
        node = pieces[-1]
        for piece in reversed(pieces[:-1]):
            node = ConcatenatedString(piece, node, piece.start, node.end)
        return node

    def _string_end(self, start: int) -> int:
        """Where the string token that starts at ``start`` (its prefix) ends.  An f-string
        is scanned field by field: since Python 3.12 its replacement fields may hold
        strings in the same quotes, f-strings, comments and line breaks (PEP 701)."""
        text = self.text
        quote_at = start
        while text[quote_at] not in "'\"":
            quote_at += 1
        if "f" not in text[start:quote_at].lower():
            return _STRING.match(text, start).end()
        quote = text[quote_at:quote_at + 3]
        if quote not in ('"""', "'''"):
            quote = text[quote_at]
        return self._fstring_end(quote_at + len(quote), quote)

    def _fstring_end(self, offset: int, quote: str) -> int:
        """After the closing ``quote`` of the f-string whose text starts at ``offset``."""
        text = self.text
        size = self.size
        while offset < size:
            char = text[offset]
            if char == "\\":
                # `\{` keeps the field (a warning); `\N{...}` is a name, skipped whole.
                following = text[offset + 1]
                if following == "N" and text[offset + 2] == "{":
                    offset = text.index("}", offset) + 1
                else:
                    offset += 1 if following in "{}" else 2
            elif char == "{":
                offset = offset + 2 if text[offset + 1] == "{" else self._field_end(offset + 1)
            elif text.startswith(quote, offset):
                return offset + len(quote)
            else:
                offset += 1
        return size

    def _field_end(self, offset: int) -> int:
        """After the ``}`` that closes the replacement field whose expression starts at
        ``offset``."""
        text = self.text
        size = self.size
        depth = 0
        while offset < size:
            char = text[offset]
            if char == "'" or char == '"':
                offset = self._string_end(self._prefix_start(offset))
                continue
            if char == "#":
                offset = LINE_BREAK.search(text, offset).start()
                continue
            if char in "([{":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif char == "}":
                if depth == 0:
                    return offset + 1
                depth -= 1
            elif depth == 0 and char == ":":
                return self._spec_end(offset + 1)
            offset += 1
        return size

    def _spec_end(self, offset: int) -> int:
        """After the ``}`` that ends the format spec starting at ``offset``."""
        text = self.text
        size = self.size
        while offset < size:
            char = text[offset]
            if char == "{":
                offset = self._field_end(offset + 1)
            elif char == "}":
                return offset + 1
            elif char == "\\":
                offset += 2
            else:
                offset += 1
        return size

    def _prefix_start(self, quote_at: int) -> int:
        """The start of the string whose quote is at ``quote_at`` (before its prefix)."""
        text = self.text
        start = quote_at
        while start > 0 and text[start - 1] in "rRbBuUfF" and quote_at - start < 2:
            start -= 1
        if start < quote_at and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return quote_at  # the letters end an identifier: `x"..."` is no prefix
        return start

    def _string_token(self, start: int, end: int):
        text = self.text
        quote_at = start
        while text[quote_at] not in "'\"":
            quote_at += 1
        prefix = text[start:quote_at].lower()
        if "f" not in prefix:
            return SimpleString(text[start:end], start, end)
        quote = text[quote_at:quote_at + 3]
        if quote not in ('"""', "'''") or end - quote_at < 6:
            quote = text[quote_at]
        content_start = quote_at + len(quote)
        parts, _ = self._fstring_parts(content_start, end - len(quote), "r" in prefix, False)
        return FormattedString(parts, prefix, quote, start, end)

    def _fstring_parts(self, offset: int, end: int, raw: bool, in_spec: bool) -> tuple[list, int]:
        """The text and ``{expression}`` parts from ``offset``, up to ``end`` (or, in a
        format spec, up to the ``}`` that closes it)."""
        text = self.text
        parts = []
        text_start = offset
        while offset < end:
            char = text[offset]
            if char == "{":
                if text[offset + 1] == "{" and not in_spec:  # in a spec, `{{b}}` is a set
                    offset += 2
                    continue
                if offset > text_start:
                    parts.append(FormattedStringText(text[text_start:offset], text_start, offset))
                part, offset = self._fstring_expression(offset, end, raw)
                parts.append(part)
                text_start = offset
            elif char == "}":
                if in_spec:
                    break
                offset += 2
            elif char == "\\" and not raw:
                if text.startswith("N{", offset + 1):
                    offset = text.index("}", offset) + 1
                else:
                    offset += 2
            else:
                offset += 1
        if offset > text_start:
            parts.append(FormattedStringText(text[text_start:offset], text_start, offset))
        return parts, offset

    def _fstring_expression(self, start: int, end: int, raw: bool):
        """The ``{expression!conversion:format spec}`` at ``start``, and the offset after it."""
        text = self.text
        offset = start + 1
        depth = 0
        while True:
            char = text[offset]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char == "'" or char == '"':
                offset = self._string_end(offset)
                continue
            elif char == "#":  # Python 3.12: a comment in a multi-line replacement field
                offset = LINE_BREAK.search(text, offset).start()
                continue
            elif depth == 0:
                if char == "!" and text[offset + 1] != "=":
                    break
                if char == ":":
                    break
                if char == "=":
                    if text[offset + 1] == "=":
                        offset += 2
                        continue
                    if text[offset - 1] not in "=!<>":
                        break
            offset += 1
        expression = self._sub_expression(start + 1, offset)
        if text[offset] == "=":  # `{x = }`
            offset = _WHITESPACE.match(text, offset + 1).end()
        conversion = None
        if text[offset] == "!":
            conversion = text[offset + 1]
            offset += 2
        format_spec = None
        if text[offset] == ":":
            format_spec, offset = self._fstring_parts(offset + 1, end, raw, True)
        return FormattedStringExpression(expression, conversion, format_spec, start, offset + 1), offset + 1

    def _sub_expression(self, start: int, end: int):
        """Parse the expression text[start:end] of an f-string in place."""
        source = "(" + self.text[start:end] + ")"
        tree = ast.parse(source, mode="eval")
        saved = self.line_starts
        line = bisect.bisect_right(saved, start) - 1
        count = len(LINE_BREAK.findall(source))
        # Line 1 of `source` starts one character before the expression (the `(` stands
        # where the `{` is); its other lines are the file's.
        self.line_starts = [start - 1] + saved[line + 1:line + 1 + count]
        try:
            node = self.expr(tree.body, start)
        finally:
            self.line_starts = saved
        if type(node) is Tuple and node.start == start - 1:
            # `{a, b}`: ast took the parentheses put around the expression for the tuple's.
            node.start, node.end = self._inside(node.elements, start - 1)
        return node

    # --- match patterns ----------------------------------------------------------

    def pattern(self, n, lo: int = 0):
        node = self._pattern(n, lo)
        return self._parens(node, lo) if isinstance(node, _Parenthesized) else node

    def _pattern(self, n, lo: int):
        start, end = self._range(n)
        kind = type(n)
        if kind is ast.MatchValue:
            value = self.expr(n.value, lo)
            return MatchValue(value, value.outer_start, value.outer_end)
        if kind is ast.MatchSingleton:
            return MatchSingleton(Name(self.text[start:end], start, end), start, end)
        if kind is ast.MatchSequence:
            patterns = self._separated([self._sequence_element(p) for p in n.patterns], ",")
            if self.text[start] == "(" and (not patterns or patterns[0].start > start):
                inner_start, inner_end = self._inside(patterns, start)
                return MatchTuple(patterns, inner_start, inner_end, (LeftParen(start, start + 1),),
                                  (RightParen(end - 1, end),))
            return MatchList(patterns, start, end)  # `[a, b]`, and `a, b` for libcst
        if kind is ast.MatchMapping:
            elements = []
            for key, pattern in zip(n.keys, n.patterns):
                key_node = self.expr(key)
                pattern_node = self.pattern(pattern)
                elements.append(MatchMappingElement(key_node, pattern_node, key_node.outer_start,
                                                    _outer_end(pattern_node)))
            self._separated(elements, ",", n.rest is not None)
            rest = None
            if n.rest is not None:
                offset = self._skip(elements[-1].end) if elements else start + 1
                rest_start = self.text.index(n.rest, offset)
                rest = Name(n.rest, rest_start, rest_start + len(n.rest))
            return MatchMapping(elements, rest, start, end)
        if kind is ast.MatchClass:
            cls = self.expr(n.cls)
            paren = self._skip(cls.outer_end)
            patterns = self._separated([self._sequence_element(p, paren + 1) for p in n.patterns], ",",
                                       bool(n.kwd_attrs))
            kwds = []
            offset = patterns[-1].end if patterns else paren + 1
            for attr, pattern in zip(n.kwd_attrs, n.kwd_patterns):
                key_start = self._skip(offset)
                if self.text[key_start] == ",":
                    key_start = self._skip(key_start + 1)
                key = self._name_at(key_start, attr)
                pattern_node = self.pattern(pattern, paren + 1)
                kwds.append(MatchKeywordElement(key, pattern_node, key.start, _outer_end(pattern_node)))
                offset = _outer_end(pattern_node)
            return MatchClass(cls, patterns, self._separated(kwds, ","), start, end)
        if kind is ast.MatchStar:
            name = None if n.name is None else Name(n.name, end - len(n.name), end)
            return MatchStar(name, start, end)
        if kind is ast.MatchAs:
            name = None if n.name is None else Name(n.name, end - len(n.name), end)
            return MatchAs(self.pattern(n.pattern) if n.pattern is not None else None, name, start, end)
        if kind is ast.MatchOr:
            patterns = []
            for pattern in n.patterns:
                node = self.pattern(pattern)
                patterns.append(MatchOrElement(node, _outer_start(node), _outer_end(node)))
            return MatchOr(self._separated(patterns, "|"), start, end)
        raise ParserSyntaxError(f"unknown pattern {kind.__name__}")

    def _sequence_element(self, n, lo: int = 0):
        node = self.pattern(n, lo)
        if type(node) is MatchStar:
            return node
        return MatchSequenceElement(node, _outer_start(node), _outer_end(node))

    def _separated(self, elements: list, separator: str, followed: bool = False) -> list:
        """libcst's range of an element of a pattern has the separator after it, and the
        space after that unless it is a trailing comma (``followed``: more elements of
        another kind come after the last one)."""
        text = self.text
        last = len(elements) - 1
        for index, element in enumerate(elements):
            after = self._skip(element.end)
            if text[after] == separator:
                element.end = self._skip(after + 1) if index < last or followed else after + 1
        return elements


# The conversion of each ast class (plain functions: a table of bound methods on each
# builder would make it a reference cycle, left for the cycle collector with its text).
_EXPRESSIONS = {
    ast.Name: _Builder._name, ast.Attribute: _Builder._attribute, ast.Call: _Builder._call,
    ast.Constant: _Builder._constant, ast.Subscript: _Builder._subscript, ast.BinOp: _Builder._bin_op,
    ast.Tuple: _Builder._tuple, ast.List: _Builder._list, ast.Set: _Builder._set, ast.Dict: _Builder._dict,
    ast.UnaryOp: _Builder._unary_op, ast.BoolOp: _Builder._bool_op, ast.Compare: _Builder._compare,
    ast.Lambda: _Builder._lambda, ast.IfExp: _Builder._if_exp, ast.ListComp: _Builder._list_comp,
    ast.SetComp: _Builder._set_comp, ast.GeneratorExp: _Builder._generator_exp, ast.DictComp: _Builder._dict_comp,
    ast.Starred: _Builder._starred, ast.Yield: _Builder._yield, ast.YieldFrom: _Builder._yield_from,
    ast.Await: _Builder._await, ast.NamedExpr: _Builder._named_expr, ast.JoinedStr: _Builder._string,
}
_STATEMENTS = {
    ast.Expr: _Builder._expr_stmt, ast.Assign: _Builder._assign, ast.AugAssign: _Builder._aug_assign,
    ast.AnnAssign: _Builder._ann_assign, ast.Return: _Builder._return, ast.Raise: _Builder._raise,
    ast.Assert: _Builder._assert, ast.Delete: _Builder._delete, ast.Pass: _Builder._keyword_stmt,
    ast.Break: _Builder._keyword_stmt, ast.Continue: _Builder._keyword_stmt, ast.Global: _Builder._global,
    ast.Nonlocal: _Builder._global, ast.Import: _Builder._import, ast.ImportFrom: _Builder._import_from,
    ast.If: _Builder._if, ast.For: _Builder._for, ast.AsyncFor: _Builder._for, ast.While: _Builder._while,
    ast.With: _Builder._with, ast.AsyncWith: _Builder._with, ast.Try: _Builder._try, _TryStar: _Builder._try,
    ast.FunctionDef: _Builder._function_def, ast.AsyncFunctionDef: _Builder._function_def,
    ast.ClassDef: _Builder._class_def, ast.Match: _Builder._match, _TypeAlias: _Builder._type_alias,
}


def _position(n: ast.AST) -> tuple[int, int]:
    return n.lineno, n.col_offset


def _outer_start(node) -> int:
    return node.outer_start if isinstance(node, _Parenthesized) else node.start


def _outer_end(node) -> int:
    return node.outer_end if isinstance(node, _Parenthesized) else node.end


_SIMPLE_KEYWORDS = {ast.Pass: Pass, ast.Break: Break, ast.Continue: Continue}
