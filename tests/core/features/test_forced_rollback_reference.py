"""``stalled_pods`` and ``forced_rollback_actions`` return early when no pod could be kept (no
outdated pod at or above the partition, or every pod of a StatefulSet on its update revision);
each equals its straightforward reading, kept here as the reference, on generated StatefulSets and
pods (policies, partitions, budgets, revisions, readiness, deletions, owners)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.core.contract.snapshot import is_deleting
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.core.features.forced_rollback import (
    FORCED_ROLLBACK_REASON,
    _available,
    _controller_uid,
    _ordinal,
    forced_rollback_actions,
    stalled_pods,
)
from pulumi_lws.core.k8s.keys import CONTROLLER_REVISION_HASH
from pulumi_lws.core.k8s.scaling import scaled_value


def ref_stalled_pods(
    sts: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], now: float | None = None
) -> tuple[Mapping[str, Any], ...]:
    spec, status, meta = sts.get("spec") or {}, sts.get("status") or {}, sts.get("metadata") or {}
    strategy = spec.get("updateStrategy") or {}
    update_revision = status.get("updateRevision")
    if is_deleting(sts) or strategy.get("type", "RollingUpdate") != "RollingUpdate" or not update_revision:
        return ()
    if status.get("observedGeneration") != meta.get("generation"):
        return ()
    name = str(meta.get("name") or "")
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    replicas = int(spec.get("replicas", 1))
    ru = strategy.get("rollingUpdate") or {}
    low = start + int(ru.get("partition") or 0)
    min_ready = float(spec.get("minReadySeconds") or 0)
    by_ordinal = {}
    for pod in pods:
        ordinal = _ordinal(name, str((pod.get("metadata") or {}).get("name") or ""))
        if ordinal is not None and start <= ordinal < start + replicas:
            by_ordinal[ordinal] = pod
    unavailable = sum(
        1
        for o in range(start, start + replicas)
        if o not in by_ordinal or is_deleting(by_ordinal[o]) or not _available(by_ordinal[o], min_ready, now)
    )
    ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
    max_unavailable = max(1, scaled_value(ru.get("maxUnavailable", 1), replicas, round_up=True))
    if not ordered and unavailable < max_unavailable:
        return ()
    return tuple(
        pod
        for o, pod in sorted(by_ordinal.items())
        if o >= low
        and not is_deleting(pod)
        and not _available(pod, min_ready, now)
        and ((pod.get("metadata") or {}).get("labels") or {}).get(CONTROLLER_REVISION_HASH) != update_revision
    )


REVS = ["web-a", "web-b"]


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]], float | None]:
    start = draw(st.sampled_from([0, 1]))
    replicas = draw(st.integers(0, 4))
    ru: dict[str, Any] = {}
    if draw(st.booleans()):
        ru["partition"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        ru["maxUnavailable"] = draw(st.sampled_from([1, 2, "50%", "100%"]))
    sts = {
        "metadata": {
            "name": "web",
            "generation": 2,
            **({"deletionTimestamp": "x"} if draw(st.integers(0, 9)) == 0 else {}),
        },
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": draw(st.sampled_from(["Parallel", "OrderedReady"])),
            "minReadySeconds": draw(st.sampled_from([0, 5])),
            "updateStrategy": {
                "type": draw(st.sampled_from(["RollingUpdate"] * 5 + ["OnDelete"])),
                "rollingUpdate": ru,
            },
            **({"ordinals": {"start": start}} if start else {}),
        },
        "status": {
            "observedGeneration": draw(st.sampled_from([1, 2, 2, 2, 2])),
            "updateRevision": draw(st.sampled_from(REVS)),
        },
    }
    pods = []
    for o in draw(st.lists(st.integers(0, 5), max_size=7)):
        ready = draw(st.integers(0, 2)) == 0
        pods.append(
            {
                "metadata": {
                    "name": draw(st.sampled_from([f"web-{o}"] * 4 + [f"other-{o}"])),
                    "labels": {CONTROLLER_REVISION_HASH: draw(st.sampled_from(REVS))},
                    **({"deletionTimestamp": "x"} if draw(st.integers(0, 4)) == 0 else {}),
                },
                "status": {
                    "phase": "Running" if ready or draw(st.booleans()) else "Pending",
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True" if ready else "False",
                            "lastTransitionTime": draw(
                                st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:08Z"])
                            ),
                        }
                    ],
                },
            }
        )
    now = draw(st.sampled_from([None, 1767225606.0, 1767225700.0]))
    return sts, pods, now


@settings(max_examples=600, deadline=None)
@given(cases())
def test_stalled_pods_equals_reference(case: tuple[dict[str, Any], list[dict[str, Any]], float | None]) -> None:
    sts, pods, now = case
    got, want = stalled_pods(sts, pods, now), ref_stalled_pods(sts, pods, now)
    assert len(got) == len(want) and all(a is b for a, b in zip(got, want))


def ref_forced_rollback_actions(statefulsets, pods, *, now=None, skip=(), propagation=None):
    by_owner: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        uid = _controller_uid(pod)
        if uid is not None:
            by_owner.setdefault(uid, []).append(pod)
    skipped, out = set(skip), []
    for s in statefulsets:
        meta = s.get("metadata") or {}
        owned = by_owner.get(str(meta.get("uid") or ""), [])
        if not owned:
            continue
        mode = (propagation or {}).get(str(meta.get("name")), "Background")
        for pod in ref_stalled_pods(s, owned, now):
            pm = pod.get("metadata") or {}
            name = str(pm.get("name") or "")
            if name in skipped:
                continue
            skipped.add(name)
            out.append(
                Action("delete", "Pod", name, {"propagation": mode}, uid=pm.get("uid"), reason=FORCED_ROLLBACK_REASON)
            )
    return tuple(out)


@st.composite
def fleets(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float | None]:
    """Two or three StatefulSets (one of them without status), their pods owned by uid (some by
    none or by a non-controller reference), revision labels missing or unhashable now and then."""
    statefulsets, pods = [], []
    now = None
    for n in range(draw(st.integers(1, 3))):
        s, owned, now = draw(cases())
        s["metadata"]["uid"] = f"u{n}"
        if draw(st.integers(0, 9)) == 0:
            s.pop("status")
        for p in owned:
            ref = draw(st.sampled_from(["controller", "controller", "controller", "plain", "none"]))
            if ref != "none":
                p["metadata"]["ownerReferences"] = [{"uid": f"u{n}", "controller": ref == "controller"}]
            p["metadata"]["uid"] = f"p{len(pods)}"
            label = draw(st.sampled_from(["keep"] * 6 + ["drop", "unhashable"]))
            if label == "drop":
                p["metadata"]["labels"].pop(CONTROLLER_REVISION_HASH)
            elif label == "unhashable":
                p["metadata"]["labels"][CONTROLLER_REVISION_HASH] = ["web-a"]
            pods.append(p)
        statefulsets.append(s)
    return statefulsets, pods, now


@settings(max_examples=400, deadline=None)
@given(fleets(), st.lists(st.sampled_from(["web-0", "web-1", "web-2"]), max_size=2))
def test_forced_rollback_actions_equal_reference(
    fleet: tuple[list[dict[str, Any]], list[dict[str, Any]], float | None], skip: list[str]
) -> None:
    statefulsets, pods, now = fleet
    got = forced_rollback_actions(statefulsets, pods, now=now, skip=skip)
    assert got == ref_forced_rollback_actions(statefulsets, pods, now=now, skip=skip)


@settings(max_examples=300, deadline=None)
@given(fleets(), st.lists(st.sampled_from(["web-0", "web-1", "web-2"]), max_size=2), st.lists(st.booleans()))
def test_under_the_promise_the_actions_equal_reference(
    fleet: tuple[list[dict[str, Any]], list[dict[str, Any]], float | None], skip: list[str], rewritten: list[bool]
) -> None:
    """With the observer's promise (``reuse``) the first read, a second read of the very same pods
    (from the memo) and a read where some pods are new copies with another revision label all
    equal the reference; a StatefulSet sharing another's uid is looked at on its own."""
    statefulsets, pods, now = fleet
    reuse = Reuse()
    want = ref_forced_rollback_actions(statefulsets, pods, now=now, skip=skip)
    for _ in range(2):
        assert forced_rollback_actions(statefulsets, pods, now=now, skip=skip, reuse=reuse) == want
    later = []
    for pod, new in zip(pods, rewritten + [False] * len(pods)):
        if new:
            pod = copy.deepcopy(pod)
            pod["metadata"]["labels"][CONTROLLER_REVISION_HASH] = "web-b"
        later.append(pod)
    twins = statefulsets + [copy.deepcopy(statefulsets[0])]  # the same uid twice, maybe another revision
    twins[-1].setdefault("status", {})["updateRevision"] = "web-b"
    for sets in (statefulsets, twins):
        got = forced_rollback_actions(sets, later, now=now, skip=skip, reuse=reuse)
        assert got == ref_forced_rollback_actions(sets, later, now=now, skip=skip)


@settings(max_examples=200, deadline=None)
@given(fleets(), st.lists(st.sampled_from(["ms", "other", None, ["ms"]])), st.booleans())
def test_a_selector_reads_as_the_selected_pods(
    fleet: tuple[list[dict[str, Any]], list[dict[str, Any]], float | None], names: list[Any], promised: bool
) -> None:
    """``selector=(key, value)`` over every pod equals the reference over the pods so labelled
    (as ``Snapshot.list("Pod", **{key: value})``), with and without the promise, read twice."""
    statefulsets, pods, now = fleet
    for pod, name in zip(pods, names):
        if name is not None:
            pod["metadata"]["labels"]["app"] = name
    selected = [p for p in pods if p["metadata"]["labels"].get("app") == "ms"]
    want = ref_forced_rollback_actions(statefulsets, selected, now=now)
    reuse = Reuse() if promised else None
    for _ in range(2):
        assert forced_rollback_actions(statefulsets, pods, now=now, reuse=reuse, selector=("app", "ms")) == want
