"""DisaggregatedSet's cases of the crash / re-run suite (tests/reliability/test_crash_every_api.py).

``random_case(seed)`` draws a rollout from ``random.Random(seed)``: converged on 2 or 3 roles of
random replicas, maxSurge / maxUnavailable (int, %, or omitted: upstream's 1 / 0), group size and
1 or 2 slices, to a new image (sometimes A -> B -> C), with readiness delays and slow pods; soak
seeds (>= ``SOAK_SEEDS``) go to a bad image first in ``BAD_IMAGE_FRACTION`` of the cases.
``create(case)`` is the harness the case starts from; :func:`scale_outside_rollout` the extra
phase half the cases run once converged. Seeded: a failure replays with
``DISAGGREGATEDSET.run(random_case(seed))``.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

from fault_helpers import BAD, arm, bad_image_draw

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.lws import labels as L
from pulumi_lws.sim.cluster.kubelet import Timing
from support.ds_helpers import NS, Harness, Override, converged_on, ds_manifest, parse, role, with_image

BUDGETS = (0, 1, 2, "25%", "50%")


@dataclass
class Case:
    seed: int
    start: dict[str, Any]
    changes: list[dict[str, Any]]
    ready: float
    slow: dict[str, float]
    p_crash: float
    p_change: float = 0.15
    #: issue 24: the first change is a bad image failing this way (crash, pull, probe), then a fix
    bad_image: str | None = None

    def describe(self) -> str:
        s = self.start["spec"]
        roles = [
            (
                r["name"],
                r["spec"]["replicas"],
                r["spec"]["leaderWorkerTemplate"]["size"],
                (r["spec"].get("rolloutStrategy") or {}).get("rollingUpdateConfiguration"),
            )
            for r in s["roles"]
        ]
        return (
            f"seed={self.seed} slices={s.get('slices', 1)} roles={roles} ready={self.ready} slow={self.slow} "
            f"p_crash={self.p_crash} changes={len(self.changes)}"
            + (f" bad-image={self.bad_image}" if self.bad_image else "")
        )


def _budget(rng: random.Random, n: int) -> tuple[Any, Any] | tuple[None, None]:
    if rng.random() < 0.3:
        return None, None  # omitted: upstream's surge 1 / unavailable 0
    for _ in range(50):
        surge, mu = rng.choice(BUDGETS), rng.choice(BUDGETS)
        s, u = scaled_value(surge, n, round_up=True), scaled_value(mu, n, round_up=False)
        if (u > 0 or s > 0) and not excepted(s, u, n):
            return surge, mu
    return 1, 0


def excepted(surge: int, unavailable: int, replicas: int) -> bool:
    """maxSurge 0 with maxUnavailable >= replicas: upstream's force drain undone by its orphan
    prevention raises such a role over ``target + maxSurge`` and the stage planner applies it as
    upstream does (rollout/apply.py module doc; ``test_documented_ceiling_exception``): excluded
    from the random cases, whose bounds are strict."""
    return surge == 0 and unavailable >= replicas


#: fraction of soak cases (seeds >= SOAK_SEEDS) whose first change is a bad image, then a fix
BAD_IMAGE_FRACTION = 0.2
SOAK_SEEDS = 70_000


def random_case(seed: int, bad_image: str | None = None) -> Case:
    """``bad_image`` (crash, pull, probe; drawn for ``BAD_IMAGE_FRACTION`` of soak seeds): the
    rollout first goes to a bad image on every role, then to the drawn changes."""
    rng = random.Random(seed)
    names = ["prefill", "decode", "router"][: rng.choice((2, 2, 3))]
    roles = []
    for name in names:
        n = rng.randint(1, 6 if name == "prefill" else 3)
        surge, mu = _budget(rng, n)
        roles.append(role(name, n, rng.choice((1, 2)), surge=surge, unavailable=mu))
    start = ds_manifest(*roles, slices=rng.choice((1, 1, 1, 2)))
    changes = [with_image(start, f"img:{v}") for v in range(2, 2 + rng.choice((1, 1, 2)))]
    slow = {f"pd-*-{g}": float(rng.choice((4, 7, 11))) for g in range(4) if rng.random() < 0.2}
    case = Case(seed, start, changes, float(rng.choice((0, 1, 2, 3))), slow, rng.choice((0.0, 0.3, 0.6)))
    if bad_image is None and seed >= SOAK_SEEDS:
        bad_image = bad_image_draw(seed, BAD_IMAGE_FRACTION)
    if bad_image:
        case.changes.insert(0, with_image(start, BAD))
        case.bad_image = bad_image
    return case


def create(case: Case) -> Harness:
    """The converged harness of ``case``; its kubelet fails the bad image (if any) from now on."""
    h = Harness.create(case.start, seed=case.seed, ready=case.ready, overrides=_overrides(case))
    if case.bad_image:
        arm(h.cluster.kubelet.config, case.bad_image)
    return h


def final_problems(h: Harness) -> list[str]:
    """Once converged: every role has exactly its target of ready groups on the target revision and nothing else."""
    return converged_on(h.cluster, h.spec)


def _overrides(case: Case) -> list[Override]:
    return [Override(pod=f"{glob}*", ready=s) for glob, s in case.slow.items()]


def scale_outside_rollout(case: Case, h: Harness) -> dict[str, Any] | None:
    """Half the cases, once the rollout converged: one role's ``replicas`` edited (+-1..2) while
    a leader pod of another role restarts (ready 6 s later) — a scale outside a rollout, applied
    at once (issue 24; no barrier), with the case's crash probability at every stage after it.
    Its own RNG, so the rollout part of every seeded case stays as it was. None: no such phase."""
    rng = random.Random(7_919 * case.seed + 3)
    if rng.random() < 0.5:
        return None
    edited = copy.deepcopy(h.desired)
    roles = edited["spec"]["roles"]
    chosen = rng.randrange(len(roles))
    spec = roles[chosen]["spec"]
    n = max(1, spec["replicas"] + rng.choice((-2, -1, 1, 2)))
    budget = (spec.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration")
    if budget is not None and excepted(
        scaled_value(budget.get("maxSurge", 0), n, round_up=True),
        scaled_value(budget.get("maxUnavailable", 1), n, round_up=False),
        n,
    ):
        return None
    spec["replicas"] = n
    try:  # a percentage budget may round to 0|0 at the new replicas: upstream's webhook rejects it
        parse(edited)
    except SpecError:
        return None
    other = roles[(chosen + 1) % len(roles)]["name"]
    leaders = sorted(
        p["metadata"]["name"]
        for p in h.cluster.list("Pod", NS)
        if p["metadata"]["labels"].get(DL.ROLE) == other
        and p["metadata"]["labels"].get(L.WORKER_INDEX) == "0"
        and not p["metadata"].get("deletionTimestamp")
    )
    if leaders:
        victim = leaders[rng.randrange(len(leaders))]
        h.cluster.store.get("Pod", NS, victim)["_sim_kubelet"]["timing"] = Timing(start=0.0, ready=6.0)
        h.cluster.restart_container(NS, victim)
    h.bounds.spec_changed(h.spec)  # a lowered target: the previous ceiling while it scales down; floors re-arm
    return edited
