"""Edits to fields outside the DisaggregatedSet revision (role metadata, rolloutStrategy,
startupPolicy, placementPolicy) reach the running children — same revision, same child names, no
DS rollout — instead of being silently ignored until the next template change (upstream only
applies them to children it creates). Checked on the cluster after the next reconcile(s)."""

from __future__ import annotations

import copy
import json

from support.ds_helpers import Harness, converged_on, ds_manifest, parse, role

from pulumi_lws.core.contract.snapshot import pod_running_and_ready
from pulumi_lws.disaggregatedset.revision import compute_revision

BASE = ds_manifest(role("prefill", 2), role("decode", 1))
ZONED = [{"name": f"n{i}", "labels": {"zone": "a" if i < 3 else "b"}, "capacity": {"cpu": "64"}} for i in range(6)]


def edited(change) -> dict:
    m = copy.deepcopy(BASE)
    change(m)
    assert compute_revision(parse(m)) == compute_revision(parse(BASE))  # outside the revision
    return m


def children(h: Harness) -> set[str]:
    return {c.name for o in h.read().values() for c in o.children.values()}


def settle(h: Harness, rounds: int = 30, *, bounds: bool = True) -> None:
    for _ in range(rounds):
        h.up()
        if h.converged():
            return
        if bounds:
            h.advance(2.0)
        else:
            h.cluster.step(h.cluster.clock.now + 2.0)
    raise AssertionError("\n".join(h.log[-5:]))


def test_role_metadata_reaches_the_running_child() -> None:
    h = Harness.create(BASE)
    before = children(h)
    h.change_spec(
        edited(
            lambda m: m["spec"]["roles"][0].update(metadata={"labels": {"team": "a"}, "annotations": {"owner": "x"}})
        )
    )
    settle(h)
    rev = compute_revision(h.spec)
    for name in (f"pd-0-{rev}-prefill", f"pd-0-{rev}-prefill-0", f"pd-0-{rev}-prefill-1"):
        meta = h.cluster.get("StatefulSet", name)["metadata"]
        assert meta["labels"]["team"] == "a" and meta["annotations"]["owner"] == "x", name
    assert "team" not in h.cluster.get("StatefulSet", f"pd-0-{rev}-decode")["metadata"]["labels"]
    assert children(h) == before


def test_rollout_strategy_reaches_the_running_child() -> None:
    h = Harness.create(BASE)
    rev = compute_revision(h.spec)
    before = h.cluster.get("StatefulSet", f"pd-0-{rev}-prefill")["spec"]["updateStrategy"]["rollingUpdate"]
    h.change_spec(
        edited(
            lambda m: m["spec"]["roles"][0]["spec"].update(
                rolloutStrategy={
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxSurge": 2, "maxUnavailable": 1},
                }
            )
        )
    )
    settle(h)
    leader = h.cluster.get("StatefulSet", f"pd-0-{rev}-prefill")
    # the child's own leader StatefulSet budget: upstream LWS sets maxUnavailable + maxSurge there
    assert leader["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == 3 != before.get("maxUnavailable")


def _worker_waits_for_leader(policy: str | None) -> list[tuple[bool, bool]]:
    """Restart prefill group 0 (its leader crashes: the group is recreated) after setting
    ``startupPolicy``; per reconcile: (leader Ready, worker StatefulSet present)."""
    m = copy.deepcopy(BASE)
    if policy:
        m["spec"]["roles"][0]["spec"]["startupPolicy"] = policy
    h = Harness.create(BASE, ready=3.0)
    h.change_spec(m)
    h.up()
    leader = f"pd-0-{compute_revision(h.spec)}-prefill-0"
    h.cluster.crash_pod("default", leader)
    h.bounds.disarm()  # a fault: the floors re-arm once ready again
    seen = []
    for _ in range(10):
        h.up()
        pod, workers = h.cluster.get("Pod", leader), h.cluster.get("StatefulSet", leader)
        seen.append(
            (
                pod is not None and pod_running_and_ready(pod),
                workers is not None and not workers["metadata"].get("deletionTimestamp"),
            )
        )
        h.advance(1.0)
    assert converged_on(h.cluster, h.spec) == []
    return seen


def test_startup_policy_reaches_the_running_child() -> None:
    """LeaderReady set on a running child: its recreated group's workers wait for a Ready leader;
    with the default (LeaderCreated) they come back with the leader."""
    default = _worker_waits_for_leader(None)
    leader_ready = _worker_waits_for_leader("LeaderReady")
    assert (False, True) in default  # workers while the leader is not Ready yet
    assert (False, True) not in leader_ready and (True, True) in leader_ready


def test_placement_reaches_the_running_children_without_a_ds_rollout() -> None:
    """The new affinity changes each child's pod template, not the DS revision: every child rolls
    its own groups in place, paced by its own LeaderWorkerSet budget (the role's rolloutStrategy;
    omitted: LWS's maxUnavailable 1), not by the DS lockstep — so the DS bounds are not asserted
    here (docs/disaggregatedset.md, "in-place child rolls")."""
    h = Harness.create(BASE, nodes=ZONED)
    before = children(h)
    h.change_spec(edited(lambda m: m["spec"].update(placementPolicy={"type": "ExclusiveSlice", "topology": "zone"})))
    settle(h, 60, bounds=False)
    assert children(h) == before  # the same child LeaderWorkerSets: no DS revision, no DS rollout
    pods = h.cluster.list("Pod")
    assert pods and all('"topologyKey": "zone"' in json.dumps(p["spec"].get("affinity") or {}) for p in pods)
    zones = {n["metadata"]["name"]: n["metadata"]["labels"]["zone"] for n in h.cluster.list("Node", None)}
    assert len({zones[p["spec"]["nodeName"]] for p in pods}) == 1  # the whole slice in one zone
