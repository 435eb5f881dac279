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

# Pulumi (pulumi-kubernetes' annotations: provider/pkg/metadata/annotations.go)
SKIP_AWAIT = "pulumi.com/skipAwait"
#: the propagation policy of the provider's DELETE (Foreground unless this says background or
#: orphan; read from the inputs in the stack's state: provider/pkg/metadata/overrides.go
#: ``DeletionPropagation``, since pulumi-kubernetes v4.12.0)
DELETION_PROPAGATION = "pulumi.com/deletionPropagationPolicy"
#: server-side apply with force for one object (provider/pkg/await/await.go ``patchForce``)
PATCH_FORCE = "pulumi.com/patchForce"

# Kubernetes recommended label: set to pulumi-lws only when the user's labels carry none (a
# user's ``managed-by: kustomize`` stays, as upstream keeps user labels)
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "pulumi-lws"

# pulumi-lws: ownership mark on every object pulumi-lws renders (not on pod templates: a label
# there would change every pod)
OWNERSHIP = "pulumi-lws.io/managed"
OWNERSHIP_VALUE = "true"
