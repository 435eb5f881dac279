"""A row's demand from remembered pod specs equals ``manifest_demand`` of the row's pods: same
amounts, same Decimal forms, same key order — for any pods (hypothesis) and at every row of every
example scenario."""

from __future__ import annotations

import copy
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pulumi_lws.core.features.capacity import manifest_demand
from pulumi_lws.sim.driver import pod_demand as pod_demand_mod
from pulumi_lws.sim.driver import runner as runner_mod
from pulumi_lws.sim.driver.pod_demand import PodDemand
from pulumi_lws.sim.driver.runner import simulate
from pulumi_lws.sim.driver.scenario import load_scenario

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/scenario*.yaml"))

_QUANTITY = st.sampled_from(["1", "0.5", "500m", "1.0", "2Gi", "1G", "0", "100Mi", "3"])
_RESOURCES = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "x/y"]), _QUANTITY, max_size=3)
_CONTAINER = st.fixed_dictionaries(
    {}, optional={"resources": st.fixed_dictionaries({}, optional={"requests": _RESOURCES, "limits": _RESOURCES})}
)
_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.lists(_CONTAINER, max_size=3),
        "initContainers": st.lists(_CONTAINER, max_size=2),
        "overhead": _RESOURCES,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SPEC, min_size=1, max_size=4), st.lists(st.lists(st.integers(0, 5), max_size=8), max_size=4))
def test_remembered_specs_give_manifest_demand(specs: list[dict], rows: list[list[int]]) -> None:
    """Rows of pods sharing spec objects (as observed copies do), or carrying none."""
    memo = PodDemand()
    for row in rows:
        pods = [{"kind": "Pod", "spec": specs[i % len(specs)]} if i < 5 else {"kind": "Pod"} for i in row]
        assert repr(memo.of(pods)) == repr(manifest_demand(pods))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specs=st.lists(_SPEC, min_size=1, max_size=4),
    rows=st.lists(st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=8), max_size=4),
    limit=st.integers(1, 3),
)
def test_pods_of_equal_requests_summed_together_give_manifest_demand(
    specs: list[dict], rows: list[list[tuple[int, bool]]], limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pods with their own spec dicts (a fleet's) whose requests are equal, in equal or other
    forms, and a bound on the demands remembered small enough to be crossed."""
    monkeypatch.setattr(pod_demand_mod, "DEMANDS", limit)
    memo = PodDemand()
    for row in rows:
        pods = [
            {"kind": "Pod", "spec": copy.deepcopy(specs[i % len(specs)]) if own else specs[i % len(specs)]}
            if i < 5
            else {"kind": "Pod"}
            for i, own in row
        ]
        assert repr(memo.of(pods)) == repr(manifest_demand(pods))


class _Checked(PodDemand):
    calls = 0

    def of(self, pods):
        _Checked.calls += 1
        got = super().of(pods)
        assert repr(got) == repr(manifest_demand(pods))
        return got


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_rows_demand_is_manifest_demand(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_mod, "PodDemand", _Checked)
    _Checked.calls = 0
    simulate(load_scenario(ROOT / "examples" / name), "pure")
    assert _Checked.calls > 0
