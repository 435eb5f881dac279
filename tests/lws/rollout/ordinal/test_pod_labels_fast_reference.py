"""``label_actions`` skipping pods that already carry every webhook label
(``carries_every_label``) equals the per-pod pass it replaced (kept below as the reference) on
random pods: any subset of the webhook labels already set, valid and malformed subgroup / size
annotations, foreign owners, odd names, deleting pods, unknown revisions, other actions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.snapshot import Snapshot, is_deleting
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.api.leaderworkerset import LeaderWorkerSet
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.lws.rollout.ordinal import pod_labels as P

NAME, NS = "lws", "default"
WEBHOOK_KEYS = [L.GROUP_INDEX, L.GROUP_KEY, L.SUBGROUP_INDEX, L.SUBGROUP_KEY, L.WORKER_INDEX]
SIZES = st.sampled_from([None, "2", "3", "2", "3", 4, "0", "abc", "-1", "²"])


def reference_label_actions(lws, snapshot: Snapshot, stage: Stage) -> tuple[Action, ...]:
    """label_actions before the fast path: every pod through ``pod_label_action``."""
    if lws.spec.group_identity == "Hash":
        return ()
    known, deleted, labelled = P._known_revisions(stage), P._deleted_pods(stage), P._labelled_keys(stage)
    out: list[Action] = []
    for pod in snapshot.list("Pod", **{L.NAME: lws.name}):
        name = str(P._meta(pod).get("name") or "")
        if is_deleting(pod) or name in deleted or revision_of(pod) not in known:
            continue
        action = P.pod_label_action(lws, pod, labelled.get(name, frozenset()))
        if action is not None:
            out.append(action)
    return tuple(out)


def make_lws() -> LeaderWorkerSet:
    return LeaderWorkerSet.from_manifest(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "replicas": 2,
                "leaderWorkerTemplate": {
                    "size": 3,
                    "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "v1"}]}},
                },
            },
        }
    )


@st.composite
def pods(draw, i: int):
    """Mostly pods as the StatefulSets run them (right name, owner, pod-index), each perturbed
    now and then; any subset of the webhook labels already set."""
    leader, group, j = draw(st.booleans()), draw(st.integers(0, 2)), draw(st.integers(1, 3))
    odd = st.integers(0, 5).map(lambda n: n == 0)  # a perturbation, one time in six
    name = f"{NAME}-{group}" if leader else f"{NAME}-{group}-{j}"
    if draw(odd):
        name = draw(st.sampled_from([f"{NAME}-x{i}", f"other-{i}", f"{NAME}-{group}-0", f"{NAME}-{group}"]))
    labels: dict = {L.NAME: NAME, L.TEMPLATE_REVISION_HASH: draw(st.sampled_from(["new", "new", "old", "unknown"]))}
    if leader:
        labels[L.WORKER_INDEX] = "0"
    for key in WEBHOOK_KEYS:
        if draw(st.booleans()):
            labels.setdefault(key, draw(st.sampled_from(["1", "v"])))
    if not draw(odd):
        labels[L.POD_INDEX] = str(group if leader else j)
    elif draw(st.booleans()):
        labels[L.POD_INDEX] = draw(st.sampled_from(["7", "x"]))
    ann: dict = {}
    for key, values in (
        (L.SUBGROUP_SIZE, SIZES),
        (L.SIZE, SIZES),
        (L.SUBGROUP_POLICY_TYPE, st.sampled_from([None, "LeaderWorker", P.LEADER_EXCLUDED])),
        (L.LEADER_NAME, st.sampled_from([None, f"{NAME}-{group}"])),
    ):
        v = draw(values)
        if v is not None:
            ann[key] = v
    owner = (NAME if leader else f"{NAME}-{group}") if not draw(odd) else draw(st.sampled_from([None, "x", NAME]))
    meta: dict = {"name": name, "namespace": NS, "uid": f"u{i}", "labels": labels, "annotations": ann}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": "StatefulSet", "name": owner, "controller": True}]
    if draw(odd):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


@st.composite
def worlds(draw):
    objs = {}
    for i in range(draw(st.integers(0, 8))):
        p = draw(pods(i))
        objs[p["metadata"]["name"]] = p
    names = sorted(objs)
    actions = []
    for n in names:
        verb = draw(st.sampled_from([None, None, "delete", "label"]))
        if verb == "delete":
            actions.append(Action("delete", "Pod", n, {}, uid=None, reason="x"))
        elif verb == "label":
            actions.append(
                Action(
                    "label",
                    "Pod",
                    n,
                    {"labels": {k: "z" for k in draw(st.sets(st.sampled_from(WEBHOOK_KEYS)))}},
                    uid=None,
                    reason="y",
                )
            )
    stage = Stage(
        policy="lws/ordinal",
        target_revision="new",
        replicas=2,
        partition=0,
        group_revisions={"0": draw(st.sampled_from(["new", "old"]))},
        actions=tuple(actions),
    )
    return Snapshot.of(list(objs.values())), stage


@settings(max_examples=500, deadline=None)
@given(worlds())
def test_skipping_fully_labelled_pods_equals_the_full_pass(world):
    snapshot, stage = world
    lws = make_lws()
    assert outcome(P.label_actions, lws, snapshot, stage) == outcome(reference_label_actions, lws, snapshot, stage)


def outcome(fn, *args):
    """The result, or the exception type (a malformed annotation such as ``"²"`` makes both raise)."""
    try:
        return fn(*args)
    except ValueError as e:
        return type(e)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6).flatmap(lambda i: pods(i)))
def test_a_pod_carrying_every_label_needs_none(pod):
    if P.carries_every_label(pod):
        wanted = P.wanted_labels(make_lws(), pod) or {}
        assert not P.missing_labels(pod, wanted)
