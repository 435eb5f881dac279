"""StatefulSet controller behaviour (hand-written manifests, no planner)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.sim_helpers import cluster, deleting, images, run_until, sts

from pulumi_lws.core.contract.snapshot import statefulset_ready


def ready_sts(image="a", **kw):
    c = cluster()
    c.apply([sts(image=image, **kw)])
    run_until(c, 5)
    return c


def test_parallel_creates_all_and_reports_status():
    c = ready_sts()
    s = c.get("StatefulSet", "web")
    assert sorted(images(c)) == ["web-0", "web-1", "web-2", "web-3"]
    st_ = s["status"]
    assert (st_["replicas"], st_["readyReplicas"], st_["availableReplicas"], st_["updatedReplicas"]) == (4, 4, 4, 4)
    assert st_["currentRevision"] == st_["updateRevision"] and statefulset_ready(s)
    p = c.get("Pod", "web-2")
    assert p["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "2"
    assert p["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-2"
    assert p["metadata"]["labels"]["controller-revision-hash"] == st_["currentRevision"]


def test_ordered_ready_creates_one_at_a_time():
    c = cluster()
    c.apply([sts(policy="OrderedReady")])
    assert sorted(images(c)) == ["web-0"]
    run_until(c, 3)  # web-0 ready at t=3
    assert sorted(images(c)) == ["web-0", "web-1"]


def test_ordinals_start():
    c = ready_sts(replicas=3, start=1)
    assert sorted(images(c)) == ["web-1", "web-2", "web-3"]


def test_partition_and_max_unavailable_delete_highest_first_per_tick():
    c = ready_sts(replicas=6)
    c.apply([sts(image="b", replicas=6, partition=2, max_unavailable=2)])
    assert deleting(c) == ["web-4", "web-5"]  # 2 at a time, highest ordinals first
    run_until(c, 6)  # grace 1s: recreated on the new revision
    assert images(c)["web-5"] == "b" and images(c)["web-3"] == "a"
    run_until(c, 8)  # 4,5 ready at 6+3 -> not yet
    assert deleting(c) == []
    run_until(c, 9)
    assert deleting(c) == ["web-2", "web-3"]
    run_until(c, 20)
    assert images(c) == {"web-0": "a", "web-1": "a", "web-2": "b", "web-3": "b", "web-4": "b", "web-5": "b"}
    s = c.get("StatefulSet", "web")["status"]
    assert s["currentRevision"] != s["updateRevision"] and s["updatedReplicas"] == 4 and s["currentReplicas"] == 2


def test_percent_max_unavailable_rounds_up_and_counts_existing_unavailability():
    c = ready_sts(replicas=4)
    c.crash_pod("default", "web-0")  # one pod unavailable (being replaced)
    c.apply([sts(image="b", replicas=4, max_unavailable="30%")])  # ceil(1.2) = 2, minus 1 unavailable
    assert deleting(c) == ["web-3"]


def test_pods_below_partition_are_recreated_on_current_revision():
    c = ready_sts(replicas=4)
    c.apply([sts(image="b", replicas=4, partition=2, max_unavailable=2)])
    run_until(c, 15)
    c.crash_pod("default", "web-0")
    assert images(c)["web-0"] == "a"
    c.apply([sts(image="b", replicas=4, partition=0, max_unavailable=4)])
    run_until(c, 30)
    s = c.get("StatefulSet", "web")["status"]
    assert set(images(c).values()) == {"b"} and s["currentRevision"] == s["updateRevision"]


def test_scale_down_removes_highest_ordinals_and_on_delete_waits():
    c = ready_sts(replicas=4)
    c.apply([sts(replicas=2)])
    assert deleting(c) == ["web-2", "web-3"]
    c2 = ready_sts(strategy="OnDelete")
    c2.apply([sts(image="b", strategy="OnDelete")])
    run_until(c2, 20)
    assert set(images(c2).values()) == {"a"}
    c2.crash_pod("default", "web-1")
    assert images(c2)["web-1"] == "b"


def test_volume_claims_and_retention():
    vct = [
        {
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
    ]
    c = cluster(grace=0)
    c.apply(
        [
            sts(
                replicas=3,
                volumeClaimTemplates=vct,
                persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Retain"},
            )
        ]
    )
    assert [p["metadata"]["name"] for p in c.list("PersistentVolumeClaim")] == [
        "data-web-0",
        "data-web-1",
        "data-web-2",
    ]
    assert c.get("Pod", "web-1")["spec"]["volumes"][-1]["persistentVolumeClaim"]["claimName"] == "data-web-1"
    run_until(c, 5)
    c.apply(
        [
            sts(
                replicas=1,
                volumeClaimTemplates=vct,
                persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Retain"},
            )
        ]
    )
    run_until(c, 7)
    assert [p["metadata"]["name"] for p in c.list("PersistentVolumeClaim")] == ["data-web-0"]


def test_revisions_are_controller_revision_objects_with_template_labels():
    """Kubernetes copies the pod template labels onto a StatefulSet's ControllerRevisions."""
    c = ready_sts()
    crs = c.list("ControllerRevision")
    assert len(crs) == 1 and crs[0]["metadata"]["labels"]["app"] == "web"
    assert crs[0]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    c2 = cluster(statefulset_history="internal")
    c2.apply([sts()])
    assert c2.list("ControllerRevision") == []


@settings(max_examples=25, deadline=None)
@given(
    replicas=st.integers(1, 8),
    mu=st.one_of(st.integers(1, 4), st.sampled_from(["25%", "50%", "100%"])),
    partition=st.integers(0, 8),
    ready=st.integers(1, 5),
)
def test_property_rolling_update_never_exceeds_max_unavailable(replicas, mu, partition, ready):
    from pulumi_lws.core.k8s.scaling import scaled_value

    c = cluster(start=1, ready=ready)
    c.apply([sts(replicas=replicas)])
    run_until(c, 10)
    c.apply([sts(image="b", replicas=replicas, partition=partition, max_unavailable=mu)])
    budget = max(1, scaled_value(mu, replicas, round_up=True))
    for t in range(11, 60):
        run_until(c, t)
        s = c.get("StatefulSet", "web")["status"]
        assert replicas - s["availableReplicas"] <= budget
    assert {n for n, i in images(c).items() if i == "b"} == {
        f"web-{i}" for i in range(min(partition, replicas), replicas)
    }


def test_an_internal_revision_shares_a_template_nothing_writes_in_place() -> None:
    """Internal revisions keep the stored set's template itself (no copy): through fleet rollouts
    (a seeded warm-up, then an image change) each still equals a copy taken when it was made."""
    import copy
    import pathlib
    import sys

    from pulumi_lws.sim.driver.runner import simulate

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "bench"))
    from bench_sim import scenario

    for kind in ("LeaderWorkerSet", "ModelServing", "DisaggregatedSet"):
        seen: dict[int, tuple[object, object]] = {}

        def probe(cluster, _t, seen=seen) -> None:
            for revs in cluster.statefulsets._internal.values():
                for rev in revs:
                    seen.setdefault(id(rev.template), (rev.template, copy.deepcopy(rev.template)))

        result = simulate(scenario(12, 2, history="internal", kind=kind), "pure", probe=probe)
        assert result.trace.converged and len(seen) > 12
        assert all(template == kept for template, kept in seen.values())
