"""The snapshot's pod readers (``is_deleting``, ``pod_condition``, ``pod_running_and_ready``) are
written for speed (issue 27: called per pod by every planner); each equals its straightforward
reading, kept here as the reference, on any pod shape: well-formed, partial, or with falsy fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import is_deleting, pod_condition, pod_running_and_ready


def ref_is_deleting(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def ref_pod_condition(pod: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def ref_pod_running_and_ready(pod: Mapping[str, Any] | None) -> bool:
    if pod is None or ref_is_deleting(pod):
        return False
    status = pod.get("status") or {}
    cond = ref_pod_condition(pod, "Ready")
    return status.get("phase") == "Running" and cond is not None and cond.get("status") == "True"


falsy = st.sampled_from([None, {}, "", 0, []])
condition = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["Ready", "ContainersReady", "PodScheduled", ""]),
        "status": st.sampled_from(["True", "False", "Unknown", None]),
    },
)
status = st.one_of(
    falsy,
    st.fixed_dictionaries(
        {},
        optional={
            "phase": st.sampled_from(["Running", "Pending", "Failed", None]),
            "conditions": st.one_of(falsy, st.lists(condition, max_size=4)),
        },
    ),
)
metadata = st.one_of(
    falsy,
    st.fixed_dictionaries(
        {}, optional={"name": st.just("p"), "deletionTimestamp": st.sampled_from([None, "", "2026-01-01T00:00:00Z"])}
    ),
)
pod = st.fixed_dictionaries({}, optional={"metadata": metadata, "status": status})


@settings(max_examples=500, deadline=None)
@given(pod, st.sampled_from(["Ready", "ContainersReady", "PodScheduled"]))
def test_readers_equal_their_reference(p: dict[str, Any], ctype: str) -> None:
    assert is_deleting(p) is ref_is_deleting(p)
    assert pod_condition(p, ctype) is ref_pod_condition(p, ctype)
    assert pod_running_and_ready(p) is ref_pod_running_and_ready(p)


def test_none_is_not_ready() -> None:
    assert pod_running_and_ready(None) is False
