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
from ds_helpers import Harness, converged_on, ds_manifest, role, with_image

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
