"""Pulumi Outputs as component inputs: resolve them before planning, pass unknowns through.

A workload component plans from concrete values, so :func:`resolve_inputs` waits (synchronously,
inside ``__init__``, the way Pulumi's own synchronous invokes wait) for every ``Output`` or
awaitable anywhere in ``args`` — the whole manifest, any field, any nested pod-template value —
and records, per input leaf, whether it is known, secret and which resources it came from.

* **known** values are planned as written; the children ``depends_on`` every resource an input
  came from (:attr:`ResolvedInputs.resources`).
* **unknown** values (``pulumi preview`` before the source resource exists) are replaced by a
  :class:`Unknown` stand-in chosen by the field's role (:func:`stand_in`): a placeholder string no
  running group has inside pod templates (so the preview assumes the template changes), the most
  disruptive value for a budget or ``replicas``, a placeholder name for ``namespace``/``name``.
  :func:`ResolvedInputs.pass_through` puts the original unknown Output back into every child
  field that carries the placeholder, so children show ``[unknown]`` in the preview, never a guess.
* **secret** values: every child string containing one is registered as a secret Output, and
  :meth:`ResolvedInputs.redact` blanks them in every log line and published output.

Invariants: nothing here registers a resource; :func:`resolve_inputs` of plain values returns
them unchanged (same object graph, no Pulumi calls); a placeholder never reaches a child.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pulumi
from pulumi.output import Unknown as _UnknownValue
from pulumi.runtime.sync_await import _sync_await

from pulumi_lws.core.contract.errors import FieldError, SpecError

T = TypeVar("T")
Path = tuple  # of str keys and int indexes

#: Worst-case values for numbers that decide a stage (outside pod templates): field -> candidates
#: (value, why), most disruptive first; the next one is used when the spec rejects the previous
#: (a DisaggregatedSet wants every role's replicas zero or none).
MOST_DISRUPTIVE: dict[str, tuple[tuple[Any, str], ...]] = {
    "replicas": ((0, "every group removed"), (1, "the fewest groups the spec accepts")),
    "maxUnavailable": (("100%", "every group may be unavailable at once"),),
    "maxSurge": ((0, "no surge group keeps capacity up"),),
    "partition": ((0, "every group gets the new template"),),
}
_WIRE = {"max_unavailable": "maxUnavailable", "max_surge": "maxSurge"}
_IDENTITY_PATHS = {
    ("name",),
    ("namespace",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("manifest", "metadata", "name"),
    ("manifest", "metadata", "namespace"),
}
REDACTED = "[secret]"
#: Secrets shorter than this are only matched as whole values (a substring match would taint everything).
_MIN_SUBSTRING_SECRET = 4


def _is_output(value: Any) -> bool:
    return isinstance(value, pulumi.Output) or (inspect.isawaitable(value) and not isinstance(value, (str, bytes)))


def contains_outputs(value: Any) -> bool:
    """Whether ``value`` holds an Output, an awaitable or a bare unknown (what the component
    provider's ``Construct`` hands over for the unknown sentinel) anywhere."""
    if _is_output(value) or isinstance(value, _UnknownValue):
        return True
    if isinstance(value, Mapping):
        return any(contains_outputs(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_outputs(v) for v in value)
    return False


def field_label(path: Path) -> str:
    """``worker_template.spec.containers[0].image`` (how the user wrote the path)."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "args"


def _role(path: Path) -> str:
    keys = [p for p in path if isinstance(p, str)]
    if tuple(keys) in _IDENTITY_PATHS and len(keys) == len(path):
        return "identity"
    if any("template" in k.lower() for k in keys):
        return "template"
    if keys and _WIRE.get(keys[-1], keys[-1]) in MOST_DISRUPTIVE:
        return "decision"
    return "other"


def _placeholder(path: Path) -> str:
    """A DNS-label-valid string no cluster object carries, stable for one path."""
    return "pulumi-unknown-" + hashlib.sha256(field_label(path).encode()).hexdigest()[:8]


class InvalidInput(SpecError, pulumi.RunError):
    """A :class:`SpecError` raised by a component in a Pulumi program, also a ``pulumi.RunError``:
    the Python language host prints a RunError as its message alone (``pulumi.log.error``, exit
    1) and any other exception with its Python traceback. Every caller's ``except SpecError``
    still catches it (kind, name and errors unchanged)."""

    @classmethod
    def of(cls, err: SpecError) -> InvalidInput:
        return err if isinstance(err, cls) else cls(err.kind, err.name, err.errors)


@dataclass
class Unknown:
    """One input leaf whose value is unknown in this preview, and what the plan assumed for it."""

    path: Path
    sources: tuple[tuple[str, str], ...]  # (type name, resource name) of the resources it comes from
    output: pulumi.Output
    role: str = field(init=False)
    stand_in: Any = field(init=False)
    candidate: int = field(init=False, default=0)  # index into MOST_DISRUPTIVE[key] (decisions)

    def __post_init__(self) -> None:
        self.role = _role(self.path)
        self.stand_in = self._candidates[0][0] if self.role == "decision" else _placeholder(self.path)

    @property
    def _candidates(self) -> tuple[tuple[Any, str], ...]:
        return MOST_DISRUPTIVE[_WIRE.get(str(self.path[-1]), str(self.path[-1]))]

    def next_candidate(self) -> bool:
        """Move a decision's stand-in to its next, less disruptive, candidate; False when none is left."""
        if self.role != "decision" or self.candidate + 1 >= len(self._candidates):
            return False
        self.candidate += 1
        self.stand_in = self._candidates[self.candidate][0]
        return True

    @property
    def origin(self) -> str:
        """``until Image 'vllm' is created`` / ``until stack org/infra/prod exports it``."""
        stacks = [name for typ, name in self.sources if typ == "StackReference"]
        others = [f"{typ} {name!r}" for typ, name in self.sources if typ != "StackReference"]
        parts = ([f"{' and '.join(others)} is created"] if others else []) + [f"stack {s} exports it" for s in stacks]
        return f"until {' and '.join(parts)}" if parts else "in this preview"

    def note(self, *, creating: bool) -> str:
        """The "assumes" sentence of the stage table and the ``stage.assumptions`` output."""
        what = f"{field_label(self.path)} is unknown {self.origin}"
        if self.role == "template":
            # a number field cannot carry the placeholder string: the children show the stand-in
            shown = "" if isinstance(self.stand_in, str) else f" (the children show {self.stand_in!r} in its place)"
            if creating:
                if shown:
                    return f"{what}; planned with {self.stand_in!r} in its place (it cannot change this stage: every object is created)"
                return f"{what}; passed through to the children (it cannot change this stage: every object is created)"
            return f"{what}; this preview assumes the template changes{shown}"
        if self.role == "identity":
            return f"{what}; this preview assumes nothing of this workload exists there yet (every object is created)"
        if self.role == "decision":
            value, why = self._candidates[self.candidate]
            return f"{what}; this preview assumes {value!r}, the most disruptive value ({why})"
        return f"{what}; this preview plans with a stand-in value ({self.stand_in!r}) in its place"


@dataclass
class ResolvedInputs:
    """Plain ``args`` for the planner plus what the Outputs in them were (see the module doc)."""

    args: Any
    unknowns: list[Unknown] = field(default_factory=list)
    secrets: list[Any] = field(default_factory=list)
    resources: list[pulumi.Resource] = field(default_factory=list)

    # -- planning -------------------------------------------------------------------------
    def build(self, builder: Callable[[Any], T]) -> T:
        """``builder(args with stand-ins)``; a stand-in string the schema rejects (a number field)
        is retried as ``1``; a :class:`SpecError` (an :class:`InvalidInput`) never prints a secret value."""
        while True:
            try:
                return builder(self._with_stand_ins())
            except SpecError as err:
                rejected = [
                    u
                    for u in self.unknowns
                    if isinstance(u.stand_in, str)
                    and u.role != "decision"
                    and any(e.value == u.stand_in for e in err.errors)
                ]
                for u in rejected:
                    u.stand_in = 1
                # each retry changes a stand-in for good, so the loop ends
                if not rejected and not [u for u in self.unknowns if u.next_candidate()]:
                    raise InvalidInput.of(self._redacted_error(err)) from None

    def _with_stand_ins(self) -> Any:
        doc = self.args
        for u in self.unknowns:
            doc = _set(doc, u.path, u.stand_in)
        return doc

    def _redacted_error(self, err: SpecError) -> SpecError:
        if not self.secrets:
            return err
        errors = [
            FieldError(e.path, self.redact(e.message), REDACTED if self._is_secret_value(e.value) else e.value, e.kind)
            for e in err.errors
        ]
        return SpecError(err.kind, err.name, errors)

    def notes(self, *, creating: bool) -> list[str]:
        return [u.note(creating=creating) for u in self.unknowns]

    # -- children -------------------------------------------------------------------------
    def learn_secret_positions(self, manifests: Sequence[Any]) -> None:
        """Treat as secret, too, every value that sits where a secret input sits in another child.

        Groups of an older revision are rendered from what the cluster recorded (their
        ControllerRevision), so after a secret input changes they carry the *previous* secret value,
        which no input names. Positions are keyed by object kind and path, list items with a
        ``name`` keyed by that name (an env var moved within its list is still found); each value
        found there joins :attr:`secrets`, so it is wrapped in every child that carries it and
        blanked in every log line and output. Invariant: after this call, no registered child holds
        in plain text a value at a position that holds a current secret in any child."""
        if not self.secrets:
            return
        positions: set[tuple[Any, ...]] = set()
        for doc in manifests:
            if isinstance(doc, Mapping):
                for position, leaf in _positions(doc, (str(doc.get("kind", "")),)):
                    if self._is_secret_value(leaf) or (isinstance(leaf, str) and self._carries_secret(leaf)):
                        positions.add(position)
        if not positions:
            return
        for doc in manifests:
            if isinstance(doc, Mapping):
                for position, leaf in _positions(doc, (str(doc.get("kind", "")),)):
                    if position in positions and leaf not in (None, "") and not isinstance(leaf, bool):
                        if not self._is_secret_value(leaf):
                            self.secrets.append(leaf)

    def pass_through(self, value: Any) -> Any:
        """``value`` (a rendered manifest) with every placeholder replaced by its unknown Output and
        every string carrying a secret wrapped as a secret Output."""
        if not self.unknowns and not self.secrets:
            return value
        if isinstance(value, Mapping):
            return {k: self.pass_through(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.pass_through(v) for v in value]
        if isinstance(value, str):
            return self._string(value)
        if self._is_secret_value(value):
            return pulumi.Output.secret(value)
        return value

    def _string(self, text: str) -> Any:
        placeholders = [u for u in self.unknowns if isinstance(u.stand_in, str) and u.stand_in in text]
        if len(placeholders) == 1 and placeholders[0].stand_in == text:
            result: Any = placeholders[0].output
        elif placeholders:

            def fill(values: Sequence[Any]) -> str:
                out = text
                for u, v in zip(placeholders, values):
                    out = out.replace(u.stand_in, str(v))
                return out

            result = pulumi.Output.all(*[u.output for u in placeholders]).apply(fill)
        else:
            result = text
        if self._carries_secret(text):
            result = pulumi.Output.secret(result)
        return result

    def _is_secret_value(self, value: Any) -> bool:
        return any(type(s) is type(value) and s == value for s in self.secrets)

    def _carries_secret(self, text: str) -> bool:
        return any(
            s == text or (len(s) >= _MIN_SUBSTRING_SECRET and s in text) for s in self.secrets if isinstance(s, str)
        )

    # -- logs and outputs -----------------------------------------------------------------
    def redact(self, value: Any) -> Any:
        """``value`` (text or plain data) with every secret replaced by ``[secret]``."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            for s in sorted((s for s in self.secrets if isinstance(s, str) and s), key=len, reverse=True):
                if s == value or len(s) >= _MIN_SUBSTRING_SECRET:
                    value = value.replace(s, REDACTED)
            return value
        if isinstance(value, Mapping):
            return {k: self.redact(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact(v) for v in value]
        return REDACTED if self._is_secret_value(value) else value


def _positions(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(position, leaf) of every leaf; a list item with a string ``name`` is keyed by it."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _positions(v, (*at, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            named = v.get("name") if isinstance(v, Mapping) else None
            yield from _positions(v, (*at, ("name", named) if isinstance(named, str) else i))
    else:
        yield at, value


NO_OUTPUTS = ResolvedInputs(args=None)


def resolve_inputs(args: Any) -> ResolvedInputs:
    """Wait for every Output in ``args``; plain ``args`` come back as they are."""
    if not contains_outputs(args):
        return ResolvedInputs(args=args)
    resolved = ResolvedInputs(args=None)
    seen: dict[int, pulumi.Resource] = {}
    resolved.args = _walk(args, (), resolved, secret=False, sources=(), seen=seen)
    resolved.resources = list(seen.values())
    return resolved


def _source_names(resources: set) -> tuple[tuple[str, str], ...]:
    """(short type, name) of each resource: ``("Namespace", "serving")``."""
    return tuple(
        sorted(
            (str(getattr(r, "_type", "") or "").split(":")[-1], str(r._name))
            for r in resources
            if getattr(r, "_name", None)
        )
    )


def _walk(
    value: Any,
    path: Path,
    acc: ResolvedInputs,
    *,
    secret: bool,
    sources: tuple[tuple[str, str], ...],
    seen: dict[int, pulumi.Resource],
    origin: pulumi.Output | None = None,
) -> Any:
    if _is_output(value):
        out = pulumi.Output.from_input(value)
        resources = _sync_await(out.resources())
        for r in resources:
            seen.setdefault(id(r), r)
        is_secret = secret or _sync_await(out.is_secret())
        known = _sync_await(out.is_known())
        inner = _sync_await(out.future(with_unknowns=True))
        names = tuple(sorted(set(sources) | set(_source_names(resources))))
        if not known and (inner is None or isinstance(inner, _UnknownValue)):
            acc.unknowns.append(Unknown(path, names, out))
            return None
        return _walk(inner, path, acc, secret=is_secret, sources=names, seen=seen, origin=None if known else out)
    if isinstance(value, _UnknownValue):
        acc.unknowns.append(Unknown(path, sources, _unknown_like(origin, secret)))
        return None
    if isinstance(value, Mapping):
        return {
            k: _walk(v, (*path, k), acc, secret=secret, sources=sources, seen=seen, origin=origin)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [
            _walk(v, (*path, i), acc, secret=secret, sources=sources, seen=seen, origin=origin)
            for i, v in enumerate(value)
        ]
    if secret and value is not None and not isinstance(value, bool):
        acc.secrets.append(value)
    return value


def _unknown_like(origin: pulumi.Output | None, secret: bool) -> pulumi.Output:
    """An unknown Output for one leaf of a partly known Output (same dependencies and secrecy), or,
    for an unknown outside any Output, a fresh unknown Output: what the component provider's
    ``Construct`` hands over for the unknown sentinel in a plain input (an engine that does not
    send it as an output value, e.g. a YAML program's unknown property)."""
    if origin is None:
        return pulumi.Output(set(), _done(None), _done(False), _done(secret))
    return origin.apply(lambda _: None, run_with_unknowns=False)


async def _done(value: Any) -> Any:
    return value


def _set(doc: Any, path: Path, value: Any) -> Any:
    """A copy of ``doc`` with ``value`` at ``path`` (containers along the path copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, Mapping):
        out = dict(doc)
        out[head] = _set(out.get(head), rest, value)
        return out
    if isinstance(doc, (list, tuple)):
        out_list = list(doc)
        out_list[head] = _set(out_list[head], rest, value)
        return out_list
    raise AssertionError(f"no container at {field_label(path)}")
