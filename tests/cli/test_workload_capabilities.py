"""The shells reach an API's own refinements through optional Workload capabilities, never by
kind (pulumi_lws/core/contract/workload.py, "Optional capabilities"): ``plan`` rows (``predict_trace``),
``render`` headers (``first_render_header`` / ``steady_render_header``) and the simulator's assumed
node pool (the ``placement`` facts). A workload that implements one gets its own behaviour whatever
its kind; one without gets the generic behaviour; LeaderWorkerSet's output is what it was
(byte-identical: tests/golden, tests/examples)."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml
from conftest import TESTS_DIR

from pulumi_lws.cli import main
from pulumi_lws.cli import plan as P
from pulumi_lws.cli import render_headers as H
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.lws.rollout.plan_trace import build_trace
from pulumi_lws.sim.driver import expansion as E
from pulumi_lws.workloads import workload_for

LWS = workload_for("LeaderWorkerSet")
MS = workload_for("ModelServing")
EXCLUSIVE = TESTS_DIR / "manifests_upstream" / "config_samples_leaderworkerset_exclusiveplacement.yaml"
CAPABILITIES = ("predict_trace", "first_render_header", "steady_render_header")


class Without:
    """``workload`` with every optional capability at the contract's default (none; no placement)."""

    def __init__(self, workload) -> None:
        self._w = workload

    def __getattr__(self, name: str):
        if name in CAPABILITIES:
            return None
        if name == "placement":
            return lambda spec: None
        return getattr(self._w, name)


class With(Without):
    """``workload`` plus a header capability of its own (any kind can have one)."""

    def first_render_header(self, spec, result) -> str:
        return f"own words for {self._w.kind}"


def lws_doc(image: str = "a") -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "inf"},
        "spec": {
            "replicas": 3,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "w", "image": image}]}},
            },
        },
    }


def test_no_shell_keeps_a_kind_keyed_table():
    assert not hasattr(P, "PREDICTORS") and not hasattr(H, "HEADERS") and not hasattr(E, "ASSUMED_POOLS")
    assert all(getattr(LWS, c, None) is not None for c in CAPABILITIES)
    assert not any(getattr(MS, c, None) is not None for c in CAPABILITIES)


def test_headers_follow_the_capability_not_the_kind():
    spec = LWS.parse(lws_doc())
    result = LWS.reconcile(spec, EMPTY, LWS.options())
    assert H.first_header(LWS, spec, result) == LWS.first_render_header(spec, result)
    assert "leader StatefulSet" in H.first_header(LWS, spec, result)
    generic = H.first_header(Without(LWS), spec, result)
    assert generic == H.generic_first_header(LWS, spec, result) != H.first_header(LWS, spec, result)
    assert H.first_header(With(MS), None, result) == "own words for ModelServing"


def test_plan_rows_follow_the_capability(tmp_path, capsys, monkeypatch):
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(lws_doc("a")))
    new.write_text(yaml.safe_dump(lws_doc("b")))
    exact = LWS.predict_trace(LWS.parse(lws_doc("a")), LWS.parse(lws_doc("b")), {})
    assert exact.to_json() == build_trace(LWS.parse(lws_doc("a")), LWS.parse(lws_doc("b")), "ScaleFirst").to_json()
    assert main(["plan", str(old), str(new), "--format", "json"]) == 0
    own = capsys.readouterr().out
    calls = []
    real = P.generic_trace
    monkeypatch.setattr(P, "generic_trace", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    hidden = Without(LWS)  # the same API without its model: OLD and NEW load as that one workload

    def load(path, name=None):
        doc = yaml.safe_load(pathlib.Path(path).read_text())
        return doc, hidden, LWS.parse(doc)

    monkeypatch.setattr(P, "load", load)
    assert main(["plan", str(old), str(new), "--format", "json"]) in (0, 1)  # its own verdict
    assert len(calls) == 1 and capsys.readouterr().out != own  # the generic prediction, not LWS's model


def test_the_assumed_pool_follows_the_placement_facts():
    spec = LWS.parse(yaml.safe_load(EXCLUSIVE.read_text()))
    assert LWS.placement(spec).topology_key == "cloud.google.com/gke-nodepool"
    assert MS.placement(None) is None
    own = E.node_pool(spec, None, None, None, workload=LWS)
    assert own.assumed and len(own.nodes) == spec.replicas
    generic = E.node_pool(spec, None, None, None, workload=Without(LWS))
    assert not generic.assumed and generic.nodes == [] and generic.description == "1 unbounded node"


@pytest.mark.parametrize("argv", [["--stage", "steady"], []])
def test_render_of_an_lws_keeps_its_own_words(capsys, argv):
    assert main(["render", str(EXCLUSIVE), *argv]) == 0
    (head,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert head.startswith("# LeaderWorkerSet default/leaderworkerset-sample: ")
    assert ("assumed: one domain per group" in head) if argv else ("leader StatefulSet only" in head)


def test_a_copy_of_the_exclusive_manifest_is_untouched():
    doc = yaml.safe_load(EXCLUSIVE.read_text())
    before = copy.deepcopy(doc)
    E.node_pool(LWS.parse(doc), None, None, None, workload=LWS)
    assert doc == before
