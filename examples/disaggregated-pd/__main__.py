"""Disaggregated prefill/decode serving with DisaggregatedSet semantics, no operator in the cluster.

Edit the images in ds.yaml and run ``pulumi up`` repeatedly (or ``pulumi-lws rollout``): each
``up`` applies one stage of the lockstep rollout (new LeaderWorkerSets grow, old ones drain, the
prefill:decode ratio of ready groups held); ``stage.complete`` turns true when it is done.
"""

import pathlib

import pulumi
import yaml

from pulumi_lws import DisaggregatedSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parent / "ds.yaml").read_text())
ds = DisaggregatedSet("pd", {"manifest": manifest})

pulumi.export("revision", ds.revision)
pulumi.export("stage", ds.stage)
pulumi.export("blocker", ds.blocker)
pulumi.export("remainingStages", ds.remaining_stages)
pulumi.export("actions", ds.actions)
pulumi.export("status", ds.status)
