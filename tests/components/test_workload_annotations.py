"""Every StatefulSet and Deployment child of every API carries pulumi-kubernetes' workload
annotations (``core.k8s.manifests.WORKLOAD_ANNOTATIONS``): ``pulumi.com/skipAwait: "true"`` and
``pulumi.com/deletionPropagationPolicy: "background"``.

Why background (pulumi-kubernetes v4.25.0, ``provider/pkg/metadata/overrides.go``): with skipAwait
the provider's delete of a StatefulSet or Deployment returns as soon as the DELETE is accepted
(``DeletedCondition`` / ``allowsSkipAwaitWithDelete``); with its default Foreground propagation the
object would then linger, terminating, while its pods go, and a same-name object declared in the
meantime (a delete-before-replace, a group scaled away and back) would meet it. Background removes
the object at once; the garbage collector removes its pods afterwards. The provider reads the
annotation from the inputs in the stack's state (``await.Deletion``: ``DeletionPropagation(c.Inputs)``),
so it must be on every registration, not added at delete time.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

from pulumi_lws.components.registration import with_skip_await
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.manifests import WORKLOAD_ANNOTATIONS
from pulumi_lws.sim.driver.expansion import steady_state

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
HASH_LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "h", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "groupIdentity": "Hash",
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    },
}


def _example(path: str) -> dict:
    return yaml.safe_load((EXAMPLES / path).read_text())


CASES = {
    "LeaderWorkerSet Ordinal": (lambda: _example("quickstart/lws.yaml"), {"StatefulSet"}),
    "LeaderWorkerSet Hash": (lambda: HASH_LWS, {"StatefulSet", "Deployment"}),
    "ModelServing": (lambda: _example("modelserving-pd/ms.yaml"), {"StatefulSet"}),
    "DisaggregatedSet": (lambda: _example("disaggregated-pd/ds.yaml"), {"StatefulSet"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_workload_child_is_deleted_in_the_background(case):
    make, kinds = CASES[case]
    expansion = steady_state(make())
    workloads = [m for m in expansion.reconciled.manifests if m["kind"] in ("StatefulSet", "Deployment")]
    assert {m["kind"] for m in workloads} == kinds  # every workload kind the API renders is here
    if case != "LeaderWorkerSet Hash":
        assert len(workloads) > 1  # leader and worker (or entry and worker) StatefulSets alike
    else:
        assert sum(m["kind"] == "StatefulSet" for m in workloads) == 2  # a worker StatefulSet per group
    for m in workloads:
        annotations = m["metadata"].get("annotations") or {}
        assert annotations.get(K.SKIP_AWAIT) == "true", m["metadata"]["name"]
        assert annotations.get(K.DELETION_PROPAGATION) == "background", m["metadata"]["name"]
        assert with_skip_await(m) is m  # the registration has nothing to add: the renderer's table
    others = [m for m in expansion.reconciled.manifests if m["kind"] not in ("StatefulSet", "Deployment")]
    assert others and not any(K.DELETION_PROPAGATION in (m["metadata"].get("annotations") or {}) for m in others)


def test_the_registration_adds_them_to_any_workload_and_they_win_over_a_users():
    sts = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns", "annotations": {K.DELETION_PROPAGATION: "orphan"}},
        "spec": {},
    }
    annotations = with_skip_await(sts)["metadata"]["annotations"]
    assert {k: annotations[k] for k in WORKLOAD_ANNOTATIONS} == WORKLOAD_ANNOTATIONS
    assert sts["metadata"]["annotations"] == {K.DELETION_PROPAGATION: "orphan"}  # the input is not changed
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "ns"}, "spec": {}}
    assert with_skip_await(service) is service  # the provider awaits a Service's delete: nothing to add
