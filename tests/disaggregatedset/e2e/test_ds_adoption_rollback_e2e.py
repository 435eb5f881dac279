"""``pulumi-lws rollback`` of an adopted DisaggregatedSet, in the simulator (docs/rollout-control.md,
docs/modes.md "Adoption").

An adopted fleet's revision is upstream's ``rev8``, which :func:`compute_revision` cannot
reproduce, so the target of rollback is the one the reconcile converges to — the observed
revision whose children match the spec (:func:`pulumi_lws.disaggregatedset.adoption.target_revision`)
— and the current revision's templates are read from its children as recorded. Proven here on
the upstream-built fleet of ``test_ds_adoption_e2e``: right after adoption nothing is recorded
but the target (exit 1, not a "rollback" to itself); mid-rollout to a new image the previous
revision is upstream's and the printed change is exactly the image (the manifest comes back to
what was adopted); applying it rolls back to upstream's revision with its pods' templates, zero
restarts of the adopted pods that never left it, and a rollback of that rollback goes forward again.
"""

from __future__ import annotations

import yaml
from support.adoption_helpers import ADOPTING_STACK
from support.ds_adoption_helpers import ds_pods, manifest, upstream_ds_fleet

from pulumi_lws.backend import use_backend
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.disaggregatedset.workload import WORKLOAD as DS


def adopted():
    f = upstream_ds_fleet()
    f.orphan_delete()
    for _ in range(2):
        result, _, _ = f.up(ADOPTING_STACK)
        f.cluster.step(f.cluster.clock.now + 5)
    assert result.stage.complete and result.stage.target_revision == f.upstream_key
    return f


def rollback(f, tmp_path, capsys, *, apply: bool = False) -> tuple[int, str, str]:
    path = tmp_path / "ds.yaml"
    path.write_text(yaml.safe_dump(f.manifest, sort_keys=False))
    with use_backend(f.cluster, f.cluster):
        code = main(["rollback", str(path), *(["--apply"] if apply else [])])
    out = capsys.readouterr()
    if apply and code == X.OK:
        f.manifest = yaml.safe_load(path.read_text())
    return code, out.out, out.err


def roll(f, rounds: int) -> None:
    for _ in range(rounds):
        f.up(ADOPTING_STACK)
        f.cluster.step(f.cluster.clock.now + 1.0)


def test_right_after_adoption_there_is_nothing_to_roll_back_to(tmp_path, capsys):
    f = adopted()
    assert DS.observed_target_revision(f.spec, f.cluster.observe(DS.scope(f.spec))) == f.upstream_key
    code, out, err = rollback(f, tmp_path, capsys)
    assert code == X.NOT_CONVERGED and out == ""
    assert "nothing to roll back to" in err and f"target {f.upstream_key}" in err


def test_adopt_roll_then_roll_back_to_upstreams_revision(tmp_path, capsys):
    f = adopted()
    original = manifest()
    f.manifest = manifest(image="img:2")
    new_key = compute_revision(f.spec)
    roll(f, 4)  # mid-rollout: both revisions' children exist
    code, out, _ = rollback(f, tmp_path, capsys, apply=True)
    assert code == X.OK, out
    assert f"roll back from revision {new_key} to {f.upstream_key}" in out
    changes = [line for line in out.splitlines() if line.startswith("# change ")]
    assert changes == [
        f"# change spec.roles[{i}].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image: "
        '"img:2" -> "img:1"'
        for i in range(2)
    ], out
    assert f.manifest == original  # exactly what was adopted: no DS label, env or default written back

    before = {k: v for k, v in ds_pods(f).items() if f"-{f.upstream_key}-" in k}
    for _ in range(200):
        result, _, _ = f.up(ADOPTING_STACK)
        if result.stage.complete and result.stage.blocker is None and not any(f"-{new_key}-" in k for k in ds_pods(f)):
            break
        f.cluster.step(f.cluster.clock.now + 1.0)
    assert result.stage.target_revision == f.upstream_key  # back on upstream's key, not compute_revision's
    pods = ds_pods(f)
    assert pods and all(f"-{f.upstream_key}-" in k for k in pods)
    assert {k: v for k, v in pods.items() if k in before} == before  # pods that never left it: no restart
    assert {c["image"] for p in f.cluster.list("Pod", "default") for c in p["spec"]["containers"]} == {"img:1"}
    code, _, err = rollback(f, tmp_path, capsys)  # the new revision's children were drained: nothing recorded
    assert code == X.NOT_CONVERGED and f"target {f.upstream_key}" in err


def test_rolling_back_the_rollback_goes_forward_again(tmp_path, capsys):
    f = adopted()
    f.manifest = manifest(image="img:2")
    new_key = compute_revision(f.spec)
    roll(f, 4)
    assert rollback(f, tmp_path, capsys, apply=True)[0] == X.OK
    roll(f, 2)  # rolling back: upstream's revision is the target again, the new one still recorded
    code, out, _ = rollback(f, tmp_path, capsys)
    assert code == X.OK and f"roll back from revision {f.upstream_key} to {new_key}" in out
    changes = [line for line in out.splitlines() if line.startswith("# change ")]
    assert changes == [
        f"# change spec.roles[{i}].spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image: "
        '"img:1" -> "img:2"'
        for i in range(2)
    ], out


def test_hash_identity_adopted_rollback_names_upstreams_revision(tmp_path, capsys):
    identity = "Hash"
    f = upstream_ds_fleet(identity)
    f.orphan_delete()
    f.up(ADOPTING_STACK)
    f.manifest = manifest(image="img:2", identity=identity)
    roll(f, 3)
    code, out, _ = rollback(f, tmp_path, capsys, apply=True)
    assert code == X.OK and f"to {f.upstream_key} " in out
    assert f.manifest == manifest(identity=identity)
