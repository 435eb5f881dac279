"""Kthena ModelServing (workload.serving.volcano.sh/v1alpha1): ServingGroups of roles, ServingGroup- and
Role-level rolling updates, without an operator. Design: docs/modelserving.md."""
