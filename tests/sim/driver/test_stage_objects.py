"""pulumi_lws/sim/driver/stage_objects.py: the objects each ``pulumi up`` of a rollout OLD -> NEW
changes, for all three APIs (the examples' workloads, an image change and a scale change)."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.cli.diff import plan_diff
from pulumi_lws.sim.driver.expansion import steady_state
from pulumi_lws.sim.driver.stage_objects import rollout_objects

EXAMPLES = REPO_ROOT / "examples"
MANIFESTS = {
    "LeaderWorkerSet": EXAMPLES / "quickstart" / "lws.yaml",
    "ModelServing": EXAMPLES / "modelserving-pd" / "ms.yaml",
    "DisaggregatedSet": EXAMPLES / "disaggregated-pd" / "ds.yaml",
}


def _doc(kind: str) -> dict:
    return next(d for d in yaml.safe_load_all(MANIFESTS[kind].read_text()) if d and d.get("kind") == kind)


def _bumped(doc: dict) -> dict:
    return yaml.safe_load(yaml.safe_dump(doc).replace("nginx-unprivileged:1.27", "nginx-unprivileged:1.28"))


def _scaled(doc: dict) -> dict:
    new = copy.deepcopy(doc)
    if new["kind"] == "DisaggregatedSet":
        new["spec"]["roles"][0]["spec"]["replicas"] += 2
    else:
        new["spec"]["replicas"] += 2
    return new


@pytest.mark.parametrize("kind", list(MANIFESTS))
@pytest.mark.parametrize("change", [_bumped, _scaled], ids=["image", "scale-up"])
def test_every_up_of_the_rollout_is_counted_and_the_counts_add_up_to_the_fleet_change(kind, change):
    old = _doc(kind)
    new = change(old)
    assert new != old
    result = rollout_objects(old, new)
    assert result.complete and result.blocked is None
    assert result.ups and [u.up for u in result.ups] == list(range(1, len(result.ups) + 1))
    assert all(u.created + u.updated + u.replaced + u.deleted > 0 for u in result.ups)  # only ups that change
    # the first up is exactly what `plan --diff` shows for the next `pulumi up`
    diffs = [d.change for d in plan_diff(old, new)]
    first = result.ups[0]
    assert (first.created, first.updated + first.replaced, first.deleted) == (
        diffs.count("created"),
        diffs.count("changed"),
        diffs.count("deleted"),
    )
    # what the rollout creates less what it deletes is the difference of the converged fleets
    born = sum(u.created for u in result.ups) - sum(u.deleted for u in result.ups)
    before, after = steady_state(old).reconciled.manifests, steady_state(new).reconciled.manifests
    assert born == len(after) - len(before)


def test_a_template_change_takes_more_than_one_up_and_lists_them_in_order():
    result = rollout_objects(_doc("ModelServing"), _bumped(_doc("ModelServing")))
    assert len(result.ups) >= 3  # one group at a time (maxUnavailable 1): several ups
    assert result.ups[0].text() == "1 created, 4 updated, 0 deleted"  # the new ControllerRevision, the groups
    assert result.ups[-1].deleted >= 1  # the old revision goes once the rollout is complete


def test_an_unchanged_workload_has_no_up():
    doc = _doc("LeaderWorkerSet")
    result = rollout_objects(doc, copy.deepcopy(doc))
    assert result.complete and result.ups == []
