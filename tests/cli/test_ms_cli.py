"""The CLI on ModelServing manifests, dispatched through the workload registry: render (first and
steady stage), plan (table, markdown, json, --diff, update rules) and simulate --from/--to
(GPU node pools, --plot), with their exit codes."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest

from pulumi_lws.cli import main

ROOT = TESTS_DIR.parent
PD = ROOT / "examples" / "modelserving-pd" / "ms.yaml"
KTHENA = TESTS_DIR / "manifests_upstream_kthena"
OLD_IMAGE, NEW_IMAGE = "nginxinc/nginx-unprivileged:1.27", "nginxinc/nginx-unprivileged:1.28"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def pd() -> dict:
    return yaml.safe_load(PD.read_text())


def with_image(ms: dict, image: str) -> dict:
    out = copy.deepcopy(ms)
    for role in out["spec"]["template"]["roles"]:
        for key in ("entryTemplate", "workerTemplate"):
            for c in role[key]["spec"]["containers"]:
                c["image"] = image
    return out


def with_gpus(ms: dict, gpus: int = 1) -> dict:
    out = copy.deepcopy(ms)
    for role in out["spec"]["template"]["roles"]:
        for key in ("entryTemplate", "workerTemplate"):
            for c in role[key]["spec"]["containers"]:
                c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return out


def write(tmp_path: pathlib.Path, name: str, *docs: dict) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


# ---- render -------------------------------------------------------------------------------------


def test_render_first_stage_of_a_modelserving_prints_valid_objects_under_a_header(capsys):
    code, out, err = run(capsys, "render", PD)
    assert code == 0 and err == ""
    header = out.splitlines()[0]
    assert header.startswith("# ModelServing default/pd: first `pulumi up` on an empty cluster, 4 groups on revision ")
    assert header.endswith("1 ControllerRevision, 8 Services, 16 StatefulSets")
    objs = list(yaml.safe_load_all(out))
    assert {o["kind"] for o in objs} == {"ControllerRevision", "Service", "StatefulSet"}
    for obj in objs:
        validate_manifest(obj)
    assert "pd-3-prefill-0" in {o["metadata"]["name"] for o in objs}


def test_render_steady_and_pass_through_in_file_order(capsys, tmp_path):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front"}, "spec": {"ports": [{"port": 80}]}}
    path = write(tmp_path, "ms.yaml", svc, pd())
    code, out, _ = run(capsys, "render", "--stage", "steady", path)
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("# ")]
    assert headers[0].startswith("# Service front: passed through unchanged")
    assert (
        headers[1].startswith("# ModelServing default/pd: steady state after ")
        and "4 groups, all on revision" in headers[1]
    )


def test_render_volcano_scheduler_adds_one_podgroup_per_servinggroup(capsys, tmp_path):
    ms = pd()
    del ms["spec"]["schedulerName"]  # upstream default: volcano
    code, out, _ = run(capsys, "render", write(tmp_path, "v.yaml", ms))
    assert code == 0
    kinds = [o["kind"] for o in yaml.safe_load_all(out)]
    assert kinds.count("PodGroup") == 4


def test_render_invalid_modelserving_exits_2_and_prints_nothing(capsys, tmp_path):
    ms = pd()
    ms["spec"]["template"]["roles"][0]["replicas"] = -1
    code, out, err = run(capsys, "render", write(tmp_path, "bad.yaml", ms))
    assert code == 2 and out == "" and "ModelServing 'pd' is invalid" in err


# ---- plan ---------------------------------------------------------------------------------------


def test_plan_table_of_the_seed_example_replaces_r3_first(capsys, tmp_path):
    """The seed's six-stage table: 4 ServingGroups, maxUnavailable 1, R-3 down to R-0."""
    new = write(tmp_path, "new.yaml", with_image(pd(), NEW_IMAGE))
    code, out, _ = run(capsys, "plan", PD, new, "--format", "json")
    assert code == 0
    trace = json.loads(out)
    assert trace["converged"] and trace["changes"] and trace["blocked"] is None
    states = ["".join(g["state"] for g in row["groups"]) for row in trace["rows"]]
    assert states == ["UUUU", "oooo"[:3] + "u", "oouU", "ouUU", "uUUU", "UUUU"]
    assert [r["available"] for r in trace["rows"]] == [4, 3, 3, 3, 3, 4]
    assert max(r["live"] for r in trace["rows"]) == 4
    code, table, _ = run(capsys, "plan", PD, new)
    assert code == 0
    lines = table.splitlines()
    assert "R-3 updating" in lines[3] and "rolling update complete" in lines[-2] and len(lines) == 2 + 6 + 1
    assert lines[-1].startswith("legend: ✅ updated, ready")
    code, md, _ = run(capsys, "plan", PD, new, "--format", "markdown")
    assert code == 0 and md.startswith("| Stage | Replicas | R-0 |")


