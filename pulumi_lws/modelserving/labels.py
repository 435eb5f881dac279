"""Label, annotation and env keys of Kthena ModelServing (upstream spellings), plus Volcano's.

Invariant: these are the exact keys upstream's controller writes (``pkg/apis/workload/v1alpha1/
labels.go``, the PodGroup manager), so selectors, dashboards and ``kubectl`` habits carry over.
"""

PREFIX = "modelserving.volcano.sh"

# labels on every object of a ModelServing (pods, Services, PodGroups, ControllerRevisions)
NAME = f"{PREFIX}/name"  # <ms>
GROUP_NAME = f"{PREFIX}/group-name"  # <ms>-<g>
ROLE = f"{PREFIX}/role"  # <role>
ROLE_ID = f"{PREFIX}/role-id"  # <role>-<r>
REVISION = f"{PREFIX}/revision"  # ModelServingRevision of the group
ROLE_TEMPLATE_HASH = f"{PREFIX}/role-template-hash"  # CalRoleTemplateHash of the role
ENTRY = f"{PREFIX}/entry"  # "true" on entry pods only
ENTRY_VALUE = "true"

# Volcano gang scheduling
VOLCANO_SCHEDULER = "volcano"
POD_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"  # pod annotation: <ms>-<g> (the PodGroup)
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"  # pod annotation: <role>-<r>
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"

# env injected into every container and init container, in this order
ENV_GROUP_SIZE = "GROUP_SIZE"  # workerReplicas + 1
ENV_ENTRY_ADDRESS = "ENTRY_ADDRESS"  # <entry pod>.<namespace>
ENV_WORKER_INDEX = "WORKER_INDEX"  # 0 on the entry pod, 1..workerReplicas on workers
ENV_ORDER = (ENV_GROUP_SIZE, ENV_ENTRY_ADDRESS, ENV_WORKER_INDEX)
