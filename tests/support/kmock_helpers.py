"""A lightkube client pointed at a kmock in-memory API server (the live backend's HTTP tests),
:class:`ClusterEmulator`: kmock's Kubernetes emulator serving, as every API server does, the kinds
every cluster serves (tests/conftest.py makes it the default ``kmock``), and
:class:`FaultyEmulator`: that emulator with a fault hook and the API-server answers the live
backend's guards rely on.

Use the faulty emulator with ``pytestmark = pytest.mark.kmock(cls=FaultyEmulator)`` (the kmock
plugin's fixture then builds it), and ``kmock.inject(Fault(...))`` in the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp.web
import attrs
import httpx2
import jsonpatch
from kmock import KubernetesEmulator, KubernetesError, ResourceInfo
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig

#: the client timeout of the fault tests (seconds): generous next to kmock's milliseconds, so a
#: loaded machine does not time a normal request out; :data:`HANG` outlasts it
CLIENT_TIMEOUT = 1.0
#: a ``Fault.delay`` the client always times out on (the handler is released by the client's next
#: request, so a test does not wait it out)
HANG = 5.0
#: what a real API server answers for a JSON patch whose ``test`` op failed (422, no causes)
JSON_PATCH_REJECTED = "the server rejected our request due to an error in our request"


def object_requests(requests: Any) -> list[Any]:
    """The requests of ``requests`` (kmock's log) that name a resource: LISTs and object reads or
    writes, not API discovery."""
    return [r for r in requests if r.resource is not None and r.resource.plural is not None]


def discovery_paths(requests: Any) -> list[str]:
    """The paths of the API discovery GETs in ``requests`` (``/apis``, ``/apis/<group>/<version>``, ``/api/v1``)."""
    return [r.url.path for r in requests if r.resource is None or r.resource.plural is None]


def kmock_client(url: str, *, timeout: float | None = None) -> Client:
    """A client of the kmock server at ``url``, context ``kmock``; ``timeout`` (seconds) bounds
    every request (lightkube's default: 10 s)."""
    config = KubeConfig.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kmock", "cluster": {"server": url}}],
            "users": [{"name": "test", "user": {"token": "t"}}],
            "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
            "current-context": "kmock",
        }
    )
    return Client(
        config=config, field_manager="pulumi-lws", timeout=httpx2.Timeout(timeout) if timeout is not None else None
    )


@dataclass
class Fault:
    """Answer the next ``times`` requests ``method path`` (exact URL path; ``path`` may also be a
    compiled regex) with ``status`` instead of serving them.

    ``delay`` seconds pass before the answer, or less: the handler is released as soon as the
    client sends its next request (with ``delay`` > the client's timeout, e.g. :data:`HANG`, the
    client sees a timeout, and the test does not wait the delay out). ``applied``: the request takes effect first (the write landed, its answer was lost:
    the outcome is unknown to the client). ``retry_after`` sets the ``Retry-After`` header.
    ``times=None``: every matching request fails. ``body``: answer that text (``content_type``)
    instead of a ``Status`` object — a proxy's page or garbage where the API server's JSON belongs.
    """

    method: str
    path: str | re.Pattern[str]
    status: int = 500
    reason: str = "InternalError"
    message: str = "injected fault"
    retry_after: int | None = None
    delay: float = 0.0
    applied: bool = False
    times: int | None = 1
    body: str | None = None
    content_type: str = "text/html"
    hits: int = field(default=0, init=False)

    def matches(self, method: str, path: str) -> bool:
        if method.upper() != self.method.upper() or (self.times is not None and self.hits >= self.times):
            return False
        return bool(self.path.fullmatch(path)) if isinstance(self.path, re.Pattern) else path == self.path

    def response(self) -> aiohttp.web.Response:
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
        if self.body is not None:
            return aiohttp.web.Response(
                text=self.body, status=self.status, content_type=self.content_type, headers=headers
            )
        details: dict[str, Any] = {"retryAfterSeconds": self.retry_after} if self.retry_after is not None else {}
        return aiohttp.web.json_response(
            {
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {},
                "status": "Failure",
                "code": self.status,
                "reason": self.reason,
                "message": self.message,
                "details": details,
            },
            status=self.status,
            headers=headers,
        )


#: what every Kubernetes API server serves among the kinds the live backend reads (a 404 on their
#: LIST is a cluster fault, docs/live-cluster.md): ``group/version/plural`` -> (kind, namespaced)
CORE_RESOURCES: Mapping[str, tuple[str, bool]] = {
    "apps/v1/statefulsets": ("StatefulSet", True),
    "apps/v1/deployments": ("Deployment", True),
    "apps/v1/controllerrevisions": ("ControllerRevision", True),
    "v1/pods": ("Pod", True),
    "v1/services": ("Service", True),
    "v1/events": ("Event", True),
    "v1/nodes": ("Node", False),
}


