"""Reading manifests as Kubernetes' own parsers would: strict YAML, bounded aliases, clear errors.

Every function raises :class:`~pulumi_lws.core.contract.errors.SpecError` (never a ``yaml`` or OS error)
naming the source and, where the parser knows it, the line:

* duplicate mapping keys are refused (Kubernetes' strict decoding refuses them; PyYAML would
  silently keep the last one);
* alias expansion is bounded: a document whose aliases expand to more than
  :data:`MAX_EXPANDED_NODES` nodes is refused before anything walks it (a 1 KB "billion laughs"
  file is refused in milliseconds);
* a file must be UTF-8 text; a directory, a missing file or an empty file is named as such.

Parsing and writing go through libyaml (``CSafeLoader`` / ``CSafeDumper``) where PyYAML was built
with it, about 5x faster than the pure-Python classes on fleet-sized files, and fall back to
``SafeLoader`` / ``SafeDumper`` where it is absent. Both give the same documents and the same
guarantees (the checks above run on the composed nodes, which both parsers build alike, and the
line numbers come from the same marks); :func:`dump_documents` writes byte-identical text with
either for ASCII content, and the same values where a long escaped non-ASCII string is folded at
another column (tests/core/k8s/test_yamlio.py). Writing builds the nodes itself
(:class:`PlainDumper`, about 40% less time in the representer on fleet manifests): only the
emitter is libyaml's, and PyYAML's representer is the slow half of a dump.
"""

from __future__ import annotations

import io
import pathlib
import sys
from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pulumi_lws.core.contract.errors import FieldError, SpecError

#: Nodes one document may expand to through aliases (go-yaml refuses "excessive aliasing" at a
#: comparable scale; real manifests are a few thousand nodes).
MAX_EXPANDED_NODES = 100_000
KIND = "manifest"

#: libyaml's classes when PyYAML has them (``yaml.__with_libyaml__``), else the pure-Python ones
BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _error(source: str, message: str) -> SpecError:
    return SpecError(KIND, None, [FieldError(source, message)])


