"""Component provider: schema generated offline (no CLI, no engine) and the plugin manifests."""

from __future__ import annotations

import json

import yaml
from conftest import REPO_ROOT

ROOT = REPO_ROOT


def _schema() -> dict:
    from pulumi_lws.provider.__main__ import schema

    return json.loads(schema())


def test_schema_inputs_outputs():
    resource = _schema()["resources"]["lws:index:LeaderWorkerSet"]
    assert resource["isComponent"] is True
    inputs = resource["inputProperties"]
    for key in (
        "manifest",
        "replicas",
        "size",
        "leaderTemplate",
        "workerTemplate",
        "rollout",
        "partition",
        "startupPolicy",
        "subdomainPolicy",
        "groupIdentity",
        "groupReplacementPolicy",
        "restartPolicy",
        "namespace",
        "updateOrder",
    ):
        assert key in inputs, key
    assert inputs["manifest"]["$ref"] == "pulumi.json#/Any" and inputs["workerTemplate"]["$ref"] == "pulumi.json#/Any"
    assert inputs["replicas"]["type"] == "integer"
    assert resource.get("requiredInputs", []) == []
    outputs = resource["properties"]
    for key in (
        "leaderName",
        "serviceName",
        "selector",
        "revision",
        "stage",
        "blocker",
        "remainingStages",
        "actions",
        "status",
    ):
        assert key in outputs and outputs[key].get("description"), key
    assert "blocker" not in resource["required"]
    rollout = _schema()["types"]["lws:index:RolloutArgs"]["properties"]
    assert rollout["maxUnavailable"]["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert rollout["partition"]["type"] == "integer"


def test_provider_inputs_map_like_construct():
    """What construct passes (ints as floats, camelCase -> snake_case) builds a valid spec."""
    from pulumi.provider.experimental.component import ComponentProvider

    from pulumi_lws.components.args import build_spec
    from pulumi_lws.components.leaderworkerset import LeaderWorkerSet

    provider = ComponentProvider([LeaderWorkerSet], name="lws", version="0.1.0")
    mapped = provider.map_inputs(
        {
            "replicas": 3.0,
            "size": 2.0,
            "rollout": {"maxSurge": "1", "partition": 1.0},
            "workerTemplate": {
                "spec": {"containers": [{"name": "a", "image": "b", "ports": [{"containerPort": 8080.0}]}]}
            },
        },
        provider._component_defs["LeaderWorkerSet"],
    )
    lws = build_spec("LeaderWorkerSet", "demo", mapped).spec
    assert lws.replicas == 3 and lws.size == 2 and lws.max_surge() == 1 and lws.user_partition() == 1
    port = lws.spec.leader_worker_template.worker_template["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert port == 8080 and isinstance(port, int)


def test_plugin_and_project_manifests():
    plugin = yaml.safe_load((ROOT / "PulumiPlugin.yaml").read_text())
    # the CLI launches a Python source plugin's root __main__.py (tests/provider/test_launch.py)
    assert plugin["runtime"]["name"] == "python" and "main" not in plugin and (ROOT / "__main__.py").exists()
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == "pulumi-lws-quickstart" and project["runtime"]["name"] == "python"
    assert (ROOT / project["main"] / "__main__.py").exists()
    consumer = yaml.safe_load((ROOT / "examples" / "provider-yaml" / "Pulumi.yaml").read_text())
    assert consumer["runtime"] == "yaml"
    sample = consumer["resources"]["sample"]
    assert sample["type"] == "lws:LeaderWorkerSet"
    inputs = _schema()["resources"]["lws:index:LeaderWorkerSet"]["inputProperties"]
    assert set(sample["properties"]) <= set(inputs)


def test_schema_serves_the_modelserving_component():
    resource = _schema()["resources"]["lws:index:ModelServing"]
    assert resource["isComponent"] is True
    inputs = resource["inputProperties"]
    assert set(inputs) == {
        "manifest",
        "name",
        "namespace",
        "replicas",
        "schedulerName",
        "recoveryPolicy",
        "rolloutStrategy",
        "roles",
        "maxGroupsInFlight",
        "mode",
        "paused",
        "checkCapacity",
        "progressDeadlineSeconds",
    }
    assert inputs["manifest"]["$ref"] == "pulumi.json#/Any" and inputs["replicas"]["type"] == "integer"
    outputs = resource["properties"]
    for key in ("selector", "revision", "stage", "blocker", "remainingStages", "actions", "status"):
        assert key in outputs and outputs[key].get("description"), key


def test_schema_serves_the_disaggregatedset_component():
    resource = _schema()["resources"]["lws:index:DisaggregatedSet"]
    assert resource["isComponent"] is True
    inputs = resource["inputProperties"]
    assert set(inputs) == {
        "manifest",
        "name",
        "namespace",
        "roles",
        "slices",
        "placementPolicy",
        "progressDeadlineSeconds",
        "mode",
        "paused",
        "checkCapacity",
        "perPodValues",
        "gangProvider",
        "volcanoQueue",
    }
    assert inputs["gangProvider"]["type"] == inputs["volcanoQueue"]["type"] == "string"
    assert inputs["manifest"]["$ref"] == "pulumi.json#/Any" and inputs["slices"]["type"] == "integer"
    outputs = resource["properties"]
    for key in ("revision", "stage", "blocker", "remainingStages", "actions", "status"):
        assert key in outputs and outputs[key].get("description"), key
