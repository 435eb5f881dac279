"""``pulumi-lws status [-n NS] [MANIFEST ...] [--watch] [--format table|markdown|json]``.

Reads the live cluster — the same rules as the component's default provider: ``--kubeconfig``
(a path, read as a path; text with a newline or a JSON object is the file's content, like
``kubernetes:kubeconfig``) and ``--context`` (like
``kubernetes:context``), else ``KUBECONFIG`` / ``~/.kube/config`` / in-cluster at the current
context (:func:`pulumi_lws.backend.current_backend`) — and prints, for each modelled workload of
the namespace, the current stage table, the blocker and what the next ``pulumi up`` would do.
No Pulumi CLI, no stack: the reconcile is the pure one the component runs.

Where the spec comes from (docs/modes.md, "status"):

* the MANIFEST files given (every workload document in them; other kinds are ignored): the spec
  an operator-free ``pulumi up`` would plan with — exact;
* otherwise the upstream custom resources the cluster serves in the namespace (controller mode:
  the CR *is* the spec) — exact;
* never reconstructed from ControllerRevisions: they hold only the revision-covered fields
  (templates), not replicas or rollout budgets, so "what the next up does" would be a guess.

``--watch`` re-reads every ``--interval`` seconds and prints again only when the output changed,
until every workload is complete or ``--timeout`` seconds passed.

Exit status: 0 printed (every workload complete or progressing), 1 a workload is blocked (or
``--watch`` timed out before completion), 2 bad input (manifest, arguments), 4 the cluster could
not be reached or read (one ``error:`` line naming the context and server, or the kubeconfig
file, and the cause).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_lws.cli import exit_codes as X
from pulumi_lws.workloads import Workload, registered

FORMATS = ("table", "markdown", "json")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "status",
        help="show, from the live cluster, each workload's stage, blocker and the next pulumi up",
        description="Read the live cluster and print, for each workload of NAMESPACE (from the MANIFEST files, else "
        "the upstream custom resources the cluster holds), the stage table, the blocker and what the next "
        "`pulumi up` would do. Needs no Pulumi CLI.",
    )
    parser.add_argument("manifests", nargs="*", metavar="MANIFEST", help="workload manifest files (the spec source)")
    parser.add_argument("-n", "--namespace", default="default", help="namespace (default: default)")
    parser.add_argument("--kubeconfig", help="kubeconfig file path (default: KUBECONFIG, ~/.kube/config, in-cluster)")
    parser.add_argument("--context", help="kube context (default: the current one)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--watch", action="store_true", help="refresh on change until complete or --timeout")
    parser.add_argument("--interval", type=float, default=5.0, help="--watch poll interval in seconds (default 5)")
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="--watch gives up after this many seconds (default 600)"
    )
    parser.add_argument(
        "--check-capacity",
        action="store_true",
        help="also read the cluster's Nodes and every pod's requests, and show a stage whose new pods do not fit "
        "the free capacity of matching nodes as the blocker insufficient-capacity (as the component argument "
        "check_capacity; needs list on nodes and pods cluster-wide; docs/capacity.md)",
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=3,
        help="tries per API request before the cluster counts as unreachable (default 3)",
    )
    parser.set_defaults(handler=run)


@dataclass(frozen=True)
class Target:
    """One workload to show: its API, parsed spec, and where the spec came from."""

    workload: Workload
    spec: Any
    source: str  # "manifest <path>" | "cluster"


class Unreachable(RuntimeError):
    """The cluster could not be reached or read (exit 4)."""


def backend_for(args: argparse.Namespace, gang_provider: str) -> Any:
    """The component's backend for these flags (an installed test backend wins, as for the component)."""
    from pulumi_lws.backend import NoClusterError, command_line_advice, current_backend

    try:
        backend = current_backend(context=args.context, kubeconfig=args.kubeconfig, gang_provider=gang_provider)
    except NoClusterError as exc:  # advice for a command line (the component's names use_backend, for tests)
        raise Unreachable(command_line_advice(exc)) from exc
    live = backend.observer
    if hasattr(live, "retry"):
        from pulumi_lws.cluster.resilience import RetryPolicy

        live.retry = RetryPolicy(attempts=max(1, args.attempts))
    return backend


def from_manifests(paths: list[str], namespace: str) -> list[Target]:
    """Every workload document of ``paths``; one without ``metadata.namespace`` is in ``namespace``."""
    from pulumi_lws.cli.documents import read, workloads

    out = []
    for path in paths:
        for doc in workloads(read(path)):
            assert doc.workload is not None
            spec = doc.workload.parse(dict(doc.data), namespace=namespace)
            out.append(Target(doc.workload, spec, f"manifest {path}"))
    return out


def custom_resources(observer: Any, workload: Workload, namespace: str) -> list[dict[str, Any]]:
    """The upstream CRs of ``workload`` in ``namespace`` (none when the API is not served)."""
    if hasattr(observer, "client"):  # live: one LIST through the generic resource, when discovery lists the CRD's API
        from lightkube.generic_resource import create_namespaced_resource

        from pulumi_lws.core.contract.facts import KindRef

        group, version = workload.api_version.split("/")
        res = create_namespaced_resource(group, version, workload.kind, workload.upstream.plural)
        api = KindRef(workload.kind, workload.api_version, workload.upstream.plural, optional=True)
        return observer.list_resource(workload.kind, res, namespace, api=api)
    if hasattr(observer, "store"):  # the embedded cluster
        return observer.list(workload.kind, namespace)
    return []


