"""Rollout control in the simulator, for each API: pause mid-rollout, the progress deadline, rollback
half-way, crash/re-run while paused or rolling back (issue 17 "Done means").

Each API runs in its reconcile harness (one ``up()`` = one ``pulumi up``: observe -> Workload.reconcile
-> apply(keep) -> actions) with its own bounds checked at every simulated tick: LeaderWorkerSet
through ``Workload.trace_view`` (control_helpers.TraceBounds), ModelServing and DisaggregatedSet with
their independent cluster readers (ms_helpers.Bounds, ds_helpers.Bounds).
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ds_helpers as DS
from support import ms_helpers as MS
from support.control_helpers import (
    lws_harness,
    lws_manifest,
    paused,
    pods,
    registered,
    with_annotation,
)

from pulumi_lws.backend import use_backend
from pulumi_lws.cli.documents import Document
from pulumi_lws.cli.rollback import plan_rollback
from pulumi_lws.core.features.control import (
    PAUSED,
    PROGRESS_DEADLINE_ANNOTATION,
    PROGRESS_DEADLINE_EXCEEDED,
)
from pulumi_lws.sim.cluster.kubelet import Override


def lws_case(seed: int = 0, overrides=None):
    old, new = lws_manifest(4, "img:1"), lws_manifest(4, "img:2")
    return lws_harness(old, seed=seed, overrides=overrides), old, new


def ms_case(seed: int = 0, overrides=None):
    old = MS.ms_manifest(replicas=4, roles=[MS.role("prefill", 1, workers=1)], mu=1, surge=1)
    h = MS.Harness.create(old, seed=seed)
    if overrides:
        h.cluster.kubelet.config.overrides.extend(overrides)
    return h, old, MS.with_image(old, "img:2")


def ds_case(seed: int = 0, overrides=None):
    old = DS.ds_manifest(
        DS.role("prefill", 3, size=2, surge=1, unavailable=0), DS.role("decode", 2, size=2, surge=1, unavailable=0)
    )
    h = DS.Harness.create(old, seed=seed)
    if overrides:
        h.cluster.kubelet.config.overrides.extend(overrides)
    return h, old, DS.with_image(old, "img:2")


def hash_case(seed: int = 0, overrides=None):
    def hashed(image: str) -> dict:
        m = lws_manifest(4, image)
        m["spec"]["groupIdentity"] = "Hash"
        return m

    return lws_harness(hashed("img:1"), seed=seed, overrides=overrides), hashed("img:1"), hashed("img:2")


CASES = {"LeaderWorkerSet": lws_case, "ModelServing": ms_case, "DisaggregatedSet": ds_case}
API = pytest.mark.parametrize("api", sorted(CASES))
#: the same scenarios for a LeaderWorkerSet with Hash identity (leader Deployment, gated leaders)
WITH_HASH = pytest.mark.parametrize("api", [*sorted(CASES), "LeaderWorkerSet-Hash"])
CASES["LeaderWorkerSet-Hash"] = hash_case


def images(h) -> dict[str, str]:
    return {name: image for name, (_, image) in pods(h.cluster).items()}


def roll_mid_way(h, new, ups: int = 30):
    """Reconcile ``new`` until some but not all live pods run img:2 (mid-rollout, settled)."""
    h.change_spec(new)
    for _ in range(ups):
        h.up()
        h.advance(1.0)
        seen = set(images(h).values())
        if seen == {"img:1", "img:2"} and not any(
            p["metadata"].get("deletionTimestamp") for p in h.cluster.list("Pod")
        ):
            return
    raise AssertionError(f"never mid-rollout: {sorted(images(h).items())}")


def converge(h, ups: int = 80, keep=None) -> None:
    for _ in range(ups):
        h.up(keep=keep() if keep else 1.0)
        if h.converged():
            return
        h.advance(1.0)
    raise AssertionError("did not converge:\n" + "\n".join(h.log[-6:]))


@API
def test_pause_mid_rollout_holds_recovers_and_resumes_where_it_stopped(api):
    h, _, new = CASES[api]()
    roll_mid_way(h, new)
    w = h.WORKLOAD
    h.change_spec(paused(new))
    h.up()
    h.advance(10.0)  # whatever was starting is ready now; the held stage below is what resume must run
    unpaused_next = w.reconcile(w.parse(new), h.snapshot(), w.options()).stage
    before_pods, before_objects = pods(h.cluster), registered(h.cluster)
    for _ in range(5):  # nothing moves for N reconciles
        result, _, _ = h.up()
        h.advance(2.0)
        assert result.stage.blocker is not None and result.stage.blocker.code == PAUSED
        assert result.stage.control.paused and not any(a.verb == "ungate" for a in result.stage.actions)
        assert pods(h.cluster) == before_pods and registered(h.cluster) == before_objects
    # failure recovery still happens, on every group the pause keeps: a failure of each old-revision
    # pod in turn (the newest ones are those the planned stage replaces or drains next) recreates it
    victim = max(n for n, (_, image) in before_pods.items() if image == "img:1")
    if api == "ModelServing":  # ModelServing recovers failed pods (RoleRecreate), not container restarts
        h.cluster.crash_pod("default", victim)
    else:
        h.cluster.restart_container("default", victim)
    h.bounds.disarm()
    for _ in range(25):
        h.up()
        h.advance(1.0)
    after = pods(h.cluster)
    assert after[victim][0] != before_pods[victim][0], "the failed group was not recreated"
    assert {n: i for n, (_, i) in after.items()} == {n: i for n, (_, i) in before_pods.items()}, (
        "a group moved while paused"
    )
    assert registered(h.cluster) == before_objects
    # resume: the first stage is exactly the one the pause held
    h.change_spec(new)
    resumed, _, _ = h.up()
    assert (
        resumed.stage.replicas,
        resumed.stage.partition,
        dict(resumed.stage.group_revisions),
        resumed.stage.lanes,
    ) == (unpaused_next.replicas, unpaused_next.partition, dict(unpaused_next.group_revisions), unpaused_next.lanes)
    converge(h)
    assert set(images(h).values()) == {"img:2"}


@WITH_HASH
def test_a_stuck_rollout_reaches_the_progress_deadline(api):
    h, _, new = CASES[api](overrides=[Override(after=0.5, never_ready=True)])
    h.change_spec(with_annotation(new, PROGRESS_DEADLINE_ANNOTATION, "30"))
    h.bounds.disarm()
    verdicts = []
    for _ in range(30):
        result, _, _ = h.up()
        verdicts.append(result.stage.control.exceeded)
        h.advance(5.0)
    assert not verdicts[0] and verdicts[-1], verdicts
    stage = result.stage
    first = verdicts.index(True)
    assert all(verdicts[first:]), "the verdict is a function of observed timestamps: once passed it stays"
    assert stage.control.now - stage.control.last_progress > 30
    status = h.WORKLOAD.status(h.spec, h.snapshot(), stage)
    progressing = [c for c in status["conditions"] if c["type"] == "Progressing"]
    assert progressing == [dict(stage.control.condition)]
    assert progressing[0]["status"] == "False" and progressing[0]["reason"] == PROGRESS_DEADLINE_EXCEEDED
    assert "holding:" in progressing[0]["message"]


def _rollback_doc(h) -> Document:
    return Document(0, h.desired, h.WORKLOAD)


@WITH_HASH
def test_rollback_half_way_moves_only_groups_that_left_the_old_revision(api):
    h, old, new = CASES[api]()
    roll_mid_way(h, new)
    on_old = {n: uid for n, (uid, image) in pods(h.cluster).items() if image == "img:1"}
    with use_backend(h.cluster, h.cluster):
        previous, rolled_back, target = plan_rollback(_rollback_doc(h), h.cluster)
    assert previous.key == h.WORKLOAD.target_revision(h.WORKLOAD.parse(old)) != target
    assert h.WORKLOAD.target_revision(h.WORKLOAD.parse(rolled_back)) == previous.key
    h.change_spec(rolled_back)
    converge(h)  # h.advance checks the API's bounds at every tick
    after = pods(h.cluster)
    assert set(images(h).values()) == {"img:1"}
    assert {n: after.get(n, (None,))[0] for n in on_old} == on_old, "a group still on the old revision moved"


@WITH_HASH
@pytest.mark.parametrize("seed", [1, 2])
def test_crash_and_rerun_at_every_stage_while_paused_then_rolling_back(api, seed):
    rng = random.Random(seed)
    h, _old, new = CASES[api](seed=seed)
    roll_mid_way(h, new)
    h.change_spec(paused(new))
    h.up()
    h.advance(10.0)  # a group admitted before the pause completes (Hash: its workers), then all holds
    before = pods(h.cluster)
    for _ in range(6):  # a crash part-way through a paused apply leaves everything where it was
        h.up(keep=rng.random())
        h.up()
        h.advance(1.0)
        assert pods(h.cluster) == before
    h.change_spec(new)
    on_old = {n for n, (_, image) in pods(h.cluster).items() if image == "img:1"}
    with use_backend(h.cluster, h.cluster):
        _, rolled_back, _ = plan_rollback(_rollback_doc(h), h.cluster)
    h.change_spec(rolled_back)
    converge(h, ups=150, keep=lambda: rng.choice((1.0, rng.random())))
    assert set(images(h).values()) == {"img:1"}
    assert on_old <= set(pods(h.cluster))


def test_hash_pause_holds_the_leader_deployment_natively_and_recreates_a_failed_group():
    """Hash identity: the held Deployment is registered ``spec.paused: true`` (its own controller
    would go on rolling ReplicaSets); a group failure handling recreates while paused is torn down
    (its replacement's admission: the test below); resume converges."""
    h, _, new = hash_case()
    roll_mid_way(h, new)
    h.change_spec(paused(new))
    h.up()
    h.advance(10.0)
    before = pods(h.cluster)
    deployment = h.cluster.store.get("Deployment", "default", "ctl")
    assert deployment["spec"]["paused"] is True
    for _ in range(5):
        h.up()
        h.advance(2.0)
        assert pods(h.cluster) == before
    victim = max(n for n, (_, image) in before.items() if image == "img:1")
    h.cluster.restart_container("default", victim)
    h.bounds.disarm()
    for _ in range(15):
        h.up()
        h.advance(1.0)
    assert victim not in pods(h.cluster) or pods(h.cluster)[victim][0] != before[victim][0]  # the group was torn down
    h.change_spec(new)
    converge(h)
    assert set(images(h).values()) == {"img:2"}
    assert (
        "paused" not in h.cluster.store.get("Deployment", "default", "ctl")["spec"]
        or not h.cluster.store.get("Deployment", "default", "ctl")["spec"]["paused"]
    )


@pytest.mark.slow
@WITH_HASH
@pytest.mark.parametrize("seed", range(3, 23))
def test_soak_crash_and_rerun_while_paused_then_rolling_back(api, seed):
    """``make soak``: the crash scenario above over 20 more seeds per API."""
    test_crash_and_rerun_at_every_stage_while_paused_then_rolling_back(api, seed)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(api=st.sampled_from(sorted(CASES)), stages=st.integers(0, 6), keep=st.floats(0.0, 1.0), seed=st.integers(0, 50))
def test_property_pausing_at_any_stage_holds_then_resumes_to_convergence(api, stages, keep, seed):
    """Pause after any number of stages (a crash part-way through the first paused apply): while
    paused no pod changes, after resume the rollout converges within the API's bounds."""
    h, _, new = CASES[api](seed=seed)
    h.change_spec(new)
    for _ in range(stages):
        h.up()
        h.advance(1.0)
    h.change_spec(paused(new))
    h.up(keep=keep)
    h.up()
    h.advance(10.0)
    before = pods(h.cluster)
    for _ in range(3):
        h.up()
        h.advance(2.0)
    assert pods(h.cluster) == before
    h.change_spec(new)
    converge(h, ups=120)
    assert set(images(h).values()) == {"img:2"}


def _hash_groups(h) -> Counter:
    """Live pods per (image, gated, Ready): what a Hash pause must hold (pod names and uids change
    when a group is recreated; the revision mix, the admitted groups and their readiness must not)."""
    out = Counter()
    for p in h.cluster.list("Pod"):
        if p["metadata"].get("deletionTimestamp"):
            continue
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))
        out[(p["spec"]["containers"][0]["image"], bool(p["spec"].get("schedulingGates")), ready)] += 1
    return out


