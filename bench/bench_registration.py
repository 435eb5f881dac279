"""Component overhead: LeaderWorkerSet component vs the same objects registered bare.

Both run under Pulumi's mock engine in the same process; the ratio is what matters (the SDK's own
floor is ~6-9 ms per resource, see shared/reference/pulumi-notes.md §3).
"""

from __future__ import annotations

import asyncio
import statistics
import time

import pulumi


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args):
        return {}


def _run(program) -> float:
    from pulumi.runtime import settings

    asyncio.set_event_loop(asyncio.new_event_loop())
    settings.ROOT.set(None)  # a fresh root stack on this loop (set_mocks keeps an existing one)
    pulumi.runtime.set_mocks(_Mocks(), project="bench", stack="bench", preview=False)
    t0 = time.process_time()  # CPU of the process (all threads): a loaded box does not skew the ratio
    pulumi.runtime.test(program)()
    return time.process_time() - t0


def _register_bare(manifests) -> None:
    import pulumi_kubernetes as k8s

    kinds = {
        "StatefulSet": k8s.apps.v1.StatefulSet,
        "Deployment": k8s.apps.v1.Deployment,
        "Service": k8s.core.v1.Service,
        "ControllerRevision": k8s.apps.v1.ControllerRevision,
    }
    for m in manifests:
        cls = kinds[m["kind"]]
        extra = {k: v for k, v in m.items() if k not in ("apiVersion", "kind", "metadata", "status")}
        cls(f"bare-{m['kind']}-{m['metadata']['name']}", metadata=m["metadata"], **extra)


def ratio(groups: int = 100, repeat: int = 3) -> tuple[float, float, float]:
    """(component/bare ratio, component seconds, bare seconds), medians of ``repeat`` runs."""
    from bench_fixtures import fleet_lws

    from pulumi_lws.backend import use_backend
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet
    from pulumi_lws.core.contract.ports import EmptyObserver
    from pulumi_lws.core.contract.snapshot import EMPTY
    from pulumi_lws.lws.reconcile import reconcile

    lws = fleet_lws(groups)
    manifests = list(reconcile(lws, EMPTY).manifests)

    class NoActions:
        def execute(self, namespace, actions):
            return []

    def component_program():
        with use_backend(EmptyObserver(), NoActions()):
            LeaderWorkerSet("fleet", {"manifest": lws.to_wire()})

    comp, bare = [], []
    for _ in range(repeat):
        comp.append(_run(component_program))
        bare.append(_run(lambda: _register_bare(manifests)))
    c, b = statistics.median(comp), statistics.median(bare)
    return c / b, c, b
