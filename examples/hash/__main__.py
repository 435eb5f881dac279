"""Hash group identity: leaders under a Deployment, one worker StatefulSet per group key.

Edit lws.yaml (e.g. the image) and run ``pulumi up`` repeatedly: each ``up`` observes the
cluster, admits gated replacement leaders (``groupReplacementPolicy``), declares the workers of
admitted groups and reports the stage; ``stage.complete`` turns true when the rollout is done.
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import LeaderWorkerSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "lws.yaml").read_text())
lws = LeaderWorkerSet("web", {"manifest": manifest})

pulumi.export("leaderName", lws.leader_name)
pulumi.export("revision", lws.revision)
pulumi.export("stage", lws.stage)
pulumi.export("blocker", lws.blocker)
pulumi.export("actions", lws.actions)
