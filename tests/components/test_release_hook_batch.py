"""The delete hook observes the workload once per engine run, not once per deleted StatefulSet
(``components/lifecycle.RetainedRelease``): the engine calls it before each StatefulSet and
Deployment it deletes, and the first call releases every retained pod of the scope; later calls
send nothing until the component's actuator writes again. With a counting observer."""

from __future__ import annotations

import pytest

from pulumi_lws.components.lifecycle import RetainedRelease
from pulumi_lws.core.contract.ports import ActionError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.features.retention import RETAIN_FINALIZER
from pulumi_lws.lws.observe import lws_scope
from pulumi_lws.workloads import workload_for

NS = "serving"
SCOPE = lws_scope(NS, "web")


def _pod(name: str, retained: bool) -> dict:
    meta = {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {"leaderworkerset.sigs.k8s.io/name": "web"}}
    if retained:
        meta["finalizers"] = [RETAIN_FINALIZER]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


class Cluster:
    """Observer + actuator over a pod list: counts observes, removes the finalizer on release."""

    def __init__(self, pods: list[dict], *, fail: int = 0) -> None:
        self.pods, self.observes, self.fail = pods, 0, fail
        self.observer = self.actuator = self

    def observe(self, scope):
        self.observes += 1
        return Snapshot.of([dict(p, metadata=dict(p["metadata"])) for p in self.pods])

    def execute(self, namespace, actions):
        if self.fail:
            self.fail -= 1
            raise ActionError("finalize failed: HTTP 500", action=actions[0])
        for action in actions:
            pod = next(p for p in self.pods if p["metadata"]["name"] == action.name)
            pod["metadata"]["finalizers"] = [f for f in pod["metadata"]["finalizers"] if f != RETAIN_FINALIZER]
        return [f"finalize Pod/{a.name}: done" for a in actions]

    def retain(self, name: str) -> None:  # what a reconcile's ``retain`` action does
        next(p for p in self.pods if p["metadata"]["name"] == name)["metadata"]["finalizers"] = [RETAIN_FINALIZER]


def release(cluster: Cluster) -> RetainedRelease:
    return RetainedRelease(cluster, NS, SCOPE, workload_for("LeaderWorkerSet"))


@pytest.mark.parametrize("deleted", [1, 2, 10])
def test_n_deletions_cost_one_observe(deleted):
    cluster = Cluster([_pod("web-1", True), _pod("web-1-1", True), _pod("web-0", False)])
    hook = release(cluster)
    lines = [hook() for _ in range(deleted)]
    assert cluster.observes == 1 and hook.observes == 1
    assert lines[0] == ["finalize Pod/web-1: done", "finalize Pod/web-1-1: done"]
    assert all(more == [] for more in lines[1:])
    assert not any(RETAIN_FINALIZER in (p["metadata"].get("finalizers") or []) for p in cluster.pods)


def test_a_write_of_the_actuator_makes_the_next_call_observe_again():
    cluster = Cluster([_pod("web-1", False)])
    hook = release(cluster)
    assert hook() == [] and hook() == [] and cluster.observes == 1
    cluster.retain("web-1")
    hook.wrote()  # the component ran its stage's actions (one of them retained web-1)
    assert hook() == ["finalize Pod/web-1: done"] and cluster.observes == 2
    assert hook() == [] and cluster.observes == 2


def test_a_failed_release_is_tried_whole_on_the_next_call():
    cluster = Cluster([_pod("web-1", True)], fail=1)
    hook = release(cluster)
    with pytest.raises(ActionError):
        hook()
    assert hook() == ["finalize Pod/web-1: done"] and cluster.observes == 2
    assert hook() == [] and cluster.observes == 2


def test_the_component_binds_one_release_per_run_and_its_actions_invalidate_it(monkeypatch):
    """Under Pulumi's mock engine: the component's hook is its run's RetainedRelease, and running
    the stage's actions (an update) marks it written."""
    import pulumi
    from conftest import fresh_mock_runtime
    from support.fakes_component import FakeActuator, FakeObserver, fake_reconcile
    from support.malformed import recording_mocks

    from pulumi_lws.backend import use_backend
    from pulumi_lws.components.base import on_stage
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet
    from pulumi_lws.lws import reconcile as reconcile_module

    monkeypatch.setattr(reconcile_module, "reconcile", fake_reconcile)  # a stage with one action
    fresh_mock_runtime(recording_mocks([]), preview=False)
    observer, actuator = FakeObserver(), FakeActuator()
    manifest = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
            },
        },
    }
    stages: list = []
    with use_backend(observer, actuator), on_stage(lambda name, stage: stages.append(stage)):
        component = LeaderWorkerSet("web", {"manifest": manifest})
        hook = component._release_hook
        assert isinstance(component._release, RetainedRelease) and len(actuator.calls) == 1  # the stage's action ran
        for _ in range(3):  # the engine deletes three StatefulSets
            hook(pulumi.ResourceHookArgs(urn="", id="", name=hook.name, type=""))
        assert len(observer.calls) == 2  # the reconcile's observe, then one for the three deletions
        component._run_actions(NS, stages[0])  # the actuator writes again (it may retain pods)
        hook(pulumi.ResourceHookArgs(urn="", id="", name=hook.name, type=""))
        hook(pulumi.ResourceHookArgs(urn="", id="", name=hook.name, type=""))
    assert len(observer.calls) == 3
