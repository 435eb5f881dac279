"""End-to-end Hash-mode rollouts against the simulator: the seeds' 5-stage trace (R=2, MU 1, MS 1,
PostTermination), its Immediate variant, and scale-down preferring not-ready groups.

Drives ``SimCluster`` + ``PureEngine`` (observe -> reconcile -> apply -> execute) directly, one
reconcile every ``INTERVAL`` simulated seconds, and reads group states from the cluster itself.
"""

from __future__ import annotations

import copy

from conftest import REPO_ROOT

from pulumi_lws.core.contract.snapshot import is_deleting, labels_of, pod_running_and_ready, statefulset_ready
from pulumi_lws.lws import labels as L
from pulumi_lws.lws.observe import revision_of
from pulumi_lws.sim.cluster.kubelet import KubeletConfig, Override, Timing
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.engines import PureEngine

NS, NAME, INTERVAL = "default", "web", 5


def manifest(image: str, *, policy: str = "PostTermination", replicas: int = 2, grace: int = 8) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "groupIdentity": "Hash",
            "groupReplacementPolicy": policy,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}},
            "leaderWorkerTemplate": {
                "size": 3,
                "workerTemplate": {
                    "spec": {"terminationGracePeriodSeconds": grace, "containers": [{"name": "c", "image": image}]}
                },
            },
        },
    }