def _images_count(h) -> Counter:
    return Counter(image for _, image in pods(h.cluster).values())


def test_hash_pause_recreates_and_readmits_failed_groups_of_both_revisions_without_rollout_progress():
    """Hash identity, paused mid-rollout: a failed pod of an old-revision group, then of a
    new-revision group, is recreated AND its replacement leader admitted (the held-groups record on
    the leader Deployment), both groups are ready again, the revision mix never changes (no
    new-revision group admitted, no surge), and resume starts from the stage the pause held."""
    h, _, new = hash_case()
    roll_mid_way(h, new)
    w = h.WORKLOAD
    h.change_spec(paused(new))
    h.up()
    h.advance(10.0)
    unpaused_next = w.reconcile(w.parse(new), h.snapshot(), w.options()).stage
    for _ in range(5):  # settle: every admitted group ready; a gated surge leader stays gated
        h.up()
        h.advance(2.0)
    groups = _hash_groups(h)
    assert all(ready for (_, gated, ready) in groups if not gated), groups
    images_before = _images_count(h)
    deployment_spec = copy.deepcopy(h.cluster.store.get("Deployment", "default", "ctl")["spec"])
    before = pods(h.cluster)
    for image in ("img:1", "img:2"):
        victim = max(
            n
            for n, (_, i) in before.items()
            if i == image and not h.cluster.store.get("Pod", "default", n)["spec"].get("schedulingGates")
        )
        h.cluster.restart_container("default", victim)
        h.bounds.disarm()
        admitted = []
        for _ in range(30):
            result, _, _ = h.up()
            admitted += [a for a in result.stage.actions if a.verb == "ungate"]
            assert result.stage.blocker.code == PAUSED
            assert _images_count(h) <= images_before, "a surge or new group while paused"
            h.advance(1.0)
        after = pods(h.cluster)
        assert victim not in after or after[victim][0] != before[victim][0], f"the {image} group was not recreated"
        assert admitted and all(a.params.get("recovery") for a in admitted), admitted
        assert {h.cluster.store.get("Pod", "default", a.name)["spec"]["containers"][0]["image"] for a in admitted} == {
            image
        }
        assert _hash_groups(h) == groups, f"after the {image} failure"
        assert _images_count(h) == images_before
        assert h.cluster.store.get("Deployment", "default", "ctl")["spec"] == deployment_spec
        before = after
    h.change_spec(new)
    resumed, _, _ = h.up()
    assert (resumed.stage.replicas, Counter(resumed.stage.group_revisions.values())) == (
        unpaused_next.replicas,
        Counter(unpaused_next.group_revisions.values()),
    )
    # the admission the pause held (the surge leader made before it) is the one resume makes
    assert (
        [a.name for a in resumed.stage.actions if a.verb == "ungate"]
        == [a.name for a in unpaused_next.actions if a.verb == "ungate"]
        != []
    )
    assert not any(a.params.get("recovery") for a in resumed.stage.actions)
    converge(h)
    assert set(images(h).values()) == {"img:2"}
