"""DisaggregatedSet rollout decisions (layer 3): the stage planner over plain per-slice observations.

Modules: ``observation`` (what the planner reads), ``apply`` (how upstream's step is applied: the
ready floor, the surge ceiling, no orphan, exact newest-first drain), ``stage_planner`` (one slice
-> its children's replicas, creations, deletions, barrier, blocker; :func:`plan` over slices),
``slice_plan`` (what it returns), ``assemble`` (a stage's settled per-role counts -> children),
``predict`` (the remaining stages, replicas becoming ready), ``stage`` (the adapter to
``core.stage.Stage``). The upstream planner itself is :mod:`pulumi_lws.disaggregatedset.planner`.
Design and choices: docs/disaggregatedset.md, "Rollout decisions".
"""
