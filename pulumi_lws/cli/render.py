"""``pulumi-lws render FILE.yaml [--namespace NS]``: the objects of the creation stage as YAML.

Each LeaderWorkerSet document of FILE is validated, reconciled against an empty cluster
(``reconcile(lws, observe.EMPTY)``) and its manifests printed as multi-document YAML, preceded
by a ``#`` comment with the stage summary. Invalid input raises :class:`SpecError` (exit 2 via
``cli.main``); nothing is printed for any document when one of them is invalid.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any, Mapping

import yaml

from pulumi_lws.core.errors import FieldError, SpecError
from pulumi_lws.lws.api.leaderworkerset import KIND, LeaderWorkerSet


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "render", help="print the objects a LeaderWorkerSet expands into (creation stage) as YAML",
        description="Validate each LeaderWorkerSet in FILE and print the Kubernetes objects of its "
                    "creation stage (ControllerRevisions, headless Services, the leader StatefulSet "
                    "(Ordinal) or Deployment (Hash), worker StatefulSets, gang-scheduling objects) as "
                    "multi-document YAML.")
    parser.add_argument("file", metavar="FILE.yaml", help="LeaderWorkerSet manifest(s); '-' reads stdin")
    parser.add_argument("-n", "--namespace", help="namespace for documents that do not set metadata.namespace "
                                                   "(default: 'default')")
    parser.set_defaults(handler=run)


def read_documents(path: str) -> list[Mapping[str, Any]]:
    """Every non-empty YAML document of ``path`` (or stdin for '-'); SpecError on bad YAML."""
    text = sys.stdin.read() if path == "-" else pathlib.Path(path).read_text()
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise SpecError(KIND, None, [FieldError(path, f"invalid YAML: {exc}")]) from None
    if not docs:
        raise SpecError(KIND, None, [FieldError(path, "no YAML document found")])
    for i, doc in enumerate(docs):
        if not isinstance(doc, Mapping):
            raise SpecError(KIND, None, [FieldError(f"{path}[document {i}]", "expected a mapping at the top level")])
    return docs


def load_all(path: str, namespace: str | None = None) -> list[LeaderWorkerSet]:
    """Validated LeaderWorkerSets of a (multi-document) file, in file order."""
    return [LeaderWorkerSet.from_manifest(doc, namespace=namespace) for doc in read_documents(path)]


def _plain(value: Any) -> Any:
    """Deep copy into plain dicts/lists so yaml.safe_dump accepts any Mapping/Sequence."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def render_yaml(lws: LeaderWorkerSet) -> str:
    """The creation stage of one LWS as YAML documents (each starting with ``---``)."""
    from pulumi_lws.core.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    result = reconcile(lws, EMPTY)
    header = f"# LeaderWorkerSet {lws.namespace}/{lws.name}: {result.stage.summary()}\n"
    body = yaml.safe_dump_all([_plain(m) for m in result.manifests], sort_keys=False, explicit_start=True)
    return header + body


def run(args: argparse.Namespace) -> int:
    lwss = load_all(args.file, args.namespace)
    sys.stdout.write("".join(render_yaml(lws) for lws in lwss))
    return 0
