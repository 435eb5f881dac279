"""Properties of revision adoption (LeaderWorkerSet and ModelServing catalogs): a ControllerRevision
upstream wrote — Go's serialisation, its own key — is the target exactly when its content is the
spec's; a different template never is; and a revision with pulumi-lws's own key always wins."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from support.adoption_helpers import go_style_key, with_null_timestamps

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.revision import build_catalog, revision_data, revision_key
from pulumi_lws.modelserving import labels as ML
from pulumi_lws.modelserving.revision import build_catalog as ms_catalog
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.revision import revision_data as ms_revision_data
from pulumi_lws.workloads import workload_for

LWS, MS = workload_for("LeaderWorkerSet"), workload_for("ModelServing")
images = st.sampled_from(["nginx:1.27", "nginx:1.28", "vllm/vllm-openai:v0.8"])


def lws(image: str, size: int, replicas: int, restart: str, subdomain: str | None):
    spec = {
        "replicas": replicas,
        "leaderWorkerTemplate": {
            "size": size,
            "restartPolicy": restart,
            "workerTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
        },
    }
    if subdomain:
        spec["networkConfig"] = {"subdomainPolicy": subdomain}
    return LWS.parse(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }
    )


def upstream_cr(spec, number: int = 1) -> tuple[str, dict]:
    data = copy.deepcopy(revision_data(spec))
    lwt = data["spec"]["leaderWorkerTemplate"]
    lwt["workerTemplate"] = with_null_timestamps(lwt["workerTemplate"])
    key = go_style_key(data)
    return key, {
        "kind": "ControllerRevision",
        "revision": number,
        "data": data,
        "metadata": {"name": f"web-{key}-{number}", "labels": {L.NAME: "web", L.TEMPLATE_REVISION_HASH: key}},
    }


lws_specs = st.builds(
    lws,
    images,
    st.integers(1, 4),
    st.integers(0, 5),
    st.sampled_from(["RecreateGroupOnPodRestart", "None"]),
    st.sampled_from([None, "Shared", "UniquePerReplica"]),
)


@settings(max_examples=60, deadline=None)
@given(spec=lws_specs, other=images)
def test_lws_upstream_revision_is_the_target_iff_its_content_matches(spec, other):
    key, cr = upstream_cr(spec)
    assert key != revision_key(spec)
    catalog = build_catalog(spec, [cr])
    assert catalog.target.key == key and catalog.target.number == 1 and catalog.target.data == cr["data"]
    wire = spec.to_wire()
    wire["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"] = other + "-x"
    changed = LWS.parse(wire)
    assert build_catalog(changed, [cr]).target.key == revision_key(changed)  # another template: no adoption
    ours = {
        "kind": "ControllerRevision",
        "revision": 2,
        "data": revision_data(spec),
        "metadata": {"labels": {L.NAME: "web", L.TEMPLATE_REVISION_HASH: revision_key(spec)}},
    }
    assert build_catalog(spec, [cr, ours]).target.key == revision_key(spec)  # our own key wins


def ms(image: str, workers: int, replicas: int):
    role = {
        "name": "r",
        "replicas": 1,
        "workerReplicas": workers,
        "entryTemplate": {"spec": {"containers": [{"name": "c", "image": image}]}},
    }
    if workers:
        role["workerTemplate"] = {"spec": {"containers": [{"name": "w", "image": image}]}}
    return MS.parse(
        {
            "apiVersion": "workload.serving.volcano.sh/v1alpha1",
            "kind": "ModelServing",
            "metadata": {"name": "m", "namespace": "default"},
            "spec": {"replicas": replicas, "template": {"roles": [role]}},
        }
    )


@settings(max_examples=40, deadline=None)
@given(spec=st.builds(ms, images, st.integers(0, 3), st.integers(1, 4)))
def test_ms_upstream_revision_is_the_target_iff_its_content_matches(spec):
    roles = []
    for role in ms_revision_data(spec)["data"]:
        role = {k: (with_null_timestamps(v) if k.endswith("Template") else v) for k, v in role.items()}
        roles.append(role)
    key = go_style_key({"data": roles})
    cr = {
        "kind": "ControllerRevision",
        "data": {"data": roles},
        "revision": 1,
        "metadata": {"name": f"m-{key}", "labels": {ML.NAME: "m", ML.REVISION: key}},
    }
    assert ms_catalog(spec, [cr]).target == key != modelserving_revision(spec)
    other = ms("other:1", 0, 1)
    assert ms_catalog(other, [cr]).target == modelserving_revision(other)
