"""Property tests: the Ordinal planner on a pure model where groups become ready in random order.

Model (pulumi_lws.lws.rollout.ordinal.predict): each iteration plans the fixed point for the observation,
applies it worst-case (every admitted old group goes down at once, new ordinals come up not
ready), then one random event: a not-ready live group becomes ready, or (rarely) a spec change
mid-rollout -- a second template change, or a replica change.

Definitions used by the invariants:
* live      = leader StatefulSet replicas after the stage (``stage.replicas``);
* available = ready groups among the live ordinals [0, live), surge ordinals included, capped at R;
* a rollout starts at the initial change and at every mid-rollout change; it *started healthy*
  when every live group was ready at that moment; R0 = the live count then;
* floor     = max(0, min(R0, R) - MU) (MU scaled against the current R).

Invariants, for ScaleFirst and RolloutFirst: live <= R + MS; available >= floor after every stage
of a rollout that started healthy; the partition never rises within a rollout and never drops
below the user partition; the rollout completes once every group eventually becomes ready (or settles: upstream keeps the
surge while a user partition > 0 holds groups old, reference §1.6).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pulumi_lws.lws.rollout.budget import rule_for
from pulumi_lws.lws.rollout.ordinal.planner import LeaderSts, RolloutInputs, fixed_point, scale_budgets
from pulumi_lws.lws.rollout.ordinal.predict import apply_decision, available, become_ready, is_complete, is_settled

budget = st.one_of(st.integers(0, 4), st.sampled_from(["0%", "25%", "50%", "100%"]))
ORDERS = ("ScaleFirst", "RolloutFirst")


def spec(r, mu_raw, ms_raw, p_user):
    mu, ms = scale_budgets(r, mu_raw, ms_raw)
    if mu == 0 and ms == 0:
        mu = 1  # webhook rule 11: not both 0
    return RolloutInputs(replicas=r, max_unavailable=mu, max_surge=ms, user_partition=min(p_user, r))


class Scripted:
    """Stands in for ``st.data()`` in an explicit ``@example``: replays draws per label, in order.

    ``run`` draws ``"ready"`` (index into the not-ready live groups, ascending) and ``"change?"``.
    When a label's script is exhausted: ``"ready"`` -> 0 (the lowest not-ready group), anything
    else -> the strategy's default below (``"change?"`` -> 9, no change).
    """

    FALLBACK: ClassVar[dict[str, int]] = {"ready": 0, "change?": 9}

    def __init__(self, draws: dict[str, list[int]]):
        self.script = {label: tuple(values) for label, values in draws.items()}
        self.used: dict[str, int] = {}

    def draw(self, strategy, label=None):
        i = self.used.get(label, 0)
        self.used[label] = i + 1
        values = self.script.get(label, ())
        return values[i] if i < len(values) else self.FALLBACK.get(label, 0)

    def __repr__(self):
        return f"Scripted({self.script})"


# Upstream's surge reclamation bug (docs/reliability.md, docs/rollout.md §2 "Surge hold"): R=5, MU=2,
# MS=4, image change from all-ready. Stage (3, 9) -> groups ooouuuuuu; surge groups 7 and 8 become
# ready (indices 4, 4), then group 1 (stage (1, 9): ouuuuuuUU, index 0). Upstream's next stage
# (1, 7) deleted both ready surge groups: available 2 < floor 3. The surge hold keeps replicas 8.
SURGE_BUG = (replace(spec(5, 2, 4, 0), sts=LeaderSts(5, 0, 5), template_changed=True, states="ooooo"), "ScaleFirst")
SURGE_BUG_READY = {"ready": [4, 4, 0]}


def second_template_change(inp):
    states = inp.states.replace("U", "o").replace("u", "x")
    return replace(inp, template_changed=True, states=states)


@st.composite
def scenarios(draw):
    r0 = draw(st.integers(1, 7))
    r = draw(st.integers(1, 8))
    base = spec(r, draw(budget), draw(budget), draw(st.integers(0, 3)))
    changed = draw(st.booleans()) or r == r0
    start = "o" * r0 if changed else "U" * r0
    p0 = min(base.user_partition, r0)
    inp = replace(base, sts=LeaderSts(r0, p0, r0), template_changed=changed, states=start)
    return inp, draw(st.sampled_from(ORDERS))


def run(inp, order, data, max_events=2):
    rule = rule_for(order)
    healthy, r0 = True, inp.sts.replicas
    events = 0
    idle = 0
    for _ in range(300):
        d, _ = fixed_point(inp, rule)
        assert d.replicas <= inp.replicas + inp.max_surge, (inp, d)
        assert d.partition >= inp.user_partition
        if not inp.template_changed and inp.sts is not None:
            assert d.partition <= max(inp.sts.partition, inp.user_partition), (inp, d)
        done = is_complete(inp, d) or is_settled(inp, d)
        inp, states = apply_decision(inp, d)
        if healthy:
            floor = max(0, min(r0, inp.replicas) - inp.max_unavailable)
            assert available(states, d.replicas, inp.replicas) >= floor, (order, r0, inp, d)
        if done:
            return
        not_ready = [i for i, c in enumerate(states) if c in "ux"]
        if events < max_events and data.draw(st.integers(0, 9), label="change?") == 0:
            events += 1
            live = inp.sts.replicas
            healthy = all(c in "Uo" for c in states[:live])
            r0 = live
            if data.draw(st.booleans(), label="template or replicas"):
                inp = second_template_change(inp)
            else:
                new_r = data.draw(st.integers(1, 8), label="replicas")
                inp = replace(
                    inp,
                    replicas=new_r,
                    user_partition=min(inp.user_partition, new_r),
                    max_surge=min(inp.max_surge, new_r),
                )
            continue
        if not not_ready:  # nothing to wait for: the next reconcile must make progress or finish
            idle += 1
            assert idle < 2, f"blocked without anything left to become ready: {inp} {d}"
            continue
        idle = 0
        i = not_ready[data.draw(st.integers(0, len(not_ready) - 1), label="ready")]
        inp = replace(inp, states=become_ready(states, i))
    raise AssertionError(f"did not converge: {inp}")


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
@example(SURGE_BUG, Scripted(SURGE_BUG_READY))
@example((SURGE_BUG[0], "RolloutFirst"), Scripted(SURGE_BUG_READY))
def test_rollout_invariants_without_mid_rollout_changes(scenario, data):
    inp, order = scenario
    run(inp, order, data, max_events=0)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_rollout_invariants_with_mid_rollout_changes(scenario, data):
    inp, order = scenario
    run(inp, order, data, max_events=2)
