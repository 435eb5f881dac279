"""What each action verb sends to the API server: one handler per verb of
:class:`~pulumi_lws.core.contract.stage.Action` (a base of :class:`~pulumi_lws.cluster.live.LiveCluster`).

Apart from :mod:`.live` because the request a verb sends is one concern and running a list of
actions (retries, settling an unknown outcome by re-reading, skipping a 404 or a stale
precondition, the error wording) another; this class holds no state of its own: ``client`` and
``_now`` are set by ``LiveCluster.__init__``. Invariants: a handler sends one write (after one
GET when it needs the object's list index or current status) and returns the line the actuator
logs; every write is guarded by the action's uid when it has one; a ``finalize`` or ``disown``
patch with nothing but its ``test`` ops is not sent (``unchanged``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from lightkube import Client
from lightkube.types import PatchType

from pulumi_lws.cluster.patches import (
    condition_patch,
    disown_patch,
    finalizer_patch,
    status_patch,
    ungate_patch,
)
from pulumi_lws.cluster.resources import to_plain
from pulumi_lws.core.contract.stage import Action


class VerbHandlers:
    """The verb handlers ``LiveCluster._handlers`` maps each verb to (module doc)."""

    client: Client
    _now: Callable[[], float]

    def _metadata_patch(self, res: Any, namespace: str, action: Action, field: str) -> str:
        meta: dict[str, Any] = {field: dict(action.params.get(field) or {})}
        if action.uid:
            meta["uid"] = action.uid  # a mismatching uid is refused (immutable: 422; resilience.is_stale_precondition)
        self.client.patch(res, action.name, {"metadata": meta}, namespace=namespace, patch_type=PatchType.MERGE)
        return f"{action.verb} {action.kind}/{action.name}: " + ", ".join(
            f"{k}={v}" for k, v in sorted(meta[field].items())
        )

    def _label(self, res: Any, namespace: str, action: Action) -> str:
        return self._metadata_patch(res, namespace, action, "labels")

    def _annotate(self, res: Any, namespace: str, action: Action) -> str:
        return self._metadata_patch(res, namespace, action, "annotations")

    def _ungate(self, res: Any, namespace: str, action: Action) -> str:
        gate = action.params.get("gate")  # every ungate names its gate (core.stage.Action: {"gate": name})
        pod = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        gates = [g.get("name") for g in (pod.get("spec") or {}).get("schedulingGates") or []]
        if not isinstance(gate, str) or gate not in gates:
            return f"ungate {action.kind}/{action.name}: {gate} already removed"
        patch = ungate_patch(gates.index(gate), gate, action.uid)
        self.client.patch(res, action.name, patch, namespace=namespace, patch_type=PatchType.JSON)
        return f"ungate {action.kind}/{action.name}: removed {gate}"

    def _set_condition(self, res: Any, namespace: str, action: Action) -> str:
        pod = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        condition = {"lastTransitionTime": rfc3339(self._now()), **dict(action.params)}
        patch = condition_patch((pod.get("status") or {}).get("conditions"), condition, action.uid)
        self.client.patch(res.Status, action.name, patch, namespace=namespace, patch_type=PatchType.JSON)
        return f"set-condition {action.kind}/{action.name}: {condition['type']}={condition.get('status')}"

    def _patch_status(self, res: Any, namespace: str, action: Action) -> str:
        obj = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        status = dict(action.params.get("status") or {})
        patch = status_patch(obj.get("status"), status, action.uid)
        self.client.patch(res.Status, action.name, patch, namespace=namespace, patch_type=PatchType.JSON)
        return f"patch-status {action.kind}/{action.name}: " + ", ".join(f"{k}={v}" for k, v in sorted(status.items()))

    def _finalize(self, res: Any, namespace: str, action: Action) -> str:
        obj = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        current = (obj.get("metadata") or {}).get("finalizers")
        patch = finalizer_patch(current, action.params.get("add") or (), action.params.get("remove") or (), action.uid)
        if not [op for op in patch if op["op"] != "test"]:
            return f"finalize {action.kind}/{action.name}: unchanged"
        self.client.patch(res, action.name, patch, namespace=namespace, patch_type=PatchType.JSON)
        detail = ", ".join(f"{k}={list(v)}" for k, v in sorted(action.params.items()))
        return f"finalize {action.kind}/{action.name}: {detail}"

    def _disown(self, res: Any, namespace: str, action: Action) -> str:
        """Remove the ownerReferences of ``params.owners`` (uids): JSON patch, each removal guarded
        by a ``test`` of that entry's uid, highest index first (adoption, docs/modes.md)."""
        obj = to_plain(self.client.get(res, action.name, namespace=namespace), action.kind)
        patch = disown_patch(
            (obj.get("metadata") or {}).get("ownerReferences"), action.params.get("owners") or (), action.uid
        )
        if not [op for op in patch if op["op"] != "test"]:
            return f"disown {action.kind}/{action.name}: unchanged"
        self.client.patch(res, action.name, patch, namespace=namespace, patch_type=PatchType.JSON)
        return f"disown {action.kind}/{action.name}: removed {len([op for op in patch if op['op'] == 'remove'])} ownerReference(s)"

    def _delete(self, res: Any, namespace: str, action: Action) -> str:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": action.params.get("propagation", "Background"),
        }
        if action.uid:
            body["preconditions"] = {"uid": action.uid}
        generic = self.client._client  # lightkube's delete() sends no body; reuse its request builder
        br = generic.prepare_request("delete", res=res, name=action.name, namespace=namespace)
        br.data = body
        generic.handle_response("delete", generic.send(generic.build_adapter_request(br)), br)
        return f"delete {action.kind}/{action.name} (uid={action.uid or '-'}, {body['propagationPolicy']})"


def rfc3339(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
