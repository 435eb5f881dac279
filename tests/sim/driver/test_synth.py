"""The synthesised converged fleet (``sim/driver/synth.py``) is the simulated one: for every API,
over every example, upstream sample and golden input the CLI tests use, and over generated specs
(hypothesis), the converged snapshot is the simulator's object for object (but the
``resourceVersion`` the simulator counts), and ``render --stage steady`` and ``plan`` (table,
json, the demand line) print byte for byte what they print with the simulator's warm-up."""

from __future__ import annotations

import contextlib
import copy
import io
import pathlib
import tempfile
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
import yaml
from conftest import TESTS_DIR
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pulumi_lws.cli import main
from pulumi_lws.cli import plan as plan_command
from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.yamlio import read_documents
from pulumi_lws.sim.driver import synth
from pulumi_lws.sim.driver.change import converged_snapshot
from pulumi_lws.sim.driver.expansion import steady_state
from pulumi_lws.sim.driver.timeline import WarmUpBlocked
from pulumi_lws.workloads import workload_of

ROOT = TESTS_DIR.parent
SAMPLE_FILES = sorted(
    [
        *ROOT.glob("examples/*/*.yaml"),
        ROOT / "examples" / "operator" / "program" / "lws.yaml",
        *(TESTS_DIR / "manifests_upstream").glob("*.yaml"),
        *(TESTS_DIR / "manifests_upstream_kthena").glob("*.yaml"),
        *(TESTS_DIR / "manifests_upstream_ds").glob("*.yaml"),
        *(TESTS_DIR / "golden" / "ordinal" / "inputs").glob("*.yaml"),
    ]
)
#: where the simulator runs, and why (every other sample is synthesised)
SIMULATED = {
    "hash/lws.yaml": "Hash identity: leaders are a Deployment's pods",
    "config_samples_leaderworkerset_exclusiveplacement.yaml": "exclusive topology needs Nodes",
    "docs_examples_sample_lws-exclusive-placement.yaml": "exclusive topology needs Nodes",
    "exclusive-topology.yaml": "exclusive topology needs Nodes",
    "docs_examples_sample_lws-volume-claim-templates.yaml": "volumeClaimTemplates (claims)",
    "volume-claim-templates.yaml": "volumeClaimTemplates (claims)",
}


def _simulated(label: str) -> bool:
    file = label.split(":")[0]
    return file in SIMULATED or file.split("/")[-1] in SIMULATED


def _workload_docs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in SAMPLE_FILES:
        try:
            docs = read_documents(path)
        except Exception:  # not a manifest file (CI workflow, Pulumi.yaml)
            continue
        for doc in docs:
            if isinstance(doc, dict) and workload_of(doc) is not None:
                try:
                    workload_of(doc).parse(copy.deepcopy(doc))
                except SpecError:
                    continue  # a mirrored sample upstream accepts and this project refuses
                out.append((f"{path.parent.name}/{path.name}:{doc['metadata'].get('name')}", doc))
    return out


DOCS = _workload_docs()


@contextlib.contextmanager
def simulated() -> Iterator[None]:
    """Every caller of the synthesiser falls back to the simulator."""
    with mock.patch.object(synth, "converge", lambda *a, **k: None):
        yield


