"""The one reconcile cycle (pulumi_lws/core/contract/driver.py): observe once -> reconcile -> apply -> act,
generic over the Workload contract, the same for every registered API."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import REPO_ROOT

from pulumi_lws.core.contract.driver import cycle
from pulumi_lws.core.contract.ports import Scope
from pulumi_lws.core.contract.snapshot import EMPTY, Snapshot
from pulumi_lws.core.contract.stage import Action, Stage
from pulumi_lws.core.contract.workload import Reconciled
from pulumi_lws.workloads import registered, workload_for

ACTION = Action("delete", "Pod", "p-0")
#: one valid manifest per built-in API (the examples' own)
EXAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}


class Toy:
    """A minimal workload: its stage has ``actions``; ``fail`` raises in reconcile."""

    kind = "Toy"

    def __init__(self, actions: tuple[Action, ...] = (), fail: bool = False) -> None:
        self.actions, self.fail = actions, fail
        self.seen: list[Any] = []

    def scope(self, spec: Any, *, nodes: bool | None = None) -> Scope:
        return Scope("ns", {"toy": spec}, ("Pod",), bool(nodes))

    def identity(self, spec: Any) -> tuple[str, str]:
        return "ns", spec

    def reconcile(self, spec: Any, snapshot: Snapshot, options: Any = None) -> Reconciled:
        if self.fail:
            raise ValueError("bad spec")
        self.seen.append((snapshot, options))
        stage = Stage(
            policy="toy", target_revision="r", replicas=1, partition=0, group_revisions={}, actions=self.actions
        )
        return Reconciled(stage, ({"kind": "Pod", "metadata": {"name": "p-0"}},))


class Recorder:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def observe(self, scope: Scope) -> Snapshot:
        self.calls.append(("observe", scope))
        return EMPTY

    def execute(self, namespace: str, actions: Any) -> list[str]:
        self.calls.append(("execute", namespace, list(actions)))
        return [f"ran {a.describe()}" for a in actions]


def test_one_observation_feeds_the_reconcile_and_the_result():
    toy, ports = Toy((ACTION,)), Recorder()
    applied: list[Any] = []
    done = cycle(
        toy,
        "a",
        {"o": 1},
        ports,
        ports,
        nodes=True,
        apply=lambda c: applied.append(("apply", c.snapshot, c.reconciled.manifests)) or "applied",
    )
    assert [c[0] for c in ports.calls] == ["observe", "execute"]  # read once, acted once, in order
    assert ports.calls[0][1] == toy.scope("a", nodes=True)
    assert toy.seen == [(done.snapshot, {"o": 1})]  # the reconcile saw exactly the snapshot returned
    assert applied == [("apply", done.snapshot, done.reconciled.manifests)]
    assert done.applied == "applied" and done.namespace == "ns"
    assert done.executed == (f"ran {ACTION.describe()}",) and done.stage is done.reconciled.stage


def test_without_an_actuator_nothing_runs_and_an_empty_stage_makes_no_call():
    ports = Recorder()
    assert cycle(Toy((ACTION,)), "a", None, ports).executed == ()
    assert cycle(Toy(()), "a", None, ports, ports).executed == ()
    assert [c[0] for c in ports.calls] == ["observe", "observe"]


def test_act_decides_per_stage_even_without_actions():
    seen: list[Any] = []
    done = cycle(Toy(()), "a", None, Recorder(), act=lambda ns, stage: seen.append((ns, stage)) or ["listed"])
    assert seen == [("ns", done.stage)] and done.executed == ("listed",)


def test_a_failing_reconcile_declares_nothing_and_a_failing_apply_runs_no_action():
    ports = Recorder()
    with pytest.raises(ValueError):
        cycle(Toy(fail=True), "a", None, ports, ports, apply=lambda c: pytest.fail("applied after a failed reconcile"))

    def broken(_c: Any) -> None:
        raise RuntimeError("apply failed")

    with pytest.raises(RuntimeError):
        cycle(Toy((ACTION,)), "a", None, ports, ports, apply=broken)
    assert [c[0] for c in ports.calls] == ["observe", "observe"]


def test_every_registered_api_has_an_example_here():
    assert set(EXAMPLES) == set(registered())


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_every_registered_api_runs_the_same_cycle(kind):
    workload = workload_for(kind)
    spec = workload.parse(yaml.safe_load((REPO_ROOT / "examples" / EXAMPLES[kind]).read_text()))
    done = cycle(workload, spec, workload.options(), Recorder())
    direct = workload.reconcile(spec, EMPTY, workload.options())
    assert done.reconciled.manifests == direct.manifests and done.stage.summary() == direct.stage.summary()
    assert (done.namespace, done.scope) == (workload.identity(spec)[0], workload.scope(spec))
