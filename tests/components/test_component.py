"""LeaderWorkerSet component under the mock engine, with a fake ``reconcile`` (planner-independent).

The fake returns a fixed stage (with actions) and a few manifests, so these tests pin the
component's own behaviour: args handling, validation before registration, registration shape
(types, names, parent, provider), actions only on update, outputs.
"""

from __future__ import annotations

import pulumi
import pytest
from conftest import fresh_mock_runtime, ints_back
from support.fakes_component import FakeActuator, FakeObserver, fake_reconcile

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.lws import labels as L
from pulumi_lws.lws import reconcile as reconcile_module

WORKER = {"spec": {"containers": [{"name": "nginx", "image": "nginxinc/nginx-unprivileged:1.27"}]}}
ARGS = {"replicas": 2, "size": 2, "worker_template": WORKER, "namespace": "serving"}


@pytest.fixture
def backend(monkeypatch):
    monkeypatch.setattr(reconcile_module, "reconcile", fake_reconcile)
    observer, actuator = FakeObserver(), FakeActuator()
    with use_backend(observer, actuator):
        yield observer, actuator


def _component(mocks):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    return LeaderWorkerSet


def _settled(lws):
    """An Output that resolves once the component and all its children are registered."""
    return pulumi.Output.all(lws.urn, *[c.urn for c in lws.child_resources])


def _by_type(mocks, typ):
    return [a for a in mocks.registered if a.typ == typ]


@pulumi.runtime.test
def test_registers_every_manifest_with_explicit_names_and_namespace(mocks, backend):
    lws = _component(mocks)("demo", ARGS)

    def check(_):
        sts = _by_type(mocks, "kubernetes:apps/v1:StatefulSet")
        assert sorted(a.name for a in sts) == ["demo-statefulset-demo", "demo-statefulset-demo-1"]
        assert {a.inputs["metadata"]["name"] for a in sts} == {"demo", "demo-1"}
        assert all(a.inputs["metadata"]["namespace"] == "serving" for a in mocks.registered if a.custom)
        leader = next(a for a in sts if a.inputs["metadata"]["name"] == "demo")
        assert ints_back(leader.inputs["spec"]["updateStrategy"]) == {"rollingUpdate": {"partition": 1}}
        assert _by_type(mocks, "kubernetes:core/v1:Service")[0].name == "demo-service-demo"
        cr = _by_type(mocks, "kubernetes:apps/v1:ControllerRevision")[0]
        assert ints_back(cr.inputs["revision"]) == 2 and cr.inputs["data"] == {"spec": {}}
        pg = _by_type(mocks, "kubernetes:scheduling.k8s.io/v1beta1:PodGroup")[0]
        assert ints_back(pg.inputs["spec"]) == {"minCount": 2} and pg.inputs["kind"] == "PodGroup"

    return _settled(lws).apply(check)


@pulumi.runtime.test
def test_children_are_parented_to_the_component(mocks, backend):
    lws = _component(mocks)("demo", ARGS)

    def check(_):
        urns = (
            [str(u) for u in pulumi.runtime.settings.SETTINGS.monitor.get_registered_resources()]
            if hasattr(pulumi.runtime.settings.SETTINGS.monitor, "get_registered_resources")
            else []
        )
        children = [u for u in urns if "kubernetes:" in u]
        assert children and all("lws:index:LeaderWorkerSet$kubernetes:" in u for u in children)
        assert len(lws.child_resources) == 5

    return _settled(lws).apply(check)


@pulumi.runtime.test
def test_skip_await_on_every_workload(mocks, backend):
    lws = _component(mocks)("demo", ARGS)

    def check(_):
        for a in _by_type(mocks, "kubernetes:apps/v1:StatefulSet"):
            assert a.inputs["metadata"]["annotations"][L.SKIP_AWAIT] == "true"

    return _settled(lws).apply(check)


@pulumi.runtime.test
def test_provider_passes_through_to_children(mocks, backend):
    import pulumi_kubernetes as k8s

    provider = k8s.Provider("cluster-a")
    lws = _component(mocks)("demo", ARGS, pulumi.ResourceOptions(providers=[provider]))

    def check(_):
        kids = [a for a in mocks.registered if a.custom and a.typ.startswith("kubernetes:") and "Provider" not in a.typ]
        assert kids and all(a.provider and "cluster-a" in a.provider for a in kids)

    return _settled(lws).apply(check)