@contextlib.contextmanager
def counting() -> Iterator[list[bool]]:
    """The synthesiser as is, recording whether each call synthesised."""
    calls: list[bool] = []
    real = synth.converge

    def spy(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        calls.append(done is not None)
        return done

    with mock.patch.object(synth, "converge", spy):
        yield calls


def normalised(snapshot: Any) -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """The snapshot's objects in order, without ``resourceVersion``."""
    out = []
    for key, obj in snapshot.objects.items():
        meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
        out.append((key, {**obj, "metadata": meta}))
    return out


def cli(*argv: str) -> tuple[int, str, str]:
    plan_command._CONVERGED.clear()  # one warm-up per process otherwise
    plan_command._RECONCILED.clear()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def next_images(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy with every container image changed."""
    out = copy.deepcopy(doc)

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "image" and isinstance(v, str):
                    value[k] = v + "-next"
                else:
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(out)
    return out


def _outcome(fn: Any) -> Any:
    """``fn()``, or the exception it raised (type and message: a warm-up that never converges)."""
    try:
        return fn()
    except WarmUpBlocked as exc:
        return (type(exc), str(exc))


def assert_same(doc: dict[str, Any], *, gang: str | None = None) -> bool:
    """Both paths agree on ``doc`` (snapshot, steady state, render, plan); True when synthesised."""
    with counting() as calls:
        synthesised = _outcome(lambda: normalised(converged_snapshot(doc, doc)))
    reference = _outcome(lambda: normalised(converged_snapshot(doc, doc, synthesise=False)))
    assert synthesised == reference
    a = steady_state(doc, gang_provider=gang)
    b = steady_state(doc, gang_provider=gang, synthesise=False)
    assert (a.reconciled, a.reconciles, a.converged, a.pool) == (b.reconciled, b.reconciles, b.converged, b.pool)
    with tempfile.TemporaryDirectory() as tmp:
        old, new = pathlib.Path(tmp) / "old.yaml", pathlib.Path(tmp) / "new.yaml"
        old.write_text(yaml.safe_dump(doc, sort_keys=False))
        new.write_text(yaml.safe_dump(next_images(doc), sort_keys=False))
        commands = [
            ("render", str(old), "--stage", "steady", *(("--gang-provider", gang) if gang else ())),
            ("plan", str(old), str(new)),
            ("plan", str(old), str(new), "--format", "json"),
        ]
        for argv in commands:
            fast = cli(*argv)
            with simulated():
                slow = cli(*argv)
            assert fast == slow, argv
    return bool(calls and calls[0])


@pytest.mark.parametrize("label, doc", DOCS, ids=[label for label, _ in DOCS])
def test_every_sample_gives_the_simulators_state_and_output(label: str, doc: dict[str, Any]) -> None:
    used = assert_same(doc)
    expected = not _simulated(label)
    assert used == expected, f"{label}: synthesised {used}, expected {expected}"


def test_every_api_is_synthesised_somewhere() -> None:
    kinds = {doc["kind"] for label, doc in DOCS if not _simulated(label)}
    assert kinds == {"LeaderWorkerSet", "ModelServing", "DisaggregatedSet"}


@pytest.mark.parametrize("gang", ["volcano", "kubernetes"])
def test_gang_objects_of_either_provider(gang: str) -> None:
    doc = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "inf"},
        "spec": {
            "replicas": 2,
            "scheduling": {},
            "leaderWorkerTemplate": {
                "size": 3,
                "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "a"}]}},
            },
        },
    }
    assert_same(doc, gang=gang)


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "ModelServing", "DisaggregatedSet"])
def test_a_last_round_that_wrote_nothing_is_the_final_reconcile(kind: str) -> None:
    """``Converged.fixed_point`` (what ``steady_state`` returns instead of reconciling again) is
    the last round's reconcile exactly when neither its apply nor its actions wrote anything, and
    then equals a fresh reconcile of the cluster."""
    versions: list[int] = []  # the cluster's version at each observe: a round's reconcile, then its view
    real_observe = synth.SynthCluster.observe

    def observe(cluster: synth.SynthCluster, scope: Any) -> Any:
        versions.append(cluster.version)
        return real_observe(cluster, scope)

    fixed = 0
    for label, doc in DOCS:
        if doc["kind"] != kind or _simulated(label):
            continue
        workload = workload_of(doc)
        spec = workload.parse(copy.deepcopy(doc))
        options = workload.options()
        versions.clear()
        with mock.patch.object(synth.SynthCluster, "observe", observe):
            done = synth.converge(workload, spec, options, check_capacity=False)
        if done is None:
            continue
        still = versions[-2] == versions[-1]
        assert (done.fixed_point is not None) == still, label
        if still:
            fixed += 1
            again = workload.reconcile(spec, done.cluster.observe(workload.scope(spec, nodes=False)), options)
            assert done.fixed_point == again, label
    # the last round of every LeaderWorkerSet and DisaggregatedSet labels pods (the webhook's
    # labels, as actions): only ModelServing's stands still
    assert (fixed > 0) == (kind == "ModelServing")


def test_an_observation_is_read_again_only_while_nothing_was_written() -> None:
    """The same scope observed again with no write since gets the very same snapshot (a round's
    view and the next round's reconcile, the final reconcile of ``steady_state``); any write, or
    another scope, gets a fresh one that shows it."""
    from pulumi_lws.core.contract.stage import Action

    doc = next(d for label, d in DOCS if d["kind"] == "LeaderWorkerSet" and not _simulated(label))
    workload = workload_of(doc)
    spec = workload.parse(copy.deepcopy(doc))
    done = synth.converge(workload, spec, workload.options(), check_capacity=False)
    assert done is not None
    cluster, scope = done.cluster, workload.scope(spec, nodes=False)
    first = cluster.observe(scope)
    assert cluster.observe(scope) is first
    other = workload.scope(spec, nodes=False)
    other = type(other)(other.namespace, {**other.selector}, other.kinds[:1])
    assert cluster.observe(other) is not first
    pod = next(o for o in first.list("Pod"))
    name = pod["metadata"]["name"]
    namespace, _ = workload.identity(spec)
    cluster.execute(namespace, [Action("label", "Pod", name, {"labels": {"seen": "yes"}})])
    after = cluster.observe(scope)
    assert after is not first
    assert after.get("Pod", name)["metadata"]["labels"]["seen"] == "yes"
    assert "seen" not in first.get("Pod", name)["metadata"].get("labels", {})


def test_a_pool_and_the_capacity_check_are_simulated() -> None:
    doc = next(d for label, d in DOCS if label.startswith("quickstart/"))
    with counting() as calls:
        steady_state(doc, nodes=4)
        assert calls == []  # Nodes: never asked
        annotated = copy.deepcopy(doc)
        annotated["metadata"].setdefault("annotations", {})["pulumi-lws.io/check-capacity"] = "true"
        converged_snapshot(annotated, annotated)
    assert calls == [False]


def test_a_fourth_api_falls_back_to_the_simulator() -> None:
    from support.toy_workload import API_VERSION, KIND, registered_temporarily

    doc = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "toy"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}},
    }
    with registered_temporarily():
        with counting() as calls:
            fast = steady_state(doc)
        slow = steady_state(doc, synthesise=False)
    assert calls == [False]  # its groups are Deployments: the simulator runs their controllers
    assert (fast.reconciled, fast.reconciles, fast.converged) == (slow.reconciled, slow.reconciles, slow.converged)


# ---- generated specs ---------------------------------------------------------------------------
def _container(draw: Any, name: str, image: str) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    if draw(st.booleans()):
        c["resources"] = {"requests": {"cpu": draw(st.sampled_from(["100m", "1"]))}}
    return c


@st.composite
def lws_specs(draw: Any) -> dict[str, Any]:
    size = draw(st.integers(1, 4))
    replicas = draw(st.integers(0, 4))
    lwt: dict[str, Any] = {"size": size, "workerTemplate": {"spec": {"containers": [_container(draw, "w", "w:1")]}}}
    if draw(st.booleans()):
        lwt["leaderTemplate"] = {"spec": {"containers": [_container(draw, "l", "l:1")]}}
    if draw(st.booleans()):
        lwt["restartPolicy"] = draw(st.sampled_from(["RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"]))
    if size > 1 and draw(st.booleans()):
        lwt["subGroupPolicy"] = {
            "subGroupPolicyType": draw(st.sampled_from(["LeaderWorker", "LeaderExcluded"])),
            "subGroupSize": draw(st.integers(1, size)),
        }
    spec: dict[str, Any] = {"replicas": replicas, "leaderWorkerTemplate": lwt}
    if draw(st.booleans()):
        spec["startupPolicy"] = draw(st.sampled_from(["LeaderCreated", "LeaderReady"]))
    hash_identity = draw(st.booleans())
    if hash_identity:
        spec["groupIdentity"] = "Hash"
    ruc: dict[str, Any] = {
        "maxUnavailable": draw(st.sampled_from([0, 1, 2, "50%"])),
        "maxSurge": draw(st.sampled_from([0, 1, "25%"])),
    }
    if not hash_identity:
        ruc["partition"] = draw(st.integers(0, replicas))
    spec["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdateConfiguration": ruc}
    if draw(st.booleans()):
        spec["networkConfig"] = {"subdomainPolicy": draw(st.sampled_from(["Shared", "UniquePerReplica"]))}
    if draw(st.booleans()):
        spec["scheduling"] = {}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "gen", "namespace": "default"},
        "spec": spec,
    }


@st.composite
def ms_specs(draw: Any) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(["prefill", "decode", "router"]), min_size=1, max_size=2, unique=True))
    roles = []
    for name in names:
        role: dict[str, Any] = {
            "name": name,
            "replicas": draw(st.integers(0, 2)),
            "workerReplicas": draw(st.integers(0, 2)),
            "entryTemplate": {"spec": {"containers": [_container(draw, "e", f"{name}:1")]}},
        }
        if role["workerReplicas"]:
            role["workerTemplate"] = {"spec": {"containers": [_container(draw, "w", f"{name}-w:1")]}}
        roles.append(role)
    replicas = draw(st.integers(0, 3))
    strategy = draw(st.sampled_from(["ServingGroupRollingUpdate", "RoleRollingUpdate"]))
    ruc: dict[str, Any] = {"maxUnavailable": draw(st.integers(1, 2))}
    if strategy == "ServingGroupRollingUpdate":
        ruc["maxSurge"] = draw(st.integers(0, 1))
        ruc["partition"] = draw(st.integers(0, replicas))
    template: dict[str, Any] = {"roles": roles}
    if draw(st.booleans()):
        template["gangPolicy"] = {"minRoleReplicas": {r["name"]: min(1, r["replicas"]) for r in roles}}
    return {
        "apiVersion": "workload.serving.volcano.sh/v1alpha1",
        "kind": "ModelServing",
        "metadata": {"name": "gen", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "schedulerName": draw(st.sampled_from(["default-scheduler", "volcano"])),
            "rolloutStrategy": {"type": strategy, "rollingUpdateConfiguration": ruc},
            "template": template,
        },
    }


@st.composite
def ds_specs(draw: Any) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(["prefill", "decode", "encode"]), min_size=1, max_size=3, unique=True))
    roles = []
    for name in names:
        size = draw(st.integers(1, 3))
        body: dict[str, Any] = {
            "replicas": draw(st.integers(0, 3)),
            "leaderWorkerTemplate": {
                "size": size,
                "workerTemplate": {"spec": {"containers": [_container(draw, "server", f"{name}:1")]}},
            },
        }
        if draw(st.booleans()):
            body["rolloutStrategy"] = {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {
                    "maxSurge": draw(st.sampled_from([0, 1, "10%"])),
                    "maxUnavailable": draw(st.sampled_from([0, 1, "10%"])),
                },
            }
        if draw(st.booleans()):
            body["startupPolicy"] = draw(st.sampled_from(["LeaderCreated", "LeaderReady"]))
        if draw(st.booleans()):
            body["groupIdentity"] = "Hash"
        roles.append({"name": name, "spec": body})
    return {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "gen", "namespace": "default"},
        "spec": {"roles": roles},
    }


def _valid(doc: dict[str, Any]) -> dict[str, Any]:
    workload = workload_of(doc)
    assert workload is not None
    try:
        workload.parse(copy.deepcopy(doc))
    except SpecError:
        assume(False)
    return doc


PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(lws_specs(), st.sampled_from([None, "volcano", "kubernetes"]))
def test_property_leaderworkerset(doc: dict[str, Any], gang: str | None) -> None:
    assert_same(_valid(doc), gang=gang)


@PROPERTY
@given(ms_specs())
def test_property_modelserving(doc: dict[str, Any]) -> None:
    assert_same(_valid(doc))


@PROPERTY
@given(ds_specs())
def test_property_disaggregatedset(doc: dict[str, Any]) -> None:
    assert_same(_valid(doc))
