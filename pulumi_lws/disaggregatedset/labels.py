"""Label, annotation and env keys of a DisaggregatedSet's children (upstream names).

Upstream (``api/disaggregatedset/v1/disaggregatedset_types.go``, ``pkg/utils/disaggregatedset``):
the four ``disaggregatedset.x-k8s.io/*`` labels and ``app=<ds>-<slice>-<role>`` go on every child
LeaderWorkerSet's metadata and both pod templates (DS labels win over user labels); the
``initial-replicas`` annotation is stamped on an old child LWS when a rollout starts. The env
variables are pulumi-lws's (upstream injects none): every container of a child's pods gets them.
"""

from __future__ import annotations

PREFIX = "disaggregatedset.x-k8s.io"

# labels
NAME = f"{PREFIX}/name"
ROLE = f"{PREFIX}/role"
SLICE = f"{PREFIX}/slice"
REVISION = f"{PREFIX}/revision"
APP = "app"

# annotations
INITIAL_REPLICAS = f"{PREFIX}/initial-replicas"
#: pulumi-lws's (upstream has none): on the target revision's children while they replace older
#: revisions of the slice, naming them (comma-separated, sorted); removed once every role's
#: target child is at its target and ready. It tells a rollout's catch-up after an early full
#: drain (the barrier holds) from a scale-up outside a rollout (applied at once, as upstream)
REPLACES = "pulumi-lws.io/replaces-revisions"

# env (pulumi-lws)
ENV_NAME = "DISAGGREGATEDSET_NAME"
ENV_ROLE = "DISAGGREGATEDSET_ROLE"
ENV_SLICE = "DISAGGREGATEDSET_SLICE"
ENV_REVISION = "DISAGGREGATEDSET_REVISION"

#: the LWS annotations that conflict with a non-None placementPolicy (upstream's
#: ``exclusiveTopologyAnnotationKeys``, in upstream's order)
EXCLUSIVE_TOPOLOGY_KEYS = (
    "leaderworkerset.sigs.k8s.io/exclusive-topology",
    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology",
)
