"""The three ways a new revision never becomes Ready (issue 24), as simulator kubelet settings,
and the checks every API's "bad image, then a fix" e2e test shares."""

from __future__ import annotations

from typing import Any

from pulumi_lws.core.features.forced_rollback import FORCED_ROLLBACK_REASON
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing

BAD = "img:bad"
#: crash loop (kubelet.failImages), image pull error (kubelet.pullErrors), failing readiness probe
FAULTS = ("crash", "pull", "probe")


def faulty_kubelet(fault: str, image: str = BAD, start: float = 1.0, ready: float = 2.0) -> KubeletConfig:
    """Default timings; every container on ``image`` fails the way ``fault`` says."""
    if fault == "crash":
        return KubeletConfig(default=Timing(start, ready), fail_images=(image,))
    if fault == "pull":
        return KubeletConfig(default=Timing(start, ready), pull_errors=(image,))
    if fault == "probe":
        return KubeletConfig(default=Timing(start, ready), overrides=[Override(image=image, never_ready=True)])
    raise ValueError(fault)


def forced_deletes(result: Any) -> list[str]:
    """The pods the run's stages deleted as forced rollbacks."""
    return [
        a.name for s in result.stages for a in s.actions if a.verb == "delete" and a.reason == FORCED_ROLLBACK_REASON
    ]


def pod_images(cluster: Any) -> set[str]:
    """Every container image of every live pod."""
    return {
        c["image"]
        for p in cluster.list("Pod")
        if not p["metadata"].get("deletionTimestamp")
        for c in p["spec"]["containers"]
    }


def arm(config: KubeletConfig, fault: str, image: str = BAD) -> None:
    """Make an existing kubelet config fail ``image`` the way ``fault`` says (first override wins)."""
    if fault == "crash":
        config.fail_images = (*config.fail_images, image)
    elif fault == "pull":
        config.pull_errors = (*config.pull_errors, image)
    else:
        config.overrides.insert(0, Override(image=image, never_ready=True))


def with_all_images(manifest: Any, image: str) -> Any:
    """A copy of any workload manifest with every container (and init container) image set to ``image``."""
    if isinstance(manifest, dict):
        out = {}
        for k, v in manifest.items():
            if k in ("containers", "initContainers") and isinstance(v, list):
                out[k] = [{**with_all_images(c, image), "image": image} for c in v]
            else:
                out[k] = with_all_images(v, image)
        return out
    if isinstance(manifest, list):
        return [with_all_images(v, image) for v in manifest]
    return manifest


def bad_image_draw(seed: int, fraction: float) -> str | None:
    """For a soak case: the fault of its bad image (crash, pull, probe) in ``fraction`` of seeds,
    else None; drawn from its own generator so the case's other draws stay as they were."""
    import random

    rng = random.Random(seed * 7_919 + 24)
    return rng.choice(FAULTS) if rng.random() < fraction else None
