"""Object-level helpers shared by the LWS renderers (Ordinal and Hash): metadata, headless
Services, ControllerRevisions.

Invariants: every object has ``metadata.name``, ``metadata.namespace`` and the ownership labels
(``pulumi-lws.io/managed: "true"``; ``app.kubernetes.io/managed-by`` the user's, else
``pulumi-lws``: :func:`pulumi_lws.core.k8s.manifests.owned_labels`); no ownerReferences (Pulumi owns
the objects); workload objects carry ``pulumi.com/skipAwait: "true"`` (readiness is the planner's business).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s.manifests import WORKLOAD_ANNOTATIONS, merged, metadata
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.revision import Revision


def workload_annotations(lws_annotations: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Annotations of a StatefulSet/Deployment: the LWS's, then controller keys, then
    pulumi-kubernetes' (skipAwait, background deletion: ``WORKLOAD_ANNOTATIONS``)."""
    return merged(lws_annotations, {**(extra or {}), **WORKLOAD_ANNOTATIONS})


def controller_revision(lws_name: str, namespace: str, revision: Revision) -> dict[str, Any]:
    """The ControllerRevision storing ``revision``: name ``<lws[:220]>-<key>-<n>``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": metadata(
            revision.controller_revision_name(lws_name),
            namespace,
            {L.NAME: lws_name, L.TEMPLATE_REVISION_HASH: revision.key},
        ),
        "data": copy.deepcopy(dict(revision.data)),
        "revision": revision.number,
    }
