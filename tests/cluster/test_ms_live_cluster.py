"""LiveCluster for a ModelServing over real HTTP against kmock: every kind the ModelServing scope
observes has a resource class (StatefulSet, Pod, Service, ControllerRevision, Volcano PodGroup
``scheduling.volcano.sh/v1beta1``), one LIST per kind whatever the number of ServingGroups, a
cluster without Volcano (404) is skipped, and the ModelServing component always asks for the
Volcano PodGroup (``gang_provider="volcano"``), whatever a LeaderWorkerSet in the same program uses."""

from __future__ import annotations

import asyncio
import copy

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import discovery_paths, kmock_client, object_requests

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resources import VolcanoPodGroup, resource_classes
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.modelserving import labels as ML
from pulumi_lws.workloads import workload_for

NS = "serving"
MS = workload_for("ModelServing")
PLURALS = {
    "StatefulSet": "apps/v1/statefulsets",
    "Service": "v1/services",
    "Pod": "v1/pods",
    "ControllerRevision": "apps/v1/controllerrevisions",
    "PodGroup": "scheduling.volcano.sh/v1beta1/podgroups",
}


def _spec(groups: int, scheduler: str = "volcano"):
    role = {
        "replicas": 1,
        "workerReplicas": 1,
        "entryTemplate": {"spec": {"containers": [{"name": "s", "image": "nginx:1"}]}},
        "workerTemplate": {"spec": {"containers": [{"name": "s", "image": "nginx:1"}]}},
    }
    return MS.parse(
        {
            "apiVersion": MS.api_version,
            "kind": "ModelServing",
            "metadata": {"name": "pd", "namespace": NS},
            "spec": {
                "replicas": groups,
                "schedulerName": scheduler,
                "template": {"roles": [{"name": "prefill", **role}, {"name": "decode", **copy.deepcopy(role)}]},
            },
        }
    )


def _seed(kmock, groups: int, *, volcano: bool = True) -> int:
    """Every object the first reconcile declares for ``groups`` ServingGroups, plus the pods their
    StatefulSets run (Running and Ready) and a foreign pod; returns the number of pods."""
    spec = _spec(groups)
    pods = 0
    for m in MS.reconcile(spec, EMPTY).manifests:
        kind, name = m["kind"], m["metadata"]["name"]
        if kind == "PodGroup" and not volcano:
            continue
        kmock.objects[(PLURALS[kind], NS, name)] = copy.deepcopy(dict(m))
        if kind == "StatefulSet":
            template = m["spec"]["template"]
            start = (m["spec"].get("ordinals") or {}).get("start", 0)
            for i in range(start, start + m["spec"]["replicas"]):
                pods += 1
                kmock.objects[("v1/pods", NS, f"{name}-{i}")] = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{i}",
                        "namespace": NS,
                        "uid": f"uid-{name}-{i}",
                        "labels": dict(template["metadata"]["labels"]),
                    },
                    "spec": copy.deepcopy(template["spec"]),
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                }
    kmock.objects[("v1/pods", NS, "other-0")] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "other-0", "namespace": NS, "labels": {ML.NAME: "other"}},
        "spec": {"containers": [{"name": "s", "image": "x"}]},
    }
    return pods


def test_every_kind_the_modelserving_scope_observes_has_a_resource_class():
    scope = MS.scope(_spec(1))
    for provider in ("kubernetes", "volcano"):
        classes = resource_classes(provider)
        assert set(scope.kinds) <= set(classes), provider
    assert resource_classes("volcano")["PodGroup"] is VolcanoPodGroup


async def _lists(kmock, groups: int, volcano: bool = True) -> tuple[int, int, object]:
    pods = _seed(kmock, groups, volcano=volcano)
    live = LiveCluster(kmock_client(str(kmock.url)), gang_provider="volcano")
    spec = _spec(groups)
    before = len(list(kmock))
    snapshot = await asyncio.to_thread(live.observe, MS.scope(spec))
    requests = list(kmock)[before:]
    lists = len(object_requests(requests))
    # API discovery: /apis once, Volcano's resource list once when /apis lists it
    assert discovery_paths(requests) == ["/apis"] + (["/apis/scheduling.volcano.sh/v1beta1"] if volcano else [])
    result = MS.reconcile(spec, snapshot)  # one reconcile = one observe
    assert result.stage.complete, result.stage.summary()
    assert len(snapshot.list("Pod")) == pods and snapshot.get("Pod", "other-0") is None
    return lists, len(snapshot.list("PodGroup")), snapshot


@pytest.mark.asyncio
async def test_list_calls_per_reconcile_are_fixed_for_50_servinggroups(kmock):
    lists, podgroups, snapshot = await _lists(kmock, 50)
    scope = MS.scope(_spec(50))
    assert lists == len(scope.kinds) == 5  # one LIST per kind, no Nodes
    assert podgroups == 50 and all(
        pg["apiVersion"] == "scheduling.volcano.sh/v1beta1" for pg in snapshot.list("PodGroup")
    )
    requests = object_requests(kmock)
    # ControllerRevisions without the StatefulSets' own history (controller.kubernetes.io/hash)
    assert {r.resource.plural: r.params.get("labelSelector") for r in requests} == {
        **{plural: f"{ML.NAME}=pd" for plural in ("statefulsets", "pods", "services", "podgroups")},
        "controllerrevisions": f"{ML.NAME}=pd,!controller.kubernetes.io/hash",
    }
    assert {r.resource.group for r in requests if r.resource.plural == "podgroups"} == {"scheduling.volcano.sh"}


@pytest.mark.asyncio
async def test_list_calls_do_not_grow_with_the_group_count(kmock):
    small, _, _ = await _lists(kmock, 3)
    assert small == len(MS.scope(_spec(3)).kinds)


@pytest.mark.asyncio
async def test_a_cluster_without_volcano_is_skipped_not_an_error(kmock):
    lists, podgroups, _ = await _lists(kmock, 4, volcano=False)
    assert lists == 4 and podgroups == 0  # discovery does not list Volcano's API: no LIST of PodGroups


def test_the_modelserving_component_asks_for_the_volcano_podgroup(monkeypatch):
    """The live backend of a ModelServing component is built with gang_provider volcano, whatever
    a LeaderWorkerSet component of the same program passes."""
    from pulumi_lws import backend

    seen = []

    class Stop(Exception):
        pass

    def fake(context=None, *, kubeconfig=None, gang_provider="kubernetes"):
        seen.append(gang_provider)
        raise Stop

    monkeypatch.setattr(LiveCluster, "from_kubeconfig", staticmethod(fake))
    with pytest.raises(Stop):
        backend.current_backend(gang_provider="kubernetes")
    from pulumi_lws.components.args import build_spec
    from pulumi_lws.workloads import workload_for

    # the component's backend is built with the gang provider of its built arguments (components/prepare.py):
    # ModelServing's is fixed, so a gang_provider choice never applies
    assert workload_for("ModelServing").gang.fixed == "volcano"
    assert build_spec("ModelServing", "pd", _spec(1).to_wire()).gang_provider == "volcano"
    assert seen == ["kubernetes"]
