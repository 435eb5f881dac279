"""A CEL evaluator for the subset Kubernetes admission policies rendered by pulumi-lws use.

Parsing is cel-python's (``celpy.celparser``, the CEL grammar); evaluation is here, because
cel-python 0.5 evaluates neither Kubernetes' typed object construction (``Object{...}``,
``Object.spec.affinity{...}``) nor ``JSONPatch{...}``. Anything outside the subset below raises
:class:`CelUnsupported` naming the construct — never a guess.

The subset (exactly what :mod:`pulumi_lws.lws.render.admission` renders):

* literals: decimal ``int``, ``"..."`` / ``'...'`` strings (the escapes JSON knows), ``true``,
  ``false``, ``null``; list ``[a, b]`` and map ``{"k": v}`` literals (string keys);
* names: the activation's top-level names (``object``, ``variables``, ...); ``variables.x`` is
  evaluated on first use, in the policy's order, and memoised (as Kubernetes does);
* field selection ``a.f`` and indexing ``a[k]`` on maps (a missing key is an error), indexing on
  lists by int; ``has(a.f)`` (presence of a map key);
* operators: ``!``, unary ``-``, ``&&``, ``||`` (left to right, short-circuit), ``c ? a : b``,
  ``==``/``!=`` (same type, or against ``null``), ``<``/``<=``/``>``/``>=`` on ints or strings,
  ``in`` (map key or list element), ``+`` on ints, strings and lists, ``-``/``*``/``/``/``%`` on
  ints (division truncates toward zero, as CEL and Go; by zero is an error);
* functions ``int(x)`` (from int or decimal string) and ``string(x)`` (from int or string);
* construction: ``Object{f: v, ...}`` and ``Object.<field path>{...}`` (an apply configuration:
  the map of the fields set), ``JSONPatch{op: ..., path: ..., value: ...}``.

Types are strict (CEL has no implicit conversion): ``1 + "a"`` or ``1 == "1"`` is an error.
Not supported: macros (``all``, ``exists``, ``map``, ``filter``), method calls (``x.size()``), every
other function, uint/double/bytes, raw and triple-quoted strings, ``?.`` optionals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import lark
from celpy.celparser import CELParser


class CelError(Exception):
    """A CEL evaluation error (a missing key, a type mismatch, division by zero...)."""


class CelUnsupported(CelError):
    """The expression uses CEL outside the documented subset."""


#: construction type names: ``Object`` (apply configurations, with any field path) and ``JSONPatch``
OBJECT_TYPE = "Object"
JSONPATCH_TYPE = "JSONPatch"


@dataclass(frozen=True)
class Typed:
    """A constructed value: its CEL type name and fields (``JSONPatch`` or ``Object...``)."""

    type_name: str
    fields: dict[str, Any] = field(default_factory=dict)


_parser: CELParser | None = None
_cache: dict[str, lark.Tree] = {}


def parse(expression: str) -> lark.Tree:
    """The parse tree (memoised per expression text); ``CelError`` on a syntax error."""
    global _parser
    tree = _cache.get(expression)
    if tree is None:
        if _parser is None:
            _parser = CELParser()
        try:
            tree = _parser.parse(expression)
        except Exception as exc:  # celpy raises CELParseError with the position
            shown = expression if len(expression) <= 120 else expression[:117] + "..."
            raise CelError(f"cannot parse CEL {shown!r}: {str(exc).splitlines()[0][:200]}") from exc
        _cache[expression] = tree
    return tree


class LazyVariables(Mapping[str, Any]):
    """``variables``: each named expression evaluated on first access against the activation."""

    def __init__(self, definitions: list[tuple[str, str]], activation: dict[str, Any]) -> None:
        self._definitions = dict(definitions)
        self._activation = activation
        self._values: dict[str, Any] = {}
        self._evaluating: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        if name not in self._definitions:
            raise CelError(f"no variable {name!r}")
        if name in self._evaluating:
            raise CelError(f"variable {name!r} refers to itself")
        self._evaluating.add(name)
        try:
            value = evaluate(self._definitions[name], self._activation)
        finally:
            self._evaluating.discard(name)
        self._values[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def __iter__(self) -> Any:
        return iter(self._definitions)

    def __len__(self) -> int:
        return len(self._definitions)


def evaluate(expression: str, activation: Mapping[str, Any]) -> Any:
    """The value of ``expression`` (JSON-like Python values; constructions as :class:`Typed`)."""
    return _Eval(activation).visit(parse(expression))


def plain(value: Any) -> Any:
    """``value`` with every :class:`Typed` turned into its field map (what the API server merges)."""
    if isinstance(value, Typed):
        return {k: plain(v) for k, v in value.fields.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Mapping) and not isinstance(value, LazyVariables):
        return {k: plain(v) for k, v in value.items()}
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, (Mapping, Typed)):
        return "map"
    return type(value).__name__


def _same(a: Any, b: Any, op: str) -> None:
    if _kind(a) != _kind(b):
        raise CelError(f"no such overload: {_kind(a)} {op} {_kind(b)}")


class _Eval:
    def __init__(self, activation: Mapping[str, Any]) -> None:
        self.activation = activation

    def visit(self, node: Any) -> Any:
        if isinstance(node, lark.Token):
            raise CelUnsupported(f"unexpected token {node!r}")
        method: Callable[[lark.Tree], Any] | None = getattr(self, f"n_{node.data}", None)
        if method is None:
            raise CelUnsupported(f"CEL construct {node.data!r} is outside the supported subset")
        return method(node)

    # ---- structure: expr / or / and / relation / addition / multiplication / unary / member ----
    def n_expr(self, t: lark.Tree) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        cond = self.visit(t.children[0])
        if not isinstance(cond, bool):
            raise CelError(f"condition of ?: is {_kind(cond)}, not bool")
        return self.visit(t.children[1] if cond else t.children[2])

    def n_conditionalor(self, t: lark.Tree) -> Any:
        return self._logic(t, True)

    def n_conditionaland(self, t: lark.Tree) -> Any:
        return self._logic(t, False)

    def _logic(self, t: lark.Tree, is_or: bool) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        left = self.visit(t.children[0])
        if not isinstance(left, bool):
            raise CelError(f"operand of {'||' if is_or else '&&'} is {_kind(left)}, not bool")
        if left is is_or:
            return left
        right = self.visit(t.children[1])
        if not isinstance(right, bool):
            raise CelError(f"operand of {'||' if is_or else '&&'} is {_kind(right)}, not bool")
        return right

    def n_relation(self, t: lark.Tree) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        op_node, right_node = t.children
        op = op_node.data.removeprefix("relation_")
        left, right = self.visit(op_node.children[0]), self.visit(right_node)
        if op == "in":
            if isinstance(right, Mapping):
                return left in right
            if isinstance(right, list):
                return any(_kind(v) == _kind(left) and v == left for v in right)
            raise CelError(f"no such overload: {_kind(left)} in {_kind(right)}")
        if op in ("eq", "ne"):
            if left is not None and right is not None:
                _same(left, right, "==")
            equal = plain(left) == plain(right)
            return equal if op == "eq" else not equal
        if _kind(left) not in ("int", "string"):
            raise CelError(f"no such overload: {_kind(left)} < {_kind(right)}")
        _same(left, right, op)
        return {"lt": left < right, "le": left <= right, "gt": left > right, "ge": left >= right}[op]

    def n_addition(self, t: lark.Tree) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        op_node, right_node = t.children
        left, right = self.visit(op_node.children[0]), self.visit(right_node)
        _same(left, right, op_node.data)
        if op_node.data == "addition_add":
            if _kind(left) in ("int", "string", "list"):
                return left + right
            raise CelError(f"no such overload: {_kind(left)} + {_kind(right)}")
        if _kind(left) != "int":
            raise CelError(f"no such overload: {_kind(left)} - {_kind(right)}")
        return left - right

    def n_multiplication(self, t: lark.Tree) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        op_node, right_node = t.children
        left, right = self.visit(op_node.children[0]), self.visit(right_node)
        _same(left, right, op_node.data)
        if _kind(left) != "int":
            raise CelError(f"no such overload: {_kind(left)} {op_node.data} {_kind(right)}")
        if op_node.data == "multiplication_mul":
            return left * right
        if right == 0:
            raise CelError("division by zero" if op_node.data == "multiplication_div" else "modulus by zero")
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # toward zero
        return quotient if op_node.data == "multiplication_div" else left - right * quotient

    def n_unary(self, t: lark.Tree) -> Any:
        if len(t.children) == 1:
            return self.visit(t.children[0])
        op, operand = t.children
        value = self.visit(operand)
        if op.data == "unary_not":
            if not isinstance(value, bool):
                raise CelError(f"no such overload: !{_kind(value)}")
            return not value
        if op.data == "unary_neg" and _kind(value) == "int":
            return -value
        raise CelUnsupported(f"unary {op.data} on {_kind(value)}")

    def n_member(self, t: lark.Tree) -> Any:
        return self.visit(t.children[0])

    def n_primary(self, t: lark.Tree) -> Any:
        return self.visit(t.children[0])

    def n_paren_expr(self, t: lark.Tree) -> Any:
        return self.visit(t.children[0])

    # ---- names, selection, indexing ---------------------------------------------------------
    def n_ident(self, t: lark.Tree) -> Any:
        name = str(t.children[0])
        if name not in self.activation:
            raise CelError(f"undeclared reference to {name!r}")
        return self.activation[name]

    def n_member_dot(self, t: lark.Tree) -> Any:
        target, name = self.visit(t.children[0]), str(t.children[1])
        return _select(target, name)

    def n_member_index(self, t: lark.Tree) -> Any:
        target, key = self.visit(t.children[0]), self.visit(t.children[1])
        if isinstance(target, list):
            if _kind(key) != "int" or not 0 <= key < len(target):
                raise CelError(f"index {key!r} out of range for a list of {len(target)}")
            return target[key]
        if isinstance(target, Mapping):
            if key not in target:
                raise CelError(f"no such key: {key!r}")
            return target[key]
        raise CelError(f"cannot index {_kind(target)}")

    def n_member_dot_arg(self, t: lark.Tree) -> Any:
        raise CelUnsupported(f"method call .{t.children[1]}() is outside the supported subset")

    def n_ident_arg(self, t: lark.Tree) -> Any:
        name = str(t.children[0])
        args = list(t.children[1].children) if len(t.children) > 1 and t.children[1] is not None else []
        if name == "has":
            return self._has(args)
        values = [self.visit(a) for a in args]
        if name == "int" and len(values) == 1:
            return _to_int(values[0])
        if name == "string" and len(values) == 1 and _kind(values[0]) in ("int", "string"):
            return str(values[0])
        raise CelUnsupported(f"function {name}({', '.join(_kind(v) for v in values)}) is outside the supported subset")

    def _has(self, args: list[Any]) -> bool:
        select = _only_member_dot(args[0]) if len(args) == 1 else None
        if select is None:
            raise CelUnsupported("has() takes one field selection a.f")
        target = self.visit(select.children[0])
        if not isinstance(target, (Mapping, Typed)):
            raise CelError(f"has() on {_kind(target)}")
        fields = target.fields if isinstance(target, Typed) else target
        return str(select.children[1]) in fields

    # ---- literals and constructions ---------------------------------------------------------
    def n_literal(self, t: lark.Tree) -> Any:
        token = t.children[0]
        if not isinstance(token, lark.Token):
            raise CelUnsupported("a literal must be one token")
        text = str(token)
        if token.type == "INT_LIT":
            return int(text)
        if token.type == "BOOL_LIT":
            return text == "true"
        if token.type == "NULL_LIT":
            return None
        if token.type == "STRING_LIT" and text[:1] in "\"'" and not text.startswith(('"""', "'''")):
            body = text[1:-1]
            try:
                return json.loads(f'"{body}"') if text[0] == '"' else json.loads(f'"{body}"'.replace("\\'", "'"))
            except json.JSONDecodeError as exc:
                raise CelUnsupported(f"string literal {text} uses escapes outside the subset") from exc
        raise CelUnsupported(f"literal {text} ({token.type}) is outside the supported subset")

    def n_list_lit(self, t: lark.Tree) -> Any:
        return [self.visit(e) for e in (t.children[0].children if t.children and t.children[0] is not None else [])]

    def n_map_lit(self, t: lark.Tree) -> Any:
        items = list(t.children[0].children) if t.children and t.children[0] is not None else []
        out: dict[str, Any] = {}
        for key_node, value_node in zip(items[::2], items[1::2]):
            key = self.visit(key_node)
            if not isinstance(key, str):
                raise CelUnsupported(f"map key of type {_kind(key)} (only string keys)")
            if key in out:
                raise CelError(f"duplicate map key {key!r}")
            out[key] = self.visit(value_node)
        return out

    def n_member_object(self, t: lark.Tree) -> Any:
        type_name = _type_name(t.children[0])
        if type_name != JSONPATCH_TYPE and type_name != OBJECT_TYPE and not type_name.startswith(OBJECT_TYPE + "."):
            raise CelUnsupported(f"construction of {type_name} (only Object... and JSONPatch)")
        inits = list(t.children[1].children) if len(t.children) > 1 and t.children[1] is not None else []
        fields: dict[str, Any] = {}
        for name_token, value_node in zip(inits[::2], inits[1::2]):
            fields[str(name_token)] = self.visit(value_node)
        if type_name == JSONPATCH_TYPE and (set(fields) - {"op", "path", "value", "from"} or "op" not in fields):
            raise CelError(f"JSONPatch fields {sorted(fields)}: op and path (and value / from) only")
        return Typed(type_name, fields)


