"""DisaggregatedSet component under Pulumi's mock engine with the real reconcile, against the
embedded cluster: children registered with ``parent=self`` and ``depends_on`` the reconcile's
dependencies, outputs (revision, stage with one old|new lane per role, blocker, status
roleStatuses + condition), invalid args raise SpecError before anything registers (nothing
observed, nothing registered), ``progress_deadline_seconds`` (the provider schema: tests/provider)."""

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
from pulumi_lws.disaggregatedset import reconcile as ds_reconcile
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
PD = yaml.safe_load((ROOT / "examples" / "disaggregated-pd" / "ds.yaml").read_text())
DS = workload_for("DisaggregatedSet")
NEW_IMAGE = "nginxinc/nginx-unprivileged:1.28"
OUTPUTS = ("revision", "stage", "blocker", "remaining_stages", "actions", "status")


def with_image(doc: dict, image: str) -> dict:
    out = copy.deepcopy(doc)
    for role in out["spec"]["roles"]:
        for c in role["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]:
            c["image"] = image
    return out


def converged(doc: dict):
    """The embedded cluster with ``doc`` rolled out and ready."""
    runner = Runner(Scenario(name="pd", engine="pure", manifest=copy.deepcopy(doc), start="converged"), "pure")
    runner.warm_up()
    return runner.cluster


def _program(manifest: dict, **extra):
    def program():
        from pulumi_lws import DisaggregatedSet

        ds = DisaggregatedSet("pd", {"manifest": manifest} | extra)
        for key in OUTPUTS:
            pulumi.export(key, getattr(ds, key))

    return program


def lanes(outputs: dict) -> dict[str, tuple[int, int, int, int]]:
    return {r["name"]: (r["old"], r["new"], r["oldReady"], r["newReady"]) for r in outputs["stage"]["roles"]}


def test_registers_every_manifest_with_the_reconciles_dependencies():
    result = run_program(_program(PD), EmptyObserver(), FakeActuator())
    expected = DS.reconcile(DS.parse(PD), EMPTY)

    def key(m):
        return (m["kind"], m["metadata"]["name"])

    assert sorted(map(key, result.manifests)) == sorted(map(key, expected.manifests))
    deps = {(k[0], k[-1]): {(d[0], d[-1]) for d in v} for k, v in result.dependencies.items() if v}
    want = {k: set(v) for k, v in expected.dependencies.items() if v}
    assert deps == want and want  # every depends_on is the reconcile's, and there are some
    out = result.outputs
    assert out["stage"]["complete"] is False and out["revision"] == DS.target_revision(DS.parse(PD))
    assert lanes(out) == {"prefill": (0, 6, 0, 0), "decode": (0, 2, 0, 0)}


@pulumi.runtime.test
def test_children_are_parented_to_the_component(mocks):
    from pulumi_lws import DisaggregatedSet

    with use_backend(EmptyObserver(), FakeActuator()):
        ds = DisaggregatedSet("pd", {"manifest": PD})

    def check(_):
        monitor = pulumi.runtime.settings.SETTINGS.monitor
        urns = (
            [str(u) for u in monitor.get_registered_resources()] if hasattr(monitor, "get_registered_resources") else []
        )
        children = [u for u in urns if "kubernetes:" in u]
        assert children and all("lws:index:DisaggregatedSet$kubernetes:" in u for u in children)
        assert len(ds.child_resources) == len(DS.reconcile(DS.parse(PD), EMPTY).manifests)
        kinds = {a.typ for a in mocks.registered if a.custom}
        assert kinds == {
            "kubernetes:apps/v1:StatefulSet",
            "kubernetes:core/v1:Service",
            "kubernetes:apps/v1:ControllerRevision",
        }
        component = [a for a in mocks.registered if not a.custom]
        assert [a.typ for a in component] == ["lws:index:DisaggregatedSet"]

    return pulumi.Output.all(ds.urn, *[c.urn for c in ds.child_resources]).apply(check)


def test_outputs_on_a_converged_cluster_then_mid_rollout():
    cluster = converged(PD)
    spec = DS.parse(PD)
    done = run_program(_program(PD), cluster, cluster).outputs
    assert done["revision"] == DS.target_revision(spec) and done["blocker"] is None
    assert done["stage"]["complete"] is True and done["stage"]["policy"] == "disaggregatedset"
    assert lanes(done) == {"prefill": (0, 6, 0, 6), "decode": (0, 2, 0, 2)}
    status = done["status"]
    assert status["roleStatuses"] == [
        {"name": "prefill", "replicas": 6, "readyReplicas": 6, "updatedReplicas": 6},
        {"name": "decode", "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2},
    ]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Available", "True", "AllRolesReady")
    ]

    new = with_image(PD, NEW_IMAGE)
    first = run_program(_program(new), cluster, cluster)
    moving = first.outputs
    assert moving["revision"] == DS.target_revision(DS.parse(new)) != done["revision"]
    assert moving["stage"]["complete"] is False and moving["blocker"] is None
    before = lanes(moving)
    assert {r: v[0] for r, v in before.items()} == {"prefill": 6, "decode": 2}  # old capacity all there
    assert before["prefill"][1] >= 1 and before["decode"][1] >= 1  # both roles' new children started
    assert moving["remaining_stages"]  # the lockstep prediction
    conditions = {c["type"]: (c["status"], c["reason"]) for c in moving["status"]["conditions"]}
    assert conditions["Progressing"] == ("True", "RolloutInProgress")
    assert conditions.get("Available", ("False",))[0] == "False"
    assert {r["name"]: r["updatedReplicas"] for r in moving["status"]["roleStatuses"]} == {"prefill": 0, "decode": 0}

    # what that `up` declared, applied: the new children exist, and the next up reads them back
    cluster.apply(first.manifests, dependencies=first.dependencies)
    again = run_program(_program(new), cluster, cluster).outputs
    assert again["revision"] == moving["revision"]
    assert all(lanes(again)[r][1] >= before[r][1] for r in before)
    assert [r["name"] for r in again["status"]["roleStatuses"]] == ["prefill", "decode"]
    assert sum(r["updatedReplicas"] for r in again["status"]["roleStatuses"]) >= 2


class RecordingObserver(EmptyObserver):
    def __init__(self) -> None:
        self.calls = 0

    def observe(self, scope):
        self.calls += 1
        return super().observe(scope)


def _role(doc: dict, i: int) -> dict:
    return doc["spec"]["roles"][i]


def _bad(edit) -> dict:
    doc = copy.deepcopy(PD)
    edit(doc)
    return doc


@pytest.mark.parametrize(
    "args, path",
    [
        ({"slices": 0}, "spec.slices"),
        ({"roles": [copy.deepcopy(PD["spec"]["roles"][0])]}, "spec.roles"),
        ({"manifest": _bad(lambda d: _role(d, 0)["spec"].update(replicas=-1))}, "spec.roles[0].spec.replicas"),
        ({"manifest": _bad(lambda d: _role(d, 1).update(name="Decode"))}, "spec.roles[1].name"),
        (
            {
                "manifest": _bad(
                    lambda d: _role(d, 0)["spec"].update(
                        rolloutStrategy={"rollingUpdateConfiguration": {"partition": 1}}
                    )
                )
            },
            "spec.roles[0].spec.rolloutStrategy.rollingUpdateConfiguration.partition",
        ),
        ({"placement_policy": {"type": "ExclusiveSlice"}}, "spec.placementPolicy.topology"),
        ({"progress_deadline_seconds": -1}, "progressDeadlineSeconds"),
        ({"progress_deadline_seconds": "soon"}, "progressDeadlineSeconds"),
    ],
)
def test_invalid_args_raise_before_anything_registers(args, path):
    from pulumi_lws.components.args import build_spec

    with pytest.raises(SpecError) as exc:
        build_spec("DisaggregatedSet", "pd", {"manifest": PD, **args})
    assert any(e.path == path for e in exc.value.errors), exc.value.errors
    observer, actuator = RecordingObserver(), FakeActuator()
    fields = {k: v for k, v in args.items() if k != "manifest"}
    with pytest.raises(SpecError):
        run_program(_program(args.get("manifest", PD), **fields), observer, actuator)
    assert observer.calls == 0 and actuator.calls == []


def test_invalid_args_register_nothing(mocks):
    from pulumi_lws import DisaggregatedSet

    with use_backend(EmptyObserver(), FakeActuator()), pytest.raises(SpecError):
        DisaggregatedSet("pd", {"manifest": PD, "slices": 101})
    assert mocks.registered == []


def test_progress_deadline_seconds_argument_reaches_the_reconcile(monkeypatch):
    seen: list[float | None] = []
    real = ds_reconcile.reconcile

    def spy(ds, snapshot, options=None):
        options = options or ds_reconcile.DisaggregatedSetOptions()
        seen.append(ds_reconcile.progress_deadline(ds, options))
        return real(ds, snapshot, options)

    monkeypatch.setattr(ds_reconcile, "reconcile", spy)
    annotated = copy.deepcopy(PD)
    annotated["metadata"]["annotations"] = {ds_reconcile.PROGRESS_DEADLINE_ANNOTATION: "120"}
    for manifest, extra in (
        (PD, {}),
        (PD, {"progress_deadline_seconds": 30}),
        (annotated, {}),
        (annotated, {"progress_deadline_seconds": 45}),
        (annotated, {"progress_deadline_seconds": 0}),
    ):
        run_program(_program(manifest, **extra), EmptyObserver(), FakeActuator())
    # default 600; the argument; the annotation; the argument wins over the annotation; 0 disables
    assert seen == [600.0, 30.0, 120.0, 45.0, None]


def test_a_new_revision_never_ready_is_a_named_blocker_after_the_deadline(monkeypatch):
    """The deadline the argument sets is the one the stage planner enforces: with 0 s elapsed
    allowed (1 s deadline, the clock moved on) a not-ready new revision is reported by name."""
    cluster = converged(PD)
    new = with_image(PD, NEW_IMAGE)
    first = run_program(_program(new), cluster, cluster)
    cluster.apply(first.manifests, dependencies=first.dependencies)  # new children created
    real = ds_reconcile.reconcile

    def later(ds, snapshot, options=None):
        from pulumi_lws.core.contract.snapshot import Snapshot

        options = options or ds_reconcile.DisaggregatedSetOptions()
        # every new pod as not ready, an hour after it was created
        objs = []
        for o in snapshot.objects.values():
            o = copy.deepcopy(dict(o))
            if o["kind"] == "Pod" and o["metadata"]["labels"].get(
                "disaggregatedset.x-k8s.io/revision"
            ) == DS.target_revision(ds):
                o["status"] = {"phase": "Pending"}
            objs.append(o)
        return real(ds, Snapshot.of(objs, now=snapshot.now + 3600), options)

    monkeypatch.setattr(ds_reconcile, "reconcile", later)
    out = run_program(_program(new, progress_deadline_seconds=1), cluster, FakeActuator()).outputs
    assert out["blocker"] and out["blocker"].startswith("progress-deadline-exceeded"), out["blocker"]
    assert {r: v[0] for r, v in lanes(out).items()} == {"prefill": 6, "decode": 2}  # old capacity kept
    relaxed = run_program(_program(new, progress_deadline_seconds=0), cluster, FakeActuator()).outputs
    assert not (relaxed["blocker"] or "").startswith("progress-deadline-exceeded")
