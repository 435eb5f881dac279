"""``pulumi-lws render FILE.yaml``: the objects a workload (any registered API) expands into, as YAML.

Each document of FILE (:mod:`pulumi_lws.cli.documents`) is printed in file order:

* a workload (any kind the registry models: LeaderWorkerSet, ModelServing, DisaggregatedSet, ...) is validated and
  expanded through its :class:`~pulumi_lws.core.contract.workload.Workload`: ``--stage first`` (default) is the
  first ``pulumi up`` on an empty cluster (``reconcile(spec, EMPTY)``); ``--stage steady`` is
  every object of the converged fleet (:func:`pulumi_lws.sim.driver.expansion.steady_state`);
* any other document (Service, HPA, ConfigMap, ...) is passed through unchanged (same data, no
  namespace added), never validated as a workload;
* ``--name NAME`` prints only the workload(s) named NAME (no pass-through documents).

Each workload's objects are preceded by one ``#`` line saying, in words, which stage they are
(:mod:`pulumi_lws.cli.render_headers`). Invariants: every document is read and every workload
validated (and, for ``steady``, converged) before anything is printed, so invalid input prints
nothing (exit 2); a ``steady`` expansion that cannot converge is still printed (its header names
the blocker) and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_lws.cli import documents as D
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli.apis import choosable_gang_kinds, fixed_gang_kinds, kinds
from pulumi_lws.cli.render_headers import (
    first_header,
    passthrough_header,
    steady_header,
)
from pulumi_lws.core.k8s.yamlio import dump_documents

STAGES = ("first", "steady")
POOL_FLAGS = ("nodes", "zones", "gpus_per_node")

DESCRIPTION = """\
Print the Kubernetes objects each workload in FILE expands into as multi-document YAML, one '#'
line above each workload saying which stage it shows:
  LeaderWorkerSet  ControllerRevisions, headless Services, the leader StatefulSet (Ordinal) or
                   Deployment (Hash), worker StatefulSets, gang-scheduling objects
  ModelServing     ControllerRevisions, per role replica an entry StatefulSet and a worker
                   StatefulSet, the entry pods' headless Services, a Volcano PodGroup per
                   ServingGroup (schedulerName volcano)

Documents that are not a workload (Service, HorizontalPodAutoscaler, ConfigMap, ...) are
passed through unchanged, in file order, and never validated as a workload.

stages:
  first   the first `pulumi up` on an empty cluster (default). With startupPolicy LeaderReady
          or exclusive topology this is the leader StatefulSet only: worker StatefulSets follow
          once the leader pods are Ready / scheduled.
  steady  every object of the converged fleet: all worker StatefulSets, per-group Services,
          gang objects, with the values a running cluster gives them (converged on the embedded
          cluster with an instant kubelet). Exclusive topology needs Nodes: give a pool with
          --nodes/--zones/--gpus-per-node, or one topology domain per group is assumed (the
          header says which pool was used).
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "render",
        help=f"print the objects a {kinds()} expands into (first `pulumi up` or steady state) as YAML",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE.yaml", help="manifest file (any number of documents); '-' reads stdin")
    parser.add_argument(
        "-n",
        "--namespace",
        help="namespace for workloads that do not set metadata.namespace "
        "(default: 'default'; pass-through documents are left as they are)",
    )
    parser.add_argument("--name", help="render only the workload named NAME (error listing the names if absent)")
    parser.add_argument(
        "--stage",
        choices=STAGES,
        default="first",
        help="first: the first `pulumi up` on an empty cluster (default); steady: the converged fleet",
    )
    parser.add_argument(
        "--gang-provider",
        choices=("kubernetes", "volcano"),
        default="kubernetes",
        help=f"{', '.join(choosable_gang_kinds())}: gang-scheduling objects for spec.scheduling "
        f"(default: kubernetes; fixed for {', '.join(fixed_gang_kinds()) or 'none'})",
    )
    access = parser.add_argument_group("RBAC (docs/rbac.md)")
    access.add_argument(
        "--rbac",
        action="store_true",
        help="print instead the least-privilege Role/RoleBinding (and a "
        "ClusterRole only for Nodes) that `pulumi up` of FILE's workloads needs",
    )
    access.add_argument(
        "--service-account",
        default="default/pulumi-lws",
        metavar="NAMESPACE/NAME",
        help="with --rbac: the ServiceAccount the bindings name (default: default/pulumi-lws)",
    )
    access.add_argument(
        "--adoption",
        action="store_true",
        help="with --rbac, operator-free mode: also allow disown (adopting a fleet the upstream "
        "controller created: controller -> operator-free, docs/rbac.md)",
    )
    access.add_argument(
        "--check-capacity",
        action="store_true",
        help="with --rbac: also grant what the capacity check reads (list on nodes and on pods, cluster-wide: a "
        "ClusterRole); a workload whose manifest sets pulumi-lws.io/check-capacity gets it anyway",
    )
    access.add_argument(
        "--mode",
        choices=("operator-free", "controller"),
        default=None,
        help="with --rbac: the components' mode (default: operator-free; controller: the observe LISTs, "
        "the CRD check and the upstream custom resource, nothing else)",
    )
    pool = parser.add_argument_group("node pool for --stage steady (as simulate --from/--to)")
    pool.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help="a pool of N nodes (cpu 64, memory 512Gi each); "
        "default: one unbounded node, or one node per group with exclusive topology",
    )
    pool.add_argument(
        "--zones",
        type=int,
        metavar="Z",
        help="spread the pool round-robin over Z zones (also the "
        "domains of an exclusive-topology key the nodes lack); default 1",
    )
    pool.add_argument("--gpus-per-node", type=float, metavar="G", help="nvidia.com/gpu capacity of each pool node")
    parser.set_defaults(handler=run, collector_off=True)  # no cycles: cli/collector.py


