"""``pulumi-lws status`` over real HTTP against kmock's in-memory API server: a fleet converged on
the embedded cluster is copied into kmock, and the command reads it through the live backend with
a kubeconfig (no Pulumi CLI): stage table, blocker, the next ``pulumi up``; json and markdown;
the spec from manifest files or from the upstream CRs the cluster holds; ``--watch`` bounded;
an unreachable cluster is one ``error:`` line and exit 4."""

from __future__ import annotations

import asyncio
import copy
import json
import pathlib

import pytest
import yaml

pytest.importorskip("kmock")

from pulumi_lws.cli import main
from pulumi_lws.cli.exit_codes import NOT_CONVERGED, OK, UNREACHABLE
from pulumi_lws.sim.driver.runner import Runner
from pulumi_lws.sim.driver.scenario import Scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
LWS_DOC = yaml.safe_load((ROOT / "examples" / "quickstart" / "lws.yaml").read_text())
PLURALS = {
    "StatefulSet": "apps/v1/statefulsets",
    "Deployment": "apps/v1/deployments",
    "Pod": "v1/pods",
    "Service": "v1/services",
    "ControllerRevision": "apps/v1/controllerrevisions",
}


def kubeconfig(tmp_path, url: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "kmock",
                "clusters": [{"name": "kmock", "cluster": {"server": url}}],
                "users": [{"name": "test", "user": {"token": "t"}}],
                "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
            }
        )
    )
    return str(path)


def seed(kmock, doc: dict) -> None:
    """Every object of ``doc``'s converged fleet on the embedded cluster, into kmock."""
    runner = Runner(Scenario(name="status", engine="pure", manifest=copy.deepcopy(doc), start="converged"), "pure")
    runner.warm_up()
    ns = doc["metadata"].get("namespace", "default")
    for kind, plural in PLURALS.items():
        kmock.resources[plural] = {}
        for obj in runner.cluster.list(kind, ns):
            for cs in (obj.get("status") or {}).get("containerStatuses") or []:
                cs.setdefault("imageID", f"docker.io/{cs.get('image', 'x')}")  # a real kubelet always reports it
            kmock.objects[(plural, ns, obj["metadata"]["name"])] = obj


