"""Issue 24 item 1, DisaggregatedSet: a new revision whose pods never become Ready (crash loop,
image pull error, failing readiness probe) in one role or all, then a newer revision or a
rollback to the previous one, converges without a person, within the per-role bounds the DS
e2e reader checks at every simulated second (``ds_helpers.run``)."""

from __future__ import annotations

import pytest
from fault_helpers import BAD, FAULTS, faulty_kubelet, pod_images
from support.ds_helpers import ds_manifest, role, run, scenario, with_image

from pulumi_lws.sim.driver.scenario import Update

OLD = ds_manifest(role("prefill", replicas=2, size=2), role("decode", replicas=2, size=2))


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("roles", [("prefill",), ("prefill", "decode")], ids=["one-role", "all-roles"])
@pytest.mark.parametrize("fix", ["newer", "rollback"])
def test_bad_image_then_a_fix_converges(fault: str, roles: tuple[str, ...], fix: str) -> None:
    bad = with_image(OLD, BAD, roles=roles)
    good = OLD if fix == "rollback" else with_image(OLD, "img:2")
    sc = scenario(OLD, bad, kubelet=faulty_kubelet(fault), updates=[Update(at=40.0, manifest=good)], max_time=400)
    result, bounds = run(sc, ratio=False)
    assert result.exit_code == 0, result.reason
    assert not bounds.violations and not result.trace.violations
    assert BAD not in pod_images(result.cluster)
