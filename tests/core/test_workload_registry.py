"""The workload registry the shells dispatch through (pulumi_lws.core.workload)."""
from __future__ import annotations

import pytest

from pulumi_lws.core import workload as W
from pulumi_lws.core.ports import EmptyObserver, Scope
from pulumi_lws.core.snapshot import EMPTY
from pulumi_lws.workloads import BUILTIN, registered, workload_for, workload_of

LWS_DOC = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "web", "namespace": "serving"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {
               "spec": {"containers": [{"name": "w", "image": "nginx:1.27"}]}}}}}


def test_builtin_apis_are_registered_by_importing_pulumi_lws_workloads() -> None:
    assert BUILTIN == ("pulumi_lws.lws.workload", "pulumi_lws.modelserving.workload", "pulumi_lws.disaggregatedset.workload")
    assert set(registered()) == {"LeaderWorkerSet", "ModelServing", "DisaggregatedSet"}


def test_dispatch_by_kind_and_by_manifest() -> None:
    lws = workload_for("LeaderWorkerSet")
    assert workload_of(LWS_DOC) is lws
    assert workload_of({"apiVersion": "v1", "kind": "Service"}) is None
    assert workload_of("not a mapping") is None  # type: ignore[arg-type]
    with pytest.raises(KeyError, match=r"no workload API for kind 'ModelServingX' \(known: DisaggregatedSet, LeaderWorkerSet, ModelServing\)"):
        workload_for("ModelServingX")


def test_the_lws_workload_fulfils_the_contract_end_to_end() -> None:
    lws = workload_for("LeaderWorkerSet")
    spec = lws.parse(LWS_DOC)
    assert lws.identity(spec) == ("serving", "web")
    scope = lws.scope(spec)
    assert scope == Scope("serving", {"leaderworkerset.sigs.k8s.io/name": "web"}, scope.kinds, False)
    assert "StatefulSet" in scope.kinds and "Pod" in scope.kinds
    assert lws.scope(spec, nodes=True).nodes is True
    result = lws.reconcile(spec, EmptyObserver().observe(scope), lws.options(update_order=None, unknown="x"))
    assert result.stage.policy == "lws/ordinal" and result.stage.replicas == 2
    assert [m["kind"] for m in result.manifests].count("StatefulSet") == 3  # leader + 2 worker StatefulSets
    assert lws.budgets(spec) == {"": W.Budgets(replicas=2, max_surge=0, max_unavailable=1)}
    assert EmptyObserver().observe(scope) is EMPTY


def test_a_second_workload_for_the_same_kind_is_refused() -> None:
    class Impostor:
        kind = "LeaderWorkerSet"
        api_version = "x/v1"

    with pytest.raises(ValueError, match="already registered"):
        W.register(Impostor())  # type: ignore[arg-type]
    assert W.register(workload_for("LeaderWorkerSet")) is workload_for("LeaderWorkerSet")  # idempotent


def test_scope_selects_by_every_label_pair() -> None:
    scope = Scope("ns", {"a": "1", "b": "2"}, ("Pod",))
    assert scope.selects({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}})
    assert not scope.selects({"metadata": {"labels": {"a": "1"}}})
    assert not scope.selects({"metadata": {}})
