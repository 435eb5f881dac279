"""An autoscaler scaling an External role during a rollout, in the simulator (lws#1022: upstream
blocks scaling for the whole rollout). The test plays the autoscaler: it writes the
DisaggregatedSetRoleScaler's ``spec.replicas`` (what ``/scale`` writes) while the image rolls.
At every reconcile the component never overwrites that value; at every observed state (each
reconcile and each simulated second) ``ds_helpers.Bounds`` holds per role with the External
role's budget taken from its scaler (floor re-armed once ready at a new value, the previous
ceiling kept while a lowered role scales down); the rollout converges to the autoscaler's value
and the scaler's status (what an HPA reads) follows, written by ``patch-status``."""

from __future__ import annotations

import pytest
from support.ds_helpers import Harness, converged_on, ds_manifest, role, with_image

from pulumi_lws.disaggregatedset import external
from pulumi_lws.disaggregatedset.revision import compute_revision

SCALER = "pd-decode"


def external_manifest() -> dict:
    decode = role("decode", 1, 2, surge=1, unavailable=0)
    decode["scaling"] = {"mode": "External"}
    return ds_manifest(role("prefill", 3, 2, surge=1, unavailable=0), decode)


def autoscale(h: Harness, replicas: int) -> None:
    obj = h.cluster.store.get(external.SCALER_KIND, "default", SCALER)
    obj["spec"]["replicas"] = replicas
    h.cluster.store.touch(obj, spec_changed=True)


def scaler(h: Harness) -> dict:
    return h.cluster.get(external.SCALER_KIND, SCALER)


def decode_split(h: Harness) -> tuple[int, int]:
    """(old, new) decode spec replicas as the cluster shows them."""
    ro = h.read().get((0, "decode"))
    old, new, _, _ = ro.split(compute_revision(h.spec)) if ro else (0, 0, 0, 0)
    return old, new


def drive(h: Harness, *, wanted: list[int], hook=None, max_stages: int = 80) -> list[tuple[int, int]]:
    """Reconcile + 2 s of cluster time until converged; after every reconcile the scaler still
    holds the autoscaler's last value (``wanted[-1]``). Returns the decode (old, new) per stage."""
    seen = []
    for i in range(max_stages):
        if hook is not None:
            hook(i, h)
        h.up()
        h.check()
        assert scaler(h)["spec"]["replicas"] == wanted[-1], "the component overwrote the autoscaler's value"
        seen.append(decode_split(h))
        if h.converged():
            return seen
        h.advance(2.0)
    raise AssertionError("no convergence:\n" + "\n".join(h.log[-6:]))


@pytest.mark.parametrize("mid_value", [4, 3])
def test_autoscaler_raises_an_external_role_mid_rollout(mid_value: int) -> None:
    h = Harness.create(external_manifest(), ready=2.0)
    assert scaler(h)["spec"]["replicas"] == 1  # seeded once
    wanted = [2]
    autoscale(h, 2)
    drive(h, wanted=wanted)
    assert decode_split(h) == (0, 2)

    h.change_spec(with_image(external_manifest(), "img:2"))
    raised_while_rolling = []

    def mid(i: int, hh: Harness) -> None:
        old, new = decode_split(hh)
        if wanted[-1] == 2 and old > 0 and new > 0:
            wanted.append(mid_value)
            autoscale(hh, mid_value)
        elif wanted[-1] == mid_value and old > 0 and new > 2:
            raised_while_rolling.append((old, new))

    seen = drive(h, wanted=wanted, hook=mid)
    assert wanted == [2, mid_value] and raised_while_rolling, seen  # scaled beyond 2 while old decode still ran
    assert converged_on(h.cluster, h.spec) == []
    assert decode_split(h) == (0, mid_value)
    assert not h.bounds.violations
    h.up()  # the last status write lands; then nothing is left to write
    status = scaler(h)["status"]
    assert status["replicas"] == mid_value and status["selector"] == external.selector(h.spec, "decode")
    assert not [a for a in h.up()[0].stage.actions if a.verb == "patch-status"]
    # the DS status reads the scaler as the External role's target: Available once converged on it
    status = h.WORKLOAD.status(h.spec, h.snapshot(), h.last.stage)
    assert {r["name"]: r["replicas"] for r in status["roleStatuses"]} == {"prefill": 3, "decode": mid_value}
    assert [c["type"] for c in status["conditions"] if c["status"] == "True"] == ["Available"]


def test_autoscaler_lowers_an_external_role_mid_rollout() -> None:
    """Upstream's no-shrink guard: mid-rollout the new revision never shrinks below what it runs;
    the lower value is reached once the rollout is done, never overwritten meanwhile."""
    h = Harness.create(external_manifest(), ready=2.0)
    wanted = [3]
    autoscale(h, 3)
    drive(h, wanted=wanted)
    h.change_spec(with_image(external_manifest(), "img:2"))

    def mid(i: int, hh: Harness) -> None:
        old, new = decode_split(hh)
        if wanted[-1] == 3 and old > 0 and new >= 2:
            wanted.append(1)
            autoscale(hh, 1)

    drive(h, wanted=wanted, hook=mid)
    assert wanted == [3, 1]
    assert converged_on(h.cluster, h.spec) == [] and decode_split(h) == (0, 1)
    assert not h.bounds.violations


