"""Fault injection into every action verb of the live actuator, over real HTTP against kmock
(:class:`kmock_helpers.FaultyEmulator`).

Each case runs three actions — ``pre`` (a label on another pod), the verb under test, ``post`` —
with one fault injected into the verb's write, and asserts the documented outcome
(docs/live-cluster.md, "When the API server fails"):

- 500 / 429 (Retry-After) / a timeout: retried and done; the wait is the server's Retry-After or
  the exponential backoff (recorded, never slept);
- a 500 or a timeout *after the write landed*: settled by re-reading the object, not re-sent;
- a 409 from a uid/resourceVersion precondition: skipped (the object changed), the later actions run;
- any other 409, or a 500 that persists past the retry budget: :class:`ActionError` naming the
  action, the context and the HTTP status, with the ``pre`` line applied (and logged), ``post`` not run.

Every case then runs the next reconcile (the same actions, no fault) and asserts it converges.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import pytest

pytest.importorskip("kmock")

from support.kmock_helpers import CLIENT_TIMEOUT, HANG, Fault, FaultyEmulator, kmock_client

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.core.contract.ports import ActionError
from pulumi_lws.core.contract.stage import Action
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.failure.retention import RETAIN_FINALIZER

pytestmark = pytest.mark.kmock(cls=FaultyEmulator)

NS = "serving"
POD = f"/api/v1/namespaces/{NS}/pods/demo-1"
STS = f"/apis/apps/v1/namespaces/{NS}/statefulsets/demo-s"
SCALERS = "disaggregatedset.x-k8s.io/v1/disaggregatedsetrolescalers"
SCALER = f"/apis/disaggregatedset.x-k8s.io/v1/namespaces/{NS}/disaggregatedsetrolescalers/demo-r"
UPSTREAM_OWNER = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "name": "demo",
    "uid": "uid-upstream-lws",
}
STALE = (
    'Operation cannot be fulfilled on pods "demo-1": the object has been modified; '
    "please apply your changes to the latest version and try again"
)


def _pod(name: str, **extra) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": {L.NAME: "demo"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        **extra,
    }


def seed(kmock) -> None:
    kmock.objects[("v1/pods", NS, "demo-0")] = _pod("demo-0")
    target = _pod("demo-1")
    target["metadata"]["finalizers"] = ["other.io/keep", RETAIN_FINALIZER]
    target["spec"]["schedulingGates"] = [{"name": "other.io/gate"}, {"name": L.GROUP_REPLACEMENT_GATE}]
    target["metadata"]["ownerReferences"] = [dict(UPSTREAM_OWNER)]
    kmock.objects[("v1/pods", NS, "demo-1")] = target
    kmock.objects[("v1/pods", NS, "demo-2")] = _pod("demo-2")
    kmock.objects[("apps/v1/statefulsets", NS, "demo-s")] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "demo-s", "namespace": NS, "uid": "uid-demo-s", "labels": {L.NAME: "demo"}},
        "spec": {
            "replicas": 1,
            "serviceName": "demo",
            "selector": {"matchLabels": {L.NAME: "demo"}},
            "template": {
                "metadata": {"labels": {L.NAME: "demo"}},
                "spec": {"containers": [{"name": "m", "image": "x"}]},
            },
        },
    }
    kmock.objects[(SCALERS, NS, "demo-r")] = {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSetRoleScaler",
        "metadata": {"name": "demo-r", "namespace": NS, "uid": "uid-demo-r"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "a=b"},
    }


def _raw(kmock, plural: str, name: str) -> dict | None:
    try:  # (kmock's ``key in kmock.objects`` is always False for "group/version/plural" keys)
        obj = kmock.objects[plural, NS, name]
    except KeyError:
        return None
    return None if obj.deleted else obj.raw


def _target(kmock) -> dict:
    return _raw(kmock, "v1/pods", "demo-1")


@dataclass(frozen=True)
class VerbCase:
    action: Action
    method: str  # the verb's write request
    path: str
    done: Callable[[object], bool]  # kmock -> the action's effect is there
    reads_first: bool = False  # the handler GETs the object before it writes


VERBS: dict[str, VerbCase] = {
    "label": VerbCase(
        Action("label", "Pod", "demo-1", {"labels": {"team": "a"}}, uid="uid-demo-1"),
        "PATCH",
        POD,
        lambda k: _target(k)["metadata"]["labels"].get("team") == "a",
    ),
    "annotate": VerbCase(
        Action("annotate", "Pod", "demo-1", {"annotations": {L.GROUP_RESTART_COUNTS: "1"}}, uid="uid-demo-1"),
        "PATCH",
        POD,
        lambda k: (_target(k)["metadata"].get("annotations") or {}).get(L.GROUP_RESTART_COUNTS) == "1",
    ),
    "ungate": VerbCase(
        Action("ungate", "Pod", "demo-1", {"gate": L.GROUP_REPLACEMENT_GATE}, uid="uid-demo-1"),
        "PATCH",
        POD,
        lambda k: _target(k)["spec"]["schedulingGates"] == [{"name": "other.io/gate"}],
        reads_first=True,
    ),
    "set-condition": VerbCase(
        Action("set-condition", "Pod", "demo-1", {"type": L.GROUP_READY_CONDITION, "status": "True"}, uid="uid-demo-1"),
        "PATCH",
        f"{POD}/status",
        lambda k: [c["type"] for c in _target(k)["status"]["conditions"]].count(L.GROUP_READY_CONDITION) == 1,
        reads_first=True,
    ),
    "finalize": VerbCase(
        Action("finalize", "Pod", "demo-1", {"remove": [RETAIN_FINALIZER]}, uid="uid-demo-1"),
        "PATCH",
        POD,
        lambda k: _target(k)["metadata"]["finalizers"] == ["other.io/keep"],
        reads_first=True,
    ),
    "patch-status": VerbCase(
        Action("patch-status", "DisaggregatedSetRoleScaler", "demo-r", {"status": {"replicas": 3}}, uid="uid-demo-r"),
        "PATCH",
        f"{SCALER}/status",
        lambda k: _raw(k, SCALERS, "demo-r")["status"] == {"replicas": 3, "selector": "a=b"},
        reads_first=True,
    ),
    "disown": VerbCase(
        Action("disown", "Pod", "demo-1", {"owners": [UPSTREAM_OWNER["uid"]]}, uid="uid-demo-1"),
        "PATCH",
        POD,
        lambda k: not _target(k)["metadata"].get("ownerReferences"),
        reads_first=True,
    ),
    "delete": VerbCase(
        Action("delete", "StatefulSet", "demo-s", {"propagation": "Foreground"}, uid="uid-demo-s"),
        "DELETE",
        STS,
        lambda k: _raw(k, "apps/v1/statefulsets", "demo-s") is None,
    ),
}
#: the verbs the actuator implements now (a VerbCase may be ready before its verb lands)
HANDLED = sorted(set(VERBS) & set(LiveCluster(kmock_client("http://127.0.0.1:1"))._handlers()))
PRE = Action("label", "Pod", "demo-0", {"labels": {"step": "pre"}}, uid="uid-demo-0")
POST = Action("label", "Pod", "demo-2", {"labels": {"step": "post"}}, uid="uid-demo-2")


def _pre_done(kmock) -> bool:
    return _raw(kmock, "v1/pods", "demo-0")["metadata"]["labels"].get("step") == "pre"


def _post_done(kmock) -> bool:
    return _raw(kmock, "v1/pods", "demo-2")["metadata"]["labels"].get("step") == "post"


def live(kmock, waits: list[float]) -> LiveCluster:
    return LiveCluster(
        kmock_client(str(kmock.url), timeout=CLIENT_TIMEOUT),
        now=lambda: 0.0,
        retry=RetryPolicy(sleep=waits.append, jitter=0.0),
    )


def _sent(kmock, method: str, path: str) -> int:
    return sum(1 for r in kmock if str(getattr(r.method, "value", r.method)).upper() == method and r.url.path == path)


async def _next_reconcile_converges(kmock, cluster: LiveCluster, case: VerbCase) -> None:
    kmock.faults.clear()
    await asyncio.to_thread(cluster.execute, NS, [PRE, case.action, POST])
    assert _pre_done(kmock) and case.done(kmock) and _post_done(kmock)


def test_every_verb_of_the_actuator_has_fault_cases():
    missing = set(LiveCluster(kmock_client("http://127.0.0.1:1"))._handlers()) - set(VERBS)
    assert not missing, f"a new action verb needs its VerbCase here (every verb is fault-injected): {missing}"


# ---- retried and done ------------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("verb", HANDLED)
@pytest.mark.parametrize(
    "fault, waits_expected",
    [
        ({"status": 500}, 0.5),
        ({"status": 503, "reason": "ServiceUnavailable"}, 0.5),
        ({"status": 429, "reason": "TooManyRequests", "retry_after": 3}, 3.0),
        ({"delay": HANG}, 0.5),
    ],
    ids=["500", "503", "429-retry-after", "timeout"],
)
async def test_transient_fault_is_retried_and_done(kmock, verb, fault, waits_expected):
    seed(kmock)
    case, waits = VERBS[verb], []
    kmock.inject(Fault(case.method, case.path, **fault))
    cluster = live(kmock, waits)

    lines = await asyncio.to_thread(cluster.execute, NS, [PRE, case.action, POST])

    assert len(lines) == 3 and not any(line.startswith("skipped") for line in lines), lines
    assert case.done(kmock) and _pre_done(kmock) and _post_done(kmock)
    assert waits[0] == waits_expected  # the server's Retry-After, else the first backoff step
    assert _sent(kmock, case.method, case.path) >= 2  # refused once, sent again
    await _next_reconcile_converges(kmock, cluster, case)


@pytest.mark.asyncio
@pytest.mark.parametrize("verb", [v for v in HANDLED if VERBS[v].reads_first])
async def test_a_failed_read_before_the_write_is_retried(kmock, verb):
    seed(kmock)
    case, waits = VERBS[verb], []
    read = case.path.removesuffix("/status")
    kmock.inject(Fault("GET", read, 500), Fault("GET", read, 429, reason="TooManyRequests", retry_after=2))
    lines = await asyncio.to_thread(live(kmock, waits).execute, NS, [case.action])
    assert case.done(kmock) and not lines[0].startswith("skipped") and waits[:2] == [0.5, 2.0]


# ---- outcome unknown: settled by re-reading -------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("verb", HANDLED)
@pytest.mark.parametrize(
    "fault, shown",
    [({"status": 500}, "HTTP 500"), ({"delay": HANG}, "timed out")],
    ids=["500-after-write", "timeout-after-write"],
)
async def test_a_write_that_landed_is_settled_by_re_reading_not_re_sent(kmock, verb, fault, shown):
    seed(kmock)
    case, waits = VERBS[verb], []
    kmock.inject(Fault(case.method, case.path, applied=True, **fault))
    cluster = live(kmock, waits)

    lines = await asyncio.to_thread(cluster.execute, NS, [PRE, case.action, POST])

    assert lines[1].startswith(f"{verb} {case.action.kind}/{NS}/{case.action.name}: done (settled by re-reading after")
    assert shown in lines[1]
    assert case.done(kmock) and _post_done(kmock)
    assert _sent(kmock, case.method, case.path) == 1  # not sent twice (a guarded JSON patch would fail its test)
    await _next_reconcile_converges(kmock, cluster, case)


# ---- 409: precondition (skip) vs other conflicts (error) --------------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("verb", HANDLED)
async def test_a_precondition_409_is_skipped_and_the_next_reconcile_re_plans(kmock, verb):
    seed(kmock)
    case, waits = VERBS[verb], []
    kmock.inject(Fault(case.method, case.path, 409, reason="Conflict", message=STALE))
    cluster = live(kmock, waits)

    lines = await asyncio.to_thread(cluster.execute, NS, [PRE, case.action, POST])

    assert lines[1].startswith(f"skipped {case.action.describe()}: HTTP 409, the object changed")
    assert not case.done(kmock) and _post_done(kmock)  # later actions ran
    assert _sent(kmock, case.method, case.path) == 1  # not retried
    await _next_reconcile_converges(kmock, cluster, case)


@pytest.mark.asyncio
@pytest.mark.parametrize("verb", HANDLED)
@pytest.mark.parametrize(
    "fault, shown",
    [
        (
            {
                "status": 409,
                "reason": "Conflict",
                "message": 'admission webhook "quota.example.com" denied the request: conflict',
            },
            "HTTP 409 Conflict: admission webhook",
        ),
        ({"status": 409, "reason": "AlreadyExists", "message": "object already exists"}, "HTTP 409 AlreadyExists"),
        ({"status": 500, "times": None}, "HTTP 500 InternalError: injected fault (gave up after 5 attempts)"),
    ],
    ids=["409-webhook", "409-already-exists", "500-persistent"],
)
async def test_an_error_names_the_action_context_status_and_the_applied_actions(kmock, caplog, verb, fault, shown):
    seed(kmock)
    case, waits = VERBS[verb], []
    kmock.inject(Fault(case.method, case.path, **fault))
    cluster = live(kmock, waits)

    with caplog.at_level(logging.INFO, logger="pulumi_lws.cluster"), pytest.raises(ActionError) as raised:
        await asyncio.to_thread(cluster.execute, NS, [PRE, case.action, POST])

    err = raised.value
    message = str(err)
    assert message.startswith(f"{verb} {case.action.kind}/{NS}/{case.action.name} failed on {cluster.where}: ")
    assert shown in message and "action 2 of 3" in message and "not run: 1 later action(s)" in message
    assert err.action == case.action and err.status == fault["status"]
    assert len(err.applied) == 1 and err.applied[0].startswith("label Pod/demo-0") and err.applied[0] in message
    assert err.applied[0] in caplog.messages  # logged as it was applied, before the failure
    assert _pre_done(kmock) and not case.done(kmock) and not _post_done(kmock)  # stopped at the failure
    if fault.get("times", 1) is None:  # every attempt failed: the whole backoff, then the error
        assert waits == [0.5, 1.0, 2.0, 4.0]
    else:  # not retried
        assert _sent(kmock, case.method, case.path) == 1
    await _next_reconcile_converges(kmock, cluster, case)


# ---- the API server's own precondition answers (uid guards) -----------------------------------------
@pytest.mark.asyncio
@pytest.mark.parametrize("verb", HANDLED)
async def test_an_action_on_a_recreated_object_is_skipped_by_its_uid_guard(kmock, verb):
    """The object was recreated under another uid: the merge patch's ``metadata.uid``, the JSON
    patch's ``test`` op or the delete's ``preconditions.uid`` makes the API server refuse (422 /
    409), the actuator skips it and leaves the new object untouched."""
    seed(kmock)
    case = VERBS[verb]
    stale = Action(case.action.verb, case.action.kind, case.action.name, case.action.params, uid="uid-of-a-deleted-one")
    lines = await asyncio.to_thread(live(kmock, []).execute, NS, [stale])
    assert lines[0].startswith(f"skipped {stale.describe()}: HTTP ") and "the object changed" in lines[0]
    assert not case.done(kmock)


@pytest.mark.asyncio
async def test_a_validation_422_is_an_error_not_a_skip(kmock):
    seed(kmock)
    kmock.inject(
        Fault("PATCH", POD, 422, reason="Invalid", message='Pod "demo-1" is invalid: metadata.labels: Invalid value')
    )
    with pytest.raises(
        ActionError,
        match=r"label Pod/serving/demo-1 failed on cluster context 'kmock' at http://127.0.0.1:\d+: HTTP 422 Invalid",
    ):
        await asyncio.to_thread(live(kmock, []).execute, NS, [VERBS["label"].action])
