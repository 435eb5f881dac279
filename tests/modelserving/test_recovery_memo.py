"""modelserving/recovery_memo.py: under the simulator's promise (``Snapshot.reuse``) every recovery
plan equals the one made from the same objects without it — on every reconcile of the example
scenarios, of recovery scenarios for each policy and fault (hypothesis: policy, fault, pod, grace
period, slow pods) — and the memo is reused, per ModelServing and bounded."""

from __future__ import annotations

import dataclasses
import pathlib
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pulumi_lws.core.contract.reuse import Reuse
from pulumi_lws.modelserving import reconcile, recovery, recovery_memo
from pulumi_lws.modelserving.replicas import observed_replicas
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*modelserving*/scenario*.yaml")
)
sys.path.insert(0, str(ROOT / "tests" / "modelserving" / "recovery"))
from test_ms_recovery_sim import scenario as recovery_scenario  # noqa: E402  (one scenario per policy and fault)


class _Counts:
    def __init__(self) -> None:
        self.calls = self.hits = 0


def _checking(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    """Every reconcile's plan_recovery compared with the plan made without the promise."""
    counts = _Counts()
    original = recovery.plan_recovery

    def checked(ms, snapshot, groups, observed=None):
        got = original(ms, snapshot, groups, observed)
        bare = dataclasses.replace(snapshot, reuse=None)
        assert got == original(ms, bare, groups, observed_replicas(ms.name, bare))
        counts.calls += snapshot.reuse is not None
        return got

    original_needs = recovery_memo.LookMemo.needs

    def counted(self, key, pods, compute):
        calls = []
        answer = original_needs(self, key, pods, lambda p, policy: calls.append(1) or compute(p, policy))
        counts.hits += not calls
        return answer

    monkeypatch.setattr(reconcile, "plan_recovery", checked)
    monkeypatch.setattr(recovery_memo.LookMemo, "needs", counted)
    return counts


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_recovery_plan_of_an_example_equals_one_without_the_memo(name: str, monkeypatch) -> None:
    counts = _checking(monkeypatch)
    simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert counts.calls > 1 and counts.hits > 0


FAULTS = ("container-restart", "pod-crash")
PODS = ("pd-1-prefill-0-w-1", "pd-1-prefill-0-0", "pd-0-decode-0-w-1")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=st.sampled_from(("RoleRecreate", "ServingGroupRecreate", "None")),
    fault=st.sampled_from(FAULTS),
    pod=st.sampled_from(PODS),
    grace=st.sampled_from((0, 12)),
    slow=st.booleans(),
)
def test_any_recovery_plans_as_without_the_memo(policy: str, fault: str, pod: str, grace: int, slow: bool) -> None:
    sc = recovery_scenario(policy, {"type": fault, "pod": pod}, grace=grace, slow=pod if slow else None)
    sc["stop"] = {"maxTime": 150}
    with pytest.MonkeyPatch.context() as monkeypatch:  # one example's patches, undone before the next
        counts = _checking(monkeypatch)
        simulate(load_scenario(sc))
    assert counts.calls > 1 and counts.hits > 0


def test_answers_are_reused_only_for_the_same_pods_and_policy_and_memory_is_bounded(monkeypatch) -> None:
    reuse = Reuse()
    memo = reuse.memo(recovery_memo.OWNER)
    pods = [{"metadata": {"name": "p"}}]
    computed = []

    def compute(p, policy):
        computed.append(policy)
        return policy == "RoleRecreate"

    look = recovery_memo.LookMemo(memo, ("default", "ms"), "RoleRecreate")
    assert look.needs(("k",), pods, compute) is True
    look.close()
    look = recovery_memo.LookMemo(memo, ("default", "ms"), "RoleRecreate")
    assert look.needs(("k",), list(pods), compute) is True  # the same pod objects: reused
    assert look.needs(("j",), pods, compute) is True  # another replica: computed
    look.close()
    look = recovery_memo.LookMemo(memo, ("default", "ms"), "None")  # another policy: computed again
    assert look.needs(("k",), pods, compute) is False
    assert look.needs(("j",), [dict(pods[0])], compute) is False  # an equal copy is not the same pod
    look.close()
    assert computed == ["RoleRecreate", "RoleRecreate", "None", "None"]
    monkeypatch.setattr(recovery_memo, "LIMIT", 2)
    for n in range(5):
        recovery_memo.LookMemo(memo, ("default", f"ms{n}"), "None").close()
    assert len(memo) == 2