class StrictMapping(yaml.constructor.SafeConstructor):
    """Refuses duplicate mapping keys; mixed in before a safe loader class (C or Python), whose
    constructor it shares. :func:`load_documents` bounds alias expansion."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # unhashable key: the base constructor reports it
                break
            if first is not None:
                line = key_node.start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {first.start_mark.line + 1}, again at line {line})",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


class StrictLoader(StrictMapping, BaseLoader):  # type: ignore[valid-type,misc]  # BaseLoader is a variable (CSafeLoader or SafeLoader, chosen at import by what PyYAML has): mypy takes no variable as a base
    """The strict loader on libyaml where PyYAML has it, else on the pure-Python parser."""


def expanded_size(node: Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """Nodes of ``node`` with every alias expanded (memoised per node; stops counting past ``limit``)."""
    sizes: dict[int, int] = {}

    def size(n: Node) -> int:
        known = sizes.get(id(n))
        if known is not None:
            return known
        sizes[id(n)] = 1  # a recursive alias counts once (and then fails in construction)
        total = 1
        if isinstance(n, SequenceNode):
            for child in n.value:
                total += size(child)
                if total > limit:
                    break
        elif isinstance(n, MappingNode):
            for k, v in n.value:
                total += size(k) + size(v)
                if total > limit:
                    break
        sizes[id(n)] = min(total, limit + 1)
        return sizes[id(n)]

    return size(node) if not isinstance(node, ScalarNode) else 1


class _NamedText(io.StringIO):
    """Text as a stream with a ``name`` (what libyaml's marks show)."""

    def __init__(self, text: str, name: str) -> None:
        super().__init__(text)
        self.name = name


def load_documents(text: str, source: str = "<input>") -> list[Any]:
    """Every non-empty YAML document of ``text``, strictly parsed."""
    return _load(StrictLoader, text, source)


def _load(loader_class: type[yaml.SafeLoader], text: str, source: str) -> list[Any]:
    # marks in messages name the file, not '<unicode string>': libyaml takes the name from the
    # stream it reads, the Python parser from ``name``
    loader = loader_class(_NamedText(text, source))
    loader.name = source
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if expanded_size(node) > MAX_EXPANDED_NODES:
                raise _error(
                    source,
                    f"document {len(docs)}: YAML aliases expand to more than {MAX_EXPANDED_NODES} "
                    "nodes (excessive aliasing is refused, as by Kubernetes' parsers)",
                )
            data = loader.construct_document(node)
            if data is not None:
                docs.append(data)
    except yaml.YAMLError as exc:
        raise _error(source, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise _error(source, "invalid YAML: nesting too deep or a recursive alias") from None
    finally:
        loader.dispose()
    return docs


def read_text(path: str | pathlib.Path) -> str:
    """The UTF-8 text of ``path`` ('-' = standard input)."""
    source = str(path)
    if source == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    else:
        p = pathlib.Path(path)
        if p.is_dir():
            raise _error(source, "is a directory, not a manifest file")
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise _error(source, "no such file") from None
        except OSError as exc:
            raise _error(source, f"cannot be read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _error(source, f"is not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r})") from None


def read_documents(path: str | pathlib.Path) -> list[Any]:
    """Every non-empty document of a manifest file; an empty file is an error naming it."""
    docs = load_documents(read_text(path), str(path))
    if not docs:
        raise _error(str(path), "no YAML document found (the file is empty)")
    return docs


_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class PlainDumper(BaseDumper):  # type: ignore[valid-type,misc]  # BaseDumper is a variable (see StrictLoader)
    """``BaseDumper`` for manifests: it writes what ``BaseDumper`` writes of a deep copy into plain
    dicts and lists (every ``Mapping`` a dict, every list or tuple a list), byte for byte, without making
    the copy, and builds the nodes of ``dict``/``list``/``tuple``/``str``/``int``/``bool``/``None``
    values without the representer's generic dispatch (every other value, floats included, goes
    through it).

    Invariants: the nodes are the ones ``SafeRepresenter`` builds for the copy — same tags, styles
    and flow styles; never an anchor or alias (a deep copy shares no object: an object that occurs
    twice, as rendered manifests share their constant parts, is written out at each place, as
    Kubernetes manifests are) (tests/core/k8s/test_yaml_plain_dumper.py compares both on generated
    documents). An object that contains itself is refused (``RepresenterError``)."""

    #: mapping keys as written: ``str`` writes every key as its text (:class:`TextKeysDumper`)
    key: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open: set[int] = set()  # ids of the mappings and sequences being written

    def represent_data(self, data: Any) -> Node:
        kind = type(data)
        if kind is str:
            return ScalarNode(_STR, data, style=self.default_style)
        if kind is dict:
            return self._mapping(data)
        if kind is list or kind is tuple:
            return self._sequence(data)
        if kind is bool:
            return ScalarNode(_BOOL, "true" if data else "false", style=self.default_style)
        if kind is int:
            return ScalarNode(_INT, str(data), style=self.default_style)
        if data is None:
            return ScalarNode(_NULL, "null", style=self.default_style)
        if isinstance(data, Mapping):
            return self._mapping(data)
        if isinstance(data, (list, tuple)):
            return self._sequence(data)
        node: Node = super().represent_data(data)  # floats, and what the safe representer refuses
        return node

    def _mapping(self, data: Mapping[Any, Any]) -> MappingNode:
        """``represent_mapping(_MAP, data)`` (``sort_keys`` and the flow style as it decides them)."""
        value: list[tuple[Node, Node]] = []
        key = self.key
        items = list(data.items())
        if key is not None and not all(type(k) is str for k in data):
            items = list({key(k): v for k, v in items}.items())  # as the copy would: equal texts merge
        if self.sort_keys:
            try:
                items = sorted(items)
            except TypeError:
                pass
        self._enter(data)
        best = True
        represent = self.represent_data
        for k, v in items:
            nk, nv = represent(k), represent(v)
            if best and not (type(nk) is ScalarNode and not nk.style and type(nv) is ScalarNode and not nv.style):
                best = False
            value.append((nk, nv))
        self._open.discard(id(data))
        flow = self.default_flow_style if self.default_flow_style is not None else best
        return MappingNode(_MAP, value, flow_style=flow)

    def _sequence(self, data: list[Any] | tuple[Any, ...]) -> SequenceNode:
        """``represent_sequence(_SEQ, data)`` (the flow style as it decides it)."""
        value: list[Node] = []
        self._enter(data)
        best = True
        represent = self.represent_data
        for item in data:
            n = represent(item)
            if best and not (type(n) is ScalarNode and not n.style):
                best = False
            value.append(n)
        self._open.discard(id(data))
        flow = self.default_flow_style if self.default_flow_style is not None else best
        return SequenceNode(_SEQ, value, flow_style=flow)

    def _enter(self, data: Any) -> None:
        """Mark ``data`` as being written; one already being written contains itself."""
        if id(data) in self._open:
            raise yaml.representer.RepresenterError(f"a {type(data).__name__} that contains itself cannot be written")
        self._open.add(id(data))


class TextKeysDumper(PlainDumper):
    """:class:`PlainDumper` writing every mapping key as its ``str`` (a copy with ``{str(k): v}``)."""

    key = str


def dump_documents(
    docs: list[Any], *, explicit_start: bool = True, sort_keys: bool = False, text_keys: bool = False
) -> str:
    """``docs`` as one YAML stream (``---`` before each document), keys in insertion order unless
    ``sort_keys``; mappings, sequences and scalars (what every renderer returns). The text is
    ``BaseDumper``'s of a plain deep copy of ``docs``, byte for byte (:class:`PlainDumper`);
    ``text_keys``: of a copy whose keys are all ``str`` (:class:`TextKeysDumper`)."""
    return yaml.dump_all(
        docs,
        Dumper=TextKeysDumper if text_keys else PlainDumper,
        sort_keys=sort_keys,
        explicit_start=explicit_start,
        default_flow_style=False,
        allow_unicode=False,
    )


def dump_document(doc: Any, *, sort_keys: bool = False, text_keys: bool = False) -> str:
    """One document without a leading ``---`` (the form ``yaml.safe_dump`` writes); as
    :func:`dump_documents`."""
    return yaml.dump(
        doc,
        Dumper=TextKeysDumper if text_keys else PlainDumper,
        sort_keys=sort_keys,
        default_flow_style=False,
        allow_unicode=False,
    )
