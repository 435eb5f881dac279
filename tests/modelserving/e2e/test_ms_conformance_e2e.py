"""The 10 ``e2e`` vectors of tests/conformance/kthena-modelserving.json as simulator scenarios
(shared/conformance/README.md §3.4: each bound is an invariant checked at every step — here at
every simulated second, by ``ms_helpers.Bounds`` and the vector's own check — and the ``final``
entry an end-state assertion).

| vector | how | notes |
|---|---|---|
| E2E-SG-MAXUNAV | runner, per-tick bound | role replicas 4 (one role) |
| E2E-SG-MAXSURGE | runner, per-tick bound + status | |
| E2E-SG-BADIMAGE | harness, new pods never ready | 60 s observed; ends on a named blocker |
| E2E-PART-BOUNDARY | harness | |
| E2E-PART-HIST | harness, pod of ms-1 deleted | |
| E2E-PART-SCALEUP | harness, 5 -> 7 | protected pods keep their uids |
| E2E-PART-SCALEDOWN | harness, 5 -> 3 | |
| E2E-ROLE-ONLYCHANGED | runner | |
| E2E-ROLE-MAXUNAV | harness, new prefill pods never ready | 30 s held |
| E2E-ROLE-MAXSURGE | runner, per-tick bound | |

No vector is skipped.
"""

from __future__ import annotations

import pytest
from conftest import load_conformance
from support.ms_helpers import (
    NS,
    ROLE,
    WORKLOAD,
    Harness,
    Override,
    ms_manifest,
    parse,
    read,
    role,
    run,
    scenario,
    with_image,
)

from pulumi_lws.modelserving.reconcile import status_of
from pulumi_lws.modelserving.revision import modelserving_revision

VECTORS = {v["id"]: v for v in load_conformance("kthena-modelserving.json")["vectors"] if v["kind"] == "e2e"}
COVERED = {
    "E2E-SG-MAXUNAV",
    "E2E-SG-MAXSURGE",
    "E2E-SG-BADIMAGE",
    "E2E-PART-BOUNDARY",
    "E2E-PART-HIST",
    "E2E-PART-SCALEUP",
    "E2E-PART-SCALEDOWN",
    "E2E-ROLE-ONLYCHANGED",
    "E2E-ROLE-MAXUNAV",
    "E2E-ROLE-MAXSURGE",
}


def test_every_e2e_vector_is_covered() -> None:
    assert set(VECTORS) == COVERED and len(VECTORS) == 10


def _status(h: Harness) -> dict:
    return status_of(h.spec, h.snapshot())


def _roll(h: Harness, stages: int = 60, interval: float = 2.0) -> None:
    for _ in range(stages):
        h.up()
        h.check()
        if h.converged():
            return
        h.advance(interval)
    raise AssertionError("not converged:\n" + "\n".join(h.log[-6:]))


def _hold(h: Harness, seconds: float, interval: float = 2.0, each=None) -> None:
    end = h.cluster.clock.now + seconds
    while h.cluster.clock.now < end:
        h.up()
        h.check()
        h.advance(interval)
        if each is not None:
            each()


def _never_ready_from_now(h: Harness, pod: str | None = None) -> None:
    h.cluster.kubelet.config.overrides.insert(0, Override(pod=pod, after=h.cluster.clock.now, never_ready=True))


# ---- ServingGroupRollingUpdate ------------------------------------------------------------------------
def test_E2E_SG_MAXUNAV() -> None:
    v = VECTORS["E2E-SG-MAXUNAV"]["spec"]
    old = ms_manifest(replicas=v["replicas"], mu=v["maxUnavailable"], roles=[role("entry", v["roleReplicas"])])
    new = with_image(old, "nginx:alpine")
    result, bounds = run(scenario(old, new))
    assert result.exit_code == 0 and not result.trace.violations and not bounds.violations, result.reason
    assert (
        max(v["replicas"] - sum(g.available for g in gs.values()) for _, gs in bounds.history) == 2
    )  # "<= 2", reached
    final = read(result.cluster, parse(new))
    target = modelserving_revision(parse(new))
    assert len(final) == 4 and all(g.revision == target and g.available for g in final.values())  # 4/4 updated


