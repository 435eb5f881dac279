"""``pulumi-lws rollback``: the previous revision read from the cluster, printed as a patch and
written with ``--apply`` into its document of a multi-document file (the rest byte for byte).
The cluster is the simulator (installed with ``use_backend``, as the component's backend) and
kmock's in-memory API server behind the live backend (LiveCluster over HTTP)."""

from __future__ import annotations

import asyncio
import copy

import pytest
import yaml
from support.control_helpers import lws_harness, lws_manifest

from pulumi_lws.backend import use_backend
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main

SERVICE = "# a comment the rewrite keeps\napiVersion: v1\nkind: Service\nmetadata:\n  name: front\nspec:\n  ports:\n  - port: 80\n"


def mid_rollout():
    h = lws_harness(lws_manifest(4, "img:1"))
    h.change_spec(lws_manifest(4, "img:2"))
    for _ in range(3):
        h.up()
        h.advance(1.0)
    return h


def test_prints_the_patch_and_apply_rewrites_only_the_workload_document(tmp_path, capsys) -> None:
    h = mid_rollout()
    path = tmp_path / "app.yaml"
    lws_text = yaml.safe_dump(lws_manifest(4, "img:2"), sort_keys=False)
    path.write_text(SERVICE + "---\n" + lws_text + "---\n" + SERVICE)
    with use_backend(h.cluster, h.cluster):
        assert main(["rollback", str(path)]) == X.OK
        out = capsys.readouterr().out
        assert "-          image: img:2\n+          image: img:1\n" in out and "roll back from revision" in out
        assert '# change spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image: "img:2" -> "img:1"' in out
        assert path.read_text() == SERVICE + "---\n" + lws_text + "---\n" + SERVICE  # printing never writes
        assert main(["rollback", str(path), "--apply"]) == X.OK
    text = path.read_text()
    first, middle, last = text.split("---\n")
    assert first == SERVICE and last == SERVICE
    assert yaml.safe_load(middle) == lws_manifest(4, "img:1")


def test_nothing_recorded_to_roll_back_to_exits_1(tmp_path, capsys) -> None:
    h = lws_harness(lws_manifest(4, "img:1"))
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump(lws_manifest(4, "img:1")))
    with use_backend(h.cluster, h.cluster):
        assert main(["rollback", str(path)]) == X.NOT_CONVERGED
    assert "nothing to roll back to" in capsys.readouterr().err


def test_apply_refuses_standard_input(capsys, monkeypatch) -> None:
    import io

    h = mid_rollout()
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(lws_manifest(4, "img:2"))))
    with use_backend(h.cluster, h.cluster):
        assert main(["rollback", "-", "--apply"]) == X.BAD_INPUT
    assert "--apply" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_reads_the_controller_revisions_through_the_live_backend(kmock, tmp_path, capsys) -> None:
    pytest.importorskip("kmock")
    from support.kmock_helpers import kmock_client

    from pulumi_lws.cluster.live import LiveCluster

    h = mid_rollout()
    for kind, plural in (
        ("ControllerRevision", "apps/v1/controllerrevisions"),
        ("StatefulSet", "apps/v1/statefulsets"),
        ("Service", "v1/services"),
    ):  # the revisions are all rollback reads
        for obj in h.cluster.list(kind):
            kmock.objects[(plural, obj["metadata"]["namespace"], obj["metadata"]["name"])] = copy.deepcopy(obj)
    kmock.resources["apps/v1/deployments"] = {}
    kmock.resources["v1/pods"] = {}
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump(lws_manifest(4, "img:2")))
    live = LiveCluster(kmock_client(str(kmock.url)), now=lambda: 0.0)

    def cli() -> int:
        with use_backend(live, live):
            return main(["rollback", str(path), "--apply"])

    assert await asyncio.to_thread(cli) == X.OK
    assert yaml.safe_load(path.read_text()) == lws_manifest(4, "img:1")


@pytest.mark.asyncio
async def test_the_rollout_poll_fingerprints_pod_readiness_over_the_api(kmock) -> None:
    """``pulumi-lws rollout``'s bounded poll: one LIST per (namespace, selector); readiness changes the fingerprint."""
    from support.kmock_helpers import kmock_client

    from pulumi_lws.cli.rollout import readiness_fingerprint

    def pod(ready: str) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "default", "uid": "u1", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]},
        }

    kmock.objects[("v1/pods", "default", "web-0")] = pod("False")
    client = kmock_client(str(kmock.url))
    first = await asyncio.to_thread(readiness_fingerprint, client, [("default", {"app": "web"})])
    assert first == (("default", "web-0", "u1", "Running", "False"),)
    kmock.objects[("v1/pods", "default", "web-0")] = pod("True")
    assert await asyncio.to_thread(readiness_fingerprint, client, [("default", {"app": "web"})]) != first
    lists = [r for r in kmock if r.resource is not None and r.resource.plural == "pods"]
    assert len(lists) == 2 and all(r.params.get("labelSelector") == "app=web" for r in lists)


def test_rollback_without_a_cluster_advises_the_command_line(tmp_path, capsys, monkeypatch):
    """``use_backend(...)`` is for tests: rollback's advice names its flags, as status's does."""
    from pulumi_lws.cli import main as cli_main

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    manifest = tmp_path / "lws.yaml"
    from conftest import REPO_ROOT

    manifest.write_text((REPO_ROOT / "examples" / "quickstart" / "lws.yaml").read_text())
    code = cli_main(["rollback", str(manifest)])
    err = capsys.readouterr().err
    assert code == 4 and len(err.strip().splitlines()) == 1
    assert "use_backend" not in err and "--kubeconfig" in err and "missing-kubeconfig" in err
