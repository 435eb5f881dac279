"""API discovery: whether the cluster serves an API, asked once per backend instead of read from a
404 on a LIST.

``GET /apis`` (the ``APIGroupList``: every group and version the server serves) once, then
``GET /apis/<group>/<version>`` (the ``APIResourceList``) once per group-version that is listed
and asked about; the answers are kept for the life of the :class:`Discovery` (one per
``LiveCluster``: one reconcile, one ``pulumi up``, one CLI command).

Invariants:

* :meth:`Discovery.serves` answers True (listed), False (the group-version is not listed, or its
  resource list lacks the kind) or None (the server refuses discovery: 401/403, cannot tell);
* every API server answers ``GET /apis`` with an ``APIGroupList`` in JSON: any other answer (404,
  a proxy's HTML page, another content type, another kind, a 5xx after the retries, no answer)
  raises :class:`~pulumi_lws.core.contract.ports.ClusterError` naming the server and the request —
  a URL that is not a Kubernetes API server never reads as "nothing installed";
* the core group (``apiVersion: v1``) is read at ``/api/v1`` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_lws.cluster.resilience import RetryPolicy, describe_failure, is_transient
from pulumi_lws.core.contract.ports import ClusterError

#: what a 404 (or a non-Kubernetes answer) to ``GET /apis`` means, for the error
NOT_AN_API_SERVER = (
    "every Kubernetes API server serves it, so this URL is not one, or something in front of it answers for it "
    "(a proxy, a wrong path in the kubeconfig's server URL)"
)


class DiscoveryError(ClusterError):
    """API discovery got an answer no Kubernetes API server gives (or none)."""


def response_words(response: Any) -> str:
    """``HTTP 404 NotFound: <message>`` for a Kubernetes Status, ``HTTP 404 (text/html, not a
    Kubernetes answer)`` for another error body, ``malformed response (...)`` for a success that
    is no JSON object."""
    content_type = str(response.headers.get("content-type") or "none").split(";")[0]
    status = _json_body(response)
    if status is not None and status.get("kind") == "Status":
        reason = status.get("reason") or ""
        message = str(status.get("message") or "")
        return f"HTTP {response.status_code}" + (f" {reason}" if reason else "") + (f": {message}" if message else "")
    if status is None and response.status_code < 300:
        return f"malformed response (HTTP {response.status_code}, {content_type}: not a Kubernetes answer)"
    if status is None:
        return f"HTTP {response.status_code} ({content_type}, not a Kubernetes answer)"
    return f"HTTP {response.status_code} (a {status.get('kind') or 'JSON object'} where a Kubernetes answer belongs)"


def _json_body(response: Any) -> dict[str, Any] | None:
    """The JSON object of ``response`` when it is one with a JSON content type (else None)."""
    content_type = str(response.headers.get("content-type") or "")
    if not content_type.split(";")[0].strip().lower().endswith("json"):
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


class Discovery:
    """The served API groups and resources of one API server (module docstring).

    ``get(path)`` sends one GET with the client's base URL and credentials and returns the httpx
    response; ``where()`` names the cluster in errors; ``retry()`` is the backend's current retry
    policy (transient failures are retried like any request)."""

    def __init__(self, get: Callable[[str], Any], where: Callable[[], str], retry: Callable[[], RetryPolicy]) -> None:
        self._get, self._where, self._retry = get, where, retry
        self._groups: Mapping[str, frozenset[str]] | None = None
        self._groups_read = False
        self._resources: dict[str, list[Mapping[str, Any]] | None] = {}
        #: the paths GET so far, in order (each at most once)
        self.requests: list[str] = []

    def serves(self, api_version: str, kind: str, plural: str | None = None) -> bool | None:
        """Whether the server serves ``kind`` (REST resource ``plural``, default ``kind`` lower-cased
        + ``s``) at ``api_version``; None when it refuses discovery (401/403)."""
        group, _, version = api_version.rpartition("/")
        if group:
            groups = self.groups()
            if groups is None:
                return None
            if version not in groups.get(group, frozenset()):
                return False  # not installed: no further request
        resources = self._resource_list(api_version)
        if resources is None:
            return None
        plural = plural or f"{kind.lower()}s"
        return any(
            "/" not in str(r.get("name")) and (r.get("kind") == kind or r.get("name") == plural) for r in resources
        )

    def groups(self) -> Mapping[str, frozenset[str]] | None:
        """group -> its served versions, from ``GET /apis`` (None: discovery refused)."""
        if not self._groups_read:
            body = self._read("/apis", "APIGroupList", missing_ok=False)
            self._groups_read = True
            if body is not None:
                self._groups = {
                    str(g.get("name")): frozenset(str(v.get("version")) for v in g.get("versions") or ())
                    for g in body.get("groups") or ()
                    if isinstance(g, dict)
                }
        return self._groups

    def _resource_list(self, api_version: str) -> list[Mapping[str, Any]] | None:
        if api_version not in self._resources:
            group, _, version = api_version.rpartition("/")
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            body = self._read(path, "APIResourceList", missing_ok=True)
            self._resources[api_version] = (
                None if body is None else [r for r in body.get("resources") or () if isinstance(r, dict)]
            )
        return self._resources[api_version]

    def _read(self, path: str, kind: str, *, missing_ok: bool) -> dict[str, Any] | None:
        """The ``kind`` object at ``path``; None when discovery is refused (401/403); with
        ``missing_ok`` a Kubernetes 404 is an empty resource list."""
        self.requests.append(path)
        request = f"GET {path}"
        try:
            for attempt in self._retry().retrying(f"API discovery {request} ({self._where()})"):
                with attempt:
                    response = self._get(path)
                    if is_transient_status(response.status_code):
                        response.raise_for_status()
        except Exception as exc:  # httpx errors, timeouts, 5xx after the retries
            attempts = f" (gave up after {self._retry().attempts} attempts)" if is_transient(exc) else ""
            raise DiscoveryError(
                f"API discovery failed: {request} on {self._where()}: {describe_failure(exc)}{attempts}"
            ) from exc
        code = response.status_code
        if code in (401, 403):
            return None
        body = _json_body(response)
        if code == 404 and missing_ok and body is not None and body.get("kind") == "Status":
            return {"kind": kind, "resources": []}  # the group-version went away since /apis listed it
        if code == 200 and body is not None and body.get("kind") == kind:
            return body
        cause = response_words(response) if code != 200 or body is None else f"HTTP 200, a {body.get('kind')!r}"
        hint = f"; {NOT_AN_API_SERVER}" if path == "/apis" else ""
        raise DiscoveryError(f"API discovery failed: {request} on {self._where()}: {cause} (not an {kind}){hint}")


def is_transient_status(code: int) -> bool:
    """An HTTP status worth retrying (as :func:`~pulumi_lws.cluster.resilience.is_transient`)."""
    return code == 429 or (500 <= code < 600 and code != 501)