def test_plan_diff_shows_only_the_first_replaced_group_and_the_new_revision(capsys, tmp_path):
    new = write(tmp_path, "new.yaml", with_image(pd(), NEW_IMAGE))
    code, out, _ = run(capsys, "plan", PD, new, "--diff")
    assert code == 0
    assert "--- /dev/null\n+++ b/ControllerRevision/pd-" in out
    changed = {line[len("+++ b/") :] for line in out.splitlines() if line.startswith("+++ b/")}
    assert {
        "StatefulSet/pd-3-prefill-0",
        "StatefulSet/pd-3-prefill-0-w",
        "StatefulSet/pd-3-decode-0",
        "StatefulSet/pd-3-decode-0-w",
    } <= changed
    assert not any(name.startswith("StatefulSet/pd-0-") for name in changed)
    assert f"-        image: {OLD_IMAGE}\n" in out and f"+        image: {NEW_IMAGE}\n" in out
    code, out, _ = run(capsys, "plan", PD, new, "--diff", "--format", "json")
    assert code == 0 and {d["change"] for d in json.loads(out)["diff"]} == {"created", "changed"}


def test_plan_no_changes_and_update_rule_exit_codes(capsys, tmp_path):
    code, out, _ = run(capsys, "plan", PD, PD)
    assert (code, out.strip()) == (0, "no changes")
    gang = KTHENA / "examples_model-serving_gangpolicy.yaml"
    doc = next(d for d in yaml.safe_load_all(gang.read_text()) if d)
    changed = copy.deepcopy(doc)
    changed["spec"]["template"]["gangPolicy"]["minRoleReplicas"]["decode"] = 2
    code, _, err = run(capsys, "plan", gang, write(tmp_path, "g.yaml", changed))
    assert code == 2 and "minRoleReplicas is immutable" in err
    other = copy.deepcopy(pd())
    other["metadata"]["name"] = "other"
    code, _, err = run(capsys, "plan", PD, write(tmp_path, "o.yaml", other))
    assert code == 2 and "different ModelServings" in err


def test_plan_role_rolling_update_warns_when_every_group_goes_below_ready(capsys, tmp_path):
    role = KTHENA / "examples_model-serving_role-rollingupdate.yaml"
    new = write(
        tmp_path,
        "r.yaml",
        *[d for d in yaml.safe_load_all(role.read_text().replace("image: nginx\n", "image: nginx:2\n")) if d],
    )
    code, out, _ = run(capsys, "plan", role, new)
    assert code == 0
    assert "rolling update complete" in out
    assert "warning: RoleRollingUpdate: per-role budgets take every ServingGroup (2) below ready" in out


def test_plan_with_surge_counts_the_surge_group(capsys, tmp_path):
    old = copy.deepcopy(pd())
    old["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": 0, "maxSurge": 1}
    code, out, _ = run(
        capsys,
        "plan",
        write(tmp_path, "o.yaml", old),
        write(tmp_path, "n.yaml", with_image(old, NEW_IMAGE)),
        "--format",
        "json",
    )
    assert code == 0
    rows = json.loads(out)["rows"]
    assert max(r["live"] for r in rows) == 5 and min(r["available"] for r in rows) == 4
    assert rows[1]["groups"][-1]["surge"] is True


# ---- simulate -----------------------------------------------------------------------------------


