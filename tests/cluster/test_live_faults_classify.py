"""The classification the live backend's retry and skip decisions rest on
(:mod:`pulumi_lws.cluster.resilience`), on hand-built httpx responses shaped like the API
server's, and one fault no kmock reaction can inject: a server that refuses connections."""

from __future__ import annotations

import email.utils

import httpx2 as httpx
import pytest
from support.kmock_helpers import http_error, kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import (
    RetryPolicy,
    describe_failure,
    is_stale_precondition,
    is_transient,
    outcome_unknown,
    retry_after,
)
from pulumi_lws.core.contract.ports import ActionError, ObserveError
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws.observe import lws_scope

REQUEST = httpx.Request("PATCH", "https://k8s.example/api/v1/namespaces/ns/pods/p")


@pytest.mark.parametrize(
    "exc, transient, unknown",
    [
        (http_error(429, "TooManyRequests"), True, False),
        (http_error(500, "InternalError"), True, True),
        (http_error(502, json=False), True, True),
        (http_error(503, "ServiceUnavailable"), True, False),
        (http_error(504, "Timeout"), True, True),
        (http_error(501, "NotImplemented"), False, False),
        (http_error(409, "Conflict"), False, False),
        (http_error(403, "Forbidden"), False, False),
        (httpx.ReadTimeout("timed out", request=REQUEST), True, True),
        (httpx.WriteTimeout("timed out", request=REQUEST), True, True),
        (httpx.RemoteProtocolError("peer closed", request=REQUEST), True, True),
        (httpx.ConnectError("refused", request=REQUEST), True, False),
        (httpx.ConnectTimeout("timed out", request=REQUEST), True, False),
        (httpx.LocalProtocolError("bad header"), False, False),
        (ValueError("a bug"), False, False),
    ],
    ids=lambda v: v if isinstance(v, bool) else None,
)
def test_transient_and_unknown_outcome(exc, transient, unknown):
    assert is_transient(exc) is transient and outcome_unknown(exc) is unknown


@pytest.mark.parametrize(
    "exc, stale",
    [
        (
            http_error(
                409,
                "Conflict",
                'Operation cannot be fulfilled on pods "p": the object has been modified; '
                "please apply your changes to the latest version and try again",
            ),
            True,
        ),
        (
            http_error(
                409,
                "Conflict",
                'Operation cannot be fulfilled on pods "p": Precondition failed: UID in '
                "precondition: a, UID in object meta: b",
            ),
            True,
        ),
        (
            http_error(
                409, "Conflict", "uid mismatch: the provided object specified uid a, and no existing object was found"
            ),
            True,
        ),
        (http_error(409, "AlreadyExists", 'pods "p" already exists'), False),
        (http_error(409, "Conflict", 'admission webhook "x" denied the request'), False),
        (http_error(422, "Invalid", "the server rejected our request due to an error in our request"), True),
        (
            http_error(
                422,
                "Invalid",
                'Pod "p" is invalid: metadata.uid: Invalid value: "b": field is immutable',
                causes=[{"field": "metadata.uid", "reason": "FieldValueInvalid"}],
            ),
            True,
        ),
        (
            http_error(
                422,
                "Invalid",
                'Pod "p" is invalid: metadata.labels: Invalid value',
                causes=[{"field": "metadata.labels", "reason": "FieldValueInvalid"}],
            ),
            False,
        ),
        (http_error(404, "NotFound"), False),
    ],
)
def test_a_precondition_refusal_is_told_apart_from_other_conflicts(exc, stale):
    assert is_stale_precondition(exc) is stale


def test_retry_after_reads_seconds_an_http_date_or_the_status_details():
    assert retry_after(http_error(429, headers={"Retry-After": "7"})) == 7.0
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after(http_error(503, headers={"Retry-After": when}), now=lambda: 1_000_000) == 30.0
    assert retry_after(http_error(429, retry_after_seconds=4)) == 4.0
    assert retry_after(http_error(500)) is None and retry_after(httpx.ReadTimeout("t", request=REQUEST)) is None


def test_the_server_wait_is_capped_and_backoff_doubles_to_its_ceiling():
    waits: list[float] = []
    policy = RetryPolicy(attempts=6, initial=0.5, max_wait=2.0, max_retry_after=10.0, jitter=0.0, sleep=waits.append)
    failures = iter(
        [
            http_error(500),
            http_error(500),
            http_error(500),
            http_error(500),
            http_error(429, headers={"Retry-After": "3600"}),
        ]
    )

    def flaky():
        exc = next(failures, None)
        if exc is not None:
            raise exc
        return "ok"

    assert policy.retrying("test")(flaky) == "ok"
    assert waits == [0.5, 1.0, 2.0, 2.0, 10.0]


def test_describe_failure_names_the_status_or_the_transport_error():
    assert describe_failure(http_error(429, "TooManyRequests", "slow down")) == "HTTP 429 TooManyRequests: slow down"
    assert describe_failure(httpx.ReadTimeout("t", request=REQUEST)) == "timed out (ReadTimeout; no HTTP status)"
    assert describe_failure(httpx.ConnectError("refused", request=REQUEST)).startswith(
        "connection failed (ConnectError"
    )


def _unreachable() -> LiveCluster:
    waits: list[float] = []
    # port 9 (discard) on localhost: nothing listens, the connection is refused at once
    return LiveCluster(
        kmock_client("http://127.0.0.1:9", timeout=0.5), retry=RetryPolicy(sleep=waits.append, jitter=0.0)
    )


def test_an_unreachable_api_server_fails_the_observe_naming_the_list_and_context():
    with pytest.raises(
        ObserveError,
        match=r"^observe failed: LIST StatefulSet in namespace ns selected by "
        r"leaderworkerset.sigs.k8s.io/name=demo on cluster context 'kmock' at http://127.0.0.1:9: "
        r"connection failed \(ConnectError.*\(gave up after 5 attempts\)",
    ):
        _unreachable().observe(lws_scope("ns", "demo"))


def test_an_unreachable_api_server_fails_the_action_naming_it():
    with pytest.raises(
        ActionError, match=r"^label Pod/ns/p failed on cluster context 'kmock' at http://127.0.0.1:9: connection failed"
    ) as raised:
        _unreachable().execute("ns", [Action("label", "Pod", "p", {"labels": {"a": "b"}})])
    assert raised.value.applied == () and raised.value.status is None
