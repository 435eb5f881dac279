"""Annotations the registration adds for pulumi-kubernetes (components/registration.py), from its
source (docs/component.md "How pulumi-kubernetes treats the children"):

* ``pulumi.com/skipAwait`` and ``pulumi.com/deletionPropagationPolicy: background`` on StatefulSets
  and Deployments only: their built-in awaiters would hold ``pulumi up`` until every pod rolled,
  and with skipAwait their delete returns at once (so the object must go at once:
  tests/components/test_workload_annotations.py); Services are headless (the Service awaiter
  waits on no pod then), ControllerRevisions and custom resources have no awaiter;
* ``pulumi.com/patchForce`` exactly on an object declaring an annotation the reconcile's actuator
  also writes (the leader's group restart counts): pulumi-kubernetes applies without force, and a
  field two managers own is a server-side-apply conflict once its value changes.
"""

from __future__ import annotations

import pulumi
import pytest

from pulumi_lws.components.registration import PATCH_FORCE, register_children, with_skip_await
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.k8s.keys import DELETION_PROPAGATION
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.driver.pulumi_engine import run_program

COUNTS = '{"0": 1}'


def _obj(kind: str, name: str, api: str = "apps/v1", **annotations: str) -> dict:
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "annotations": dict(annotations)},
        "spec": {},
    }


@pytest.mark.parametrize(
    ("manifest", "skip_await", "force"),
    [
        (_obj("StatefulSet", "lws"), True, False),
        (_obj("StatefulSet", "lws", **{L.GROUP_RESTART_COUNTS: COUNTS}), True, True),
        (_obj("Deployment", "lws", **{L.GROUP_RESTART_COUNTS: COUNTS}), True, True),
        (_obj("StatefulSet", "lws-0"), True, False),
        (_obj("Service", "lws", api="v1"), False, False),
        (_obj("ControllerRevision", "lws-abc-1"), False, False),
        (_obj("PodGroup", "lws-0", api="scheduling.x-k8s.io/v1alpha1"), False, False),
    ],
)
def test_the_annotations_each_kind_gets(manifest, skip_await, force):
    annotations = with_skip_await(manifest)["metadata"]["annotations"]
    assert (annotations.get(L.SKIP_AWAIT) == "true") is skip_await
    assert (annotations.get(DELETION_PROPAGATION) == "background") is skip_await
    assert (annotations.get(PATCH_FORCE) == "true") is force
    assert manifest["metadata"]["annotations"].get(PATCH_FORCE) is None  # the input is not changed


class _NoActions:
    def execute(self, namespace, actions):
        return []


def test_the_registered_leader_carrying_restart_counts_is_force_applied():
    leader = _obj("StatefulSet", "lws", **{L.GROUP_RESTART_COUNTS: COUNTS})
    worker = _obj("StatefulSet", "lws-0")

    def program():
        parent = pulumi.ComponentResource("test:index:Parent", "p")
        register_children("p", [leader, worker], {}, parent)

    result = run_program(program, EmptyObserver(), _NoActions())
    registered = {m["metadata"]["name"]: m["metadata"]["annotations"] for m in result.manifests}
    assert registered["lws"][PATCH_FORCE] == "true" and registered["lws"][L.GROUP_RESTART_COUNTS] == COUNTS
    assert PATCH_FORCE not in registered["lws-0"]