class Driver:
    """One reconcile every INTERVAL seconds, one observation per second."""

    def __init__(self, kubelet: KubeletConfig) -> None:
        self.cluster = SimCluster(seed=1, kubelet=kubelet)
        self.engine = PureEngine(NS)
        self.t = 0
        self.stages = []

    def run(self, desired: dict, seconds: int, on_tick=None) -> None:
        for _ in range(seconds):
            self.cluster.step(self.t)
            if self.t % INTERVAL == 0:
                self.stages.append(self.engine.step(self.cluster, copy.deepcopy(desired)).stage)
            if on_tick:
                on_tick(self)
            self.t += 1

    def converge(self, desired: dict, limit: int = 120) -> None:
        for _ in range(limit // INTERVAL):
            self.run(desired, INTERVAL)
            if self.stages[-1].complete:
                return
        raise AssertionError(f"did not converge: {self.stages[-1].summary()}")

    def pods(self) -> list[dict]:
        return self.cluster.list("Pod", NS, {"matchLabels": {L.NAME: NAME}})


def group_states(driver: Driver, old: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(old-revision states, new-revision states), each sorted; a state is ready (leader Ready and
    its worker StatefulSet ready, not deleting) | pending | gated | terminating. Groups whose leader is gone but whose workers linger are terminating."""
    pods = driver.pods()
    leaders = [p for p in pods if labels_of(p).get(L.WORKER_INDEX) == "0"]
    led = {labels_of(p).get(L.GROUP_KEY) for p in leaders}
    out: dict[bool, list[str]] = {True: [], False: []}
    for p in leaders:
        if is_deleting(p):
            state = "terminating"
        elif (p.get("spec") or {}).get("schedulingGates"):
            state = "gated"
        else:
            sts = driver.cluster.get("StatefulSet", f"{NAME}-{labels_of(p).get(L.GROUP_KEY, '')[:8]}", NS)
            state = "ready" if pod_running_and_ready(p) and statefulset_ready(sts) else "pending"
        out[revision_of(p) == old].append(state)
    orphans = {
        labels_of(p).get(L.GROUP_INDEX): revision_of(p)
        for p in pods
        if labels_of(p).get(L.WORKER_INDEX) != "0" and labels_of(p).get(L.GROUP_INDEX) not in led
    }
    for rev in orphans.values():
        out[rev == old].append("terminating")
    return tuple(sorted(out[True])), tuple(sorted(out[False]))


def holding_capacity(driver: Driver) -> int:
    """Groups with at least one scheduled pod (a gated leader holds nothing)."""
    groups = set()
    for p in driver.pods():
        if (p.get("spec") or {}).get("nodeName"):
            groups.add(labels_of(p).get(L.GROUP_INDEX) or p["metadata"]["name"])
    return len(groups)


def compress(rows: list) -> list:
    out = []
    for r in rows:
        if not out or out[-1] != r:
            out.append(r)
    return out


def is_subsequence(needles: list, haystack: list) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


SEEDS_TRACE = [
    (("ready", "ready"), ()),  # 1 steady state on rev1
    (("ready", "terminating"), ("gated", "pending")),  # 2 G-bbb tearing down, G-ccc ungated, G-ddd gated
    (("ready",), ("pending", "pending")),  # 3 G-bbb gone, G-ddd ungated
    (("terminating",), ("pending", "ready")),  # 4 G-ccc ready, G-aaa tearing down
    ((), ("ready", "ready")),  # 5 complete on rev2
]


def _rollout(policy: str):
    kubelet = KubeletConfig(default=Timing(start=1, ready=15), termination_grace=8)
    d = Driver(kubelet)
    v1, v2 = manifest("v1", policy=policy), manifest("v2", policy=policy)
    d.converge(v1)
    old = d.stages[-1].target_revision
    rows, holding = [group_states(d, old)], []
    blockers = []

    def record(drv: Driver) -> None:
        rows.append(group_states(drv, old))
        holding.append(holding_capacity(drv))

    start = len(d.stages)
    d.run(v2, 60, record)
    blockers = [s.blocker.message for s in d.stages[start:] if s.blocker and s.blocker.code != "waiting-for-groups"]
    return d, compress(rows), holding, blockers


def test_seeds_hash_trace_post_termination():
    d, rows, holding, blockers = _rollout("PostTermination")
    assert is_subsequence(SEEDS_TRACE, rows), rows
    assert d.stages[-1].complete and d.stages[-1].policy == "lws/hash"
    assert max(holding) <= 3  # replicas + maxSurge: the replacement never schedules beside its predecessor
    assert any(m.startswith("waiting for 1 terminating group to be removed before admitting G-") for m in blockers)
    # a new-revision leader is never admitted while its predecessor still holds pods
    assert (("ready", "terminating"), ("pending", "pending")) not in rows


def test_seeds_hash_trace_immediate_variant():
    d, rows, holding, blockers = _rollout("Immediate")
    assert (("ready", "terminating"), ("pending", "pending")) in rows  # G-ddd ungated at once
    assert rows[-1] == ((), ("ready", "ready")) and d.stages[-1].complete
    assert max(holding) == 4 and not blockers  # plain waiting-for-groups only, never deferred


def test_scale_down_removes_not_ready_group_first():
    d = Driver(KubeletConfig(default=Timing(start=1, ready=2), termination_grace=2))
    d.converge(manifest("v1", replicas=3))
    leaders = [p for p in d.pods() if labels_of(p).get(L.WORKER_INDEX) == "0"]
    assert len(leaders) == 3
    victim = leaders[1]
    key = labels_of(victim)[L.GROUP_KEY]
    d.cluster.kubelet.config.overrides.append(Override(after=d.cluster.clock.now - 0.5, never_ready=True))
    d.cluster.crash_pod(NS, f"{NAME}-{key[:8]}-1")
    d.run(manifest("v1", replicas=3), INTERVAL)  # one reconcile: group-ready=False on the victim
    assert not pod_running_and_ready(d.cluster.get("Pod", victim["metadata"]["name"], NS))
    d.run(manifest("v1", replicas=2), 30)
    names = {p["metadata"]["name"] for p in d.pods() if labels_of(p).get(L.WORKER_INDEX) == "0"}
    assert names == {p["metadata"]["name"] for p in leaders} - {victim["metadata"]["name"]}
    assert all(labels_of(p).get(L.GROUP_KEY) != key for p in d.pods())


# ---- runner level: examples/hash/scenario*.yaml (the example program under the pulumi engine) ----

EXAMPLES = REPO_ROOT / "examples" / "hash"
WORDS = {"U": "ready", "o": "ready", "u": "pending", "x": "pending"}
# The seeds' five stages with the one row pulumi-lws adds: leaders the Deployment creates are
# admitted by the next `pulumi up` (no webhook), so right after the update both are still gated.
ADMISSION_LATENCY = (("ready", "terminating"), ("gated", "gated"))
RUNNER_TRACE = [SEEDS_TRACE[0], ADMISSION_LATENCY, *SEEDS_TRACE[1:]]


def seeds_view(result) -> list:
    """Rows as (old-revision group states, new-revision group states), each sorted."""
    old = result.trace.rows[0].revision
    out = []
    for row in result.trace.rows:
        sides: dict[bool, list[str]] = {True: [], False: []}
        for g in row.groups:
            word = {"gated": "gated", "terminating": "terminating"}.get(g.detail, WORDS[g.state])
            sides[g.revision == old].append(word)
        out.append((tuple(sorted(sides[True])), tuple(sorted(sides[False]))))
    return out


def test_runner_hash_post_termination_matches_the_seeds_stages(capsys):
    from pulumi_lws.cli import main
    from pulumi_lws.sim.driver.runner import simulate
    from pulumi_lws.sim.driver.scenario import load_scenario

    result = simulate(load_scenario(EXAMPLES / "scenario.yaml"))
    assert result.reason is None and result.engine == "pulumi" and not result.trace.violations
    assert seeds_view(result) == RUNNER_TRACE
    rows = result.trace.rows
    assert rows[2].blocker_code == "group-replacement-deferred" and "admitted (ungated)" in rows[2].note
    assert rows[-1].note.endswith("rolling update complete")
    assert all(len(g.id) == 40 for r in rows for g in r.groups)  # group keys, never pod names
    assert main(["simulate", str(EXAMPLES / "scenario.yaml")]) == 0
    table = capsys.readouterr().out
    assert "G-" in table and "🔒" in table and "🗑️" in table and "Partition" not in table


def test_runner_hash_immediate_ungates_the_replacement_at_once():
    from pulumi_lws.sim.driver.runner import simulate
    from pulumi_lws.sim.driver.scenario import load_scenario

    result = simulate(load_scenario(EXAMPLES / "scenario-immediate.yaml"))
    view = seeds_view(result)
    assert result.reason is None and view[:3] == [
        SEEDS_TRACE[0],
        ADMISSION_LATENCY,
        (("ready", "terminating"), ("pending", "pending")),
    ]
    assert view[-1] == ((), ("ready", "ready"))
    assert not any(r.blocker_code == "group-replacement-deferred" for r in result.trace.rows)