def _restart_a_pod_of(h: Harness, role_name: str) -> str:
    """A container of one of ``role_name``'s leader pods exits and restarts: that role has an
    unready replica for the next seconds (a real fleet under load)."""
    from support.ds_helpers import NS

    from pulumi_lws.disaggregatedset import labels as DL
    from pulumi_lws.lws import labels as L

    pods = sorted(
        p["metadata"]["name"]
        for p in h.cluster.list("Pod", NS)
        if p["metadata"]["labels"].get(DL.ROLE) == role_name and p["metadata"]["labels"].get(L.WORKER_INDEX) == "0"
    )
    _restart(h, pods[0])
    return pods[0]


def test_an_autoscaler_raise_outside_a_rollout_is_applied_while_another_role_restarts() -> None:
    """Issue 24 item 2: converged (no rollout), a prefill pod restarts — prefill has an unready
    replica — and the autoscaler raises decode 2 -> 4: the very next reconcile declares decode at
    4 (upstream's reconcileSimple), no barrier, no waiting-for-roles blocker; then it converges
    within the bounds."""
    h = Harness.create(external_manifest(), ready=2.0)
    autoscale(h, 2)
    drive(h, wanted=[2])
    assert decode_split(h) == (0, 2)

    _restart_a_pod_of(h, "prefill")
    assert h.read()[(0, "prefill")].ready < 3  # the restart is observed: prefill is short of ready
    autoscale(h, 4)
    reconciled = h.up()[0]
    assert decode_split(h) == (0, 4), "the raise waited for prefill's readiness"
    assert reconciled.stage.blocker is None or reconciled.stage.blocker.code != "waiting-for-roles"
    drive(h, wanted=[4])
    assert converged_on(h.cluster, h.spec) == [] and not h.bounds.violations


def test_a_replicas_edit_outside_a_rollout_is_applied_while_another_role_restarts() -> None:
    """The same for a Static role's ``replicas`` edit: prefill 3 -> 5 lands in one reconcile
    while a decode pod restarts."""
    h = Harness.create(external_manifest(), ready=2.0)
    autoscale(h, 2)
    drive(h, wanted=[2])
    _restart_a_pod_of(h, "decode")
    assert h.read()[(0, "decode")].ready < 2
    edited = external_manifest()
    edited["spec"]["roles"][0]["spec"]["replicas"] = 5
    h.change_spec(edited)
    h.up()
    ro = h.read()[(0, "prefill")]
    assert ro.split(compute_revision(h.spec))[1] == 5
    drive(h, wanted=[2])
    assert converged_on(h.cluster, h.spec) == []


def test_a_rollout_still_holds_the_barrier_when_a_pod_restarts() -> None:
    """Mid-rollout (old decode still runs, the target children name the revision they replace) a
    new prefill pod restarts and the autoscaler raises decode: no role's new child grows while
    another's new replicas are unready (ds_helpers.Bounds checks it at every state), and the
    target children carry ``replaces-revisions`` until the rollout leaves them at their targets."""
    from pulumi_lws.disaggregatedset import labels as DL

    h = Harness.create(external_manifest(), ready=2.0)
    autoscale(h, 2)
    drive(h, wanted=[2])
    old_revision = compute_revision(h.spec)
    h.change_spec(with_image(external_manifest(), "img:2"))
    wanted = [2]
    held: list[tuple[int, int]] = []

    def mid(i: int, hh: Harness) -> None:
        old, new = decode_split(hh)
        prefill_new = hh.read()[(0, "prefill")].children.get(compute_revision(hh.spec))
        if wanted == [2] and old > 0 and new > 0 and prefill_new is not None and prefill_new.ready:
            assert prefill_new.replaces == old_revision
            _restart_a_pod_of_revision(hh, "prefill", compute_revision(hh.spec))
            wanted.append(3)
            autoscale(hh, 3)
            before = decode_split(hh)
            hh.up()
            held.append((before[1], decode_split(hh)[1]))

    drive(h, wanted=wanted, hook=mid)
    assert held and held[0][1] == held[0][0], f"decode's new child grew while prefill restarted: {held}"
    assert not h.bounds.violations
    assert decode_split(h) == (0, 3)
    leaders = [
        s for s in h.cluster.list("StatefulSet", "default") if s["metadata"]["name"].endswith(("-prefill", "-decode"))
    ]
    assert leaders and all(DL.REPLACES not in (s["metadata"].get("annotations") or {}) for s in leaders)


def _restart_a_pod_of_revision(h: Harness, role_name: str, revision: str) -> None:
    from support.ds_helpers import NS

    from pulumi_lws.disaggregatedset import labels as DL
    from pulumi_lws.lws import labels as L

    pods = sorted(
        p["metadata"]["name"]
        for p in h.cluster.list("Pod", NS)
        if p["metadata"]["labels"].get(DL.ROLE) == role_name
        and p["metadata"]["labels"].get(DL.REVISION) == revision
        and p["metadata"]["labels"].get(L.WORKER_INDEX) == "0"
        and not p["metadata"].get("deletionTimestamp")
    )
    _restart(h, pods[0])


def _restart(h: Harness, pod_name: str, ready_after: float = 10.0) -> None:
    """``pod_name``'s container restarts and is ready again ``ready_after`` seconds later (the
    warm-up's pods start instantly: give this one a readiness delay first)."""
    from support.ds_helpers import NS

    from pulumi_lws.sim.cluster.kubelet import Timing

    h.cluster.store.get("Pod", NS, pod_name)["_sim_kubelet"]["timing"] = Timing(start=0.0, ready=ready_after)
    h.cluster.restart_container(NS, pod_name)
    h.bounds.disarm()  # a fault: the floors re-arm once every role is ready again
