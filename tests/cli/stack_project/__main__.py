"""A user's own program: plain resources feed three pulumi-lws workloads through Outputs."""

import pulumi
import pulumi_kubernetes as k8s

from pulumi_lws import DisaggregatedSet, LeaderWorkerSet, ModelServing

config = pulumi.Config()
replicas = int(config.get("replicas") or 2)
token_value = config.get_secret("token") or pulumi.Output.secret("hf_dev_token")

ns = k8s.core.v1.Namespace("ns", metadata={"name": config.require("namespace")})
release = k8s.core.v1.ConfigMap(
    "release", metadata={"name": "release", "namespace": ns.metadata.name}, data={"image": config.require("image")}
)
token = k8s.core.v1.Secret(
    "hf-token", metadata={"name": "hf-token", "namespace": ns.metadata.name}, string_data={"token": token_value}
)
image = release.data["image"]


def container(name):
    c = {"name": name, "image": image, "env": [{"name": "HF_TOKEN", "value": token.string_data["token"]}]}
    return [c]


class Inference(pulumi.ComponentResource):
    """The user's own component: a ModelServing and a DisaggregatedSet sharing the namespace."""

    def __init__(self, name, opts=None):
        super().__init__("acme:serving:Inference", name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.ms = ModelServing(
            "chat",
            {
                "namespace": ns.metadata.name,
                "replicas": replicas,
                "scheduler_name": "default-scheduler",
                "roles": [
                    {
                        "name": "prefill",
                        "replicas": 1,
                        "workerReplicas": 0,
                        "entryTemplate": {"spec": {"containers": container("prefill")}},
                    }
                ],
            },
            child,
        )
        self.ds = DisaggregatedSet(
            "pd",
            {
                "namespace": ns.metadata.name,
                "roles": [
                    {
                        "name": role,
                        "spec": {
                            "replicas": replicas,
                            "leaderWorkerTemplate": {
                                "size": 1,
                                "workerTemplate": {"spec": {"containers": container(role)}},
                            },
                        },
                    }
                    for role in ("prefill", "decode")
                ],
            },
            child,
        )
        self.register_outputs({})


serving = Inference("serving")
lws = LeaderWorkerSet(
    "embed",
    {
        "namespace": ns.metadata.name,
        "replicas": replicas,
        "size": 2,
        "worker_template": {"spec": {"containers": container("embed")}},
    },
)

pulumi.export("namespace", ns.metadata.name)
pulumi.export("chatStage", serving.ms.stage)
pulumi.export("pdStage", serving.ds.stage)
pulumi.export("embedRevision", lws.revision)
pulumi.export("token", token.string_data["token"])
