"""A component created under Pulumi mocks with no backend installed and no kubeconfig fails with
one clear error naming what to do (``use_backend`` for tests/simulator, a kubeconfig or
``kubernetes:context`` for a real cluster), not the Kubernetes client's raw ``ConfigError``."""

from __future__ import annotations

import pulumi
import pytest

from pulumi_lws.backend import NoClusterError, current_backend

WORKER = {"spec": {"containers": [{"name": "nginx", "image": "nginxinc/nginx-unprivileged:1.27"}]}}


@pytest.fixture
def no_kubeconfig(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def test_component_without_backend_names_what_to_do(mocks, no_kubeconfig) -> None:
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    with pytest.raises(pulumi.RunError) as caught:  # one line for the engine, no traceback
        LeaderWorkerSet("llm", {"replicas": 1, "size": 2, "worker_template": WORKER})
    message = str(caught.value)
    assert message.startswith("llm: cluster error: pulumi-lws has no cluster to observe")
    assert "missing-kubeconfig: no such file" in message and "\n" not in message
    assert "use_backend" in message and "kubernetes:kubeconfig" in message and "kubernetes:context" in message
    assert isinstance(caught.value.__cause__, NoClusterError)
    assert type(caught.value.__cause__.__cause__).__name__ == "KubeconfigError"  # names the file and the cause
    assert not [a for a in mocks.registered if a.typ.startswith("kubernetes:")]  # nothing declared


def test_unknown_context_is_named(tmp_path, monkeypatch) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
        "current-context: a\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    with pytest.raises(NoClusterError, match="context 'prod'"):
        current_backend(context="prod")
