"""ModelServing rollout decisions (layer 3): upstream functions as small pure functions, and the
stage planners that compose them into one :class:`pulumi_lws.core.contract.stage.Stage` per reconcile.

Modules: ``ordinals`` (forEachMissingOrdinal), ``budgets`` (IntOrString budgets, partition, the
project's choices), ``scale_up`` / ``scale_down`` (ServingGroup hole-filling and binpack),
``deletion`` (ServingGroup rolling deletion, replica sync), ``role`` (RoleRollingUpdate pieces),
``servinggroup`` / ``role_planner`` (the stage planners; ``role_plan``: what the role planner
returns), ``stage`` (the adapter to ``core.stage``).
Design and choices: docs/modelserving.md, "Rollout decisions".
"""
