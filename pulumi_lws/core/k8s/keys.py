"""Kubernetes well-known label/annotation keys, Pulumi's, and pulumi-lws's own (shared by every API)."""

# Kubernetes well-known
POD_INDEX = "apps.kubernetes.io/pod-index"
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
STS_POD_NAME = "statefulset.kubernetes.io/pod-name"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
#: on every ControllerRevision the StatefulSet (and DaemonSet) controller keeps as its history
#: (``history.ControllerRevisionHashLabel``); its pods carry the revision as ``controller-revision-hash``
STS_HISTORY_HASH = "controller.kubernetes.io/hash"
POD_TEMPLATE_HASH = "pod-template-hash"

# Pulumi
SKIP_AWAIT = "pulumi.com/skipAwait"

# Kubernetes recommended label: set to pulumi-lws only when the user's labels carry none (a
# user's ``managed-by: kustomize`` stays, as upstream keeps user labels)
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "pulumi-lws"

# pulumi-lws: ownership mark on every object pulumi-lws renders (not on pod templates: a label
# there would change every pod)
OWNERSHIP = "pulumi-lws.io/managed"
OWNERSHIP_VALUE = "true"