def _select(target: Any, name: str) -> Any:
    if isinstance(target, Typed):
        target = target.fields
    if isinstance(target, Mapping):
        if name not in target:
            raise CelError(f"no such key: {name!r}")
        return target[name]
    raise CelError(f"cannot select .{name} on {_kind(target)}")


def _to_int(value: Any) -> int:
    if _kind(value) == "int":
        return int(value)
    if isinstance(value, str) and value.lstrip("-").isdigit() and value.isascii():
        return int(value)
    raise CelError(f"int({value!r}): not an int or decimal string")


def _only_member_dot(node: Any) -> lark.Tree | None:
    """The ``member_dot`` node an argument expression consists of, or None."""
    while isinstance(node, lark.Tree) and node.data != "member_dot":
        if len(node.children) != 1:
            return None
        node = node.children[0]
    return node if isinstance(node, lark.Tree) else None


def _type_name(node: Any) -> str:
    """``Object.spec.affinity`` from the member chain before ``{...}`` (idents and ``.f`` only)."""
    if isinstance(node, lark.Tree):
        if node.data == "member_dot":
            return f"{_type_name(node.children[0])}.{node.children[1]}"
        if node.data == "ident":
            return str(node.children[0])
        if len(node.children) == 1:
            return _type_name(node.children[0])
    raise CelUnsupported("a construction's type must be a (qualified) name")
