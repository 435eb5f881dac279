"""``manifest_dependencies`` in one pass (lws/reconcile.py) equals the merge of the three rules'
results it replaced (``workload_dependencies``, ``gang_dependencies``, ``ordinal_dependencies``
through ``merge_dependencies``, then ``check_dependency_order``: the reference) on random
manifest lists — services named by serviceName or subdomain, declared or not, revisions with or
without a ControllerRevision, gang objects, worker and leader StatefulSets, out-of-order and
duplicated objects, Ordinal and Hash."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.dependencies import check_dependency_order, merge_dependencies
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.reconcile import manifest_dependencies
from pulumi_lws.lws.render.ordinal import ordinal_dependencies, workload_dependencies
from pulumi_lws.lws.render.scheduling import WORKLOAD_NAME_ANNOTATION, gang_dependencies

NAME = "lws"


def reference(lws, manifests, check_order):
    parts = [workload_dependencies(manifests), gang_dependencies(manifests)]
    if lws.spec.group_identity != "Hash":
        parts.append(ordinal_dependencies(lws.name, manifests))
    out = merge_dependencies(manifests, *parts)
    if check_order:
        check_dependency_order(manifests, out)
    return out


def make_lws(identity: str) -> LeaderWorkerSet:
    spec = {
        "replicas": 2,
        "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "v1"}]}}},
    }
    if identity == "Hash":
        spec["groupIdentity"] = "Hash"
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": "default"},
            "spec": spec,
        }
    )


REVS = st.sampled_from([None, "r1", "r2"])


@st.composite
def manifest(draw):
    kind = draw(
        st.sampled_from(
            [
                "StatefulSet",
                "StatefulSet",
                "Deployment",
                "Service",
                "ControllerRevision",
                "PodGroup",
                "Workload",
                "ConfigMap",
            ]
        )
    )
    name = draw(st.sampled_from([NAME, f"{NAME}-0", f"{NAME}-1", "svc", "pg", "wl"]))
    labels = {}
    if draw(st.booleans()):
        labels[L.GROUP_INDEX] = "0"
    rev = draw(REVS)
    if rev:
        labels[L.TEMPLATE_REVISION_HASH] = rev
    m = {
        "apiVersion": "scheduling.k8s.io/v1alpha1" if kind in ("PodGroup", "Workload") else "v1",
        "kind": kind,
        "metadata": {"name": name, "labels": labels},
    }
    if kind in ("StatefulSet", "Deployment"):
        spec: dict = {}
        if draw(st.booleans()):
            spec["serviceName"] = draw(st.sampled_from([NAME, "svc", "missing", ""]))
        tmeta: dict = {"labels": {L.TEMPLATE_REVISION_HASH: t} if (t := draw(REVS)) else {}}
        tspec: dict = {}
        if draw(st.booleans()):
            tspec["subdomain"] = draw(st.sampled_from([NAME, "svc"]))
        if draw(st.booleans()):
            tspec["schedulingGroup"] = {"podGroupName": "pg"}
        if draw(st.booleans()):
            tmeta["annotations"] = {WORKLOAD_NAME_ANNOTATION: "wl"}
        if draw(st.integers(0, 5)):
            spec["template"] = {"metadata": tmeta, "spec": tspec}
        m["spec"] = spec
    elif kind == "PodGroup" and draw(st.booleans()):
        m["spec"] = {"workloadRef": {"workloadName": "wl"}}
    return m


@settings(max_examples=500, deadline=None)
@given(st.lists(manifest(), max_size=9), st.sampled_from(["Ordinal", "Hash"]), st.booleans())
def test_one_pass_equals_the_merge_of_the_rules(manifests, identity, check_order):
    lws = make_lws(identity)

    def run(fn):
        try:
            return "ok", list(fn(lws, manifests, check_order).items())  # order matters too
        except ValueError as e:
            return "raised", str(e)

    assert run(lambda a, b, c: manifest_dependencies(a, b, check_order=c)) == run(reference)
