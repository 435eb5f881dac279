"""A lightkube client pointed at a kmock in-memory API server (the live backend's HTTP tests)."""
from __future__ import annotations

from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig


def kmock_client(url: str) -> Client:
    config = KubeConfig.from_dict({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kmock", "cluster": {"server": url}}],
        "users": [{"name": "test", "user": {"token": "t"}}],
        "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
        "current-context": "kmock",
    })
    return Client(config=config, field_manager="pulumi-lws")
