"""disaggregatedset/rollback.py's user form: a child's recorded template, as pulumi-lws or
upstream rendered it, compared with the spec's without what the DS renderer writes — so the
current revision's recorded template equals the spec's covered value (no rollback diff), with
placement terms, a user's own affinity, env and labels, whatever the placement type, and a
revision's image change is the only difference left."""

from __future__ import annotations

import copy

import pytest
from support.ds_helpers import ds_manifest, role

from pulumi_lws.disaggregatedset import labels as DL
from pulumi_lws.disaggregatedset.adoption import upstream_child_lws
from pulumi_lws.disaggregatedset.render import child_lws
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.rollback import covered, user_form
from pulumi_lws.disaggregatedset.workload import WORKLOAD as DS
from pulumi_lws.lws.revision import revision_data

USER_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"team": "ml"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


def manifest(placement: str, image: str = "img:1") -> dict:
    doc = ds_manifest(
        role("prefill", 2, image=image),
        role("decode", 1, image=image),
        placement={"type": placement, "topology": "zone"},
    )
    tmpl = doc["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    tmpl["metadata"] = {"labels": {"team": "ml"}}
    tmpl["spec"]["affinity"] = copy.deepcopy(USER_AFFINITY)
    tmpl["spec"]["containers"][0]["env"] = [{"name": "MODEL", "value": "m"}]
    return doc


def recorded(ds, build, revision: str) -> dict:
    return {
        ("spec", "roles", i, "spec", "leaderWorkerTemplate"): user_form(
            revision_data(build(ds, r.name, 0, revision, r.replicas))["spec"]["leaderWorkerTemplate"]
        )
        for i, r in enumerate(ds.roles)
    }


@pytest.mark.parametrize("placement", ["None", "ExclusiveSlice", "ExclusiveTopology"])
@pytest.mark.parametrize("build", [child_lws, upstream_child_lws], ids=["pulumi-lws", "upstream"])
def test_the_current_revisions_recorded_template_is_the_specs(placement, build):
    ds = DS.parse(manifest(placement))
    rendered = build(ds, "prefill", 0, compute_revision(ds), 2)
    spec = rendered.spec.leader_worker_template.worker_template["spec"]
    if placement != "None":  # the renderer did add its terms (and the user's stays)
        assert len(spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]) > 1
    assert recorded(ds, build, compute_revision(ds)) == covered(ds)
    form = covered(ds)[("spec", "roles", 0, "spec", "leaderWorkerTemplate")]["workerTemplate"]
    assert form["metadata"] == {"labels": {"team": "ml"}} and form["spec"]["affinity"] == USER_AFFINITY
    assert form["spec"]["containers"][0]["env"] == [{"name": "MODEL", "value": "m"}]
    assert not any(DL.PREFIX in str(v) for v in covered(ds).values())


def test_only_the_users_change_differs():
    old, new = DS.parse(manifest("ExclusiveSlice")), DS.parse(manifest("ExclusiveSlice", image="img:2"))
    before = recorded(old, child_lws, compute_revision(old))
    now = covered(new)
    for path in now:
        a, b = before[path]["workerTemplate"], now[path]["workerTemplate"]
        assert a["spec"]["containers"][0].pop("image") == "img:1" and b["spec"]["containers"][0].pop("image") == "img:2"
        assert a == b