def test_E2E_SG_MAXSURGE() -> None:
    v = VECTORS["E2E-SG-MAXSURGE"]["spec"]
    old = ms_manifest(
        replicas=v["replicas"], mu=v["maxUnavailable"], surge=v["maxSurge"], roles=[role("entry", v["roleReplicas"])]
    )
    new = with_image(old, "img:2")
    result, bounds = run(scenario(old, new))
    assert result.exit_code == 0 and not bounds.violations, result.reason
    target = modelserving_revision(parse(new))
    assert bounds.max_live == 5  # never > 5
    assert any(
        len(gs) == 5 and all(g.available for g in gs.values()) and len({g.revision for g in gs.values()}) == 2
        for _, gs in bounds.history
    )
    status = status_of(parse(new), result.cluster.observe(WORKLOAD.scope(parse(new))))
    assert (status["replicas"], status["availableReplicas"], status["updatedReplicas"]) == (4, 4, 4)
    assert status["currentRevision"] == status["updateRevision"] == target


def test_E2E_SG_BADIMAGE() -> None:
    v = VECTORS["E2E-SG-BADIMAGE"]["spec"]
    old = ms_manifest(replicas=v["replicas"], mu=v["maxUnavailable"], roles=[role("entry")])
    h = Harness.create(old)
    _never_ready_from_now(h)  # nginx:nonexistent-image-99999: ImagePullBackOff, never ready
    h.change_spec(with_image(old, "nginx:nonexistent-image-99999"))
    worst = []
    _hold(h, 60, each=lambda: worst.append(v["replicas"] - sum(g.available for g in h.groups().values())))
    assert max(worst) == 2  # unavailable over 60 s: always <= 2 (reached: two groups pull the bad image)
    stage = h.last.stage
    assert not stage.complete and stage.blocker is not None and stage.blocker.code == "waiting-for-groups"
    groups = h.groups()
    assert sum(g.available for g in groups.values()) == 4 and len(groups) == 6


# ---- partition -------------------------------------------------------------------------------------------
def _partition_ms(replicas=5, partition=3, mu=1, recovery=None):
    return ms_manifest(
        replicas=replicas,
        mu=mu,
        partition=partition,
        recovery=recovery,
        roles=[role("prefill", 1, 1), role("decode", 1, 1)],
    )


def test_E2E_PART_BOUNDARY() -> None:
    v = VECTORS["E2E-PART-BOUNDARY"]["spec"]
    old = _partition_ms(v["replicas"], v["partition"], v["maxUnavailable"])
    h = Harness.create(old)
    initial = modelserving_revision(h.spec)
    h.change_spec(with_image(old, "img:2"))
    target = modelserving_revision(h.spec)
    _roll(h)
    assert {o: g.revision for o, g in h.groups().items()} == {0: initial, 1: initial, 2: initial, 3: target, 4: target}
    status = _status(h)
    assert status["currentRevision"] == initial and status["updateRevision"] == target


def test_E2E_PART_HIST() -> None:
    v = VECTORS["E2E-PART-HIST"]["spec"]
    old = _partition_ms(v["replicas"], v["partition"], recovery=v["recoveryPolicy"])
    h = Harness.create(old)
    initial = modelserving_revision(h.spec)
    h.change_spec(with_image(old, "img:2"))
    _roll(h)
    h.cluster.store.delete("Pod", NS, "ms-1-prefill-0-0")  # delete a pod of ms-1
    h.cluster.settle()
    h.bounds.disarm()
    h.advance(2)
    _roll(h)
    ms1 = h.groups()[1]
    assert ms1.revision == initial and all(r.images == {"img:1"} and r.revision == initial for r in ms1.roles.values())
    status = _status(h)
    target = modelserving_revision(h.spec)
    assert sum(g.revision == initial for g in h.groups().values()) == 3  # protected
    assert status["updatedReplicas"] == 2 and sum(g.revision == target for g in h.groups().values()) == 2


def test_E2E_PART_SCALEUP() -> None:
    v = VECTORS["E2E-PART-SCALEUP"]["spec"]
    old = _partition_ms(5, v["partition"])
    h = Harness.create(old)
    initial = modelserving_revision(h.spec)
    h.change_spec(with_image(old, "img:2"))
    _roll(h)
    uids = {o: {k: r.uids for k, r in g.roles.items()} for o, g in h.groups().items() if o < 3}
    scaled = with_image(_partition_ms(7, v["partition"]), "img:2")
    h.change_spec(scaled)
    _roll(h)
    target = modelserving_revision(h.spec)
    groups = h.groups()
    assert {o: g.revision for o, g in groups.items()} == {
        **{o: initial for o in range(3)},
        **{o: target for o in range(3, 7)},
    }
    assert {o: {k: r.uids for k, r in g.roles.items()} for o, g in groups.items() if o < 3} == uids  # not recreated


