"""Label, annotation, condition and gate keys (upstream names), plus pulumi-lws's own."""

PREFIX = "leaderworkerset.sigs.k8s.io"

# labels
NAME = f"{PREFIX}/name"
TEMPLATE_REVISION_HASH = f"{PREFIX}/template-revision-hash"
WORKER_INDEX = f"{PREFIX}/worker-index"
GROUP_INDEX = f"{PREFIX}/group-index"
GROUP_KEY = f"{PREFIX}/group-key"
SUBGROUP_INDEX = f"{PREFIX}/subgroup-index"
SUBGROUP_KEY = f"{PREFIX}/subgroup-key"
ROLE = f"{PREFIX}/role"

# annotations
SIZE = f"{PREFIX}/size"
REPLICAS = f"{PREFIX}/replicas"
LEADER_NAME = f"{PREFIX}/leader-name"
EXCLUSIVE_TOPOLOGY = f"{PREFIX}/exclusive-topology"
SUBGROUP_EXCLUSIVE_TOPOLOGY = f"{PREFIX}/subgroup-exclusive-topology"
SUBGROUP_SIZE = f"{PREFIX}/subgroup-size"
SUBGROUP_POLICY_TYPE = f"{PREFIX}/subgroup-policy-type"
SUBDOMAIN_POLICY = f"{PREFIX}/subdomainPolicy"
LEADER_REQUESTS_TPUS = f"{PREFIX}/leader-requests-tpus"
GROUP_IDENTITY = f"{PREFIX}/group-identity"
LEADER_ADDRESS = f"{PREFIX}/leader-address"
GROUP_RESTART_COUNTS = f"{PREFIX}/group-restart-counts"
RESTART_BUDGET_EXHAUSTED = f"{PREFIX}/group-restart-budget-exhausted"
RECOVER = f"{PREFIX}/recover"
EXPERIMENTAL_RECREATE_AFTER_START = f"{PREFIX}/experimental-recreate-group-after-start"

# pod conditions / gates
GROUP_READY_CONDITION = f"{PREFIX}/group-ready"
GROUP_REPLACEMENT_GATE = f"{PREFIX}/group-replacement"

# Kubernetes, Pulumi and pulumi-lws keys every API shares (re-exported: ``L.POD_INDEX`` etc.)
from pulumi_lws.core.k8s.keys import *  # noqa: E402, F403