def from_cluster(args: argparse.Namespace) -> list[Target]:
    out = []
    for workload in registered().values():
        observer = backend_for(args, workload.gang.provider()).observer
        for cr in custom_resources(observer, workload, args.namespace):
            out.append(
                Target(
                    workload,
                    workload.parse(
                        {k: v for k, v in cr.items() if k != "status"}, namespace=args.namespace, validate=False
                    ),
                    "cluster",
                )
            )
    return out


def describe(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """One workload as the cluster shows it: stage, blocker, next ``pulumi up`` (plain data)."""
    from pulumi_lws.components import outputs as O
    from pulumi_lws.core.contract.driver import Cycle, cycle

    workload, spec = target.workload, target.spec
    backend = backend_for(args, workload.gang.provider())
    done: Cycle[None] = cycle(  # observe + reconcile only; the flag on, else the manifest's annotation
        workload,
        spec,
        workload.options(),
        backend.observer,
        check_capacity=True if getattr(args, "check_capacity", False) else None,
    )
    snapshot, result, stage = done.snapshot, done.reconciled, done.stage
    namespace, name = workload.identity(spec)
    observed = {(o.get("kind"), (o.get("metadata") or {}).get("name")) for o in snapshot}
    created = [
        f"{m['kind']}/{m['metadata']['name']}"
        for m in result.manifests
        if (m["kind"], m["metadata"]["name"]) not in observed
    ]
    return {
        "kind": workload.kind,
        "name": name,
        "namespace": namespace,
        "source": target.source,
        "revision": stage.target_revision,
        "stage": O.stage_summary(stage),
        "blocker": O.blocker_text(stage),
        "remedies": list(stage.blocker.remedies) if stage.blocker else [],
        "remaining_stages": O.remaining_stages(stage),
        "next_up": {
            "declares": len(result.manifests),
            "creates": created,
            "actions": [a.describe() for a in stage.actions],
        },
        "table": O.stage_table(stage),
    }


def render(views: list[dict[str, Any]], fmt: str, namespace: str) -> str:
    if fmt == "json":
        return json.dumps(
            {"namespace": namespace, "workloads": [{k: v for k, v in v_.items() if k != "table"} for v_ in views]},
            indent=2,
            default=str,
        )
    if not views:
        return (
            f"no workload in namespace {namespace}: pass the manifest files of your Pulumi program "
            "(operator-free specs live there), or deploy in controller mode"
        )
    md = fmt == "markdown"
    parts = []
    for v in views:
        state = "complete" if v["stage"]["complete"] else ("blocked" if v["blocker"] else "in progress")
        head = f"{v['kind']} {v['namespace']}/{v['name']}: revision {v['revision']}, {state} (spec: {v['source']})"
        lines = [f"## {head}" if md else head, "```" if md else "", v["table"], "```" if md else ""]
        if v["blocker"]:
            lines.append(f"blocker: {v['blocker']}" + "".join(f"\n  remedy: {r}" for r in v["remedies"]))
        nxt = v["next_up"]
        lines.append(
            f"next pulumi up: declares {nxt['declares']} objects"
            + (f", creates {', '.join(nxt['creates'])}" if nxt["creates"] else "")
            + ("; actions:" if nxt["actions"] else "; no actions")
        )
        lines += [f"{'- ' if md else '  '}{a}" for a in nxt["actions"]]
        parts.append("\n".join(line for line in lines if line != ""))
    return "\n\n".join(parts)


def snapshot_views(args: argparse.Namespace, targets: Callable[[], list[Target]]) -> list[dict[str, Any]]:
    try:
        return [describe(t, args) for t in targets()]
    except Unreachable:
        raise
    except Exception as exc:
        from pulumi_lws.core.contract.ports import ClusterError

        if isinstance(exc, ClusterError):  # its message names the server or the kubeconfig file
            raise Unreachable(str(exc)) from exc
        if _cluster_failure(exc):
            raise Unreachable(f"cannot read the cluster (context {args.context or 'the current one'}): {exc}") from exc
        raise


#: modules whose exceptions mean "the cluster could not be reached or read" (lightkube's HTTP stack)
_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "lightkube")


def _cluster_failure(exc: BaseException) -> bool:
    from pulumi_lws.core.contract.ports import ClusterError

    return isinstance(exc, (ClusterError, OSError)) or type(exc).__module__.split(".")[0] in _CLIENT_MODULES


def run(
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    manifest_targets = (
        from_manifests(args.manifests, args.namespace) if args.manifests else None
    )  # bad input: exit 2 first

    def targets() -> list[Target]:
        return manifest_targets if manifest_targets is not None else from_cluster(args)

    start, last = clock(), None
    try:
        while True:
            views = snapshot_views(args, targets)
            text = render(views, args.format, args.namespace)
            if text != last:
                print(text, flush=True)
                last = text
            done = all(v["stage"]["complete"] for v in views)
            if not args.watch or done or clock() - start >= args.timeout:
                break
            sleep(args.interval)
    except Unreachable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return X.UNREACHABLE
    if any(v["blocker"] for v in views) or (args.watch and not done):
        return X.NOT_CONVERGED
    return X.OK


def views_of(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The workloads of a ``--format json`` document (for scripts and tests)."""
    return list(data.get("workloads") or [])