def test_simulate_from_to_converges_with_a_plot(capsys, tmp_path):
    new = write(tmp_path, "new.yaml", with_image(pd(), NEW_IMAGE))
    svg = tmp_path / "t.svg"
    code, out, _ = run(capsys, "simulate", "--from", PD, "--to", new, "--plot", svg)
    assert code == 0
    assert "pd: converged" in out and "0 invariant violations" in out
    assert svg.read_text().startswith("<svg")


def test_simulate_gpu_pool_surge_group_unschedulable_is_a_named_blocker(capsys, tmp_path):
    """maxUnavailable 0, maxSurge 1 on a pool that fits exactly the 4 groups: the surge group
    cannot be scheduled, the rollout waits without deleting capacity (exit 1); one more node
    lets it converge."""
    old = with_gpus(pd())
    old["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] = {"maxUnavailable": 0, "maxSurge": 1}
    a, b = write(tmp_path, "o.yaml", old), write(tmp_path, "n.yaml", with_image(old, NEW_IMAGE))
    code, out, err = run(
        capsys, "simulate", "--from", a, "--to", b, "--nodes", "3", "--gpus-per-node", "8", "--format", "json"
    )
    assert code == 0 and json.loads(out)["converged"]
    code, out, err = run(
        capsys, "simulate", "--from", a, "--to", b, "--nodes", "2", "--gpus-per-node", "8", "--format", "json"
    )
    assert code == 1 and "rollout ended blocked: surge-not-ready" in err
    trace = json.loads(out)
    assert trace["blocked"].startswith("surge-not-ready: surge group pd-4 is not ready")
    assert min(r["available"] for r in trace["rows"]) >= 4 and max(r["live"] for r in trace["rows"]) <= 5
    assert trace["violations"] == []


def test_simulate_bad_modelserving_exits_2_naming_the_file(capsys, tmp_path):
    bad = pd()
    bad["spec"]["replicas"] = -1
    code, _, err = run(capsys, "simulate", "--from", PD, "--to", write(tmp_path, "bad.yaml", bad))
    assert code == 2 and "--to" in err and "spec.replicas" in err


@pytest.mark.parametrize(
    "manifest", ["examples_model-serving_rollingupdate.yaml", "examples_model-serving_sample.yaml"]
)
def test_upstream_samples_plan_an_image_change(capsys, tmp_path, manifest):
    path = KTHENA / manifest
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    new = [copy.deepcopy(d) for d in docs]
    for d in new:
        for role in d["spec"]["template"]["roles"]:
            for key in ("entryTemplate", "workerTemplate"):
                for c in ((role.get(key) or {}).get("spec") or {}).get("containers") or []:
                    c["image"] = c["image"] + "-next"
    code, out, err = run(capsys, "plan", path, write(tmp_path, "n.yaml", *new), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["converged"]


def test_plan_reconciles_new_on_the_converged_fleet_once(capsys, tmp_path, monkeypatch):
    """The trace and the stage demand read one reconcile of NEW on OLD's converged fleet (a pure
    function of both: the second would be the first again); OLD is reconciled once, for the
    demand before. Same output as with every reconcile made afresh."""
    from pulumi_lws.cli import plan as plan_command
    from pulumi_lws.workloads import workload_for

    new = write(tmp_path, "new.yaml", with_image(pd(), NEW_IMAGE))
    code, reference, _ = run(capsys, "plan", PD, new, "--format", "json")
    assert code == 0
    workload = type(workload_for("ModelServing"))
    calls: list[str] = []
    original = workload.reconcile

    def counting(self, spec, snapshot, options=None):
        calls.append(spec.spec.template.roles[0].entry_template["spec"]["containers"][0]["image"])
        return original(self, spec, snapshot, options)

    monkeypatch.setattr(workload, "reconcile", counting)
    plan_command._CONVERGED.clear()
    plan_command._RECONCILED.clear()
    code, out, _ = run(capsys, "plan", PD, new, "--format", "json")
    assert code == 0 and out == reference
    after_warm_up = calls[-2:]  # the warm-up's own reconciles (the simulator's) come first
    assert sorted(after_warm_up) == sorted([OLD_IMAGE, NEW_IMAGE]) and calls.count(NEW_IMAGE) == 1
