"""Re-run safety at every stage (the #225 incident: a restart pushed the new template everywhere).

Drive whole rollouts through ``plan_ordinal`` on Snapshots built from the pure model's group
states. At every stage: planning twice on the same snapshot gives the same stage; no ordinal below
the partition is assigned the target revision unless it is observed on it; ``group_revisions``
covers exactly ``[0, stage.replicas)``; the stage equals the pure fixed point.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fixtures_ordinal import catalog_for, make_lws, snapshot_from_chars

from pulumi_lws.lws.reconcile import ReconcileOptions
from pulumi_lws.lws.revision import revision_key
from pulumi_lws.lws.rollout.budget import rule_for
from pulumi_lws.lws.rollout.ordinal.planner import Decision, fixed_point, ordinal_inputs, plan_ordinal
from pulumi_lws.lws.rollout.ordinal.predict import apply_decision, become_ready


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    r0=st.integers(1, 5),
    r=st.integers(1, 6),
    mu=st.integers(0, 3),
    ms=st.integers(0, 2),
    p_user=st.integers(0, 2),
    order=st.sampled_from(["ScaleFirst", "RolloutFirst"]),
    data=st.data(),
)
def test_replanning_every_stage_is_stable_and_never_moves_old_groups(r0, r, mu, ms, p_user, order, data):
    if mu == 0 and ms == 0:
        mu = 1
    old = make_lws(replicas=r0, image="v1", mu=mu, ms=ms, partition=p_user)
    new = make_lws(replicas=r, image="v2", mu=mu, ms=ms, partition=p_user)
    old_key, new_key = revision_key(old), revision_key(new)
    opts = ReconcileOptions(update_order=order)
    states, sts = "o" * r0, (r0, min(p_user, r0), r0)
    sts_key = old_key
    for _ in range(200):
        snap = snapshot_from_chars(
            states, old=old, new=new, sts_key=sts_key, sts_replicas=sts[0], partition=sts[1], annotation=sts[2]
        )
        cat = catalog_for(new, snap)
        a, b = plan_ordinal(new, snap, cat, opts), plan_ordinal(new, snap, cat, opts)
        assert a == b
        assert set(a.group_revisions) == {str(i) for i in range(a.replicas)}
        observed = {g.index: g.revision for g in a.groups}
        for i, rev in a.group_revisions.items():
            if int(i) < a.partition:
                assert rev != new_key or observed.get(int(i)) == new_key, (i, states, a.partition)
        inp = ordinal_inputs(new, snap.get("StatefulSet", "demo"), a.groups, new_key)
        d, _ = fixed_point(inp, rule_for(order))
        assert (a.replicas, a.partition) == (d.replicas, d.partition)
        if a.complete:
            return
        nxt, states = apply_decision(inp, Decision(a.partition, a.replicas, a.case or ""))
        sts, sts_key = (nxt.sts.replicas, nxt.sts.partition, nxt.sts.replicas_annotation), new_key
        not_ready = [i for i, c in enumerate(states) if c in "ux"]
        if not not_ready:
            if a.blocker is not None:  # settled (user partition keeps surge): nothing more to do
                return
            continue
        i = not_ready[data.draw(st.integers(0, len(not_ready) - 1))]
        states = become_ready(states, i)
    raise AssertionError("did not converge")
