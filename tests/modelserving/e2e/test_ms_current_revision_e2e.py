"""Issue 24 item 4: ModelServing ``status.currentRevision`` switches only when every group is
updated and available (upstream ``UpdateModelServingStatus``), read at every simulated second of
a rollout — also once every group is relabelled to the new revision but one is still unready,
and across a bad image fixed mid-rollout (the revision that was current stays current)."""

from __future__ import annotations

import pytest
from fault_helpers import BAD, faulty_kubelet
from support.ms_helpers import ROLE, SG, ms_manifest, parse, role, scenario, with_image

from pulumi_lws.modelserving.reconcile import status_of
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.workload import WORKLOAD
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Update


def _statuses(sc, desired_at) -> list[tuple[float, dict]]:
    seen: list[tuple[float, dict]] = []

    def probe(cluster, t: float) -> None:
        spec = parse(desired_at(t))
        seen.append((t, status_of(spec, cluster.observe(WORKLOAD.scope(spec, nodes=False)))))

    result = Runner(sc, probe=probe).run()
    assert result.exit_code == 0, result.reason
    return seen


@pytest.mark.parametrize("strategy", [SG, ROLE])
@pytest.mark.parametrize("replicas", [1, 3])
def test_current_revision_switches_only_when_every_group_is_updated_and_available(strategy: str, replicas: int) -> None:
    old = ms_manifest(replicas=replicas, roles=[role("p", workers=1)], strategy=strategy)
    new = with_image(old, "img:2")
    before, after = modelserving_revision(parse(old)), modelserving_revision(parse(new))
    seen = _statuses(scenario(old, new, max_time=120), lambda t: new)
    for t, st in seen:
        done = st["updatedReplicas"] == st["availableReplicas"] == st["replicas"] == replicas
        assert st["currentRevision"] == (after if done else before), (t, st)
    assert seen[-1][1]["currentRevision"] == after
    assert any(st["updatedReplicas"] == replicas and st["availableReplicas"] < replicas for _, st in seen)


def test_current_revision_stays_through_a_bad_image_and_its_fix() -> None:
    old = ms_manifest(replicas=2, roles=[role("p", workers=1)])
    bad, good = with_image(old, BAD), with_image(old, "img:3")
    first, last = modelserving_revision(parse(old)), modelserving_revision(parse(good))
    sc = scenario(old, bad, kubelet=faulty_kubelet("probe"), updates=[Update(at=30.0, manifest=good)], max_time=300)
    seen = _statuses(sc, lambda t: bad if t < 30 else good)
    assert {st["currentRevision"] for t, st in seen if t < 30} == {first}
    done = [t for t, st in seen if st["currentRevision"] == last]
    assert done and all(st["currentRevision"] == first for t, st in seen if t < done[0])
    assert seen[-1][1]["availableReplicas"] == 2
