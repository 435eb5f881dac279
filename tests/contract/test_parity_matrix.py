"""The parity matrix: every registered API x every shell feature (issue 23). A feature one API
lacks fails its cell here.

Rows are the registered APIs (:func:`pulumi_lws.core.contract.workload.registered`) plus the test-only
``ToyServer`` (tests/support/toy_workload.py), registered for each of its cells only: it proves
that a fourth API gets every feature without a line in a shell. Every API needs one sample
manifest (:data:`SAMPLES`; an API without one fails :func:`test_every_registered_api_has_a_sample`);
its NEW revision is the sample with every container image changed (:func:`changed`).

Columns: render (first stage, steady state), plan (table, json, markdown, ``--diff``, ``--objects``),
simulate ``--from/--to``, the component under the mock engine (operator-free to convergence,
controller mode), status, rollback, RBAC (both modes), the provider schema (the API's component
serves every argument its facts name), and the bad-input families of tests/support/malformed.py (every
CLI entry point exits 2 naming the field; the component registers nothing).
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import REPO_ROOT, fresh_mock_runtime, validate_manifest
from support.fakes_component import FakeActuator
from support.harness import WorkloadHarness
from support.malformed import assert_rejected, recording_mocks, write_manifest
from support.toy_workload import KIND as TOY_KIND
from support.toy_workload import SAMPLE as TOY_SAMPLE
from support.toy_workload import toy_registered

from pulumi_lws import rbac
from pulumi_lws.backend import use_backend
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.workloads import registered, workload_for

EXAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}
SAMPLES: dict[str, dict[str, Any]] = {
    **{kind: yaml.safe_load((REPO_ROOT / "examples" / path).read_text()) for kind, path in EXAMPLES.items()},
    TOY_KIND: TOY_SAMPLE,
}
KINDS = [*sorted(registered()), TOY_KIND]


@contextlib.contextmanager
def api(kind: str) -> Iterator[Any]:
    """The API of ``kind``, registered (the toy only for the block)."""
    if kind == TOY_KIND:
        with toy_registered() as workload:
            yield workload
    else:
        yield workload_for(kind)


def sample(kind: str) -> dict[str, Any]:
    return copy.deepcopy(SAMPLES[kind])


def changed(doc: Any) -> Any:
    """``doc`` with every container image changed (a new revision for any API)."""
    if isinstance(doc, dict):
        return {k: (f"{v}-new" if k == "image" and isinstance(v, str) else changed(v)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [changed(v) for v in doc]
    return doc


def component_class(kind: str) -> type:
    from pulumi_lws.components.base import registered_components
    from pulumi_lws.provider.schema import components

    components()  # imports the built-in component modules
    return registered_components()[kind]


def test_every_registered_api_has_a_sample() -> None:
    assert set(registered()) <= set(SAMPLES), "add a sample manifest of the new API to SAMPLES"


def test_the_toy_is_in_the_matrix_only_while_registered() -> None:
    assert TOY_KIND not in registered()
    with toy_registered():
        assert TOY_KIND in registered()
    assert TOY_KIND not in registered()


# -- render, plan, simulate


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stage", ["first", "steady"])
def test_render(kind, stage, tmp_path, capsys) -> None:
    path = write_manifest(tmp_path, "w.yaml", sample(kind))
    with api(kind):
        assert main(["render", path, *(["--stage", "steady"] if stage == "steady" else [])]) == X.OK
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert docs and all(d["kind"] != kind for d in docs)  # expanded into native objects
    for doc in docs:
        validate_manifest(doc)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "diff", "objects"])
def test_plan(kind, fmt, tmp_path, capsys) -> None:
    old = write_manifest(tmp_path, "old.yaml", sample(kind))
    new = write_manifest(tmp_path, "new.yaml", changed(sample(kind)))
    flags = {"diff": ["--diff"], "objects": ["--objects", "--format", "json"]}.get(fmt, ["--format", fmt])
    with api(kind):
        assert main(["plan", old, new, *flags]) == X.OK
    out = capsys.readouterr().out
    if fmt == "json":
        rows = json.loads(out)["rows"]
        assert len(rows) >= 2  # before the change, then at least one stage of the rollout
    elif fmt == "markdown":
        assert "| Stage" in out or "|Stage" in out
    elif fmt == "diff":
        assert "-new" in out  # the changed image in a per-stage object diff
    elif fmt == "objects":
        ups = json.loads(out)["objects"]["ups"]
        assert ups and ups[0]["up"] == 1 and ups[0]["created"] + ups[0]["updated"] > 0  # each up's object changes
    else:
        assert "Stage 1" in out and "Stage 2" in out


@pytest.mark.parametrize("kind", KINDS)
def test_simulate(kind, tmp_path, capsys) -> None:
    old = write_manifest(tmp_path, "old.yaml", sample(kind))
    new = write_manifest(tmp_path, "new.yaml", changed(sample(kind)))
    with api(kind):
        assert main(["simulate", "--from", old, "--to", new]) == X.OK
    out = capsys.readouterr().out
    assert "converged" in out and " 0 invariant violations" in out


# -- the component under the mock engine


def _program(kind: str, manifest: dict[str, Any], **extra: Any):
    import pulumi

    def run() -> None:
        c = component_class(kind)("w", {"manifest": manifest, **extra})
        for key in ("revision", "stage", "blocker", "remaining_stages", "actions", "status"):
            pulumi.export(key, getattr(c, key))

    return run


@pytest.mark.parametrize("kind", KINDS)
def test_component_converges_operator_free(kind) -> None:
    with api(kind) as workload:
        cluster = SimCluster()
        cluster.kubelet.config.instant = True
        for version, doc in enumerate((sample(kind), changed(sample(kind)))):
            for _ in range(40):
                result = run_program(_program(kind, doc), cluster, cluster)
                cluster.apply(result.manifests, stack_id="matrix", dependencies=result.dependencies)
                cluster.settle()
                cluster.step(cluster.clock.now + 1.0)
                if result.outputs["stage"]["complete"] and not result.outputs["actions"]:
                    break
            else:
                raise AssertionError(f"{kind} v{version} did not converge: {result.outputs['stage']}")
            assert result.outputs["revision"] == workload.target_revision(workload.parse(doc))
            assert isinstance(result.outputs["status"], dict) and result.outputs["status"]
        for m in result.manifests:
            validate_manifest(m)


@pytest.mark.parametrize("kind", KINDS)
def test_component_controller_mode(kind) -> None:
    from pulumi_lws.core.contract.ports import EmptyObserver

    with api(kind) as workload:
        result = run_program(_program(kind, sample(kind), mode="controller"), EmptyObserver(), FakeActuator())
    [cr] = result.manifests
    assert (cr["apiVersion"], cr["kind"], cr["spec"]) == (workload.api_version, kind, sample(kind)["spec"])
    assert cr["metadata"]["annotations"]["pulumi.com/waitFor"] == f"condition={workload.upstream.ready_condition}"


# -- status, rollback (the simulator as the cluster)


class Harness(WorkloadHarness):
    def __init__(self, workload: Any, manifest: dict[str, Any]) -> None:
        super().__init__(SimCluster(kubelet=KubeletConfig(default=Timing(1.0, 1.0))), manifest)
        self.WORKLOAD = workload  # type: ignore[misc]

    def converged(self) -> bool:
        return bool(self.last is not None and self.last.stage.complete and not self.last.stage.actions)

    def check(self) -> None:  # the simulator's invariants are checked by test_simulate
        pass


@pytest.mark.parametrize("kind", KINDS)
def test_status(kind, tmp_path, capsys) -> None:
    with api(kind) as workload:
        h = Harness(workload, sample(kind))
        h.warm_up()
        path = write_manifest(tmp_path, "w.yaml", sample(kind))
        with use_backend(h.cluster, h.cluster):
            assert main(["status", path]) == X.OK
            out = capsys.readouterr().out
            assert workload.identity(h.spec)[1] in out
            assert main(["status", path, "--format", "json"]) == X.OK
            assert json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", KINDS)
def test_rollback(kind, tmp_path, capsys) -> None:
    with api(kind) as workload:
        h = Harness(workload, sample(kind))
        h.warm_up()
        h.change_spec(changed(sample(kind)))
        for _ in range(2):
            h.up()
            h.advance(1.0)
        path = write_manifest(tmp_path, "w.yaml", changed(sample(kind)))
        with use_backend(h.cluster, h.cluster):
            assert main(["rollback", path, "--apply"]) == X.OK, capsys.readouterr().err
        rolled = yaml.safe_load(open(path).read())
        assert workload.target_revision(workload.parse(rolled)) == workload.target_revision(
            workload.parse(sample(kind))
        )


@pytest.mark.parametrize("kind", KINDS)
def test_capacity_check(kind, tmp_path, capsys) -> None:
    """The opt-in capacity check holds any API's first stage on nodes with no room for a pod (``pods:
    0``): the generic check of core.features.fit, through the driver, the status command and the
    RBAC; without the opt-in the same cluster changes nothing."""
    from pulumi_lws.core.contract.driver import cycle
    from pulumi_lws.core.contract.snapshot import NodeCapacity
    from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY

    full = {"kind": "Node", "metadata": {"name": "full"}, "status": {"allocatable": {"cpu": "64", "pods": "0"}}}

    class NoRoom:
        def observe(self, scope):
            return Snapshot({}, 0.0, NodeCapacity.of([full], []) if scope.capacity else None)

    with api(kind) as workload:
        spec = workload.parse(sample(kind))
        held = cycle(workload, spec, workload.options(), NoRoom(), check_capacity=True)
        plain = cycle(workload, spec, workload.options(), NoRoom())
        policy = rbac.policy_for_manifest(sample(kind), check_capacity=True)
    assert held.stage.blocker is not None and held.stage.blocker.code == INSUFFICIENT_CAPACITY
    assert (
        held.stage.blocker.message.startswith("the new pods need ")
        and " pods; 0 are free" in held.stage.blocker.message
    )
    assert held.reconciled.manifests == () and plain.reconciled.manifests
    assert policy.allows("", "nodes", "list", cluster=True) and policy.allows("", "pods", "list", cluster=True)


# -- RBAC, provider schema


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", [rbac.OPERATOR_FREE, rbac.CONTROLLER])
def test_rbac(kind, mode) -> None:
    with api(kind) as workload:
        text = rbac.rbac_yaml([sample(kind)], mode=mode)
        policy = rbac.policy_for_manifest(sample(kind), mode=mode)
        kinds = rbac.kinds()
        declared = {(kinds[rbac.key_of(k)].group, kinds[rbac.key_of(k)].plural) for k in workload.rbac.renders}
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [d["kind"] for d in docs][:2] == ["Role", "RoleBinding"]
    for doc in docs:
        validate_manifest(doc)
    created = {(g.group, g.resource) for g in policy.grants if g.verb == "create" and g.who == rbac.PULUMI_KUBERNETES}
    if mode == rbac.CONTROLLER:
        assert created == {(workload.upstream.group, workload.upstream.plural)}
    else:  # pulumi-kubernetes creates only what the API's facts say it renders
        assert created and created <= declared


@pytest.mark.parametrize("kind", KINDS)
def test_provider_schema(kind) -> None:
    from pulumi_lws.components.args import _camel
    from pulumi_lws.provider.schema import package_schema

    with api(kind) as workload:
        schema = package_schema()
    resource = schema["resources"][f"lws:index:{kind}"]
    inputs = set(resource["inputProperties"])
    assert {_camel(n) for n in workload.arguments.known} | {"mode"} <= inputs  # the typed module takes every argument
    assert {"revision", "stage", "blocker", "remainingStages", "actions", "status"} <= set(resource["properties"])


# -- bad input (the families of tests/support/malformed.py)

#: family -> (how to break a valid manifest, the field the error names)
BAD = {
    "wrong-api-version": (lambda d: {**d, "apiVersion": "example.com/v9"}, "apiVersion"),
    "metadata-not-an-object": (lambda d: {**d, "metadata": "web"}, "metadata"),
    "spec-not-an-object": (lambda d: {**d, "spec": ["not", "an", "object"]}, "spec"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", sorted(BAD))
def test_bad_input_every_cli_entry_point_exits_2_naming_the_field(kind, family, tmp_path, capsys) -> None:
    breaks, field = BAD[family]
    good = write_manifest(tmp_path, "good.yaml", sample(kind))
    bad = write_manifest(tmp_path, "bad.yaml", breaks(sample(kind)))
    with api(kind):
        assert_rejected(
            capsys,
            (
                ["render", bad],
                ["render", bad, "--stage", "steady"],
                ["plan", good, bad],
                ["simulate", "--from", good, "--to", bad],
            ),
            field,
        )


class _Observer:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def observe(self, scope: Any) -> Snapshot:
        self.calls.append(scope)
        return Snapshot.of([])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", sorted(BAD))
def test_bad_input_the_component_registers_nothing(kind, family) -> None:
    breaks, field = BAD[family]
    registrations: list[Any] = []
    with api(kind):
        cls = component_class(kind)
        fresh_mock_runtime(recording_mocks(registrations))
        observer = _Observer()
        with use_backend(observer, FakeActuator()), pytest.raises(SpecError) as info:
            cls("bad", {"manifest": breaks(sample(kind))})
    assert registrations == [] and observer.calls == []
    assert any(e.path.startswith(field) for e in info.value.errors), [str(e) for e in info.value.errors]


# -- per-pod values (issue 28): the shell's API-discovery refusal and the mode line are generic

#: how each API turns on per-pod values at admission; None: not applicable, and why
PER_POD_ADMISSION = {
    "LeaderWorkerSet": lambda d: {
        **d,
        "metadata": {**d["metadata"], "annotations": {"pulumi-lws.io/per-pod-values": "admission-policy"}},
    },
    "DisaggregatedSet": lambda d: {
        **d,
        "spec": {
            **d["spec"],
            "roles": [
                {**r, "metadata": {"annotations": {"pulumi-lws.io/per-pod-values": "admission-policy"}}}
                for r in d["spec"]["roles"]
            ],
        },
    },
    # not applicable: Kthena's controller (and pulumi-lws in its place) creates every pod itself, so
    # each pod is rendered with its own values; there is no shared template to complete at admission
    "ModelServing": None,
    TOY_KIND: None,  # the toy renders no pod template
}


def _policy_apis(workload, spec) -> list[str]:
    """The per-pod values policy kinds ``spec`` requires (its gang APIs are another requirement)."""
    return [kind for _, kind, _ in workload.required_apis(spec) if kind.startswith("MutatingAdmissionPolicy")]


@pytest.mark.parametrize("kind", KINDS)
def test_per_pod_values_requirements_and_mode_notes(kind) -> None:
    assert kind in PER_POD_ADMISSION, f"say how {kind} gives per-pod values (or why not)"
    with api(kind) as workload:
        spec = workload.parse(sample(kind))
        assert _policy_apis(workload, spec) == [] and dict(workload.mode_notes(spec)) == {}
        turn_on = PER_POD_ADMISSION[kind]
        if turn_on is None:
            return
        spec = workload.parse(turn_on(sample(kind)))
        assert _policy_apis(workload, spec) == ["MutatingAdmissionPolicy"]
        assert "admission-policy" in workload.mode_notes(spec)["perPodValues"]
