"""A stage's demand from its rendered manifests (issue 24 item 5, the pure part): the pod's
effective requests as Kubernetes computes them x replicas, for every API's workloads — and the
line `plan` and `simulate` print."""

from __future__ import annotations

import json
import pathlib

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.core.features.capacity import demand_text, manifest_demand, ordered, peak, pod_demand
from pulumi_lws.core.k8s.quantity import parse_quantity

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_a_limit_stands_in_for_an_absent_request_and_init_containers_take_the_max():
    spec = {
        "containers": [
            {
                "name": "a",
                "resources": {"limits": {"nvidia.com/gpu": "8", "cpu": "4"}, "requests": {"cpu": "2", "memory": "1Gi"}},
            },
            {"name": "b", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "8", "memory": "1Mi"}}}],
        "overhead": {"cpu": "100m"},
    }
    assert dict(ordered(pod_demand(spec))) == {"nvidia.com/gpu": "8", "cpu": "8100m", "memory": "1536Mi"}


def test_manifests_count_replicas_x_template_and_ignore_objects_without_pods():
    def sts(kind, replicas, gpus):
        return {
            "kind": kind,
            "spec": {
                "replicas": replicas,
                "template": {
                    "spec": {"containers": [{"name": "c", "resources": {"limits": {"amd.com/gpu": str(gpus)}}}]}
                },
            },
        }

    manifests = [
        sts("StatefulSet", 3, 2),
        sts("Deployment", 2, 1),
        {"kind": "Service", "spec": {}},
        {"kind": "Pod", "spec": {"containers": [{"name": "p", "resources": {"requests": {"google.com/tpu": 4}}}]}},
    ]
    assert demand_text(manifest_demand(manifests)) == "8 amd.com/gpu, 4 google.com/tpu"
    assert demand_text(manifest_demand(reversed(manifests))) == demand_text(manifest_demand(manifests))
    assert demand_text({}) == "none"


def test_peak_is_per_resource():
    a = {"nvidia.com/gpu": parse_quantity("8"), "cpu": parse_quantity("1")}
    b = {"nvidia.com/gpu": parse_quantity("4"), "cpu": parse_quantity("3")}
    assert dict(ordered(peak([a, b]))) == {"nvidia.com/gpu": "8", "cpu": "3"}


def _with_gpus(doc, image_tag: str):
    """Every container requests 1 nvidia.com/gpu (a limit: the request defaults to it) and 1 cpu."""

    def walk(node):
        if isinstance(node, dict):
            for c in node.get("containers") or []:
                c["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "1"}}
                c["image"] = f"nginxinc/nginx-unprivileged:{image_tag}"
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return doc


EXAMPLES = {
    "LeaderWorkerSet": "examples/quickstart/lws.yaml",
    "ModelServing": "examples/modelserving-pd/ms.yaml",
    "DisaggregatedSet": "examples/disaggregated-pd/ds.yaml",
}


@pytest.mark.parametrize("api", sorted(EXAMPLES))
def test_plan_prints_the_demand_before_and_of_the_next_up_for_every_api(api, tmp_path, capsys):
    doc = yaml.safe_load((ROOT / EXAMPLES[api]).read_text())
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(_with_gpus(yaml.safe_load(yaml.safe_dump(doc)), "1.27")))
    new.write_text(yaml.safe_dump(_with_gpus(yaml.safe_load(yaml.safe_dump(doc)), "1.28")))
    main(["plan", str(old), str(new), "--format", "json"])
    demand = json.loads(capsys.readouterr().out)["demand"]
    before, after = int(demand["before"]["nvidia.com/gpu"]), int(demand["next"]["nvidia.com/gpu"])
    assert before > 0 and after >= before and demand["before"]["cpu"] == str(before)  # 1 gpu and 1 cpu per pod
    if api == "LeaderWorkerSet":  # 4 groups of 4 pods; the first stage adds maxSurge 2 groups
        assert (before, after) == (16, 24)
    main(["plan", str(old), str(new)])
    line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("demand ")]
    assert line == [
        f"demand (pod requests x pods declared): before {before} nvidia.com/gpu, {before} cpu; "
        f"the next pulumi up declares {after} nvidia.com/gpu, {after} cpu"
    ]


def test_simulate_prints_each_stage_s_peak_demand(capsys):
    code = main(["simulate", str(ROOT / "examples/gpu-717/scenario-rolloutfirst.yaml")])
    out = capsys.readouterr().out
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("peak demand per stage"))
    # one group of 2 pods x 4 GPUs, then RolloutFirst replaces it and scales to 2 groups on the one 8-GPU node
    assert line.startswith("peak demand per stage (pod requests x live pods): Stage 1: 8 nvidia.com/gpu; ")
    assert line.count("Stage ") == sum(1 for ln in out.splitlines() if ln.startswith("Stage ") and ln[6:7].isdigit())


def test_the_quickstart_demo_requests_nothing_and_prints_no_demand_line(capsys):
    main(["simulate", str(ROOT / "examples/quickstart/scenario-pure.yaml")])
    assert "demand" not in capsys.readouterr().out
