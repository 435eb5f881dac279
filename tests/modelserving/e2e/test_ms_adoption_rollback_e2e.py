"""``pulumi-lws rollback`` of an adopted ModelServing, in the simulator (docs/rollout-control.md,
docs/modes.md "Adoption: ModelServing").

A fleet the Kthena controller created keeps upstream's revision key (its ControllerRevision, Go
serialisation: ``creationTimestamp: null`` in the pod templates), which
:func:`~pulumi_lws.modelserving.revision.modelserving_revision` cannot reproduce; the reconcile
converges to it (the catalog's content-matched target), so rollback must start from it too
(``ModelServingWorkload.observed_target_revision``). Proven on ``test_ms_kthena_adoption``'s
fleet (bare pods, no StatefulSet), for both strategies: right after adoption nothing is recorded
but the target (exit 1, not a "rollback" to itself); mid-rollout to a new image the previous
revision is upstream's and the printed change is exactly the image lines (the manifest comes back
to what was adopted: no null, no default written back); applying it converges back on upstream's
key with the adopted pods that never left it untouched.
"""

from __future__ import annotations

import pytest
import test_ms_kthena_adoption
import yaml
from support.adoption_helpers import with_null_timestamps
from support.ms_helpers import ROLE, SG, with_image
from test_ms_kthena_adoption import adopt, kthena_fleet, manifest, orphan_delete, pods

from pulumi_lws.backend import use_backend
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.modelserving.workload import WORKLOAD as MS
from pulumi_lws.sim.cluster.store import meta


def go_serialised(template):
    """A pod template as Go's json.Marshal writes it: ``creationTimestamp: null`` and, per container,
    the non-pointer structs omitempty cannot drop (``resources: {}``)."""
    out = with_null_timestamps(template)
    for c in (out.get("spec") or {}).get("containers") or []:
        c.setdefault("resources", {})
    return out


@pytest.fixture(autouse=True)
def _kthena_serialisation(monkeypatch):
    monkeypatch.setattr(test_ms_kthena_adoption, "with_null_timestamps", go_serialised)


def adopted(strategy: str):
    h, _, key = kthena_fleet(manifest(strategy))
    orphan_delete(h)
    adopt(h, runs=2)
    assert h.last.stage.target_revision == key != modelserving_revision(h.spec)
    stored = h.cluster.store.get("ControllerRevision", "default", f"ms-{key}")["data"]["data"][0]["entryTemplate"]
    assert stored["metadata"]["creationTimestamp"] is None and stored["spec"]["containers"][0]["resources"] == {}
    return h, key


def rollback(h, tmp_path, capsys, *, apply: bool = False) -> tuple[int, str, str]:
    path = tmp_path / "ms.yaml"
    path.write_text(yaml.safe_dump(h.desired, sort_keys=False))
    with use_backend(h.cluster, h.cluster):
        code = main(["rollback", str(path), *(["--apply"] if apply else [])])
    out = capsys.readouterr()
    if apply and code == X.OK:
        h.change_spec(yaml.safe_load(path.read_text()))
    return code, out.out, out.err


def images(h) -> set[str]:
    return {c["image"] for p in h.cluster.list("Pod", "default") for c in p["spec"]["containers"]}


@pytest.mark.parametrize("strategy", [SG, ROLE])
def test_right_after_adoption_there_is_nothing_to_roll_back_to(strategy, tmp_path, capsys):
    h, key = adopted(strategy)
    assert MS.observed_target_revision(h.spec, h.snapshot()) == key  # the reconcile's target, upstream's key
    code, out, err = rollback(h, tmp_path, capsys)
    assert code == X.NOT_CONVERGED and out == ""
    assert "nothing to roll back to" in err and f"target {key}" in err, err


@pytest.mark.parametrize("strategy", [SG, ROLE])
def test_adopt_roll_then_roll_back_to_upstreams_revision(strategy, tmp_path, capsys):
    h, key = adopted(strategy)
    original = manifest(strategy)
    h.change_spec(with_image(original, "img:2"))
    new_key = modelserving_revision(h.spec)
    for _ in range(3):  # mid-rollout: groups on both revisions
        h.up()
        h.advance(1)
    assert {meta(p)["labels"]["modelserving.volcano.sh/revision"] for p in h.cluster.list("Pod", "default")} == {
        key,
        new_key,
    }

    code, out, _ = rollback(h, tmp_path, capsys, apply=True)
    assert code == X.OK, out
    assert f"roll back from revision {new_key} to {key}" in out
    changes = sorted(line for line in out.splitlines() if line.startswith("# change "))
    roles = manifest(strategy)["spec"]["template"]["roles"]
    expected = sorted(
        f'# change spec.template.roles[{i}].{t}.spec.containers[0].image: "img:2" -> "img:1"'
        for i, r in enumerate(roles)
        for t in ("entryTemplate", "workerTemplate")
        if r.get(t)
    )
    assert changes == expected, out
    assert h.desired == original  # exactly what was adopted: no creationTimestamp: null, resources: {} or default

    kept = {n: v for n, v in pods(h).items() if v[1]["modelserving.volcano.sh/revision"] == key}
    for _ in range(200):
        result, _, _ = h.up()
        h.check()
        if (
            result.stage.complete
            and result.stage.blocker is None
            and all(
                meta(p)["labels"]["modelserving.volcano.sh/revision"] == key for p in h.cluster.list("Pod", "default")
            )
        ):
            break
        h.advance(1)
    assert result.stage.target_revision == key  # back on upstream's key, not modelserving_revision's
    assert images(h) == {"img:1"}
    after = pods(h)
    assert (
        kept and {n: after.get(n) for n in kept} == kept
    )  # adopted pods that never left it: same uid, labels, restarts
    assert not h.bounds.violations


def test_rolling_back_the_rollback_goes_forward_again(tmp_path, capsys):
    h, key = adopted(SG)
    h.change_spec(with_image(manifest(SG), "img:2"))
    new_key = modelserving_revision(h.spec)
    for _ in range(3):
        h.up()
        h.advance(1)
    assert rollback(h, tmp_path, capsys, apply=True)[0] == X.OK
    h.up()  # rolling back: upstream's revision is the target again, the new one still recorded
    code, out, _ = rollback(h, tmp_path, capsys)
    assert code == X.OK and f"roll back from revision {key} to {new_key}" in out, out
    changes = [line for line in out.splitlines() if line.startswith("# change ")]
    assert changes and all(line.endswith('"img:1" -> "img:2"') for line in changes), out
