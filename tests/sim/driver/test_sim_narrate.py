"""Row notes derived from the change between rows (sim/driver/narrate.py), and Hash group reading."""

from __future__ import annotations

from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.trace import GroupCell, TraceRow, format_table
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.trace_view import hash_group_key, is_hash_leader, read_groups
from pulumi_lws.sim.driver.narrate import complete, narrate


def row(
    states: str,
    *,
    replicas: int,
    partition: int | None = 0,
    rev: str = "new",
    surge_from: int = 99,
    details: str = "",
    ids: list[str] | None = None,
    blocker=None,
    code=None,
    case=None,
) -> TraceRow:
    ids = ids or [str(i) for i in range(len(states))]
    det = {"g": "gated", "t": "terminating", "s": "unschedulable"}
    cells = tuple(
        GroupCell(
            gid, s, None, gid.isdigit() and int(gid) >= surge_from, det.get(details[i], "") if i < len(details) else ""
        )
        for i, (gid, s) in enumerate(zip(ids, states))
    )
    live = sum(1 for c in cells if c.state != "-" and c.detail != "terminating")
    return TraceRow(
        0,
        replicas,
        partition,
        cells,
        live,
        sum(1 for c in cells if c.state in "Uo"),
        rev,
        blocker=blocker,
        blocker_code=code,
        case=case,
    )


def notes(rows):
    return [r.note for r in narrate(rows, first_note="before the rolling update")]


def test_ordinal_notes_follow_the_documented_table():
    rows = [
        row("UUUU", replicas=4, rev="old"),
        row("oouuuu", replicas=6, partition=2, surge_from=4),
        row("oouuUu", replicas=6, partition=2, surge_from=4, blocker="waiting", code="waiting-for-groups"),
        row("uuuuUU", replicas=6, partition=0, surge_from=4),
        row("uuUU", replicas=4),
        row("UUUU", replicas=4),
    ]
    assert notes(rows) == [
        "before the rolling update",
        "rolling update starts: 2 surge groups created; partition 4→2 in one stage (fixed point); R-2, R-3 updating",
        "R-4 becomes ready; partition waits for R-5",
        "R-5 becomes ready; partition 2→0; R-0, R-1 updating",
        "R-2, R-3 become ready; surge replicas reclaimed",
        "R-0, R-1 become ready; rolling update complete",
    ]
    assert complete(rows[-1]) and not complete(rows[-2])


def test_hash_notes_name_gated_admitted_tearing_down_and_short_blockers():
    ids = ["a" * 40, "b" * 40, "c" * 40, "d" * 40]
    rows = [
        row("UU--", replicas=2, partition=None, rev="old", ids=ids),
        row("xoxx", replicas=2, partition=None, details="t gg", ids=ids),
        row(
            "xoux",
            replicas=2,
            partition=None,
            details="t  g",
            ids=ids,
            blocker="waiting for 1 terminating group",
            code="group-replacement-deferred",
        ),
    ]
    out = notes(rows)
    assert out[1] == "rolling update starts: G-ccccc, G-ddddd created (gated); G-aaaaa tearing down"
    assert out[2] == "G-ccccc admitted (ungated); blocked (group-replacement-deferred): waiting for 1 terminating group"


def test_long_blockers_show_their_code_only_and_notes_keep_scenario_events():
    long = "x" * 200
    rows = [row("U", replicas=1, rev="old"), row("o", replicas=1, blocker=long, code="resource-deadlock-717")]
    rows[1] = TraceRow(**{**rows[1].__dict__, "note": "lws.yaml patched"})
    assert (
        notes(rows)[1]
        == "lws.yaml patched; rolling update starts; partition 1→0 in one stage (fixed point); blocked: resource-deadlock-717"
    )
    table = format_table(narrate(rows), details=False)
    assert long not in table and "resource-deadlock-717" in table


def _pod(name, labels, owner, uid, deleting=False):
    meta = {
        "name": name,
        "namespace": "default",
        "uid": uid,
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {L.NAME: "web", **labels},
        "ownerReferences": [{"kind": owner, "name": "x", "uid": "o"}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:01Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_hash_groups_of_size_three_leaders_workers_and_tearing_down():
    key, gone = "1" * 40, "2" * 40
    ready_sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"web-{key[:8]}",
            "namespace": "default",
            "labels": {L.NAME: "web", L.TEMPLATE_REVISION_HASH: "r1"},
        },
        "spec": {"replicas": 2},
        "status": {
            "replicas": 2,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "currentRevision": "a",
            "updateRevision": "a",
        },
    }
    labels = {L.GROUP_KEY: key, L.TEMPLATE_REVISION_HASH: "r1"}
    leader = _pod("web-abc-xyz", {**labels, L.WORKER_INDEX: "0"}, "ReplicaSet", "u1")
    workers = [_pod(f"web-{key[:8]}-{j}", {**labels, L.POD_INDEX: str(j)}, "StatefulSet", f"w{j}") for j in (1, 2)]
    orphan = _pod(f"web-{gone[:8]}-1", {L.GROUP_KEY: gone, L.TEMPLATE_REVISION_HASH: "r0"}, "StatefulSet", "w9", True)
    gated = _pod("web-abc-new", {L.WORKER_INDEX: "0", L.TEMPLATE_REVISION_HASH: "r1"}, "ReplicaSet", "u2")
    gated["spec"]["schedulingGates"] = [{"name": "g"}]
    snap = Snapshot.of([leader, *workers, orphan, gated, ready_sts])
    assert [is_hash_leader(p) for p in (leader, workers[0], orphan, gated)] == [True, False, False, True]
    view = read_groups(snap, "web", 2, 3, "r1", hash_mode=True)
    cells = {c.id: c for c in view.cells}
    assert set(cells) == {key, gone, hash_group_key(gated)} and len(hash_group_key(gated)) == 40
    assert (
        cells[key].state == "U"
        and cells[gone].detail == "terminating"
        and cells[hash_group_key(gated)].detail == "gated"
    )
    assert view.live == 2 and view.available == 1
