"""The workload registry the shells dispatch through (pulumi_lws.core.contract.workload)."""

from __future__ import annotations

import pytest

from pulumi_lws.core.contract import workload as W
from pulumi_lws.core.contract.ports import EmptyObserver, Scope, without_labels
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.workloads import BUILTIN, registered, workload_for, workload_of

LWS_DOC = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "web", "namespace": "serving"},
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {"spec": {"containers": [{"name": "w", "image": "nginx:1.27"}]}},
        },
    },
}


def test_builtin_apis_are_registered_by_importing_pulumi_lws_workloads() -> None:
    assert BUILTIN == (
        "pulumi_lws.lws.workload",
        "pulumi_lws.modelserving.workload",
        "pulumi_lws.disaggregatedset.workload",
    )
    assert set(registered()) == {"LeaderWorkerSet", "ModelServing", "DisaggregatedSet"}


def test_dispatch_by_kind_and_by_manifest() -> None:
    lws = workload_for("LeaderWorkerSet")
    assert workload_of(LWS_DOC) is lws
    assert workload_of({"apiVersion": "v1", "kind": "Service"}) is None
    assert workload_of("not a mapping") is None  # type: ignore[arg-type]
    with pytest.raises(
        KeyError,
        match=r"no workload API for kind 'ModelServingX' \(known: DisaggregatedSet, LeaderWorkerSet, ModelServing\)",
    ):
        workload_for("ModelServingX")


def test_the_lws_workload_fulfils_the_contract_end_to_end() -> None:
    lws = workload_for("LeaderWorkerSet")
    spec = lws.parse(LWS_DOC)
    assert lws.identity(spec) == ("serving", "web")
    scope = lws.scope(spec)
    assert scope == Scope(
        "serving",
        {"leaderworkerset.sigs.k8s.io/name": "web"},
        scope.kinds,
        False,
        kind_selectors=(
            (
                "ControllerRevision",
                without_labels({"leaderworkerset.sigs.k8s.io/name": "web"}, "leaderworkerset.sigs.k8s.io/group-index"),
            ),
        ),
    )
    assert "StatefulSet" in scope.kinds and "Pod" in scope.kinds
    assert lws.scope(spec, nodes=True).nodes is True
    result = lws.reconcile(spec, EmptyObserver().observe(scope), lws.options(update_order=None, unknown="x"))
    assert result.stage.policy == "lws/ordinal" and result.stage.replicas == 2
    assert [m["kind"] for m in result.manifests].count("StatefulSet") == 3  # leader + 2 worker StatefulSets
    assert lws.budgets(spec) == {"": W.Budgets(replicas=2, max_surge=0, max_unavailable=1)}
    assert EmptyObserver().observe(scope) is EMPTY


def test_a_second_workload_for_the_same_kind_is_refused() -> None:
    class Impostor(type(workload_for("LeaderWorkerSet"))):  # type: ignore[misc]  # complete, but another object
        pass

    with pytest.raises(ValueError, match="already registered"):
        W.register(Impostor())  # type: ignore[arg-type]
    assert W.register(workload_for("LeaderWorkerSet")) is workload_for("LeaderWorkerSet")  # idempotent


def test_scope_selects_by_every_label_pair() -> None:
    scope = Scope("ns", {"a": "1", "b": "2"}, ("Pod",))
    assert scope.selects({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}})
    assert not scope.selects({"metadata": {"labels": {"a": "1"}}})
    assert not scope.selects({"metadata": {}})


def _complete_class() -> type:
    """A subclass of the LeaderWorkerSet workload under another kind: every fact and method set."""
    lws = type(workload_for("LeaderWorkerSet"))
    return type("Copy", (lws,), {"kind": "CopyOfLeaderWorkerSet"})


def test_a_complete_workload_passes_the_registration_check() -> None:
    assert W.check_workload(_complete_class()()) == []


@pytest.mark.parametrize("fact", W.FACTS)
def test_a_missing_fact_fails_at_registration_naming_it(fact) -> None:
    lws = type(workload_for("LeaderWorkerSet"))
    # a fresh Workload subclass that borrows every member of the LWS workload but one fact
    members = {
        k: v
        for klass in reversed(lws.__mro__[: lws.__mro__.index(W.Workload)])
        for k, v in vars(klass).items()
        if not k.startswith("__")
    }
    members.pop(fact)
    if fact != "kind":
        members["kind"] = "Partial"
    incomplete = type("Partial", (W.Workload,), members)()
    with pytest.raises(W.IncompleteWorkload, match=f"missing fact '{fact}'"):
        W.register(incomplete)
    assert "Partial" not in registered()


def test_an_unimplemented_method_fails_at_registration_not_in_a_command() -> None:
    cls = _complete_class()
    facts_only = type("FactsOnly", (W.Workload,), {k: getattr(cls, k) for k in W.FACTS})
    with pytest.raises(TypeError, match="abstract"):
        facts_only()  # the ABC refuses to build it: the API module fails on import
    assert "status" in facts_only.__abstractmethods__ and "covered" in facts_only.__abstractmethods__


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"api_version": "v1"}, "api_version"),
        ({"words": W.Words("", "x")}, "words"),
        ({"words": W.Words("X", "two\nlines")}, "words"),
        ({"gang": W.GangChoice(("slurm",))}, "gang"),
        ({"observes": ()}, "observes"),
    ],
)
def test_an_inconsistent_fact_fails_at_registration(change, problem) -> None:
    bad = type("Bad", (_complete_class(),), change)()
    with pytest.raises(W.IncompleteWorkload, match=problem):
        W.register(bad)


def test_argument_schema_problems_are_named() -> None:
    from pulumi_lws.core.contract.facts import ArgumentSchema, Option

    lws = workload_for("LeaderWorkerSet")
    schema = ArgumentSchema(
        fields={"name": ("metadata", "name"), "namespace": ("metadata", "namespace")},
        options=(Option("replicasCount"), Option("name")),
    )
    bad = type("Bad", (_complete_class(),), {"arguments": schema})()
    problems = W.check_workload(bad)
    assert any("snake_case" in p for p in problems) and any("also a field" in p for p in problems), problems
    assert W.check_workload(lws) == []


def test_rendered_kinds_must_be_observed() -> None:
    from pulumi_lws.core.contract.facts import KindRef, RbacFacts

    facts = RbacFacts(actions=frozenset(), renders=(KindRef("ConfigMap", "v1"),))
    bad = type("Bad", (_complete_class(),), {"rbac": facts})()
    assert any("rbac.renders not in observes: ['ConfigMap']" in p for p in W.check_workload(bad))


SAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}


def _minimal(kind: str) -> dict:
    import yaml
    from conftest import REPO_ROOT

    return yaml.safe_load((REPO_ROOT / "examples" / SAMPLES[kind]).read_text())


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_every_builtin_api_states_every_fact(kind) -> None:
    workload = workload_for(kind)
    assert W.check_workload(workload) == []
    assert set(workload.arguments.operator_free_only) <= workload.arguments.known
    spec = workload.parse(_minimal(kind))
    scope = workload.scope(spec, nodes=True)
    assert set(scope.kinds) <= {k.kind for k in workload.observes}  # a bare PodGroup: workload.podgroup()
    assert workload.podgroup() in workload.observes