def test_E2E_PART_SCALEDOWN() -> None:
    v = VECTORS["E2E-PART-SCALEDOWN"]["spec"]
    old = _partition_ms(5, v["partition"])
    h = Harness.create(old)
    initial = modelserving_revision(h.spec)
    h.change_spec(with_image(old, "img:2"))
    _roll(h)
    h.change_spec(with_image(_partition_ms(3, v["partition"]), "img:2"))
    _roll(h)
    for _ in range(5):  # the scaled-away groups finish terminating
        h.advance(2)
        h.up()
    assert {o: g.revision for o, g in h.groups().items()} == {0: initial, 1: initial, 2: initial}
    status = _status(h)
    assert (status["replicas"], status["updatedReplicas"], status["currentReplicas"], status["availableReplicas"]) == (
        3,
        0,
        3,
        3,
    )


# ---- RoleRollingUpdate -------------------------------------------------------------------------------------
def _decode_uids(groups):
    return {o: r.uids for o, g in groups.items() for k, r in g.roles.items() if k[0] == "decode"}


def test_E2E_ROLE_ONLYCHANGED() -> None:
    old = ms_manifest(replicas=2, strategy=ROLE, roles=[role("prefill", 2), role("decode", 1)])
    new = with_image(old, "nginx:alpine", ("prefill",))
    result, bounds = run(scenario(old, new))
    assert result.exit_code == 0 and not bounds.violations, result.reason
    first = _decode_uids(bounds.history[0][1])
    assert len(first) == 2 and all(_decode_uids(gs) == first for _, gs in bounds.history)  # same UIDs
    final = read(result.cluster, parse(new))
    assert all(r.images == {"nginx:alpine"} for g in final.values() for r in g.replicas_of("prefill"))
    assert all(len(g.replicas_of("prefill")) == 2 for g in final.values())


def test_E2E_ROLE_MAXUNAV() -> None:
    old = ms_manifest(replicas=1, strategy=ROLE, roles=[role("prefill", 4, maxUnavailable=2), role("decode", 1)])
    h = Harness.create(old)
    decode = _decode_uids(h.groups())
    _never_ready_from_now(h, "ms-0-prefill-*")
    h.change_spec(with_image(old, "nginx:bad-image", ("prefill",)))
    _hold(h, 10)
    seen = []

    def observe():
        g = h.groups()[0]
        prefill = g.replicas_of("prefill")
        seen.append(
            (
                sum(r.ready and r.images == {"img:1"} for r in prefill),
                sum(r.images == {"nginx:bad-image"} and not r.ready for r in prefill),
                len(prefill),
            )
        )
        assert _decode_uids(h.groups()) == decode

    _hold(h, 30, each=observe)  # held for 30 s
    assert set(seen) == {(2, 2, 4)}
    assert h.last.stage.blocker is not None and not h.last.stage.complete


def test_E2E_ROLE_MAXSURGE() -> None:
    old = ms_manifest(
        replicas=1, strategy=ROLE, roles=[role("prefill", 2, maxUnavailable=0, maxSurge=1), role("decode", 1)]
    )
    new = with_image(old, "img:2", ("prefill",))
    result, bounds = run(scenario(old, new))
    assert result.exit_code == 0 and not bounds.violations, result.reason
    assert bounds.max_role_live[(0, "prefill")] == 3  # 3 prefill replicas at some point, never > 3
    assert any(
        len({r.images for r in gs[0].replicas_of("prefill")}) == 2 and len(gs[0].replicas_of("prefill")) == 3
        for _, gs in bounds.history
        if 0 in gs
    )
    final = read(result.cluster, parse(new))[0]
    assert len(final.replicas_of("prefill")) == 2 and all(r.images == {"img:2"} for r in final.replicas_of("prefill"))
    assert _decode_uids({0: final}) == _decode_uids(bounds.history[0][1])


@pytest.mark.parametrize("vid", sorted(COVERED))
def test_vector_spec_matches_what_the_scenario_uses(vid: str) -> None:
    assert VECTORS[vid]["unitCheckable"] is False and VECTORS[vid]["kind"] == "e2e"


def test_regression_sparse_role_ordinals_after_a_role_surge_count_as_ready() -> None:
    """Bug fixed in observe._group_running: after E2E-ROLE-MAXSURGE the prefill replicas are {1, 2}
    (role ordinals do not identify surge capacity); the group was judged Running only when replicas
    0..n-1 existed, so it stayed Creating forever (availableReplicas 0, the run never converged)."""
    old = ms_manifest(
        replicas=1, strategy=ROLE, roles=[role("prefill", 2, maxUnavailable=0, maxSurge=1), role("decode", 1)]
    )
    h = Harness.create(old)
    h.change_spec(with_image(old, "img:2", ("prefill",)))
    _roll(h)
    assert [r.ordinal for r in h.groups()[0].replicas_of("prefill")] == [1, 2]
    status = _status(h)
    assert status["availableReplicas"] == 1 and status["updatedReplicas"] == 1
