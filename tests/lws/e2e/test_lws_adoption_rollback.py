"""``pulumi-lws rollback`` of an adopted LeaderWorkerSet (Ordinal and Hash), in the simulator: the
target is the catalog's (upstream's key for the adopted template, ``observed_target_revision``),
so right after adoption there is nothing to roll back to (exit 1) instead of a "rollback" to the
adopted revision itself; mid-rollout the printed change is the image only — upstream's Go
serialisation (``metadata: {creationTimestamp: null}``) is never written into the manifest."""

from __future__ import annotations

import pytest
import yaml
from support.adoption_helpers import orphan_delete
from test_lws_adoption import LWS, fleet, manifest

from pulumi_lws.backend import use_backend
from pulumi_lws.cli import exit_codes as X
from pulumi_lws.cli import main


def rollback(f, tmp_path, capsys) -> tuple[int, str, str, dict]:
    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump(f.manifest, sort_keys=False))
    with use_backend(f.cluster, f.cluster):
        code = main(["rollback", str(path), "--apply"])
    out = capsys.readouterr()
    return code, out.out, out.err, yaml.safe_load(path.read_text())


@pytest.mark.parametrize("identity", ["Ordinal", "Hash"])
def test_adopted_lws_rolls_back_to_upstreams_revision_and_not_to_itself(identity, tmp_path, capsys):
    f = fleet(identity)
    orphan_delete(f)
    f.up()
    snapshot = f.cluster.observe(LWS.scope(f.spec))
    assert LWS.observed_target_revision(f.spec, snapshot) == f.upstream_key != LWS.target_revision(f.spec)
    code, out, err, _ = rollback(f, tmp_path, capsys)
    assert code == X.NOT_CONVERGED and out == "" and f"target {f.upstream_key}" in err

    f.manifest = manifest(identity, image="nginx:1.28")
    for _ in range(3):
        f.up()
        f.cluster.step(f.cluster.clock.now + 1.0)
    code, out, _, written = rollback(f, tmp_path, capsys)
    assert code == X.OK and f"to {f.upstream_key} " in out
    assert [line for line in out.splitlines() if line.startswith("# change ")] == [
        '# change spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].image: "nginx:1.28" -> "nginx:1.27"'
    ]
    assert written == manifest(identity)
