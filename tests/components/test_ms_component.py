"""ModelServing component under Pulumi's mock engine with the real reconcile, against the embedded
cluster: children registered with ``parent=self`` and ``depends_on`` the reconcile's
dependencies, outputs (selector = upstream status.labelSelector, revision, stage, blocker,
status), invalid args raise SpecError before anything registers, ``max_groups_in_flight``."""

from __future__ import annotations

import copy
import pathlib

import pulumi
import pytest
import yaml
from support.fakes_component import FakeActuator

from pulumi_lws.backend import use_backend
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
PD = yaml.safe_load((ROOT / "examples" / "modelserving-pd" / "ms.yaml").read_text())
MS = workload_for("ModelServing")
NEW_IMAGE = "nginxinc/nginx-unprivileged:1.28"


def with_image(doc: dict, image: str) -> dict:
    out = copy.deepcopy(doc)
    for role in out["spec"]["template"]["roles"]:
        for key in ("entryTemplate", "workerTemplate"):
            for c in role[key]["spec"]["containers"]:
                c["image"] = image
    return out


def role_rolling(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    out["spec"]["rolloutStrategy"] = {"type": "RoleRollingUpdate"}
    return out


def converged(doc: dict):
    """The embedded cluster with ``doc`` rolled out and ready."""
    runner = Runner(Scenario(name="pd", engine="pure", manifest=copy.deepcopy(doc), start="converged"), "pure")
    runner.warm_up()
    return runner.cluster


def _program(manifest: dict, **extra):
    def program():
        from pulumi_lws import ModelServing

        ms = ModelServing("pd", {"manifest": manifest} | extra)
        for key in ("selector", "revision", "stage", "blocker", "remaining_stages", "actions", "status"):
            pulumi.export(key, getattr(ms, key))

    return program


def test_registers_every_manifest_with_the_reconciles_dependencies():
    result = run_program(_program(PD), EmptyObserver(), FakeActuator())
    expected = MS.reconcile(MS.parse(PD), EMPTY)

    def key(m):
        return (m["kind"], m["metadata"]["name"])

    assert sorted(map(key, result.manifests)) == sorted(map(key, expected.manifests))
    deps = {(k[0], k[-1]): {(d[0], d[-1]) for d in v} for k, v in result.dependencies.items() if v}
    want = {k: set(v) for k, v in expected.dependencies.items() if v}
    assert deps == want and want  # every depends_on is the reconcile's, and there are some
    assert result.outputs["stage"]["complete"] is False and result.outputs["revision"] == MS.target_revision(
        MS.parse(PD)
    )


@pulumi.runtime.test
def test_children_are_parented_to_the_component(mocks):
    from pulumi_lws import ModelServing

    with use_backend(EmptyObserver(), FakeActuator()):
        ms = ModelServing("pd", {"manifest": PD})

    def check(_):
        monitor = pulumi.runtime.settings.SETTINGS.monitor
        urns = (
            [str(u) for u in monitor.get_registered_resources()] if hasattr(monitor, "get_registered_resources") else []
        )
        children = [u for u in urns if "kubernetes:" in u]
        assert children and all("lws:index:ModelServing$kubernetes:" in u for u in children)
        assert len(ms.child_resources) == len(MS.reconcile(MS.parse(PD), EMPTY).manifests) == 25
        kinds = {a.typ for a in mocks.registered if a.custom}
        assert kinds == {
            "kubernetes:apps/v1:StatefulSet",
            "kubernetes:core/v1:Service",
            "kubernetes:apps/v1:ControllerRevision",
        }

    return pulumi.Output.all(ms.urn, *[c.urn for c in ms.child_resources]).apply(check)


def test_outputs_on_a_converged_cluster_then_mid_rollout():
    cluster = converged(PD)
    spec = MS.parse(PD)
    done = run_program(_program(PD), cluster, cluster).outputs
    assert (
        done["selector"]
        == done["status"]["labelSelector"]
        == (
            "modelserving.volcano.sh/entry=true,modelserving.volcano.sh/name=pd,"
            "modelserving.volcano.sh/role=prefill,modelserving.volcano.sh/role-id=prefill-0"
        )
    )
    assert done["revision"] == MS.target_revision(spec) and done["blocker"] is None
    assert done["stage"]["complete"] is True and done["stage"]["groups"] == "UUUU"
    status = done["status"]
    assert status["replicas"] == status["availableReplicas"] == status["updatedReplicas"] == 4
    assert status["updateRevision"] == MS.target_revision(spec)
    assert {"currentRevision", "conditions"} <= set(status)

    new = with_image(PD, NEW_IMAGE)
    moving = run_program(_program(new), cluster, cluster).outputs
    assert moving["revision"] == MS.target_revision(MS.parse(new)) != done["revision"]
    assert moving["stage"]["complete"] is False and moving["stage"]["groups"] == "ooou"  # R-3 first
    assert [p["groups"] for p in moving["remaining_stages"]][-1] == "UUUU"
    assert moving["status"]["updateRevision"] == moving["revision"]
    assert moving["status"]["currentRevision"] == done["revision"]


@pytest.mark.parametrize(
    "args, path",
    [
        ({"replicas": -1}, "spec.replicas"),
        ({"max_groups_in_flight": 0}, "maxGroupsInFlight"),
        ({"max_groups_in_flight": "two"}, "maxGroupsInFlight"),
        (
            {
                "manifest": {
                    **PD,
                    "metadata": {"name": "pd", "annotations": {"pulumi-lws.io/max-groups-in-flight": "0"}},
                }
            },
            "metadata.annotations[pulumi-lws.io/max-groups-in-flight]",
        ),
        ({"rollout_strategy": {"type": "Sideways"}}, "spec.rolloutStrategy.type"),
    ],
)
def test_invalid_args_raise_before_anything_registers(args, path):
    from pulumi_lws.components.args import build_spec

    with pytest.raises(SpecError) as exc:
        build_spec("ModelServing", "pd", {"manifest": PD, **args})
    assert any(e.path == path for e in exc.value.errors), exc.value.errors
    observer = RecordingObserver()
    with pytest.raises(SpecError):
        fields = {k: v for k, v in args.items() if k != "manifest"}
        run_program(_program(args.get("manifest", PD), **fields), observer, FakeActuator())
    assert observer.calls == 0


class RecordingObserver(EmptyObserver):
    def __init__(self) -> None:
        self.calls = 0

    def observe(self, scope):
        self.calls += 1
        return super().observe(scope)


def test_invalid_args_register_nothing(mocks):
    from pulumi_lws import ModelServing

    with use_backend(EmptyObserver(), FakeActuator()), pytest.raises(SpecError):
        ModelServing("pd", {"manifest": PD, "max_groups_in_flight": -3})
    assert mocks.registered == []


def test_max_groups_in_flight_caps_role_rolling_update():
    old = role_rolling(PD)
    new = with_image(old, NEW_IMAGE)
    free = run_program(_program(new), converged(old), FakeActuator()).outputs["stage"]["groups"]
    cluster = converged(old)
    capped = run_program(_program(new, max_groups_in_flight=1), cluster, cluster).outputs
    assert free.count("o") == 0  # upstream: every group rolls its roles at once
    assert capped["stage"]["groups"].count("o") == 3  # one ServingGroup in flight
    annotated = copy.deepcopy(new)
    annotated["metadata"]["annotations"] = {"pulumi-lws.io/max-groups-in-flight": "2"}
    by_annotation = run_program(_program(annotated), converged(old), FakeActuator()).outputs["stage"]["groups"]
    assert by_annotation.count("o") == 2
    both = run_program(_program(annotated, max_groups_in_flight=1), converged(old), FakeActuator()).outputs
    assert both["stage"]["groups"].count("o") == 3  # the argument wins over the annotation
