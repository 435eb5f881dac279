"""Without an installed backend the component talks to the cluster the default pulumi-kubernetes
provider targets: the stack's ``kubernetes:context`` / ``kubernetes:kubeconfig`` config, and the
gang provider's PodGroup API."""

from __future__ import annotations

import json
from typing import ClassVar

import pulumi
import yaml

from pulumi_lws.cluster import live as live_module
from pulumi_lws.core.contract.snapshot import Snapshot

WORKER = {"spec": {"containers": [{"name": "nginx", "image": "nginxinc/nginx-unprivileged:1.27"}]}}

KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "current-context": "dev",
    "clusters": [
        {"name": "dev", "cluster": {"server": "https://dev.example:6443"}},
        {"name": "prod", "cluster": {"server": "https://prod.example:6443"}},
    ],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [
        {"name": "dev", "context": {"cluster": "dev", "user": "u"}},
        {"name": "prod", "context": {"cluster": "prod", "user": "u"}},
    ],
}


class Recorder:
    """Stands in for LiveCluster: records how it was built; observes an empty cluster."""

    built: ClassVar[list[dict]] = []

    @classmethod
    def from_kubeconfig(cls, context=None, *, kubeconfig=None, gang_provider="kubernetes"):
        cls.built.append({"context": context, "kubeconfig": kubeconfig, "gang_provider": gang_provider})
        return cls()

    def observe(self, scope):
        return Snapshot.of([])

    def execute(self, namespace, actions):
        return []


def test_component_uses_the_kubernetes_provider_config(mocks, monkeypatch) -> None:
    monkeypatch.setattr(live_module, "LiveCluster", Recorder)
    Recorder.built.clear()
    pulumi.runtime.set_all_config({"kubernetes:context": "prod", "kubernetes:kubeconfig": "/tmp/kc.yaml"})
    try:
        from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

        def program():
            LeaderWorkerSet("llm", {"replicas": 1, "size": 2, "worker_template": WORKER, "gang_provider": "volcano"})

        pulumi.runtime.test(program)()
    finally:
        pulumi.runtime.set_all_config({})
    assert Recorder.built == [{"context": "prod", "kubeconfig": "/tmp/kc.yaml", "gang_provider": "volcano"}]


def test_kubeconfig_from_path_or_inline_content(tmp_path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    assert live_module.load_kubeconfig(str(path)).get(context_name="prod").cluster.server == "https://prod.example:6443"
    inline = live_module.load_kubeconfig(json.dumps(KUBECONFIG))  # the provider accepts content too
    assert inline.get().cluster.server == "https://dev.example:6443"
    assert live_module.load_kubeconfig(yaml.safe_dump(KUBECONFIG)).get(context_name="dev").context_name == "dev"
