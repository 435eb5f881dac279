"""render/worker_memo.py: the worker StatefulSets reused from the previous render of the same
LeaderWorkerSet equal, element for element, those built afresh, through a sequence of renders
whose inputs change one at a time (labels, annotations, template, size, replicas, domains), on
every golden input (TPU, subgroups, exclusive topology, UniquePerReplica, admission...)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import TESTS_DIR

import pulumi_lws.lws.render.ordinal as ordinal
from pulumi_lws.core.contract.snapshot import EMPTY
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.reconcile import reconcile
from pulumi_lws.lws.render import worker_memo

INPUTS = TESTS_DIR / "golden" / "ordinal" / "inputs"
CASES = sorted(p.stem for p in INPUTS.glob("*.yaml"))


def fresh_workers(live, group_lws, keys, domains, tpus, worker_groups, worker_statefulset=None) -> list[dict[str, Any]]:
    """The loop the memo replaced."""
    return [
        ordinal.worker_statefulset(live, at, i, keys[i], domains.get(i), tpus=tpus[keys[i]])
        for i, at in group_lws.items()
        if at.size > 1 and (worker_groups is None or i in worker_groups)
    ]


def variants(lws: LeaderWorkerSet) -> list[LeaderWorkerSet]:
    """The spec, then one input changed at a time (each from the previous), then the spec again."""
    out = [lws]

    def step(change) -> None:
        nxt = lws.model_copy(deep=True) if not out else out[-1].model_copy(deep=True)
        change(nxt)
        out.append(nxt)

    step(lambda x: setattr(x.spec, "replicas", x.spec.replicas + 2))
    step(lambda x: x.metadata.labels.update({"team": "a"}))
    step(lambda x: x.metadata.annotations.update({"note": "a"}))  # not a revision-covered field
    step(lambda x: x.metadata.annotations.update({L.EXCLUSIVE_TOPOLOGY: "zone"}))
    step(lambda x: x.metadata.annotations.update({L.EXCLUSIVE_TOPOLOGY: "rack"}))

    def image(x: LeaderWorkerSet) -> None:
        for c in x.spec.leader_worker_template.worker_template["spec"]["containers"]:
            c["image"] = c.get("image", "") + "-2"

    step(image)
    step(lambda x: setattr(x.spec.leader_worker_template, "size", x.spec.leader_worker_template.size + 1))
    step(lambda x: setattr(x.spec, "replicas", max(1, x.spec.replicas - 3)))
    out.append(lws)
    return out


@pytest.mark.parametrize("case", CASES)
def test_memoised_workers_equal_fresh_ones(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    worker_memo.clear()
    base = LeaderWorkerSet.from_manifest(INPUTS / f"{case}.yaml")
    for n, lws in enumerate(variants(base)):
        rec = reconcile(lws, EMPTY)
        for domains in (None, {0: "z1", 1: "z2"}, {0: "z1", 1: "z3"}, None):
            memo = ordinal.render_ordinal(lws, rec.stage, rec.catalog, group_domains=domains)
            snapshot = copy.deepcopy(memo)
            with monkeypatch.context() as m:
                m.setattr(ordinal, "worker_statefulsets", fresh_workers)
                fresh = ordinal.render_ordinal(lws, rec.stage, rec.catalog, group_domains=domains)
            assert memo == fresh, f"variant {n}, domains {domains}"
            assert snapshot == memo  # nothing handed out was changed in place since
        # the whole reconcile (gang objects, failure state, dependencies) is unchanged too
        again = reconcile(lws, EMPTY)
        assert again.manifests == rec.manifests and again.dependencies == rec.dependencies


def test_a_repeated_render_reuses_the_workers_and_memory_is_bounded() -> None:
    worker_memo.clear()
    lws = LeaderWorkerSet.from_manifest(INPUTS / f"{CASES[0]}.yaml")
    rec = reconcile(lws, EMPTY)
    first = ordinal.render_ordinal(lws, rec.stage, rec.catalog)
    second = ordinal.render_ordinal(lws, rec.stage, rec.catalog)
    workers = [(a, b) for a, b in zip(first, second) if ordinal.is_worker_statefulset(lws.name, a)]
    assert workers and all(a is b for a, b in workers)
    for i in range(worker_memo.LIMIT + 5):
        other = lws.model_copy(deep=True)
        other.metadata.name = f"w{i}"
        ordinal.render_ordinal(other, reconcile(other, EMPTY).stage, reconcile(other, EMPTY).catalog)
    assert len(worker_memo._last) == worker_memo.LIMIT
    assert (lws.namespace, lws.name) not in worker_memo._last  # the least recently rendered went first
