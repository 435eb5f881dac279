"""``with_disown`` looks only at objects with an ownerReference of an owner kind (the DS's or a
child LeaderWorkerSet's): it adds exactly the actions disowning every owned object adds."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.core.features.adoption import disown_actions
from pulumi_lws.disaggregatedset.adoption import CHILD_UPSTREAM, with_disown
from pulumi_lws.disaggregatedset.workload import WORKLOAD

OWNERS = [
    {"apiVersion": "disaggregatedset.x-k8s.io/v1", "kind": "DisaggregatedSet", "uid": "u-ds"},
    {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "uid": "u-lws"},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "uid": "u-sts", "controller": True},
    {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"},  # no uid
    {"apiVersion": "other.io/v1", "kind": "LeaderWorkerSet", "uid": "u-other"},
]


@st.composite
def snapshots(draw) -> Snapshot:
    objs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 12))):
        meta: dict[str, Any] = {"name": f"o{i}", "uid": f"uid-{i}"}
        refs = draw(st.lists(st.sampled_from(OWNERS), max_size=3))
        if refs or draw(st.booleans()):
            meta["ownerReferences"] = refs
        if draw(st.booleans()):
            meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        objs.append({"kind": draw(st.sampled_from(["Pod", "StatefulSet", "Service", "Node"])), "metadata": meta})
    return Snapshot.of(objs)


@settings(max_examples=200)
@given(snapshots())
def test_disown_actions_equal_those_of_every_owned_object(snap: Snapshot) -> None:
    base = Reconciled(
        stage=Stage(policy="p", target_revision="r", replicas=0, partition=None, group_revisions={}), manifests=()
    )
    upstream = WORKLOAD.upstream
    owned = [o for o in snap if (o.get("metadata") or {}).get("ownerReferences")]
    extra = disown_actions(owned, upstream) + disown_actions(owned, CHILD_UPSTREAM)
    expected = (
        dataclasses.replace(
            base, stage=dataclasses.replace(base.stage, actions=tuple(sorted(extra, key=lambda a: (a.kind, a.name))))
        )
        if extra
        else base
    )
    assert with_disown(base, snap, upstream) == expected
