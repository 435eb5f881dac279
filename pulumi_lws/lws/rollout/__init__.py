"""Pure rollout planners, one per policy. No Pulumi, no I/O."""

from pulumi_lws.core.contract.stage import Action, Blocker, GroupView, PredictedStage, Stage

__all__ = ["Action", "Blocker", "GroupView", "PredictedStage", "Stage"]
