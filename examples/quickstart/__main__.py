"""Quickstart: deploy the upstream LeaderWorkerSet rollout example with pulumi-lws.

Edit the image in lws.yaml and run ``pulumi up`` repeatedly (or ``pulumi-lws rollout``): each
``up`` applies one safe stage; ``stage.complete`` turns true when the rollout is done.
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import LeaderWorkerSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "lws.yaml").read_text())
lws = LeaderWorkerSet("leaderworkerset-sample", {"manifest": manifest})

pulumi.export("leaderName", lws.leader_name)
pulumi.export("serviceName", lws.service_name)
pulumi.export("selector", lws.selector)
pulumi.export("revision", lws.revision)
pulumi.export("stage", lws.stage)
pulumi.export("blocker", lws.blocker)
pulumi.export("remainingStages", lws.remaining_stages)
pulumi.export("actions", lws.actions)
pulumi.export("status", lws.status)
