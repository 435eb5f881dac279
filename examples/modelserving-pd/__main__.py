"""Prefill/decode serving with Kthena ModelServing semantics, no operator in the cluster.

Edit an image in ms.yaml and run ``pulumi up`` repeatedly (or ``pulumi-lws rollout``): each
``up`` applies one safe stage of the ServingGroup rolling update; ``stage.complete`` turns true
when every ServingGroup runs the new revision.
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import ModelServing

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "ms.yaml").read_text())
ms = ModelServing("pd", {"manifest": manifest})

pulumi.export("selector", ms.selector)
pulumi.export("revision", ms.revision)
pulumi.export("stage", ms.stage)
pulumi.export("blocker", ms.blocker)
pulumi.export("remainingStages", ms.remaining_stages)
pulumi.export("actions", ms.actions)
pulumi.export("status", ms.status)