@attrs.define(kw_only=True)
class ClusterEmulator(KubernetesEmulator):
    """kmock's emulator serving :data:`CORE_RESOURCES` from the start (kmock serves a resource
    only once an object or a declaration names it; an API server serves these always)."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for resource, (kind, namespaced) in CORE_RESOURCES.items():
            self.resources[resource] = ResourceInfo(kind=kind, namespaced=namespaced)


@attrs.define(kw_only=True)
class FaultyEmulator(ClusterEmulator):
    """kmock's emulator, plus:

    - :meth:`inject`: faults answered instead of (or, ``applied``, after) serving a request;
    - the API server's precondition answers the actuator's guards rely on, which kmock lacks: a
      JSON patch whose ``test`` op fails is 422 (kmock: 500), a merge patch naming another
      ``metadata.uid`` is 422 ``field is immutable`` (kmock: overwrites the uid), a delete whose
      ``preconditions.uid`` names another uid is 409 ``Conflict`` (kmock: ignores it).
    """

    faults: list[Fault] = attrs.field(factory=list)
    _next_request: asyncio.Event | None = attrs.field(default=None, init=False)

    def inject(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    async def _handle(self, request: Any) -> aiohttp.web.StreamResponse:
        if self._next_request is not None:
            self._next_request.set()  # releases a delayed fault waiting for the client's retry
        self._next_request = released = asyncio.Event()
        method = str(getattr(request.method, "value", request.method)).upper()
        fault = next((f for f in self.faults if f.matches(method, request.url.path)), None)
        if fault is None:
            return await self._serve_with_preconditions(request, method)
        fault.hits += 1
        if fault.applied:
            await self._serve_with_preconditions(request, method)
        if fault.delay:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(released.wait(), fault.delay)
        return fault.response()

    async def _serve_with_preconditions(self, request: Any, method: str) -> aiohttp.web.StreamResponse:
        stored = self._stored(request)
        if stored is not None and method in ("PATCH", "DELETE"):
            self._check_uid(request, method, stored)
        try:
            return await super()._handle(request)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise KubernetesError(
                status=422, reason="Invalid", message=JSON_PATCH_REJECTED, details={"causes": []}
            ) from exc

    def _stored(self, request: Any) -> Mapping[str, Any] | None:
        if request.resource is None or request.name is None:
            return None
        key = (request.resource, request.namespace, request.name)
        try:
            obj = self.objects[key]
        except KeyError:
            return None
        return None if obj.deleted else obj.raw

    @staticmethod
    def _check_uid(request: Any, method: str, stored: Mapping[str, Any]) -> None:
        uid = (stored.get("metadata") or {}).get("uid")
        data = request.data if isinstance(request.data, Mapping) else {}
        if method == "DELETE":
            wanted = (data.get("preconditions") or {}).get("uid")
            if wanted and wanted != uid:
                raise KubernetesError(
                    status=409,
                    reason="Conflict",
                    message=(
                        f'Operation cannot be fulfilled on {request.resource.plural} "{request.name}": Precondition '
                        f"failed: UID in precondition: {wanted}, UID in object meta: {uid}"
                    ),
                )
        else:
            wanted = (data.get("metadata") or {}).get("uid")
            if wanted and wanted != uid:
                raise KubernetesError(
                    status=422,
                    reason="Invalid",
                    message=(
                        f'{request.resource.plural} "{request.name}" is invalid: metadata.uid: Invalid value: '
                        f'"{wanted}": field is immutable'
                    ),
                    details={
                        "causes": [
                            {"reason": "FieldValueInvalid", "message": "field is immutable", "field": "metadata.uid"}
                        ]
                    },
                )


def http_error(
    code: int,
    reason: str = "",
    message: str = "",
    *,
    causes: list | None = None,
    headers: Mapping[str, str] | None = None,
    retry_after_seconds: int | None = None,
    json: bool = True,
    method: str = "PATCH",
) -> httpx2.HTTPStatusError:
    """The error lightkube raises for an API-server answer ``code`` with a ``Status`` body (or a
    plain-text body, ``json=False``, as a proxy in front of it would send), without a server."""
    request = httpx2.Request(method, "https://k8s.example/api/v1/namespaces/ns/pods/p")
    details: dict[str, Any] = {} if causes is None else {"causes": causes}
    if retry_after_seconds is not None:
        details["retryAfterSeconds"] = retry_after_seconds
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
        "details": details,
    }
    response = (
        httpx2.Response(code, json=body, headers=dict(headers or {}), request=request)
        if json
        else httpx2.Response(code, text="upstream connect error", headers=dict(headers or {}), request=request)
    )
    return httpx2.HTTPStatusError(message, request=request, response=response)
