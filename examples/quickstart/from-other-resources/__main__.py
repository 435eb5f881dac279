"""Quickstart, composed with the rest of a stack: the namespace and the image are Outputs of other
resources, as in most real programs.

* the namespace comes from a ``Namespace`` resource (``ns.metadata.name``): the LeaderWorkerSet's
  objects depend on it, so the namespace is created first and deleted last;
* the image comes from a ``ConfigMap`` a release pipeline owns (any Output works the same way: an
  image build's ``ref``, a ``StackReference`` output, ``pulumi.Config().require_secret(...)``);
  ``pulumi config set image <ref>`` overrides the pinned default.

``pulumi preview`` on a fresh stack shows every child with the unknown values passed through and
says what it assumed (``stage.assumptions``, and "assumes: ..." lines under the stage table);
``pulumi up`` resolves them, then observes, plans and registers exactly as with plain values.
"""

import copy
import pathlib

import pulumi
import pulumi_kubernetes as k8s
import yaml

from pulumi_lws import LeaderWorkerSet

manifest = yaml.safe_load((pathlib.Path(__file__).resolve().parents[1] / "lws.yaml").read_text())
image = pulumi.Config().get("image") or "nginxinc/nginx-unprivileged:1.27"

ns = k8s.core.v1.Namespace("inference", metadata={"name": "inference"})
release = k8s.core.v1.ConfigMap(
    "release", metadata={"name": "release", "namespace": ns.metadata.name}, data={"image": image}
)

manifest = copy.deepcopy(manifest)
template = manifest["spec"]["leaderWorkerTemplate"]
for pod in (template.get("leaderTemplate"), template["workerTemplate"]):
    if pod:
        for container in pod["spec"]["containers"]:
            container["image"] = release.data["image"]  # a nested Output inside the manifest

lws = LeaderWorkerSet("leaderworkerset-sample", {"manifest": manifest, "namespace": ns.metadata.name})

pulumi.export("revision", lws.revision)
pulumi.export("stage", lws.stage)
pulumi.export("blocker", lws.blocker)
pulumi.export("actions", lws.actions)
