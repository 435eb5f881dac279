"""A changed secret input never reaches a child in plain text, in every API.

Groups of the older revision are rendered from the ControllerRevision the cluster recorded, so
after a secret env value changes they carry the *previous* value, which no input names. The
component treats as secret every value at a position where a current secret sits
(``ResolvedInputs.learn_secret_positions``): the old StatefulSets/pods' templates and the old
ControllerRevision are registered with it wrapped as a secret, and no log line or output shows it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
import yaml
from conftest import REPO_ROOT
from outputs_stack import recorded_logs

from pulumi_lws.components.inputs import ResolvedInputs
from pulumi_lws.sim.cluster.simcluster import SimCluster
from pulumi_lws.sim.driver.pulumi_engine import _SECRET_SIG, run_program

EXAMPLES = {
    "LeaderWorkerSet": "quickstart/lws.yaml",
    "ModelServing": "modelserving-pd/ms.yaml",
    "DisaggregatedSet": "disaggregated-pd/ds.yaml",
}
OLD, NEW = "hf_old_T0ken_value", "hf_new_T0ken_value"


def with_token(doc: Any, token: Any) -> Any:
    """``doc`` with ``HF_TOKEN=token`` on every container of every pod template."""
    if isinstance(doc, dict):
        out = {k: with_token(v, token) for k, v in doc.items()}
        if isinstance(out.get("containers"), list):
            out["containers"] = [
                {**c, "env": [*(c.get("env") or []), {"name": "HF_TOKEN", "value": token}]} for c in out["containers"]
            ]
        return out
    if isinstance(doc, list):
        return [with_token(v, token) for v in doc]
    return doc


def plain_part(value: Any) -> Any:
    """``value`` with every secret-wrapped subtree dropped (what a state file would hold in clear)."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]:
            return None
        return {k: plain_part(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_part(v) for v in value]
    return value


def component(kind: str, doc: Any, token: Any):
    """The program: ``kind``'s component of ``doc`` with ``token()`` as HF_TOKEN (Outputs are made
    inside the program, on the engine's loop)."""
    from pulumi_lws.components.base import registered_components
    from pulumi_lws.provider.schema import components

    components()

    def run() -> None:
        c = registered_components()[kind]("w", {"manifest": with_token(copy.deepcopy(doc), token())})
        for key in ("stage", "status", "blocker", "actions"):
            pulumi.export(key, getattr(c, key))

    return run


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
@pytest.mark.parametrize("preview", [False, True])
def test_the_previous_secret_of_old_groups_is_registered_secret(kind, preview) -> None:
    doc = yaml.safe_load((REPO_ROOT / "examples" / EXAMPLES[kind]).read_text())
    cluster = SimCluster()
    cluster.kubelet.config.instant = True
    for _ in range(30):  # converge on the old token (a plain value then)
        result = run_program(component(kind, doc, lambda: OLD), cluster, cluster)
        cluster.apply(result.manifests, stack_id="s", dependencies=result.dependencies)
        cluster.settle()
        cluster.step(cluster.clock.now + 1.0)
        if result.outputs["stage"]["complete"] and not result.outputs["actions"]:
            break
    with recorded_logs() as logs:
        result = run_program(component(kind, doc, lambda: pulumi.Output.secret(NEW)), cluster, cluster, preview=preview)
    assert result.outputs["stage"]["complete"] is False  # a rollout is under way: old groups are registered
    children = [r for r in result.registrations.values() if r.custom]
    assert any(OLD in json.dumps(r.inputs) for r in children)  # the old groups' objects are there ...
    for r in children:  # ... with the old token (and the new) only inside secrets
        clear = json.dumps(plain_part(r.inputs))
        assert OLD not in clear and NEW not in clear, f"{r.type} {r.name} holds a token in plain text"
    published = json.dumps(result.outputs, default=str) + "\n".join(logs)
    assert OLD not in published and NEW not in published


def test_positions_are_keyed_by_kind_and_by_list_item_name() -> None:
    inputs = ResolvedInputs(args=None, secrets=["current-secret"])
    new = {
        "kind": "StatefulSet",
        "spec": {"env": [{"name": "A", "value": "a"}, {"name": "T", "value": "current-secret"}]},
    }
    old = {
        "kind": "StatefulSet",
        "spec": {"env": [{"name": "T", "value": "previous-secret"}, {"name": "A", "value": "a"}]},
    }
    other = {"kind": "ConfigMap", "spec": {"env": [{"name": "T", "value": "not-a-secret"}]}}
    inputs.learn_secret_positions([new, old, other])
    assert inputs.secrets == ["current-secret", "previous-secret"]  # moved within its list, still found
    assert inputs.redact("token previous-secret") == "token [secret]"
    nothing = ResolvedInputs(args=None)
    nothing.learn_secret_positions([new, old])
    assert nothing.secrets == []
