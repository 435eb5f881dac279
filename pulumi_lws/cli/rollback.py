"""``pulumi-lws rollback <manifest>``: go back to the previous revision the cluster records.

Reads the workload's objects through the installed backend (the live cluster by default: the
kubeconfig/context options as the pulumi-kubernetes provider; the simulator or a test fake under
:func:`pulumi_lws.backend.use_backend`), picks the newest recorded revision other than the
manifest's (:func:`pulumi_lws.core.features.rollback.previous_revision`), and prints the change to make in
the manifest as a unified diff. ``--apply`` writes it into the file: only that workload's document
is rewritten (its comments are not kept), every other document stays byte for byte.

The spec change is the whole rollback: the next ``pulumi up`` plans it like any other revision
change, so mid-rollout only the groups that had already left the old revision move back, within
the same budgets (docs/rollout-control.md).

Exit status: 0 printed (or written); 1 nothing to roll back to (no other revision recorded);
2 bad input (file, manifest, a document that cannot be located for ``--apply``); 4 the cluster
could not be used (kubeconfig, connection, TLS, HTTP error, malformed answer, timeout: one line
naming the server or the file and the cause, :func:`pulumi_lws.cli.main`).
"""

from __future__ import annotations

import argparse
import difflib
import json
import pathlib
import re
import sys
from collections.abc import Mapping
from typing import Any

import yaml

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.documents import Document, one_workload
from pulumi_lws.core.contract.errors import FieldError, SpecError
from pulumi_lws.core.contract.workload import observed_target
from pulumi_lws.core.features.rollback import (
    NoPreviousRevision,
    RecordedRevision,
    Revertible,
    previous_revision,
    rollback_manifest,
)
from pulumi_lws.core.k8s.yamlio import dump_document

SEPARATOR = re.compile(r"^---(?:\s|$)", re.MULTILINE)

DESCRIPTION = """\
Compare the manifest's workload with the revisions recorded in the cluster (its
ControllerRevisions; a DisaggregatedSet's old-revision children) and print the spec change that
goes back to the previous one, as a patch to the manifest. With --apply, write it into the file.
Then run pulumi up (or pulumi-lws rollout): the rollback is an ordinary rollout to that revision.
From a Pulumi program, make the same change to the manifest or arguments the program passes.
"""


def dump(doc: Mapping[str, Any]) -> str:
    return dump_document(dict(doc))


def plan_rollback(doc: Document, observer: Any) -> tuple[RecordedRevision, dict[str, Any], str]:
    """(the revision to go back to, the rolled-back manifest, the current target key)."""
    workload = doc.workload
    assert workload is not None
    if not isinstance(workload, Revertible):
        raise SpecError(doc.kind, doc.name, [FieldError("kind", "this API records no revisions to roll back to")])
    spec = workload.parse(doc.data)
    snapshot = observer.observe(workload.scope(spec, nodes=False))
    target = observed_target(workload, spec, snapshot)  # an adopted fleet: upstream's key, as the reconcile's
    previous = previous_revision(target, workload.recorded_revisions(spec, snapshot))
    return previous, rollback_manifest(doc.data, workload.covered(spec, snapshot), previous.covered), target


def changed_leaves(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """``(path, old, new)`` for every leaf that differs (``a.b[0].c``), in document order: the
    same change for a program that passes arguments instead of a manifest."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[tuple[str, Any, Any]] = []
        for key in [*old, *(k for k in new if k not in old)]:
            sub = f"{path}.{key}" if path else str(key)
            out += (
                changed_leaves(old.get(key), new.get(key), sub)
                if key in old and key in new
                else ([] if old.get(key) == new.get(key) else [(sub, old.get(key), new.get(key))])
            )
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new)) for c in changed_leaves(a, b, f"{path}[{i}]")]
    return [] if old == new else [(path, old, new)]


def replace_document(text: str, index: int, original: Any, new_text: str, source: str) -> str:
    """``text`` with its ``index``-th YAML document replaced by ``new_text``; SpecError when the
    document found there does not parse to ``original`` (never rewrite the wrong one)."""
    starts = [0] + [m.start() for m in SEPARATOR.finditer(text)]
    segments = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    n = -1
    for i, seg in enumerate(segments):
        body = SEPARATOR.sub("", seg, count=1) if i else seg
        try:
            loaded = yaml.safe_load(body)
        except yaml.YAMLError:
            loaded = None
        if loaded is None:
            continue
        n += 1
        if n == index:
            if loaded != original:
                break
            separator = SEPARATOR.match(seg) if i else None
            head = seg[: separator.end()] if separator else ""
            if head and not head.endswith("\n"):
                head += "\n"
            segments[i] = head + new_text
            return "".join(segments)
    raise SpecError(
        "manifest",
        None,
        [
            FieldError(
                source, f"cannot locate document {index} to rewrite; run without --apply and edit the file by hand"
            )
        ],
    )


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rollback",
        help="print (or --apply) the change back to the previous recorded revision",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("manifest", help="manifest file holding the workload")
    p.add_argument("--name", help="the workload's metadata.name when the file holds several")
    p.add_argument("--apply", action="store_true", help="write the change into the manifest file")
    p.add_argument("--context", help="kube context (default: the current one)")
    p.add_argument("--kubeconfig", help="kubeconfig file path (default: KUBECONFIG / ~/.kube/config)")
    p.add_argument(
        "--attempts",
        type=int,
        default=3,
        help="tries per API request before the cluster counts as unreachable (default 3)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pulumi_lws.backend import current_backend

    doc = one_workload(args.manifest, args.name)
    if args.apply and args.manifest == "-":
        raise SpecError("manifest", None, [FieldError("--apply", "needs a manifest file, not standard input")])
    assert doc.workload is not None
    gang = doc.workload.gang.provider()  # the API's own PodGroups (a fixed provider, else the default)
    backend = current_backend(context=args.context, kubeconfig=args.kubeconfig, gang_provider=gang)
    if hasattr(backend.observer, "retry"):  # the live backend (an installed test backend has none)
        from pulumi_lws.cluster.resilience import RetryPolicy

        backend.observer.retry = RetryPolicy(attempts=max(1, args.attempts))
    try:
        previous, rolled_back, target = plan_rollback(doc, backend.observer)
    except NoPreviousRevision as exc:
        print(f"{doc.kind}/{doc.name}: nothing to roll back to: {exc}", file=sys.stderr)
        return X.NOT_CONVERGED
    old_text, new_text = dump(doc.data), dump(rolled_back)
    print(
        f"# {doc.kind}/{doc.name}: roll back from revision {target} to {previous.key} (recorded in {previous.source})"
    )
    for path, before, after in changed_leaves(doc.data, rolled_back):
        print(f"# change {path}: {json.dumps(before)} -> {json.dumps(after)}")
    sys.stdout.writelines(
        difflib.unified_diff(
            old_text.splitlines(True), new_text.splitlines(True), f"a/{args.manifest}", f"b/{args.manifest}"
        )
    )
    if args.apply:
        manifest_file = pathlib.Path(args.manifest)
        text = manifest_file.read_text(encoding="utf-8")
        manifest_file.write_text(replace_document(text, doc.index, doc.data, new_text, args.manifest), encoding="utf-8")
        print(f"# wrote {args.manifest}; run pulumi up (or pulumi-lws rollout) to roll back")
    return X.OK