@dataclass(frozen=True)
class Rendered:
    """One document's output: its header line and objects; ``problem``: why it did not converge."""

    header: str
    objects: Sequence[Mapping[str, Any]]
    problem: str | None = None


def to_yaml(item: Rendered) -> str:
    """The header line, then the objects as YAML documents (each starting with ``---``)."""
    body = dump_documents(list(item.objects), text_keys=True)  # as a plain copy would print
    return f"# {item.header}\n" + body


def render_first(doc: D.Document, namespace: str | None, gang_provider: str) -> Rendered:
    """The first ``pulumi up`` of one workload document on an empty cluster."""
    from pulumi_lws.core.contract.snapshot import EMPTY

    workload = doc.workload
    assert workload is not None
    spec = workload.parse(doc.data, namespace=namespace)
    result = workload.reconcile(spec, EMPTY, workload.options(gang_provider=gang_provider))
    return Rendered(first_header(workload, spec, result), result.manifests)


def render_steady(doc: D.Document, args: argparse.Namespace) -> Rendered:
    """Every object of the converged fleet of one workload document."""
    from pulumi_lws.sim.driver.expansion import steady_state

    workload = doc.workload
    assert workload is not None
    spec = workload.parse(doc.data, namespace=args.namespace)  # validation errors first, with the document's name
    expansion = steady_state(
        doc.data,
        namespace=args.namespace,
        nodes=args.nodes,
        zones=args.zones,
        gpus_per_node=args.gpus_per_node,
        gang_provider=args.gang_provider,
    )
    header = steady_header(workload, spec, expansion)
    problem = None
    if not expansion.converged:
        namespace, name = workload.identity(spec)
        blocker = expansion.blocker
        why = f"blocked: {blocker.code}: {blocker.message}" if blocker else "the groups never became ready"
        problem = f"{workload.kind} {namespace}/{name} did not converge after {expansion.reconciles} reconciles: {why}"
    return Rendered(header, expansion.reconciled.manifests, problem)


def render_documents(docs: Sequence[D.Document], args: argparse.Namespace) -> list[Rendered]:
    """Every document of the output, in file order (see the module docstring)."""
    selected = D.named(docs, args.name, args.file) if args.name else docs
    out = []
    for doc in selected:
        if doc.workload is None:
            out.append(Rendered(passthrough_header(doc), [doc.data]))
        elif args.stage == "steady":
            out.append(render_steady(doc, args))
        else:
            out.append(render_first(doc, args.namespace, args.gang_provider))
    return out


def run(args: argparse.Namespace) -> int:
    if args.stage != "steady":
        given = [f"--{k.replace('_', '-')}" for k in POOL_FLAGS if getattr(args, k) is not None]
        if given:
            print(
                f"render: {', '.join(given)} only with --stage steady (the first stage reads no Nodes)", file=sys.stderr
            )
            return X.BAD_INPUT
    if args.mode is not None and not args.rbac:
        print("render: --mode only with --rbac (render prints operator-free mode's objects)", file=sys.stderr)
        return X.BAD_INPUT
    if args.adoption and not args.rbac:
        print("render: --adoption only with --rbac", file=sys.stderr)
        return X.BAD_INPUT
    if args.check_capacity and not args.rbac:
        print(
            "render: --check-capacity only with --rbac (render prints the objects, which it does not change)",
            file=sys.stderr,
        )
        return X.BAD_INPUT
    if args.rbac:  # pulumi_lws.rbac: every workload is validated before anything is printed
        from pulumi_lws.rbac import parse_service_account, rbac_yaml

        try:
            parse_service_account(args.service_account)
        except ValueError as exc:
            print(f"render: {exc}", file=sys.stderr)
            return X.BAD_INPUT
        docs = D.read(args.file)
        selected = D.named(docs, args.name, args.file) if args.name else docs
        sys.stdout.write(
            rbac_yaml(
                [d.data for d in selected],
                namespace=args.namespace,
                gang_provider=args.gang_provider,
                service_account=args.service_account,
                mode=args.mode or "operator-free",
                adoption=args.adoption,
                check_capacity=args.check_capacity,
            )
        )
        return X.OK
    rendered = render_documents(D.read(args.file), args)
    for item in rendered:  # one write per document: a closed pipe (`| head`) is noticed at the next one
        sys.stdout.write(to_yaml(item))
        sys.stdout.flush()
    problems = [item.problem for item in rendered if item.problem]
    for problem in problems:
        print(f"render: {problem}", file=sys.stderr)
    return X.NOT_CONVERGED if problems else X.OK
