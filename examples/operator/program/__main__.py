"""The program the Pulumi Kubernetes Operator runs at every resync: one LeaderWorkerSet.

Each run is one `pulumi up` = one reconcile: pulumi-lws observes the cluster (in-cluster config of
the workspace's ServiceAccount, see ../rbac.yaml), plans one safe stage and applies it. A rollout
of N stages therefore takes about N resync periods (docs/operator.md).
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import LeaderWorkerSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "lws.yaml").read_text())
lws = LeaderWorkerSet("leaderworkerset-sample", {"manifest": manifest})

pulumi.export("stage", lws.stage)
pulumi.export("blocker", lws.blocker)
pulumi.export("remainingStages", lws.remaining_stages)
