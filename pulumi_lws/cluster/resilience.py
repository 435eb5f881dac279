"""How the live backend reads an API server's failures: which are worth a retry, how long to
wait, which leave a write's outcome unknown, and which 409/422 mean "the object changed".

Classification (one place, so every verb and every LIST agrees):

- **transient** (retried with exponential backoff, bounded by :class:`RetryPolicy`): HTTP 429
  (the server's ``Retry-After`` header or ``Status.details.retryAfterSeconds`` is the wait,
  capped), every 5xx except 501 (not implemented: retrying cannot help), timeouts and
  connection-level failures (refused, reset, protocol errors);
- **outcome unknown** (a write that may have been applied): timeouts after the request was
  sent, connections lost mid-response, and 5xx other than 503 (the API server answers 500/504
  when etcd took a write it then could not confirm; 503 and 429 are refusals before any work).
  The actuator settles these by re-reading the object before it retries;
- **stale precondition** (the object changed since it was observed; skipping is safe, the next
  reconcile plans from what the cluster then holds): 409 ``Conflict`` whose message is the
  API server's optimistic-lock or precondition message (uid / resourceVersion), and 422 from a
  JSON patch whose ``test`` op failed (the API server answers those with the bare "rejected our
  request" message and no causes) or from a merge patch whose ``metadata.uid`` guard named
  another uid (``metadata.uid`` field is immutable). Every other 409 (``AlreadyExists``, an
  admission webhook's conflict, ...) and every other 422 (validation) is an error.
"""

from __future__ import annotations

import datetime
import email.utils
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx
from lightkube import ApiError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.wait import wait_base

log = logging.getLogger("pulumi_lws.cluster")

#: message fragments of the API server's "the object changed" 409s (resourceVersion: the
#: optimistic lock of a write; uid/resourceVersion: ``preconditions`` of a delete or an update)
STALE_CONFLICT_MESSAGES = ("the object has been modified", "Precondition failed", "uid mismatch")
#: the 422 message of a JSON patch the API server could not apply (a failed ``test`` op)
JSON_PATCH_REJECTED = "the server rejected our request due to an error in our request"


def status_code(exc: BaseException) -> int | None:
    """HTTP status of a lightkube error (``ApiError.status.code`` or the httpx response's)."""
    if isinstance(exc, ApiError):
        return exc.status.code
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _status(exc: BaseException) -> Mapping[str, Any]:
    """The Kubernetes ``Status`` body of an error response ({} when there is none)."""
    response = getattr(exc, "response", None)
    try:  # lightkube wraps only exact ``application/json`` replies in ApiError: read the body itself
        body = response.json() if response is not None else None
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return body
    if isinstance(exc, ApiError) and exc.status is not None:
        return exc.status.to_dict()
    return {}


def is_kubernetes_not_found(exc: BaseException) -> bool:
    """A 404 whose body is a Kubernetes ``Status`` in JSON: the API server's own "not found", not
    a proxy's page or another server's answer."""
    if status_code(exc) != 404:
        return False
    response = getattr(exc, "response", None)
    content_type = str(response.headers.get("content-type") or "") if response is not None else ""
    if not content_type.split(";")[0].strip().lower().endswith("json"):
        return False
    try:
        body = response.json() if response is not None else None
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("kind") == "Status"


