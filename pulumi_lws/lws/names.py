"""Every object and pod name pulumi-lws derives for an LWS, in one place (upstream spellings).

Invariants: names are pure functions of (namespace, LWS name, group ordinal, worker index,
revision); they match upstream's so DNS names, PVC names and ``kubectl`` habits carry over:

* leader StatefulSet ``<lws>``; leader pods ``<lws>-<i>``
* worker StatefulSet ``<lws>-<i>`` (= leader pod name); worker pods ``<lws>-<i>-<j>``, j >= 1
* headless Service ``<lws>`` (Shared) and ``<lws>-<i>`` (UniquePerReplica, per group)
* ControllerRevision ``<lws[:220]>-<key>-<n>``
* group key ``sha1("<namespace>/<leader pod name>")`` hex; subgroup key
  ``sha1("<leader pod name>/<subgroup index>")`` hex (upstream ``genGroupUniqueKey``)
"""

from __future__ import annotations

import hashlib


def leader_sts(lws: str) -> str:
    """The leader StatefulSet (also the Shared headless Service and the leader pods' subdomain)."""
    return lws


def leader_pod(lws: str, group: int) -> str:
    return f"{lws}-{group}"


def worker_sts(lws: str, group: int) -> str:
    """Worker StatefulSet of group ``group``: named after its leader pod."""
    return leader_pod(lws, group)


def shared_service(lws: str) -> str:
    return lws


def replica_service(lws: str, group: int) -> str:
    """Per-group headless Service under UniquePerReplica: the leader pod's name."""
    return leader_pod(lws, group)


def controller_revision(lws: str, key: str, number: int) -> str:
    """Upstream ``revisionName``; equals :meth:`pulumi_lws.lws.revision.Revision.controller_revision_name`."""
    return f"{lws[:220]}-{key}-{number}"


def _sha1_hex(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def group_key(namespace: str, lws: str, group: int) -> str:
    """``leaderworkerset.sigs.k8s.io/group-key`` of an Ordinal group (40 hex chars)."""
    return _sha1_hex(f"{namespace}/{leader_pod(lws, group)}")


def subgroup_key(leader_pod_name: str, subgroup_index: int) -> str:
    """``leaderworkerset.sigs.k8s.io/subgroup-key`` (40 hex chars)."""
    return _sha1_hex(f"{leader_pod_name}/{subgroup_index}")


def pod_address(pod: str, subdomain: str, namespace: str | None = None) -> str:
    """``<pod>.<subdomain>[.<namespace>]``: the stable DNS name of a StatefulSet pod."""
    return f"{pod}.{subdomain}" + (f".{namespace}" if namespace else "")