def write(tmp_path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def with_image(doc: dict, image: str) -> dict:
    out = copy.deepcopy(doc)
    out["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = image
    return out


async def status(capsys, *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["status", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.asyncio
async def test_a_converged_fleet_shows_complete_and_an_idle_next_up(kmock, tmp_path, capsys):
    seed(kmock, LWS_DOC)
    code, out, err = await status(
        capsys, "--kubeconfig", kubeconfig(tmp_path, str(kmock.url)), write(tmp_path, "lws.yaml", LWS_DOC)
    )
    assert code == OK, err
    name = LWS_DOC["metadata"]["name"]
    assert f"LeaderWorkerSet default/{name}" in out and "complete" in out
    assert "no actions" in out and "creates" not in out
    assert any(str(r.url.path).endswith("/namespaces/default/statefulsets") for r in kmock)  # read over HTTP


@pytest.mark.asyncio
async def test_json_shows_the_stage_the_next_up_applies_for_a_new_image(kmock, tmp_path, capsys):
    seed(kmock, LWS_DOC)
    new = write(tmp_path, "lws.yaml", with_image(LWS_DOC, "nginx:1.29"))
    code, out, err = await status(capsys, "--kubeconfig", kubeconfig(tmp_path, str(kmock.url)), "--format", "json", new)
    assert code == OK, err
    [view] = json.loads(out)["workloads"]
    assert view["kind"] == "LeaderWorkerSet" and view["source"].startswith("manifest ")
    assert view["stage"]["complete"] is False and view["remaining_stages"]
    assert view["next_up"]["declares"] > 0
    assert any(cr.startswith("ControllerRevision/") for cr in view["next_up"]["creates"])  # the new revision


@pytest.mark.asyncio
async def test_markdown_has_a_heading_and_a_fenced_table(kmock, tmp_path, capsys):
    seed(kmock, LWS_DOC)
    code, out, _ = await status(
        capsys,
        "--kubeconfig",
        kubeconfig(tmp_path, str(kmock.url)),
        "--format",
        "markdown",
        write(tmp_path, "lws.yaml", with_image(LWS_DOC, "nginx:1.29")),
    )
    assert code == OK and out.startswith("## LeaderWorkerSet") and "\n```\n" in out


@pytest.mark.asyncio
async def test_without_manifests_the_upstream_crs_are_the_spec(kmock, tmp_path, capsys):
    seed(kmock, LWS_DOC)
    name = LWS_DOC["metadata"]["name"]
    kmock.objects[("leaderworkerset.x-k8s.io/v1/leaderworkersets", "default", name)] = {
        **copy.deepcopy(LWS_DOC),
        "metadata": {"name": name, "namespace": "default", "uid": "cr-1"},
    }
    code, out, err = await status(capsys, "--kubeconfig", kubeconfig(tmp_path, str(kmock.url)), "--format", "json")
    assert code == OK, err
    views = json.loads(out)["workloads"]
    assert [(v["kind"], v["name"], v["source"]) for v in views] == [("LeaderWorkerSet", name, "cluster")]
    assert views[0]["stage"]["complete"] is True


@pytest.mark.asyncio
async def test_nothing_to_show_says_where_specs_live(kmock, tmp_path, capsys):
    for plural in PLURALS.values():
        kmock.resources[plural] = {}
    code, out, _ = await status(capsys, "--kubeconfig", kubeconfig(tmp_path, str(kmock.url)))
    assert code == OK and "pass the manifest files" in out


@pytest.mark.asyncio
async def test_watch_is_bounded_and_prints_only_on_change(kmock, tmp_path, capsys):
    seed(kmock, LWS_DOC)
    code, out, _ = await status(
        capsys,
        "--kubeconfig",
        kubeconfig(tmp_path, str(kmock.url)),
        "--watch",
        "--interval",
        "0.05",
        "--timeout",
        "0.3",
        write(tmp_path, "lws.yaml", with_image(LWS_DOC, "nginx:1.29")),
    )
    assert code == NOT_CONVERGED  # nothing rolls without a pulumi up: the watch times out
    assert out.count("LeaderWorkerSet default/") == 1  # the unchanged view is printed once


def test_an_unreachable_cluster_is_one_error_and_exit_4(tmp_path, capsys):
    code = main(
        [
            "status",
            "--kubeconfig",
            kubeconfig(tmp_path, "http://127.0.0.1:9"),
            "--attempts",
            "1",
            write(tmp_path, "lws.yaml", LWS_DOC),
        ]
    )
    out, err = capsys.readouterr()
    assert code == UNREACHABLE and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "context 'kmock'" in err or "kmock" in err


def test_a_missing_kubeconfig_file_is_exit_4(tmp_path, capsys):
    code = main(["status", "--kubeconfig", str(tmp_path / "nope")])
    assert code == UNREACHABLE and "no such file" in capsys.readouterr().err


def test_a_bad_manifest_is_exit_2_before_any_request(tmp_path, capsys):
    bad = copy.deepcopy(LWS_DOC)
    bad["spec"]["replicas"] = -1
    code = main(["status", "--kubeconfig", kubeconfig(tmp_path, "http://127.0.0.1:9"), write(tmp_path, "b.yaml", bad)])
    assert code == 2 and "spec.replicas" in capsys.readouterr().err


def test_no_kubeconfig_advice_fits_the_command_line(tmp_path, capsys, monkeypatch):
    """``use_backend(...)`` is for tests: the command's advice names its flags and the simulated cluster."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code = main(["status", write(tmp_path, "lws.yaml", LWS_DOC)])
    err = capsys.readouterr().err
    assert code == UNREACHABLE and len(err.strip().splitlines()) == 1
    assert "use_backend" not in err and "--kubeconfig" in err and "--context" in err and "pulumi-lws up DIR" in err
    assert "missing-kubeconfig" in err  # the client's reason stays
