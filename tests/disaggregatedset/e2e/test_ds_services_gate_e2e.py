"""A revision's ``<child>-prv`` headless Services exist only once that revision has a ready group
on every spec role (upstream creates them when the revision is ready on all roles): during an
image change whose new decode groups are slow, the new revision has no Service while only its
prefill is ready, the old revision keeps its Services, and both roles' Services appear together."""

from __future__ import annotations

from support.ds_helpers import Harness, Override, ds_manifest, parse, role, with_image

from pulumi_lws.disaggregatedset.revision import compute_revision


def services(h: Harness, rev: str) -> set[str]:
    return {
        s["metadata"]["name"]
        for s in h.cluster.list("Service")
        if s["metadata"]["name"].endswith("-prv") and f"-{rev}-" in s["metadata"]["name"]
    }


def test_services_wait_for_a_ready_group_on_every_role() -> None:
    old = ds_manifest(role("prefill", 2, 1), role("decode", 1, 1))
    new = with_image(old, "img:2")
    old_rev, new_rev = compute_revision(parse(old)), compute_revision(parse(new))
    h = Harness.create(old, ready=1.0, overrides=[Override(pod=f"pd-0-{new_rev}-decode-*", ready=12.0)])
    assert services(h, old_rev) == {f"pd-0-{old_rev}-prefill-prv", f"pd-0-{old_rev}-decode-prv"}
    h.change_spec(new)
    states = []
    for _ in range(40):
        h.up()
        ready = {
            c.role: len(c.ready) for (_, r), o in h.read().items() for rev, c in o.children.items() if rev == new_rev
        }
        states.append((ready.get("prefill", 0), ready.get("decode", 0), services(h, new_rev)))
        if h.converged():
            break
        h.advance(1.0)
    assert any(p > 0 and d == 0 and not svc for p, d, svc in states), states  # prefill ready alone: none
    assert all(svc in (set(), {f"pd-0-{new_rev}-prefill-prv", f"pd-0-{new_rev}-decode-prv"}) for _, _, svc in states)
    assert all(not svc for p, d, svc in states if d == 0 or p == 0)
    assert services(h, new_rev) == {f"pd-0-{new_rev}-prefill-prv", f"pd-0-{new_rev}-decode-prv"}
    assert services(h, old_rev) == set()  # the old revision's go with it