@pulumi.runtime.test
def test_outputs_and_actions_on_update(mocks, backend):
    observer, actuator = backend
    lws = _component(mocks)("demo", {**ARGS, "rollout": {"maxUnavailable": "2", "max_surge": "25%"}})
    assert observer.calls == [("serving", "demo", False)]
    assert len(actuator.calls) == 1 and actuator.calls[0][0] == "serving"
    assert actuator.calls[0][1][0].verb == "ungate"

    def check(values):
        _, leader, service, selector, revision, stage, blocker, remaining, actions, status = values
        assert (leader, service, revision) == ("demo", "demo", "rev2")
        assert selector == f"{L.NAME}=demo,{L.WORKER_INDEX}=0"
        control = stage.pop("control")  # rollout control (docs/rollout-control.md)
        assert stage == {
            "policy": "lws/ordinal",
            "replicas": 2,
            "partition": 1,
            "case": "3",
            "complete": False,
            "groups": "ou",
            "paused": False,
            "pods": {"namespace": "serving", "selector": {L.NAME: "demo"}},  # what pulumi-lws rollout polls
        }
        assert control["paused"] is False and control["deadlineExceeded"] is False and control["progressing"] is None
        assert (control["updatedGroups"], control["totalGroups"], control["progressDeadlineSeconds"]) == (1, 2, 600.0)
        assert blocker == "GroupNotReady: group 1 is not ready"
        assert remaining == [
            {"replicas": 2, "partition": 0, "groups": "Uu"},
            {"replicas": 2, "partition": 0, "groups": "UU"},
        ]
        assert actions == [f"done ungate Pod/demo-1 (gate={L.GROUP_REPLACEMENT_GATE})"]
        assert status["readyReplicas"] == 1 and status["updatedReplicas"] == 1
        assert {c["type"] for c in status["conditions"]} >= {"Available", "Progressing"}

    return pulumi.Output.all(
        _settled(lws),
        lws.leader_name,
        lws.service_name,
        lws.selector,
        lws.revision,
        lws.stage,
        lws.blocker,
        lws.remaining_stages,
        lws.actions,
        lws.status,
    ).apply(check)


def test_preview_lists_actions_but_does_not_execute(backend):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    _observer, actuator = backend

    class Echo(pulumi.runtime.Mocks):
        def new_resource(self, args):
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args):
            return {}

    fresh_mock_runtime(Echo(), preview=True)

    @pulumi.runtime.test
    def run():
        lws = LeaderWorkerSet("demo", ARGS)
        return lws.actions.apply(lambda a: assert_planned(a))

    def assert_planned(actions):
        assert actions == [f"ungate Pod/demo-1 (gate={L.GROUP_REPLACEMENT_GATE})"]

    run()
    assert actuator.calls == []


@pytest.mark.parametrize(
    "bad",
    [
        {"replicas": 2, "size": 2, "worker_template": WORKER, "name": "Not_A_Name"},
        {"replicas": "three", "size": 2},
        {"bogus_field": 1},
        {"replicas": 1, "update_order": "Sideways"},
    ],
)
def test_invalid_args_raise_before_any_registration(mocks, backend, bad):
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    observer, actuator = backend
    with pytest.raises(SpecError):
        LeaderWorkerSet("demo", bad)
    assert mocks.registered == [] and observer.calls == [] and actuator.calls == []


def test_args_forms_build_the_same_spec():
    from pulumi_lws.components.args import build_spec
    from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet as Model

    manifest = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "demo", "namespace": "serving"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": WORKER},
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 2, "maxSurge": "50%"}},
        },
    }
    import yaml

    forms = [
        manifest,
        yaml.safe_dump(manifest),
        {"manifest": manifest},
        Model.from_manifest(manifest),
        {
            "replicas": 2.0,
            "size": 2.0,
            "workerTemplate": WORKER,
            "namespace": "serving",
            "rollout": {"maxUnavailable": "2", "maxSurge": "50%"},
        },
    ]
    specs = [build_spec("LeaderWorkerSet", "demo", f).spec.to_wire() for f in forms]
    assert all(s == specs[0] for s in specs[1:])
    cfg = specs[0]["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
    assert cfg["maxUnavailable"] == 2 and isinstance(cfg["maxUnavailable"], int) and cfg["maxSurge"] == "50%"
    assert build_spec("LeaderWorkerSet", "x", {"manifest": manifest, "replicas": 5}).spec.replicas == 5


def test_update_order_option():
    from pulumi_lws.components.args import build_spec

    assert (
        build_spec("LeaderWorkerSet", "demo", {**ARGS, "updateOrder": "RolloutFirst"}).options.update_order
        == "RolloutFirst"
    )


def test_preview_stage_table_shows_now_and_predicted_rows():
    from pulumi_lws.components.outputs import stage_table

    table = stage_table(
        fake_reconcile(
            __import__("pulumi_lws.components.args", fromlist=["x"]).build_spec("LeaderWorkerSet", "demo", ARGS).spec,
            None,
        ).stage
    )
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["Stage", "Partition", "Replicas"]
    assert (
        len(lines) == 2 + 3 + 1
        and "now: partition 0: every group admitted" in lines[2]
        and "case" not in lines[2]
        and "predicted" in lines[3]
    )
    assert lines[-1] == "legend: ✅ updated, ready; ⏳ updated, not ready; 🔵 old revision, ready"
    assert "blocked: GroupNotReady" in lines[2] and "actions: ungate Pod/demo-1" in lines[2]
