"""ModelServing's per-reconcile shortcuts (issue 27) equal the straightforward readings they
replace: the names written in one format, the memoised timestamp parse of recovery, the deletion
cost that skips pods without the annotation."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import annotations_of
from pulumi_lws.core.k8s import keys as K
from pulumi_lws.core.k8s.timestamps import parse_timestamp
from pulumi_lws.modelserving import names
from pulumi_lws.modelserving.observe import deletion_cost
from pulumi_lws.modelserving.recovery import _timestamp, created_at

text = st.text(min_size=0, max_size=8)
ordinal = st.integers(-3, 10_000)


@settings(max_examples=300, deadline=None)
@given(text, ordinal, text, ordinal, st.integers(0, 9))
def test_names_equal_their_composition(ms: str, g: int, role: str, r: int, w: int) -> None:
    base = f"{names.group_name(ms, g)}-{names.role_id(role, r)}"
    assert names.entry_statefulset(ms, g, role, r) == base
    assert names.entry_pod(ms, g, role, r) == f"{base}-0"
    assert names.service(ms, g, role, r) == f"{base}-0"
    assert names.worker_statefulset(ms, g, role, r) == f"{base}-{names.WORKER_SUFFIX}"
    assert names.worker_pod(ms, g, role, r, w) == f"{base}-{names.WORKER_SUFFIX}-{w}"


stamps = st.one_of(
    st.none(),
    st.sampled_from(["", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00", "bad", 0, 17]),
    st.text(max_size=25),
)


@settings(max_examples=300, deadline=None)
@given(stamps)
def test_memoised_timestamps_equal_the_parse(value: Any) -> None:
    assert _timestamp(value) == parse_timestamp(value)
    assert _timestamp(value) == parse_timestamp(value)  # and again, from the memo
    assert created_at({"metadata": {"creationTimestamp": value}}) == parse_timestamp(value)


def _ref_deletion_cost(pods: list[dict[str, Any]]) -> int:
    total = 0
    for pod in pods:
        try:
            total += int(str(annotations_of(pod).get(K.POD_DELETION_COST, "0")).strip())
        except ValueError:
            pass
    return total


costs = st.sampled_from(["0", "5", " 7 ", "-2", "x", "", 3])
pod = st.one_of(
    st.just({}),
    st.builds(
        lambda a: {"metadata": {"annotations": a}},
        st.one_of(st.none(), st.dictionaries(st.sampled_from([K.POD_DELETION_COST, "other"]), costs)),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pod, max_size=5))
def test_deletion_cost_equals_its_reference(pods: list[dict[str, Any]]) -> None:
    assert deletion_cost(pods) == _ref_deletion_cost(pods)
