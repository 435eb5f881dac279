"""Soak-found regressions, pinned: each seed replayed in full, plus focused tests of what was fixed.

* **seed 12717** (ordinal-rolloutfirst, R 2 -> 4, size 3, three template changes mid-rollout):
  a new spec moved the partition up (Case 2: ``min(R, S)``) over groups 0 and 1, admitted under an
  earlier revision. The leader StatefulSet then recreated their leader pods from its
  ``status.currentRevision`` -- the very first revision, whose ControllerRevision pulumi-lws had
  already stopped declaring. ``group_revisions`` did not know that revision, found no old revision
  below the partition and fell through to the leader StatefulSet's label, i.e. the *target*: the
  next stage (partition 4 -> 2) rendered groups 0 and 1's workers on the target while their leaders
  stayed on revision 1 (lws#225). Fixed in the planner: (1) a group observed on an old revision
  is never rendered on the target (``revision_below_partition``); (2) the ControllerRevisions of
  every revision pods run or the leader StatefulSet may recreate pods from stay declared
  (``revisions_in_use`` -> ``Stage.kept_revisions``), so workers can follow their leader.
* **seed 11705** (ordinal-rolloutfirst, R=5, MU 0): the harness armed the floor at a spec change
  while group 4 was being replaced (leader terminating, not ready): terminating leaders were
  left out of "live", so the start counted as healthy. It was not -- the pure model of
  tests/test_ordinal_properties.py counts an admitted group as a not-ready live ordinal. Fixed in
  the harness definition (``started_healthy``; docs/reliability.md "Definitions").
"""

from __future__ import annotations

from support.crash_suite import LEADERWORKERSET
from support.reliability_helpers import lws_manifest, parse, random_case, started_healthy

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import GroupView
from pulumi_lws.core.contract.trace import GroupCell, GroupsView
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.revision import RevisionCatalog, build_catalog, revision_data, revision_key
from pulumi_lws.lws.rollout.ordinal.groups import (
    group_revisions,
    leader_current_revision,
    revision_below_partition,
    revisions_in_use,
)

# ---- the seeds, replayed in full ------------------------------------------------------------------


def test_seed_12717_workers_never_get_the_target_when_a_new_spec_raises_the_partition() -> None:
    case = random_case(12717)
    assert case.policy == "ordinal-rolloutfirst" and len(case.changes) == 3 and case.p_crash == 0.3
    result = LEADERWORKERSET.run(case)  # raised "group 0 below partition 2: worker StatefulSet on target ..." at t=17
    assert result.changes == 2


def test_seed_12717_observes_the_leader_statefulsets_current_revision(monkeypatch) -> None:
    """Fix (2) needs the leader StatefulSet's own history in the observation: the scope's
    ControllerRevision selector leaves out only the worker StatefulSets' (``!group-index``), so
    ``leader_current_revision`` knows the revision pods may be recreated from, and keeps revisions
    declared that the pods alone would not (a selector of ``!controller.kubernetes.io/hash`` read
    none: every call None, nothing kept)."""
    from pulumi_lws.lws.rollout.ordinal import planner

    seen: list = []
    kept: list = []
    original, in_use = planner.leader_current_revision, planner.revisions_in_use

    def current(snapshot, sts):
        seen.append(original(snapshot, sts))
        return seen[-1]

    def used(groups, workers, leader_current, catalog):
        kept.append(in_use(groups, workers, leader_current, catalog) != in_use(groups, workers, None, catalog))
        return in_use(groups, workers, leader_current, catalog)

    monkeypatch.setattr(planner, "leader_current_revision", current)
    monkeypatch.setattr(planner, "revisions_in_use", used)
    LEADERWORKERSET.run(random_case(12717))
    assert sum(key is not None for key in seen) > len(seen) // 2
    assert any(kept)


def test_seed_11705_floor_is_not_armed_while_a_group_is_being_replaced() -> None:
    case = random_case(11705)
    assert case.policy == "ordinal-rolloutfirst" and case.start["spec"]["replicas"] == 5
    LEADERWORKERSET.run(case)  # raised "4 available < floor 5" at t=10: group 4 was terminating at the spec change


# ---- group_revisions / revision_below_partition ------------------------------------------------


def _lws(image: str, replicas: int = 4) -> LeaderWorkerSet:
    return parse(lws_manifest(replicas=replicas, size=3, image=image))


def _cr(lws: LeaderWorkerSet, number: int) -> dict:
    key = revision_key(lws)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": f"rel-{key}-{number}", "labels": {L.NAME: "rel", L.TEMPLATE_REVISION_HASH: key}},
        "data": revision_data(lws),
        "revision": number,
    }


def _catalog(target: LeaderWorkerSet, *old: LeaderWorkerSet) -> RevisionCatalog:
    return build_catalog(target, [_cr(o, n + 1) for n, o in enumerate(old)])


