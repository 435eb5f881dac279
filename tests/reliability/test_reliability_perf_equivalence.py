"""The bench-driven optimizations of the Ordinal planner/model are exact rewrites.

`ordinal_algo` (continuous_ready_replicas, lws_unready_replicas, rolling_update_partition) and
`predict` (apply_decision, available, is_complete/is_settled, next_ready) now use str operations
instead of per-ordinal Python loops (plan next stage for 10,000 groups: 4.6 ms -> 0.06 ms;
predictions: ~2 s -> ~30 ms). Each is compared here with the original loop, kept verbatim as the
reference, on random group strings (including positions past the end of the string = absent).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.lws.rollout.ordinal import algo as A
from pulumi_lws.lws.rollout.ordinal import predict as P
from pulumi_lws.lws.rollout.ordinal.algo import (
    Decision,
    LeaderSts,
    RolloutInputs,
    is_ready,
    is_ready_updated,
    is_updated,
    state_at,
)

states_st = st.text(alphabet="Uoux-", max_size=30)
n_st = st.integers(-2, 35)


def ref_continuous(states, s):
    count = 0
    for i in range(s - 1, -1, -1):
        if not is_ready_updated(states, i):
            break
        count += 1
    return count


def ref_unready(states, r):
    return sum(1 for i in range(r) if not is_ready_updated(states, i))


def ref_partition(states, s, step, current):
    tail = ref_continuous(states, s)
    base = max(0, s - tail - step)
    p = base + sum(1 for i in range(base) if not is_ready(states, i))
    for i in range(min(p, s - 1), base - 1, -1):
        if not is_ready(states, i) or is_updated(states, i):
            p = i
        else:
            break
    return min(p, current)


def ref_apply(inp, d):
    has_old = inp.template_changed or any(c in "ox" for c in inp.states[: inp.sts.replicas if inp.sts else 0])
    out = []
    for i in range(d.replicas):
        c = state_at(inp.states, i)
        if c == "-":
            c = "u" if (i >= d.partition or not has_old) else "x"
        if i >= d.partition and c in "ox":
            c = "u"
        out.append(c)
    return "".join(out)


@settings(max_examples=600, deadline=None)
@given(states_st, n_st, st.integers(-3, 10), st.integers(0, 35))
def test_algo_rewrites_match_the_loops(states, s, step, current):
    assert A.continuous_ready_replicas(states, s) == ref_continuous(states, s)
    assert A.lws_unready_replicas(states, s) == ref_unready(states, s)
    assert A.rolling_update_partition(states, s, step, current) == ref_partition(states, s, step, current)


@settings(max_examples=600, deadline=None)
@given(states_st, st.integers(0, 30), st.integers(0, 30), st.booleans(), st.integers(0, 30), st.integers(0, 30))
def test_model_rewrites_match_the_loops(states, replicas, partition, changed, sts_r, p_user):
    inp = RolloutInputs(
        replicas=max(1, sts_r),
        max_unavailable=1,
        max_surge=1,
        user_partition=min(p_user, max(1, sts_r)),
        sts=LeaderSts(sts_r, 0, sts_r),
        template_changed=changed,
        states=states,
    )
    d = Decision(partition, replicas, "5")
    _, got = P.apply_decision(inp, d)
    assert got == ref_apply(inp, d)
    assert P.available(states, replicas, sts_r) == min(sts_r, sum(1 for i in range(replicas) if is_ready(states, i)))
    ref_all = all(is_ready_updated(states, i) for i in range(inp.user_partition, inp.replicas))
    assert P._all_ready_updated(states, inp.user_partition, inp.replicas) == ref_all


@settings(max_examples=600, deadline=None)
@given(states_st, st.sets(st.integers(0, 35), max_size=8), st.integers(0, 30))
def test_next_ready_is_the_head_of_ready_order(states, created, partition):
    order = P.ready_order(states, partition, frozenset(created))
    assert P.next_ready(states, created) == (order[0] if order else None)