def request_words(exc: BaseException) -> str:
    """``GET /apis/apps/v1/namespaces/ns/statefulsets``: the HTTP request a failure answered ('' unknown)."""
    try:
        request = getattr(exc, "request", None)
    except RuntimeError:  # httpx raises when an error carries no request
        return ""
    if request is None:
        return ""
    return f"{request.method} {request.url.path}"


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: 429, 5xx but 501, a timeout or a lost connection."""
    if isinstance(exc, httpx.LocalProtocolError):  # the request itself is malformed: retrying cannot help
        return False
    if isinstance(exc, httpx.TransportError):  # timeouts, refused/reset connections, the server's protocol errors
        return True
    code = status_code(exc)
    return code is not None and (code == 429 or (500 <= code < 600 and code != 501))


def outcome_unknown(exc: BaseException) -> bool:
    """A write that failed this way may still have been applied (see the module docstring)."""
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.LocalProtocolError)):
        return False  # never reached the server
    if isinstance(exc, httpx.TransportError):
        return True
    code = status_code(exc)
    return code is not None and 500 <= code < 600 and code not in (501, 503)


def is_stale_precondition(exc: BaseException) -> bool:
    """The write was refused because the object is no longer the one observed (uid or
    resourceVersion precondition, JSON-patch ``test`` guard): safe to skip."""
    code = status_code(exc)
    status = _status(exc)
    message = str(status.get("message") or "")
    if code == 409:
        return status.get("reason") == "Conflict" and any(m in message for m in STALE_CONFLICT_MESSAGES)
    if code == 422:
        causes = (status.get("details") or {}).get("causes") or []
        if not causes:
            return JSON_PATCH_REJECTED in message
        return all(c.get("field") == "metadata.uid" for c in causes)
    return False


def retry_after(exc: BaseException | None, now: Callable[[], float] = time.time) -> float | None:
    """The server's requested wait: ``Retry-After`` (seconds or an HTTP date), else the
    ``Status.details.retryAfterSeconds`` of the error body; None when it asks for none."""
    if exc is None:
        return None
    response = getattr(exc, "response", None)
    header = response.headers.get("Retry-After") if response is not None else None
    if header:
        header = header.strip()
        if header.isdigit():
            return float(header)
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.timezone.utc)
            return max(0.0, when.timestamp() - now())
    seconds = (_status(exc).get("details") or {}).get("retryAfterSeconds")
    return float(seconds) if isinstance(seconds, (int, float)) and seconds >= 0 else None


def describe_failure(exc: BaseException) -> str:
    """``HTTP 500 InternalError: <message>``, ``timed out (ReadTimeout)``, ``connection failed (...)``."""
    code = status_code(exc)
    if code is not None:
        status = _status(exc)
        if not status:  # no Kubernetes Status: a proxy's page or another server's answer
            response = getattr(exc, "response", None)
            content_type = str(response.headers.get("content-type") or "none") if response is not None else "none"
            return f"HTTP {code} ({content_type.split(';')[0]}, not a Kubernetes answer)"
        reason = status.get("reason") or ""
        message = _one_line(str(status.get("message") or "")) or _one_line(exc)
        return f"HTTP {code}" + (f" {reason}" if reason else "") + (f": {message}" if message else "")
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__}; no HTTP status)"
    if isinstance(exc, httpx.ConnectError) and _is_tls(exc):
        return f"TLS handshake failed ({type(exc).__name__}: {exc}; no HTTP status)"
    if isinstance(exc, httpx.TransportError):
        return f"connection failed ({type(exc).__name__}: {exc}; no HTTP status)"
    if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):  # a body that is no Kubernetes object
        return f"malformed response ({type(exc).__name__}: {_one_line(exc)})"
    return f"{type(exc).__name__}: {_one_line(exc)}"


def _is_tls(exc: BaseException) -> bool:
    """A connection refused by TLS (handshake, certificate), by the message or the cause's type."""
    import ssl

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "SSL" in str(seen) or "CERTIFICATE" in str(seen).upper():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _one_line(exc: BaseException | str) -> str:
    return " ".join(str(exc).split())[:300]


class _wait_for_server(wait_base):
    """The server's ``Retry-After`` when it sent one (capped at ``cap``), else ``fallback``."""

    def __init__(self, fallback: wait_base, cap: float) -> None:
        self.fallback, self.cap = fallback, cap

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hinted = retry_after(exc)
        return min(hinted, self.cap) if hinted is not None else self.fallback(retry_state)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retry of transient failures: at most ``attempts`` tries per request, exponential
    backoff from ``initial`` seconds doubling up to ``max_wait`` (plus up to ``jitter`` seconds
    of random spread), a server's ``Retry-After`` honoured up to ``max_retry_after``.

    ``sleep`` is how waits happen; tests inject a recorder so they never sleep. Worst case per
    request with the defaults: 0.5 + 1 + 2 + 4 s of waits (or the server's Retry-After, at most
    30 s each) plus 5 client timeouts.
    """

    attempts: int = 5
    initial: float = 0.5
    max_wait: float = 8.0
    max_retry_after: float = 30.0
    jitter: float = 0.25
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def retrying(self, what: str) -> Retrying:
        """A tenacity ``Retrying`` for one request (``what`` names it in the retry log)."""

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0.0
            log.warning(
                "%s: %s; retry %d/%d in %.2fs",
                what,
                describe_failure(exc) if exc else "failed",
                state.attempt_number,
                self.attempts - 1,
                wait,
            )

        return Retrying(
            sleep=self.sleep,
            stop=stop_after_attempt(self.attempts),
            wait=_wait_for_server(
                wait_exponential_jitter(initial=self.initial, max=self.max_wait, jitter=self.jitter),
                cap=self.max_retry_after,
            ),
            retry=retry_if_exception(is_transient),
            before_sleep=log_retry,
            reraise=True,
        )
