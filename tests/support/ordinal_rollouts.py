"""A hypothesis strategy of Ordinal rollout inputs (an image change from a random ready/updated
start, random budgets and update order), shared by the prediction tests of every size."""

from __future__ import annotations

from hypothesis import strategies as st

from pulumi_lws.lws.rollout.ordinal.algo import LeaderSts, RolloutInputs, scale_budgets


def rollouts(max_replicas: int, max_budget: int) -> st.SearchStrategy:
    """``(RolloutInputs, update order)`` of 1..``max_replicas`` groups, budgets 0..``max_budget``."""

    @st.composite
    def build(draw):
        r = draw(st.integers(1, max_replicas))
        mu, ms = scale_budgets(r, draw(st.integers(0, max_budget)), draw(st.integers(0, max_budget)))
        start = draw(st.text("oU", min_size=r, max_size=r))
        return RolloutInputs(
            replicas=r, max_unavailable=mu, max_surge=ms, sts=LeaderSts(r, 0, r), template_changed=True, states=start
        ), draw(st.sampled_from(["ScaleFirst", "RolloutFirst"]))

    return build()
