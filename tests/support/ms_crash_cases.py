"""ModelServing's cases of the crash / re-run suite (tests/reliability/test_crash_every_api.py).

``random_case(seed)`` draws a rollout from ``random.Random(seed)``: converged on a start spec, to a
new image with a random strategy (ServingGroupRollingUpdate on even seeds, RoleRollingUpdate on
odd ones), replicas, maxUnavailable / maxSurge (int or %), partition, the max-groups-in-flight
cap, readiness delays and slow groups; soak seeds (>= ``SOAK_SEEDS``) go to a bad image first in
``BAD_IMAGE_FRACTION`` of the cases. ``create(case)`` is the harness the case starts from (warmed
up, its bounds armed); ``final_problems`` what must hold once it converged. Seeded: the same seed
is the same case, so a failure replays with ``MODELSERVING.run(random_case(seed))``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from fault_helpers import BAD, arm, bad_image_draw

from pulumi_lws.core.k8s.scaling import scaled_value
from pulumi_lws.modelserving.revision import modelserving_revision
from support.ms_helpers import ROLE, SG, Harness, ms_manifest, role, with_image

BUDGETS = (0, 1, 2, "25%", "50%", "100%")


@dataclass
class Case:
    seed: int
    strategy: str
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
        return (
            f"seed={self.seed} {self.strategy} R={s['replicas']} rollout={s['rolloutStrategy']} "
            f"roles={[(r['name'], r['replicas'], r.get('maxUnavailable'), r.get('maxSurge'), r.get('partition')) for r in s['template']['roles']]} "
            f"ready={self.ready} slow={self.slow} p_crash={self.p_crash} changes={len(self.changes)}"
            + (f" bad-image={self.bad_image}" if self.bad_image else "")
        )


def _pair(rng: random.Random, n: int, partition: int = 0) -> tuple[Any, Any]:
    for _ in range(50):
        mu, ms = rng.choice(BUDGETS), rng.choice(BUDGETS)
        if n <= partition or scaled_value(mu, n, round_up=False) > 0 or scaled_value(ms, n, round_up=True) > 0:
            return mu, ms
    return 1, 0


#: fraction of soak cases (seeds >= SOAK_SEEDS) whose first change is a bad image, then a fix
BAD_IMAGE_FRACTION = 0.2
SOAK_SEEDS = 50_000


def random_case(seed: int, bad_image: str | None = None) -> Case:
    """``bad_image`` (crash, pull, probe; drawn for ``BAD_IMAGE_FRACTION`` of soak seeds): the
    rollout first goes to a bad image on every role, then to the drawn changes."""
    rng = random.Random(seed)
    strategy = SG if seed % 2 == 0 else ROLE
    if strategy == SG:
        replicas = rng.randint(1, 5)
        partition = rng.choice((0, 0, 0, 1, 2))
        partition = min(partition, replicas)
        mu, surge = _pair(rng, replicas, partition)
        workers = rng.choice((0, 1))
        start = ms_manifest(
            replicas=replicas,
            mu=mu,
            surge=surge,
            partition=partition or None,
            roles=[role("prefill", 1, workers), role("decode", 1, workers)],
        )
    else:
        replicas = rng.randint(1, 3)
        n = rng.randint(1, 3)
        mu, surge = _pair(rng, n)
        mu = mu if scaled_value(mu, n, round_up=False) <= n else n
        cap = rng.choice((None, None, "1"))
        start = ms_manifest(
            replicas=replicas,
            strategy=ROLE,
            annotations={"pulumi-lws.io/max-groups-in-flight": cap} if cap else None,
            roles=[role("prefill", n, rng.choice((0, 1)), maxUnavailable=mu, maxSurge=surge), role("decode", 1, 0)],
        )
    only = ("prefill",) if strategy == ROLE and rng.random() < 0.5 else None
    changes = [with_image(start, f"img:{v}", only) for v in range(2, 2 + rng.choice((1, 1, 2)))]
    slow = {str(g): float(rng.choice((4, 7, 11))) for g in range(6) if rng.random() < 0.2}
    case = Case(seed, strategy, start, changes, float(rng.choice((0, 1, 2, 3))), slow, rng.choice((0.0, 0.3, 0.6)))
    if bad_image is None and seed >= SOAK_SEEDS:
        bad_image = bad_image_draw(seed, BAD_IMAGE_FRACTION)
    if bad_image:
        case.changes.insert(0, with_image(start, BAD))
        case.bad_image = bad_image
    return case


def create(case: Case) -> Harness:
    """The converged harness of ``case``; its kubelet fails the bad image (if any) from now on."""
    h = Harness.create(case.start, seed=case.seed, ready=case.ready, slow=case.slow)
    if case.bad_image:
        arm(h.cluster.kubelet.config, case.bad_image)
    return h


def final_problems(h: Harness) -> list[str]:
    spec, groups = h.spec, h.groups()
    problems = []
    if len(groups) != spec.replicas or not all(g.available for g in groups.values()):
        problems.append(f"groups {[(o, g.available) for o, g in groups.items()]} != {spec.replicas} available")
    terminating = [p["metadata"]["name"] for p in h.cluster.list("Pod") if p["metadata"].get("deletionTimestamp")]
    if terminating:
        problems.append(f"terminating pods {terminating}")
    target = modelserving_revision(spec)
    if spec.strategy == SG:
        stale = [o for o, g in groups.items() if o >= spec.partition() and g.revision != target]
        if stale:
            problems.append(f"groups {stale} not on {target}")
    images = {
        c["image"]
        for p in h.cluster.list("Pod")
        for c in p["spec"]["containers"]
        if p["metadata"]["labels"].get("modelserving.volcano.sh/role") == "prefill"
        and int(p["metadata"]["labels"]["modelserving.volcano.sh/group-name"].rsplit("-", 1)[1])
        >= (spec.partition() if spec.strategy == SG else 0)
    }
    want = {c["image"] for c in spec.role("prefill").entry_template["spec"]["containers"]}
    eligible = [o for o in groups if o >= (spec.partition() if spec.strategy == SG else 0)]
    if eligible and images != want:
        problems.append(f"prefill images {images} != {want}")
    return problems
