"""Property: whatever sequence of API-server failures a write meets, the live actuator ends in the
documented outcome (docs/live-cluster.md, "When the API server fails").

A scripted client fails the first PATCHes of a ``label`` action with transient failures, some of
which *landed* (the write took effect, its answer was lost). Then:

- the first attempt that succeeds or whose failure landed, ``k`` (0-based), decides: when
  ``k`` < the attempt budget the action is done — settled by re-reading, never re-sent, if that
  write landed (on the last attempt too: one last re-read) — each wait being the server's
  Retry-After or the backoff step;
- otherwise the action fails with :class:`ActionError` after the whole budget, the object
  untouched, and the lines applied before it listed.
"""

from __future__ import annotations

import copy

import httpx2 as httpx
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kmock_helpers import http_error

from pulumi_lws.cluster.live import LiveCluster
from pulumi_lws.cluster.resilience import RetryPolicy
from pulumi_lws.core.contract.ports import ActionError
from pulumi_lws.core.contract.stage import Action

ATTEMPTS = 4
FAILURES = {  # name -> (exception factory, the write landed, Retry-After)
    "500": (lambda: http_error(500, "InternalError"), False, None),
    "500-landed": (lambda: http_error(500, "InternalError"), True, None),
    "503": (lambda: http_error(503, "ServiceUnavailable"), False, None),
    "429": (lambda: http_error(429, "TooManyRequests", headers={"Retry-After": "2"}), False, 2.0),
    "timeout": (lambda: httpx.ReadTimeout("timed out"), False, None),
    "timeout-landed": (lambda: httpx.ReadTimeout("timed out"), True, None),
}


class _Obj(dict):
    def to_dict(self):
        return copy.deepcopy(dict(self))


class ScriptedClient:
    """Pods by name; each PATCH of ``target`` meets the next scripted failure."""

    def __init__(self, script: list[str], target: str) -> None:
        self.script, self.target, self.patches = list(script), target, 0
        self.pods = {
            n: _Obj(kind="Pod", metadata={"name": n, "uid": f"uid-{n}", "labels": {}}) for n in ("a", "b", "c")
        }

    def get(self, res, name, namespace=None):
        return _Obj(copy.deepcopy(dict(self.pods[name])))

    def patch(self, res, name, patch, namespace=None, patch_type=None):
        def apply():
            self.pods[name]["metadata"]["labels"].update(patch["metadata"]["labels"])

        if name != self.target or not self.script:
            return apply()
        self.patches += 1
        make, landed, _ = FAILURES[self.script.pop(0)]
        if landed:
            apply()
        raise make()


@settings(max_examples=150, deadline=None)
@given(script=st.lists(st.sampled_from(sorted(FAILURES)), max_size=ATTEMPTS + 2))
def test_any_failure_sequence_ends_in_the_documented_outcome(script):
    waits: list[float] = []
    client = ScriptedClient(script, target="b")
    cluster = LiveCluster(client, retry=RetryPolicy(attempts=ATTEMPTS, sleep=waits.append, jitter=0.0), context="ctx")
    actions = [Action("label", "Pod", n, {"labels": {"step": n}}, uid=f"uid-{n}") for n in ("a", "b", "c")]
    k = next((i for i, f in enumerate(script) if FAILURES[f][1]), len(script))  # first landed failure or success
    landed = k < len(script)  # stopped at a landed failure: a re-read finds the write done
    backoff = [FAILURES[f][2] or 0.5 * 2**i for i, f in enumerate(script)]

    try:
        lines = cluster.execute("ns", actions)
    except ActionError as exc:
        assert k >= ATTEMPTS, (script, str(exc))
        assert str(exc).startswith("label Pod/ns/b failed on cluster context 'ctx': ")
        assert f"gave up after {ATTEMPTS} attempts" in str(exc)
        assert exc.applied == ("label Pod/a: step=a",) and "not run: 1 later action(s)" in str(exc)
        assert client.pods["b"]["metadata"]["labels"] == {} and client.pods["c"]["metadata"]["labels"] == {}
        assert client.patches == ATTEMPTS and waits == backoff[: ATTEMPTS - 1]
        return
    assert k < ATTEMPTS, script  # a write that landed on the last attempt is found by a last re-read
    assert (
        lines[1].startswith("label Pod/ns/b: done (settled by re-reading")
        if landed
        else lines[1] == "label Pod/b: step=b"
    )
    assert all(client.pods[n]["metadata"]["labels"] == {"step": n} for n in ("a", "b", "c"))
    assert client.patches == k + 1 if landed else client.patches == k  # a landed write is never re-sent
    assert waits == backoff[: min(k + 1, ATTEMPTS - 1)] if landed else waits == backoff[:k]
