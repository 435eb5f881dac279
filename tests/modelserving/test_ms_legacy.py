"""pulumi_lws.modelserving.legacy: which role replicas are adopted (legacy) and what a stage does
with them (kept without StatefulSets, or deleted to be recreated in pulumi-lws's shape)."""

from __future__ import annotations

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stage import Stage
from pulumi_lws.modelserving import labels as L
from pulumi_lws.modelserving.legacy import (
    adopt_legacy,
    is_legacy,
    legacy_replicas,
    upstream_pod_names,
)


def pod(name, role="decode", g=0, r=0, revision="rev1", *, sts_owned=False, sts_label=False, deleting=False):
    labels = {L.NAME: "ms", L.GROUP_NAME: f"ms-{g}", L.ROLE: role, L.ROLE_ID: f"{role}-{r}", L.REVISION: revision}
    if name.endswith("-0"):
        labels[L.ENTRY] = L.ENTRY_VALUE
    if sts_label:
        labels["statefulset.kubernetes.io/pod-name"] = name
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels}
    if sts_owned:
        meta["ownerReferences"] = [{"kind": "StatefulSet", "name": "x", "uid": "s", "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "Pod", "metadata": meta, "status": {"phase": "Running"}}


def sts(name, revision="rev1"):
    labels = {L.NAME: "ms", L.GROUP_NAME: "ms-0", L.ROLE: "decode", L.ROLE_ID: "decode-0", L.REVISION: revision}
    return {
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"template": {"metadata": {"labels": dict(labels)}}},
    }


def stage():
    return Stage(
        policy="p",
        target_revision="rev1",
        replicas=1,
        partition=None,
        group_revisions={},
        groups=(),
        blocker=None,
        complete=True,
    )


KTHENA = [pod(n) for n in upstream_pod_names("ms", 0, "decode", 0, 2)]


def test_upstream_pod_names():
    assert upstream_pod_names("ms", 1, "prefill", 2, 2) == ["ms-1-prefill-2-0", "ms-1-prefill-2-1", "ms-1-prefill-2-2"]


def test_bare_pods_are_legacy_statefulset_pods_never():
    assert is_legacy([], KTHENA)
    assert not is_legacy([], [])
    assert not is_legacy([sts("ms-0-decode-0")], KTHENA)
    assert not is_legacy([], [pod("ms-0-decode-0-0", sts_owned=True)])
    assert not is_legacy([], [pod("ms-0-decode-0-0", sts_label=True)])  # left by a deleted StatefulSet
    reps = legacy_replicas("ms", Snapshot.of(KTHENA + [pod("ms-0-prefill-0-0", "prefill", sts_owned=True)]))
    assert list(reps) == [(0, "decode", 0)] and reps[(0, "decode", 0)].revision == "rev1"


def test_a_kept_legacy_replica_registers_no_statefulset_and_no_action():
    rendered = [
        sts("ms-0-decode-0"),
        sts("ms-0-decode-0-w"),
        {"kind": "Service", "metadata": {"name": "ms-0-decode-0-0"}},
    ]
    manifests, out = adopt_legacy("ms", Snapshot.of(KTHENA), rendered, stage(), {(0, "decode", 0): 2})
    assert [m["kind"] for m in manifests] == ["Service"] and out == stage()


def test_a_replaced_legacy_replica_is_deleted_and_waits():
    snap = Snapshot.of(KTHENA)
    for why, rendered, workers in (
        ("not declared", [], 2),
        ("other template", [sts("ms-0-decode-0", "rev2")], 2),
        ("missing a worker", [sts("ms-0-decode-0")], 3),
    ):
        manifests, out = adopt_legacy("ms", snap, rendered, stage(), {(0, "decode", 0): workers})
        assert not manifests, why
        assert sorted(a.name for a in out.actions) == sorted(p["metadata"]["name"] for p in KTHENA), why
        assert all(a.verb == "delete" and a.uid == f"uid-{a.name}" for a in out.actions) and not out.complete
    # one pod already deleting (recovery): the others are deleted, no StatefulSet until all are gone
    pods = [pod(n, deleting=n.endswith("-2")) for n in upstream_pod_names("ms", 0, "decode", 0, 2)]
    manifests, out = adopt_legacy("ms", Snapshot.of(pods), [sts("ms-0-decode-0")], stage(), {(0, "decode", 0): 2})
    assert not manifests and sorted(a.name for a in out.actions) == ["ms-0-decode-0-0", "ms-0-decode-0-1"]


def test_no_legacy_replica_changes_nothing():
    rendered = [sts("ms-0-decode-0")]
    snap = Snapshot.of([pod("ms-0-decode-0-0", sts_owned=True, sts_label=True)])
    manifests, out = adopt_legacy("ms", snap, rendered, stage(), {})
    assert manifests == rendered and out == stage()
