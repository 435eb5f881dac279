"""core.conditions: one ``metav1.Condition`` for every API's status (issue 23: it was defined twice,
with different fields, and LeaderWorkerSet built dicts by hand)."""

from __future__ import annotations

from pulumi_lws.core.k8s.conditions import Condition, condition
from pulumi_lws.disaggregatedset import status as ds_status
from pulumi_lws.lws.status import ordinal as lws_status
from pulumi_lws.modelserving import status as ms_status


def test_every_api_publishes_the_core_condition() -> None:
    assert ms_status.Condition is Condition and ds_status.Condition is Condition
    assert lws_status.conditions(lws_status.AVAILABLE)[0] == condition(
        "Available", True, "AllGroupsReady", "All replicas are ready"
    )


def test_the_wire_form_is_kubernetes_json_with_optional_fields_omitted() -> None:
    plain = Condition("Available", "True", "AllGroupsReady", "All Serving groups are ready")
    assert list(plain.to_wire()) == ["type", "status", "reason", "message"]
    full = Condition(
        "Progressing", "False", "r", "m", observed_generation=3, last_transition_time="2026-12-01T00:00:00Z"
    )
    assert full.to_wire() == {
        "type": "Progressing",
        "status": "False",
        "reason": "r",
        "message": "m",
        "observedGeneration": 3,
        "lastTransitionTime": "2026-12-01T00:00:00Z",
    }


def test_modelserving_status_conditions_keep_their_shape() -> None:
    st = ms_status.update_modelserving_status([], 0, "rev")
    assert [list(c) for c in st.as_dict()["conditions"]] == [["type", "status", "reason", "message"]]
