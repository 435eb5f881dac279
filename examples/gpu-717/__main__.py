"""A small GPU LeaderWorkerSet (1 group of 2 pods x 4 GPUs = 8 GPUs) for upstream issue #717.

Edit lws.yaml to 2 groups x 4 GPUs (2 GPUs per pod) and run ``pulumi up`` repeatedly. With the
upstream order (ScaleFirst) the added group never schedules on a full 8-GPU cluster and the stage
reports the blocker ``resource-deadlock-717`` with its remedies; with the annotation
``pulumi-lws.io/update-order: RolloutFirst`` the old group is replaced first, then the set scales.
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import LeaderWorkerSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "lws.yaml").read_text())
lws = LeaderWorkerSet("inference", {"manifest": manifest})

pulumi.export("revision", lws.revision)
pulumi.export("stage", lws.stage)
pulumi.export("blocker", lws.blocker)
