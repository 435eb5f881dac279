"""The seeded warm-up (``sim/driver/seed.py``: the synthesised converged cluster loaded into the
run's cluster) is the stepped one: for every example scenario starting converged, the bench's
fleet rollouts of every API (either StatefulSet history) and generated small fleets, the run
that follows gives the same trace rows, stages, violations, demand and verdict, and leaves the
same cluster — every stored object with its simulator bookkeeping, in the same order with the
same keys in the same order, but for ``resourceVersion`` — the same counters and the same view
of the stack. Where the seed does not apply the warm-up is stepped (:func:`seed.why_stepped`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from conftest import TESTS_DIR
from hypothesis import given
from hypothesis import strategies as st
from test_synth import PROPERTY, _valid, ds_specs, lws_specs, ms_specs, next_images

from pulumi_lws.sim.cluster.store import strip_internal
from pulumi_lws.sim.driver import seed
from pulumi_lws.sim.driver.result import RunResult
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario, load_scenario
from pulumi_lws.sim.driver.timeline import TimelineRunner

ROOT = TESTS_DIR.parent
EXAMPLES = sorted(
    str(p.relative_to(ROOT / "examples"))
    for p in (ROOT / "examples").glob("*/scenario*.yaml")
    if load_scenario(p).start == "converged"
)
#: examples whose warm-up stays stepped, and why
STEPPED = {
    "gpu-717/scenario-rolloutfirst.yaml": "Nodes",
    "gpu-717/scenario-scalefirst.yaml": "Nodes",
    "hash/scenario-immediate.yaml": "Hash identity: leaders are a Deployment's pods (synth declines)",
    "hash/scenario.yaml": "Hash identity: leaders are a Deployment's pods (synth declines)",
}

sys.path.insert(0, str(ROOT / "bench"))
from bench_sim import scenario as bench_scenario  # noqa: E402  (the bench's rollout)


@contextmanager
def counting() -> Iterator[list[int]]:
    """How many warm-ups were seeded."""
    calls: list[int] = []
    real = seed.load

    def spy(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        real(*args, **kwargs)

    with mock.patch.object(seed, "load", spy):
        yield calls


def _json(value: Any) -> str:
    return json.dumps(value, default=repr)  # key order kept; the kubelet's Timing by its repr


def cluster_state(result: RunResult) -> dict[str, Any]:
    """Everything the run leaves in its cluster that is state, not cache (``sim/cluster/persist.py``
    keeps the same), objects without ``resourceVersion``."""
    cluster = result.cluster
    store = cluster.store
    objects = []
    for obj in store.all():
        meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
        objects.append(_json({**obj, "metadata": meta}))
    return {
        "objects": objects,
        "order": {kind: [o["metadata"]["uid"] for o in store.list(kind)] for kind in store.kinds()},
        "counters": (store._uid_counter, store._ip_counter, cluster.kubelet._ip, cluster.clock.rng.getstate()),
        "stacks": {s: [(k, _json(m)) for k, m in state.items()] for s, state in cluster.applier.state.items()},
        "dependencies": {s: sorted(d.items()) for s, d in cluster.applier.dependencies.items()},
        "pending": sorted(cluster.applier.pending),
        "internal_history": {u: repr(r) for u, r in sorted(cluster.statefulsets._internal.items())},
    }


def outcome(make: Callable[[], Scenario], synthesise: bool, runner: type[Runner] = Runner) -> Any:
    try:
        result = runner(make(), "pure", synthesise=synthesise).run()
    except RuntimeError as exc:  # a warm-up that never converges: both raise alike
        return (type(exc), str(exc))
    return (
        [repr(r) for r in result.trace.rows],
        [repr(r) for r in result.raw_rows],
        repr(result.stages),
        repr(result.demand),
        result.trace.violations,
        (result.reason, result.end_time, result.trace.converged, result.trace.blocked),
        cluster_state(result),
    )


def assert_same(make: Callable[[], Scenario], runner: type[Runner] = Runner) -> bool:
    """Both warm-ups give the same run; True when the default one was seeded."""
    with counting() as calls:
        seeded = outcome(make, True, runner)
    assert seeded == outcome(make, False, runner)
    return bool(calls)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_runs_the_same_after_either_warm_up(name: str) -> None:
    used = assert_same(lambda: load_scenario(ROOT / "examples" / name), TimelineRunner)
    assert used == (name not in STEPPED), f"{name}: seeded {used}"


@pytest.mark.parametrize("history", ["internal", "objects"])
@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_a_fleet_rollout_runs_the_same_after_either_warm_up(kind: str, history: str) -> None:
    assert assert_same(lambda: bench_scenario(24, 2, history=history, kind=kind))


def test_the_pulumi_engine_a_pool_and_faults_keep_the_stepped_warm_up() -> None:
    quickstart = ROOT / "examples" / "quickstart" / "scenario.yaml"
    runner = Runner(load_scenario(quickstart))  # its default engine: the program under Pulumi's mock
    try:
        assert seed.why_stepped(runner) == "not the plain pure engine"
    finally:
        runner.close()
    for change in (
        {"nodes": [{"name": "n1", "capacity": {"cpu": 8}}]},
        {"kubelet": {"failImages": ["a"]}},
        {"apply": {"keep": 0.5}},
    ):
        sc = _fleet(_lws_doc(), **change)
        assert seed.why_stepped(Runner(sc, "pure")) is not None, change


def _lws_doc() -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "gen", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "a"}]}},
            },
        },
    }


def _fleet(doc: dict[str, Any], **extra: Any) -> Scenario:
    """``doc`` converged, then every image changed at t=0."""
    return load_scenario(
        {
            "name": "gen",
            "engine": "pure",
            "start": "converged",
            "manifest": doc,
            "updates": [{"at": 0, "manifest": next_images(doc)}],
            "reconcile": {"interval": 5, "tick": 5},
            "stop": {"maxTime": 300},
            **extra,
        }
    )


@PROPERTY
@given(st.one_of(lws_specs(), ms_specs(), ds_specs()), st.sampled_from(["internal", "objects"]))
def test_property_small_fleets_run_the_same_after_either_warm_up(doc: dict[str, Any], history: str) -> None:
    doc = _valid(doc)
    assert_same(lambda: _fleet(doc, cluster={"statefulSetRevisions": history}))


@pytest.mark.parametrize("history", ["internal", "objects"])
@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_the_seeded_cluster_is_settled_and_its_observed_copies_are_fresh(kind: str, history: str) -> None:
    """Right after the seeded warm-up: a settle writes nothing (every controller at its fixpoint,
    the StatefulSets' skip inputs as their next sync finds them), every cached observed copy is
    the stripped stored object (types and key order included), and the stepped warm-up's cluster
    holds the same objects."""
    seeded = Runner(bench_scenario(12, 2, history=history, kind=kind), "pure")
    stepped = Runner(bench_scenario(12, 2, history=history, kind=kind), "pure", synthesise=False)
    with counting() as calls:
        seeded.warm_up()
    stepped.warm_up()
    assert calls
    store = seeded.cluster.store
    for obj in store.all():
        assert _json(store.observed(obj)) == _json(strip_internal(obj))
    version = store.version
    controller = seeded.cluster.statefulsets
    quiet = set(controller._sets.quiet)
    seeded.cluster.settle()
    assert store.version == version and controller._sets.quiet == quiet  # no write, no set re-synced
    stepped.cluster.settle()

    def objects(runner: Runner) -> list[str]:
        return [
            _json({**o, "metadata": {k: v for k, v in o["metadata"].items() if k != "resourceVersion"}})
            for o in runner.cluster.store.all()
        ]

    assert objects(seeded) == objects(stepped)

    def skips(runner: Runner) -> dict[Any, Any]:
        """The applier's entries still valid: the manifest found unchanged on the live version."""
        store = runner.cluster.store
        return {
            (stack, key): manifest
            for stack, entries in runner.cluster.applier.unchanged_at.items()
            for key, (manifest, version) in entries.items()
            if (store.get(*key) or {}).get("metadata", {}).get("resourceVersion") == version
        }

    assert skips(seeded) == skips(stepped) and skips(seeded)
    assert sorted(controller._internal.items()) == sorted(stepped.cluster.statefulsets._internal.items())
