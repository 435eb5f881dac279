"""Worker StatefulSets sharing their revision's constant parts (``WorkerConstants``:
``ordinals``, ``updateStrategy``, the ``LWS_GROUP_SIZE`` / ``LWS_WORKER_INDEX`` env entries)
render exactly what building each of them fresh did (the reference: ``worker_statefulset``
without constants), on random specs and stages mixing two revisions; and no manifest shares a
dict with itself."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.stage import Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api import LeaderWorkerSet
from pulumi_lws.lws.render.ordinal import render_ordinal, worker_statefulset
from pulumi_lws.lws.revision import build_catalog, revision_key


def make_lws(size: int, containers: int, subgroup: int | None, topology: bool, tpu: bool, image: str) -> LeaderWorkerSet:
    limits = {"google.com/tpu": "4"} if tpu else {"nvidia.com/gpu": "1"}
    cs = [{"name": f"c{n}", "image": image, "resources": {"limits": limits},
           "env": [{"name": "LWS_GROUP_SIZE", "value": "user"}, {"name": "X", "value": str(n)}]}
          for n in range(containers)]
    lwt = {"size": size, "workerTemplate": {"spec": {"containers": cs}}}
    if subgroup:
        lwt["subGroupPolicy"] = {"subGroupSize": subgroup}
    ann = {L.EXCLUSIVE_TOPOLOGY: "topology.kubernetes.io/zone"} if topology else {}
    return LeaderWorkerSet.from_manifest({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                          "metadata": {"name": "lws", "namespace": "default", "annotations": ann},
                                          "spec": {"replicas": 4, "leaderWorkerTemplate": lwt}})


def _ids(value, seen: dict, path: str) -> None:
    if isinstance(value, (dict, list)):
        assert id(value) not in seen, f"{path} is the same object as {seen[id(value)]}"
        seen[id(value)] = path
        for k, v in (value.items() if isinstance(value, dict) else enumerate(value)):
            _ids(v, seen, f"{path}.{k}")


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.sampled_from([None, 2]), st.booleans(),
       st.booleans(), st.lists(st.booleans(), min_size=4, max_size=4), st.dictionaries(st.integers(0, 3), st.just("z")))
def test_shared_constants_render_what_fresh_parts_did(old_size, new_size, containers, subgroup, topology, tpu,
                                                       on_old, domains):
    if subgroup and (old_size % subgroup or new_size % subgroup):
        subgroup = None  # subGroupSize must divide the size (validation)
    old = make_lws(old_size, containers, subgroup, topology, tpu, "v1")
    new = make_lws(new_size, containers, subgroup, topology, tpu, "v2")
    old_key, new_key = revision_key(old), revision_key(new)
    catalog = build_catalog(new, [_cr(old, old_key, 1)])
    revisions = {str(i): old_key if on_old[i] else new_key for i in range(4)}
    stage = Stage(policy="lws/ordinal", target_revision=new_key, replicas=4, partition=0, group_revisions=revisions)
    out = render_ordinal(new, stage, catalog, group_domains=domains)
    workers = {m["metadata"]["name"]: m for m in out if m["kind"] == "StatefulSet" and m["metadata"]["name"] != "lws"}
    for i in range(4):
        at = catalog.lws_at(new, revisions[str(i)])
        if at.size < 2:
            assert f"lws-{i}" not in workers
            continue
        fresh = worker_statefulset(new, at, i, revisions[str(i)], domains.get(i))
        assert json.dumps(workers[f"lws-{i}"]) == json.dumps(fresh)  # same content, same key order
    for m in out:
        _ids(m, {}, m["metadata"]["name"])


def _cr(lws: LeaderWorkerSet, key: str, number: int) -> dict:
    from pulumi_lws.lws.revision import revision_data

    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": number, "data": revision_data(lws),
            "metadata": {"name": f"lws-{key}-{number}", "namespace": "default",
                         "labels": {L.NAME: "lws", L.TEMPLATE_REVISION_HASH: key}}}

