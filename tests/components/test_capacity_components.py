"""The ``check_capacity`` argument of the three components under Pulumi's mock engine (issue 24
item 5): on a cluster whose GPU nodes the old fleet fills but one, the update's preview/up holds
the stage with the ``insufficient-capacity`` blocker and registers only what the cluster shows;
without the argument the surge is registered as before; a non-boolean raises before anything
registers. The argument is written as the manifest annotation ``pulumi-lws.io/check-capacity``."""

from __future__ import annotations

import copy

import pulumi
import pytest
from conftest import validate_manifest
from support.capacity_helpers import CASES, GPU, scenario
from support.fakes_component import FakeActuator

from pulumi_lws.core.contract.errors import SpecError
from pulumi_lws.core.contract.ports import EmptyObserver
from pulumi_lws.core.features.fit import INSUFFICIENT_CAPACITY
from pulumi_lws.sim.driver.pulumi_engine import run_program
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario


def program(component: str, manifest: dict, **extra):
    def run():
        import pulumi_lws

        res = getattr(pulumi_lws, component)(
            manifest["metadata"]["name"], {"manifest": copy.deepcopy(manifest)} | extra
        )
        pulumi.export("blocker", res.blocker)

    return run


def converged_old_fleet(api: str):
    """The old fleet converged on its nodes (one node left free): the cluster and the new manifest."""
    sc = scenario(api, check=None)
    new = sc["updates"][0]["manifest"]
    sc.update(updates=[], events=[])
    result = simulate(load_scenario(sc))
    assert result.reason is None, result.reason
    return result.cluster, new


API = pytest.mark.parametrize("api", sorted(CASES))


@API
def test_check_capacity_holds_a_surge_that_does_not_fit(api) -> None:
    cluster, new = converged_old_fleet(api)
    before = {(o["kind"], o["metadata"]["name"]) for o in cluster.store.list("StatefulSet")}
    held = run_program(program(api, new, check_capacity=True), cluster, FakeActuator())
    assert held.outputs["blocker"] == f"{INSUFFICIENT_CAPACITY}: {CASES[api][3]}"
    registered = {(m["kind"], m["metadata"]["name"]) for m in held.manifests if m["kind"] == "StatefulSet"}
    assert registered == before  # no surge StatefulSet, no new revision's children
    for m in held.manifests:
        validate_manifest(m)  # what a held stage registers is valid (strict, Kubernetes 1.35)


@API
def test_without_the_argument_the_surge_is_registered(api) -> None:
    cluster, new = converged_old_fleet(api)
    plain = run_program(program(api, new), cluster, FakeActuator())
    assert not str(plain.outputs["blocker"] or "").startswith(INSUFFICIENT_CAPACITY)
    demand = sum(
        int(m["spec"]["replicas"])
        * sum(int(c["resources"]["limits"][GPU]) for c in m["spec"]["template"]["spec"]["containers"])
        for m in plain.manifests
        if m["kind"] == "StatefulSet"
    )
    assert demand > 32  # the old fleet's 32 GPUs plus the surge


@API
def test_a_non_boolean_check_capacity_raises_before_anything_registers(api) -> None:
    new = CASES[api][0]("img:2")
    with pytest.raises(SpecError, match="checkCapacity"):
        run_program(program(api, new, check_capacity="yes"), EmptyObserver(), FakeActuator())


@API
def test_the_environment_opts_every_component_in_as_rollout_check_capacity_does(api, monkeypatch) -> None:
    from pulumi_lws.core.features.control import CHECK_CAPACITY_ENV

    cluster, new = converged_old_fleet(api)
    monkeypatch.setenv(CHECK_CAPACITY_ENV, "true")
    held = run_program(program(api, new), cluster, FakeActuator())
    assert held.outputs["blocker"] == f"{INSUFFICIENT_CAPACITY}: {CASES[api][3]}"
    monkeypatch.setenv(CHECK_CAPACITY_ENV, "false")  # the choice wins over the argument, as a CLI flag
    plain = run_program(program(api, new, check_capacity=True), cluster, FakeActuator())
    assert not str(plain.outputs["blocker"] or "").startswith(INSUFFICIENT_CAPACITY)


def test_rollout_check_capacity_sets_the_environment_of_its_pulumi_ups(monkeypatch) -> None:
    import os

    from pulumi_lws.cli import build_parser
    from pulumi_lws.cli import rollout as rollout_cli
    from pulumi_lws.core.features.control import CHECK_CAPACITY_ENV

    monkeypatch.setenv(CHECK_CAPACITY_ENV, "")  # restored (removed) after the test, whatever rollout sets
    seen = []

    class Stack:
        poll = None

        def up(self):
            seen.append(os.environ.get(CHECK_CAPACITY_ENV))
            return {"web": {"stage": {"complete": True, "groups": "U", "replicas": 1}, "blocker": None, "status": {}}}

    args = build_parser().parse_args(["rollout", "--max-stages", "1", "--check-capacity"])
    rollout_cli.run(args, stack_factory=lambda stack, cwd: Stack())
    assert seen == ["true"]


@API
def test_controller_mode_refuses_check_capacity(api) -> None:
    new = CASES[api][0]("img:2")
    with pytest.raises(SpecError, match=r"checkCapacity.*operator-free"):
        run_program(program(api, new, check_capacity=True, mode="controller"), EmptyObserver(), FakeActuator())


@API
def test_the_preview_log_shows_the_blocker_and_its_remedies(api) -> None:
    cluster, new = converged_old_fleet(api)
    preview = run_program(program(api, new, check_capacity=True), cluster, FakeActuator(), preview=True)
    text = "\n".join(entry.message for entry in preview.logs)
    assert f"blocked: {CASES[api][3]}" in text
    assert f"remedy: {CASES[api][2]}" in text and "remedy: or add nodes with free nvidia.com/gpu" in text
