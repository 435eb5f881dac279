"""sim/cluster/persist.py: a saved and reloaded cluster behaves exactly as the original."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.sim.cluster.persist import StateFormatError, dump_cluster, load_cluster
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.cluster.store import strip_internal
from pulumi_lws.sim.driver.engines import PureEngine

MANIFESTS = {
    "lws": REPO_ROOT / "examples" / "quickstart" / "lws.yaml",
    "ms": REPO_ROOT / "examples" / "modelserving-pd" / "ms.yaml",
    "ds": REPO_ROOT / "examples" / "disaggregated-pd" / "ds.yaml",
}


def _roll(cluster: SimCluster, manifest: dict, steps: int, t0: float) -> list[str]:
    engine, out = PureEngine(), []
    for i in range(steps):
        step = engine.step(cluster, manifest)
        out.append(step.stage.summary())
        cluster.step(t0 + 5.0 * (i + 1))
    return out


def _state(cluster: SimCluster) -> list[dict]:
    return [strip_internal(o) for o in cluster.store.all()]


def _changed_image(manifest: dict) -> dict:
    text = yaml.safe_dump(manifest).replace("image: ", "image: changed-")
    return yaml.safe_load(text)


@pytest.mark.parametrize("api", sorted(MANIFESTS))
def test_a_reloaded_cluster_continues_a_rollout_exactly_as_the_original(api):
    manifest = yaml.safe_load(MANIFESTS[api].read_text())
    original = SimCluster(seed=3)
    _roll(original, manifest, 6, 0.0)  # created and ready
    changed = _changed_image(manifest)
    _roll(original, changed, 2, original.clock.now)  # mid-rollout: pods starting, deletions pending
    saved = json.loads(json.dumps(dump_cluster(original)))  # through real JSON text
    reloaded = load_cluster(saved)
    assert _state(reloaded) == _state(original)
    t = original.clock.now
    expected = _roll(original, changed, 20, t)
    assert _roll(reloaded, changed, 20, t) == expected
    assert "[complete]" in expected[-1] and "[complete]" not in expected[0]  # the reload was mid-rollout
    assert _state(reloaded) == _state(original)
    assert dump_cluster(reloaded) == dump_cluster(original)


def test_another_format_or_version_is_refused_with_the_way_out():
    data = dump_cluster(SimCluster())
    with pytest.raises(StateFormatError, match=r"v1.*version=99.*pulumi-lws destroy"):
        load_cluster({**data, "version": 99})
