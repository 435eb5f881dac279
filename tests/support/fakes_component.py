"""Test doubles of the component's backend and reconcile (shared by the component and engine tests)."""

from __future__ import annotations

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Action, Blocker, GroupView, PredictedStage, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.reconcile import Reconciled


class FakeObserver:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def observe(self, scope):
        self.calls.append((scope.namespace, scope.selector[L.NAME], scope.nodes))
        return Snapshot.of([])


class FakeActuator:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def execute(self, namespace, actions):
        self.calls.append((namespace, list(actions)))
        return [f"done {a.describe()}" for a in actions]


def fake_reconcile(lws, snapshot, options=None):
    ns, name = lws.namespace, lws.name
    stage = Stage(
        policy="lws/ordinal",
        target_revision="rev2",
        replicas=lws.replicas,
        partition=1,
        group_revisions={"0": "rev1", "1": "rev2"},
        groups=(GroupView("0", "rev1", ready=True, updated=False), GroupView("1", "rev2", ready=False, updated=True)),
        actions=(Action("ungate", "Pod", f"{name}-1", {"gate": L.GROUP_REPLACEMENT_GATE}, uid="u1"),),
        blocker=Blocker("GroupNotReady", "group 1 is not ready"),
        case="3",
        remaining=(PredictedStage(2, 0, "Uu"), PredictedStage(2, 0, "UU")),
    )
    labels = {L.NAME: name, L.MANAGED_BY: L.MANAGED_BY_VALUE}
    manifests = (
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "replicas": lws.replicas,
                "serviceName": name,
                "updateStrategy": {"rollingUpdate": {"partition": 1}},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": f"{name}-1", "namespace": ns, "labels": labels, "annotations": {L.SKIP_AWAIT: "true"}},
            "spec": {"replicas": 1, "serviceName": name},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"clusterIP": "None", "selector": {L.NAME: name}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": f"{name}-rev2-2", "namespace": ns, "labels": labels},
            "data": {"spec": {}},
            "revision": 2,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": f"{name}-0", "namespace": ns, "labels": labels},
            "spec": {"minCount": 2},
        },
    )
    return Reconciled(stage=stage, manifests=manifests, catalog=None)
