"""The first ``pulumi up`` of a new workload predicts the same way for every API (LeaderWorkerSet
Ordinal and Hash, ModelServing, DisaggregatedSet): the stage creates every group on the target
revision, and ``Stage.remaining`` ends with every group ready — the rows of the component's
preview-log stage table (``stage_table``), ``status`` and the ``remainingStages`` output. A
DisaggregatedSet or an Ordinal LeaderWorkerSet once predicted nothing at creation, and drew its
created groups as old-revision ones; a DisaggregatedSet scale-up's ``plan`` ended "blocked"."""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml

from pulumi_lws.cli import main
from pulumi_lws.components.outputs import stage_table
from pulumi_lws.core.contract.snapshot import Snapshot
from pulumi_lws.core.contract.stagetable import predicted_row, stage_row
from pulumi_lws.workloads import workload_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = {
    "LeaderWorkerSet": "examples/quickstart/lws.yaml",
    "LeaderWorkerSet-Hash": "examples/quickstart/lws.yaml",
    "ModelServing": "examples/modelserving-pd/ms.yaml",
    "DisaggregatedSet": "examples/disaggregated-pd/ds.yaml",
}


def manifest(api: str) -> dict:
    doc = next(d for d in yaml.safe_load_all((ROOT / EXAMPLES[api]).read_text()) if d)
    if api == "LeaderWorkerSet-Hash":
        doc = copy.deepcopy(doc)
        doc["spec"]["groupIdentity"] = "Hash"
    return doc


@pytest.mark.parametrize("api", sorted(EXAMPLES))
def test_creation_predicts_every_group_ready(api):
    doc = manifest(api)
    w = workload_for(doc["kind"])
    spec = w.parse(doc)
    stage = w.reconcile(spec, Snapshot.of([]), w.options()).stage
    assert not stage.complete and stage.remaining, stage.summary()
    wanted = w.budgets(spec)[""].replicas
    last = predicted_row(len(stage.remaining), stage.remaining[-1], wanted, stage.target_revision)
    assert last.live == last.available == wanted  # the last predicted row: every group up and ready
    assert all(c.state == "U" for c in last.groups)
    assert all(lane.old == 0 and lane.new == lane.new_ready for lane in last.lanes)
    if stage.remaining[-1].complete is not None:
        assert stage.remaining[-1].complete
    # the now row draws the groups it creates on the target revision (none on an old one)
    now = stage_row(0, stage, wanted)
    assert not any(c.state in "ox" for c in now.groups), [c.state for c in now.groups]
    table = stage_table(stage, w.stage_lanes(spec)).splitlines()
    assert sum("predicted" in line for line in table) == len(stage.remaining)


def test_a_disaggregatedset_scale_up_plan_ends_with_the_new_groups_ready(tmp_path, capsys):
    old = manifest("DisaggregatedSet")
    new = copy.deepcopy(old)
    next(r for r in new["spec"]["roles"] if r["name"] == "prefill")["spec"]["replicas"] = 8
    (tmp_path / "o.yaml").write_text(yaml.safe_dump(old))
    (tmp_path / "n.yaml").write_text(yaml.safe_dump(new))
    assert main(["plan", "--ascii", str(tmp_path / "o.yaml"), str(tmp_path / "n.yaml")]) == 0
    out = capsys.readouterr().out
    assert "blocked" not in out
    assert "prefill 8/8 new ready; all groups ready" in out.splitlines()[4]
