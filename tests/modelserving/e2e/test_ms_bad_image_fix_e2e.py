"""Issue 24 item 1, ModelServing: a new revision whose pods never become Ready (crash loop, image
pull error, failing readiness probe), then a newer revision or a rollback to the previous one,
converges without a person under both strategies, within the bounds the MS e2e reader checks
at every simulated second (``ms_helpers.run``). Before the fix the group relabelled to the newest
revision kept its broken pod for ever (``waiting-for-groups``): its StatefulSets do not replace an
unready pod once their maxUnavailable is used up; the stage now deletes it (forced rollback)."""

from __future__ import annotations

import pytest
from fault_helpers import BAD, FAULTS, faulty_kubelet, forced_deletes, pod_images
from support.ms_helpers import ROLE, SG, ms_manifest, role, run, scenario, with_image

from pulumi_lws.sim.driver.scenario import Update


def _old(strategy: str, **budget) -> dict:
    return ms_manifest(
        replicas=3, roles=[role("prefill", workers=1), role("decode", workers=1)], strategy=strategy, **budget
    )


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("strategy", [SG, ROLE])
@pytest.mark.parametrize("fix", ["newer", "rollback"])
def test_bad_image_then_a_fix_converges(fault: str, strategy: str, fix: str) -> None:
    old = _old(strategy)
    bad = with_image(old, BAD)
    good = old if fix == "rollback" else with_image(old, "img:2")
    result, bounds = run(
        scenario(old, bad, kubelet=faulty_kubelet(fault), updates=[Update(at=40.0, manifest=good)], max_time=400)
    )
    assert result.exit_code == 0, result.reason
    assert not bounds.violations and not result.trace.violations
    assert BAD not in pod_images(result.cluster)
    if fault != "crash":  # a crash loop restarts containers: recovery already deletes those pods
        assert forced_deletes(result)


@pytest.mark.parametrize("fault", ["probe", "pull"])
def test_bad_image_in_one_role_then_a_fix_with_surge(fault: str) -> None:
    old = _old(SG, mu=1, surge=1)
    bad = with_image(old, BAD, roles=("decode",))
    result, bounds = run(
        scenario(
            old,
            bad,
            kubelet=faulty_kubelet(fault),
            updates=[Update(at=40.0, manifest=with_image(old, "img:3"))],
            max_time=400,
        )
    )
    assert result.exit_code == 0, result.reason
    assert not bounds.violations and BAD not in pod_images(result.cluster)
