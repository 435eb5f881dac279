"""The simulator's faults of issue 24: image faults (``kubelet.failImages``, ``kubelet.pullErrors``,
an ``image:`` override), timed ``events:``, their scenario validation and ``--fail-image``."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
import yaml
from support.sim_helpers import pod, sts

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.sim.cluster.kubelet import CRASH_PERIOD_SECONDS, KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.scenario import load_scenario


def _cluster(**kw) -> SimCluster:
    return SimCluster(kubelet=KubeletConfig(default=Timing(1, 2), **kw))


def _image_pod(name: str, image: str, extra: str | None = None) -> dict:
    p = pod(name)
    p["spec"]["containers"] = [{"name": "main", "image": image}]
    if extra:
        p["spec"]["containers"].append({"name": "side", "image": extra})
    return p


def _status(c: SimCluster, name: str) -> dict:
    return c.get("Pod", name)["status"]


def _ready(c: SimCluster, name: str) -> bool:
    return any(x["type"] == "Ready" and x["status"] == "True" for x in _status(c, name).get("conditions") or [])


def test_a_failing_image_crash_loops_never_ready_and_restarts_every_ten_seconds() -> None:
    c = _cluster(fail_images=("img:bad",))
    c.create(_image_pod("p", "img:bad", extra="side:1"))
    seen = []
    for t in range(0, 45):
        c.step(float(t))
        st = _status(c, "p")
        assert not _ready(c, "p")
        if st.get("phase") == "Running":
            main = next(s for s in st["containerStatuses"] if s["name"] == "main")
            seen.append((t, main["restartCount"], next(iter(main["state"]))))
    assert _status(c, "p")["phase"] == "Running"
    counts = [n for _, n, _ in seen]
    assert counts == sorted(counts) and counts[-1] == 5  # Running at t=1; exits at t=2, 12, 22, 32, 42
    waiting = [(t, n) for t, n, state in seen if state == "waiting"]
    running = [t for t, _, state in seen if state == "running"]
    assert running == [1, 11, 21, 31, 41]  # a new start every CRASH_PERIOD_SECONDS
    assert all(b - a == CRASH_PERIOD_SECONDS for a, b in itertools.pairwise(running))
    assert waiting and all(t not in running for t, _ in waiting)
    main = next(s for s in _status(c, "p")["containerStatuses"] if s["name"] == "main")
    side = next(s for s in _status(c, "p")["containerStatuses"] if s["name"] == "side")
    assert main["state"] == {
        "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container=main"}
    }
    assert main["lastState"]["terminated"]["exitCode"] == 1
    assert side["restartCount"] == 0 and side["state"] == {"running": {}}


def test_a_pull_error_leaves_the_pod_pending_in_image_pull_backoff() -> None:
    c = _cluster(pull_errors=("registry.example/typo:*",))
    c.create(_image_pod("p", "registry.example/typo:1", extra="side:1"))
    c.step(30.0)
    st = _status(c, "p")
    assert st["phase"] == "Pending" and not _ready(c, "p")
    by_name = {s["name"]: s for s in st["containerStatuses"]}
    assert by_name["main"]["state"]["waiting"]["reason"] == "ImagePullBackOff"
    assert "registry.example/typo:1" in by_name["main"]["state"]["waiting"]["message"]
    assert by_name["side"]["state"]["waiting"]["reason"] == "ContainerCreating"
    assert all(s["restartCount"] == 0 and not s["started"] for s in st["containerStatuses"])


def test_other_images_are_unaffected_and_an_image_override_models_a_failing_probe() -> None:
    c = SimCluster(
        kubelet=KubeletConfig(
            default=Timing(1, 2), fail_images=("img:bad",), overrides=[Override(image="img:probe*", never_ready=True)]
        )
    )
    c.create(_image_pod("good", "img:1"))
    c.create(_image_pod("probe", "img:probe-fails"))
    c.step(10.0)
    assert _ready(c, "good")
    assert _status(c, "probe")["phase"] == "Running" and not _ready(c, "probe")
    assert all(s["restartCount"] == 0 for s in _status(c, "probe")["containerStatuses"])


def test_the_statefulset_controller_recreates_a_fixed_template_only_once_the_bad_pod_is_gone() -> None:
    """Kubernetes' "forced rollback": maxUnavailable 1, the one pod on the bad template is never
    replaced after the template is fixed (the simulator is faithful to the documented wait)."""
    c = _cluster(fail_images=("bad",))
    c.create(sts(replicas=1, image="good"))
    c.step(5.0)
    c.apply([sts(replicas=1, image="bad")], stack_id="s")
    c.step(20.0)
    c.apply([sts(replicas=1, image="good2")], stack_id="s")
    c.step(60.0)
    assert c.get("Pod", "web-0")["spec"]["containers"][0]["image"] == "bad"


# ---- events ---------------------------------------------------------------------------------
def test_timed_events_annotate_delete_add_remove_and_cordon() -> None:
    c = SimCluster(
        nodes=[
            {"name": "n-0", "labels": {}, "capacity": {"cpu": 8}},
            {"name": "node-3", "labels": {}, "capacity": {"cpu": 8}},
        ]
    )
    c.create(pod("a-1"))
    c.create(pod("a-2"))
    c.create(pod("b-1"))
    assert c.annotate_pods("default", "a-*", {"x": "1"}) == ["a-1", "a-2"]
    assert c.get("Pod", "a-1")["metadata"]["annotations"] == {"x": "1"}
    c.annotate_pods("default", "a-1", {"x": None})
    assert "annotations" not in c.get("Pod", "a-1")["metadata"]
    assert c.add_nodes(2, 8) == ["node-4", "node-5"]
    assert c.get("Node", "node-4", namespace="")["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    c.cordon("node-4")
    assert c.get("Node", "node-4", namespace="")["spec"]["unschedulable"] is True
    on_n0 = [p["metadata"]["name"] for p in c.list("Pod") if p["spec"].get("nodeName") == "n-0"]
    c.remove_node("n-0")
    assert c.get("Node", "n-0", namespace="") is None
    assert all(c.get("Pod", n) is None for n in on_n0)
    assert c.delete_pods("default", "b-*") == (["b-1"] if c.get("Pod", "b-1") else [])


def _write(tmp_path, data: dict) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "s"},
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "size": 1,
            "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "img:1"}]}},
        },
    },
}


def test_scenario_keys_load() -> None:
    sc = load_scenario(
        {
            "manifest": LWS,
            "kubelet": {
                "failImages": ["img:bad"],
                "pullErrors": ["img:typo"],
                "overrides": [{"image": "img:p", "neverReady": True}],
            },
            "events": [
                {"at": 5, "annotate": {"pods": "s-*", "annotations": {"k": "v"}}},
                {"at": 6, "deletePods": "s-1"},
                {"at": 7, "addNodes": 2, "gpusPerNode": 4},
                {"at": 8, "removeNode": "node-0"},
                {"at": 9, "cordon": "node-1"},
            ],
        }
    )
    assert sc.kubelet.fail_images == ("img:bad",) and sc.kubelet.pull_errors == ("img:typo",)
    assert sc.kubelet.overrides[0].image == "img:p"
    assert [(e.at, e.verb) for e in sc.events] == [
        (5, "annotate"),
        (6, "deletePods"),
        (7, "addNodes"),
        (8, "removeNode"),
        (9, "cordon"),
    ]
    assert sc.events[2].gpus_per_node == 4


@pytest.mark.parametrize(
    "data, path",
    [
        ({"kubelet": {"failImages": "img:bad"}}, "kubelet.failImages"),
        ({"kubelet": {"pullErrors": ["", "x"]}}, "kubelet.pullErrors[0]"),
        ({"events": {"at": 1}}, "events"),
        ({"events": [{"at": 1}]}, "events[0]"),
        ({"events": [{"at": 1, "cordon": "a", "removeNode": "b"}]}, "events[0]"),
        ({"events": [{"at": "soon", "cordon": "a"}]}, "events[0].at"),
        ({"events": [{"at": 1, "addNodes": 0}]}, "events[0].addNodes"),
        ({"events": [{"at": 1, "addNodes": 1, "gpusPerNode": -1}]}, "events[0].gpusPerNode"),
        ({"events": [{"at": 1, "cordon": "a", "gpusPerNode": 1}]}, "events[0].gpusPerNode"),
        ({"events": [{"at": 1, "annotate": {"pods": "x"}}]}, "events[0].annotate.annotations"),
        ({"events": [{"at": 1, "annotate": {"annotations": {"a": "b"}}}]}, "events[0].annotate.pods"),
        ({"events": [{"at": 1, "deletePods": 3}]}, "events[0].deletePods"),
        ({"events": [{"at": 1, "cordon": "a", "typo": 1}]}, "events[0].typo"),
    ],
)
def test_bad_values_name_their_field_path(data: dict, path: str) -> None:
    with pytest.raises(SpecError) as err:
        load_scenario({"manifest": LWS, **data})
    assert path in [e.path for e in err.value.errors]


def test_cli_bad_scenario_value_exits_2_with_the_field_path(tmp_path) -> None:
    path = _write(tmp_path, {"manifest": LWS, "events": [{"at": 1, "addNodes": 0}]})
    out = subprocess.run([sys.executable, "-m", "pulumi_lws.cli", "simulate", path], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "events[0].addNodes" in out.stderr and "Traceback" not in out.stderr


def test_events_in_a_scenario_run_and_are_noted(tmp_path) -> None:
    from pulumi_lws.sim.driver.runner import simulate

    sc = load_scenario(
        {
            "manifest": LWS,
            "start": "converged",
            "reconcile": {"interval": 5},
            "events": [
                {"at": 3, "deletePods": "s-1"},
                {"at": 4, "annotate": {"pods": "s-0", "annotations": {"k": "v"}}},
            ],
            "stop": {"maxTime": 60},
        }
    )
    result = simulate(sc)
    assert result.exit_code == 0, result.reason
    notes = " ".join(r.note for r in result.trace.rows)
    assert "event: delete pods s-1" in notes
    assert result.cluster.get("Pod", "s-0")["metadata"]["annotations"]["k"] == "v"


def test_fail_image_on_the_cli_shows_the_crash_loop(tmp_path) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(LWS))
    bad = json.loads(json.dumps(LWS))
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = "img:bad"
    new.write_text(yaml.safe_dump(bad))
    cmd = [sys.executable, "-m", "pulumi_lws.cli", "simulate", "--from", str(old), "--to", str(new)]
    clean = subprocess.run(cmd, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    failing = subprocess.run(cmd + ["--fail-image", "img:bad"], capture_output=True, text=True)
    assert failing.returncode == 1 and "blocked" in failing.stdout, failing.stdout
    assert "Traceback" not in failing.stderr
