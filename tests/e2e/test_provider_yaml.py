"""The multi-language component provider under the real CLI: examples/provider-yaml (one
LeaderWorkerSet, one ModelServing, one DisaggregatedSet in Pulumi YAML) run by the real CLI with
pulumi-language-yaml; the CLI starts ``pulumi-resource-lws`` (this package's console script) as a
provider plugin, calls ``GetSchema`` and ``Construct``, and the components' children are applied
by the real pulumi-kubernetes provider. Created, rolled to a new image, destroyed."""

from __future__ import annotations

import json
import pathlib
import shutil

import yaml
from e2e_harness import DESTROY, FLEET_KINDS, REPO, fleet_objects, pod_images, set_images

NEW = "nginxinc/nginx-unprivileged:1.28"
STAGES = ("stage", "servingStage", "disaggregatedStage")


def _project(cluster, namespace: str, tmp_path: pathlib.Path) -> pathlib.Path:
    workdir = tmp_path / "provider-yaml"
    shutil.copytree(REPO / "examples" / "provider-yaml", workdir)
    project = yaml.safe_load((workdir / "Pulumi.yaml").read_text())
    project["name"] = f"lws-provider-yaml-{namespace}"
    # the v3.68 Python host cannot start a source plugin for CLI v3.276 (docs/e2e.md); the console
    # script is the same entry point, started as a provider binary
    project.pop("packages")
    plugin_dir = pathlib.Path(shutil.which("pulumi-resource-lws", path=cluster.env["PATH"])).parent
    project["plugins"] = {"providers": [{"name": "lws", "path": str(plugin_dir)}]}
    for resource in project["resources"].values():
        resource["properties"]["namespace"] = namespace
    (workdir / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    cluster.run(["pulumi", "stack", "rm", namespace, "--yes", "--force", "--non-interactive"], cwd=workdir, check=False)
    cluster.run(["pulumi", "stack", "init", namespace, "--non-interactive"], cwd=workdir)
    return workdir


def _up_until_complete(cluster, workdir: pathlib.Path, namespace: str, limit: int = 25) -> list[dict]:
    seen = []
    for _ in range(limit):
        cluster.settle(namespace)
        cluster.run(["pulumi", "up", "--yes", "--skip-preview", "--non-interactive", "--stack", namespace], cwd=workdir)
        out = json.loads(cluster.run(["pulumi", "stack", "output", "--json", "--stack", namespace], cwd=workdir).stdout)
        seen.append({k: out[k] for k in STAGES})
        if all(out[k]["complete"] for k in STAGES):
            return seen
    raise AssertionError(f"not complete after {limit} pulumi up: {seen[-3:]}")


def test_yaml_program_through_the_component_provider(cluster, namespace, tmp_path):
    workdir = _project(cluster, namespace, tmp_path)
    try:
        _up_until_complete(cluster, workdir, namespace)
        project = yaml.safe_load((workdir / "Pulumi.yaml").read_text())
        set_images(NEW)(project["resources"])
        (workdir / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        rolled = _up_until_complete(cluster, workdir, namespace)
        assert len(rolled) >= 2
        assert pod_images(cluster, namespace) == {NEW}
    finally:
        cluster.run(
            ["pulumi", *DESTROY, "--stack", namespace, "--non-interactive"],
            cwd=workdir,
        )
    cluster.settle(namespace)
    assert fleet_objects(cluster, namespace, FLEET_KINDS) == []