def _group(i: int, revision: str | None, ready: bool = True) -> GroupView:
    return GroupView(id=str(i), revision=revision, ready=ready, updated=False, exists=revision is not None, index=i)


V1, V2, V3 = _lws("img:1"), _lws("img:2"), _lws("img:3")
K1, K2, K3 = revision_key(V1), revision_key(V2), revision_key(V3)


def test_group_on_an_unknown_old_revision_keeps_its_workers_never_the_target() -> None:
    """Seed 12717 at t=17: leaders 0,1 on K1 (no ControllerRevision), workers on K2, groups 2,3
    admitted (target K3), leader StatefulSet labelled with the target, partition 2."""
    catalog = _catalog(V3, V2)  # K1 is not stored
    groups = (_group(0, K1), _group(1, K1), _group(2, K3), _group(3, K3))
    workers = {0: K2, 1: K2, 2: K3, 3: K3}
    revs = group_revisions(groups, 4, 2, catalog, K3, workers)
    assert revs == {"0": K2, "1": K2, "2": K3, "3": K3}
    assert group_revisions(groups, 4, 2, catalog, K3) != {
        "0": K3,
        "1": K3,
        "2": K3,
        "3": K3,
    }  # without worker labels too


def test_group_on_an_unknown_revision_falls_back_to_the_nearest_known_old_revision_anywhere() -> None:
    catalog = _catalog(V3, V2)
    # group 0 below the partition, leader on unknown K1, no worker StatefulSet; group 3 still on K2
    groups = (_group(0, K1), _group(1, K3), _group(2, K3), _group(3, K2))
    assert group_revisions(groups, 4, 1, catalog, K3, {0: None})["0"] == K2


def test_group_observed_on_an_old_revision_is_never_rendered_on_the_target_even_if_nothing_old_is_known() -> None:
    """No known old revision at all (ControllerRevisions deleted by hand): the group's own
    revision is returned and rendering fails loudly instead of putting workers ahead."""
    catalog = _catalog(V3)
    assert revision_below_partition(0, _group(0, K1), None, catalog, [], [], K3) == K1


def test_absent_group_below_the_partition_keeps_the_previous_rules() -> None:
    catalog = _catalog(V3, V1)
    groups = (_group(0, None), _group(1, K1))
    assert group_revisions(groups, 2, 2, catalog, K3)["0"] == K1  # nearest old below the partition
    assert group_revisions((_group(0, None),), 1, 1, _catalog(V3), K3)["0"] == K3  # fresh create, user partition


def test_known_leader_revision_wins_over_workers_ahead() -> None:
    catalog = _catalog(V3, V1, V2)
    assert group_revisions((_group(0, K1),), 1, 1, catalog, K3, {0: K3}) == {"0": K1}


# ---- revisions_in_use / leader_current_revision ------------------------------------------------


def test_revisions_in_use_keeps_pod_and_leader_current_revisions_known_to_the_catalog() -> None:
    catalog = _catalog(V3, V1, V2)
    groups = (_group(0, K2), _group(1, K3))
    assert revisions_in_use(groups, {0: K2, 1: K3}, K1, catalog) == tuple(sorted((K1, K2)))
    assert revisions_in_use(groups, {}, None, _catalog(V3, V2)) == (K2,)  # unknown keys are not invented
    assert revisions_in_use((_group(0, K3),), {0: K3}, K3, catalog) == ()  # the target is always declared


def test_leader_current_revision_reads_the_statefulset_history_label() -> None:
    history = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "rel-abc", "labels": {L.NAME: "rel", L.TEMPLATE_REVISION_HASH: K1}},
    }
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "rel"},
        "status": {"currentRevision": "rel-abc", "updateRevision": "rel-def"},
    }
    assert leader_current_revision(Snapshot.of([history, sts]), sts) == K1
    assert leader_current_revision(Snapshot.of([sts]), sts) is None
    assert leader_current_revision(Snapshot.of([]), None) is None


# ---- the harness definition: started healthy ---------------------------------------------------


def _view(states: str, s: int, terminating: set[int] = frozenset()) -> GroupsView:
    cells = tuple(
        GroupCell(str(i), c, None, False, "terminating" if i in terminating else "") for i, c in enumerate(states)
    )
    live = sum(1 for i, c in enumerate(states) if c != "-" and i not in terminating)
    return GroupsView(s, 0, cells, live, sum(1 for c in states if c in "Uo"))


def test_started_healthy_counts_a_group_being_replaced_as_down() -> None:
    assert started_healthy(_view("oooooo", 6), hash_mode=False)
    assert not started_healthy(_view("ooooxo", 6, terminating={4}), hash_mode=False)  # seed 11705 at t=10
    assert not started_healthy(_view("oooooo", 6, terminating={4}), hash_mode=False)  # still ready, but going down
    assert started_healthy(_view("oooooo", 5, terminating={5}), hash_mode=False)  # scaled away above S
