"""Every upstream ModelServing example mirrored in tests/manifests_upstream_kthena/ simulates a
one-image change to convergence on the embedded cluster (one unbounded node: GPUs, volcano
schedulerName and affinities all fit), with the seed's bounds at every simulated second.

The scenario is ``pulumi_lws.sim.driver.quick.scenario_from_change(old, new)`` (what ``pulumi-lws simulate
--from OLD --to NEW`` runs: converged on OLD, NEW at t=0, pure engine, one unbounded node), run with
``ms_helpers.Bounds`` as the per-tick probe; one sample also goes through the CLI itself.

Skipped: ``examples_model-serving_multi-node_fb05987.yaml`` (upstream's webhook rejects its role
name ``405b``; see the directory's README).
"""

from __future__ import annotations

import copy
import pathlib

import pytest
import yaml
from conftest import TESTS_DIR
from support.ms_helpers import parse, read, run

from pulumi_lws.cli import main
from pulumi_lws.modelserving.revision import modelserving_revision
from pulumi_lws.sim.driver.quick import scenario_from_change

DIR = TESTS_DIR / "manifests_upstream_kthena"
REJECTED = {"examples_model-serving_multi-node_fb05987.yaml"}
FILES = sorted(p for p in DIR.glob("*.yaml") if p.name not in REJECTED)


def _doc(path: pathlib.Path) -> dict:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "ModelServing")


def _next_image(doc: dict) -> dict:
    new = copy.deepcopy(doc)
    for r in new["spec"]["template"]["roles"]:
        for tmpl in ("entryTemplate", "workerTemplate"):
            for c in ((r.get(tmpl) or {}).get("spec") or {}).get("containers") or []:
                c["image"] = c["image"] + ("-next" if ":" in c["image"].rsplit("/", 1)[-1] else ":next")
    return new


def _max_grace(doc: dict) -> float:
    graces = [
        ((r.get(t) or {}).get("spec") or {}).get("terminationGracePeriodSeconds") or 30
        for r in doc["spec"]["template"]["roles"]
        for t in ("entryTemplate", "workerTemplate")
    ]
    return float(max(graces))


def test_every_mirrored_manifest_is_listed() -> None:
    assert len(FILES) == 22 and all((DIR / n).exists() for n in REJECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_upstream_manifest_image_change_converges(path: pathlib.Path) -> None:
    old = _doc(path)
    new = _next_image(old)
    assert new != old
    sc = scenario_from_change(
        old, new, max_time=600 + 2 * _max_grace(old), name=path.stem
    )  # pods may take 300 s to stop
    assert sc.namespace == ((old.get("metadata") or {}).get("namespace") or "default")
    result, bounds = run(sc)
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations
    spec = parse(new) if sc.namespace == "default" else type(parse(new)).from_manifest(new, namespace=sc.namespace)
    final = read(result.cluster, spec)
    target = modelserving_revision(spec)
    assert len(final) == spec.replicas and all(g.revision == target and g.available for g in final.values())


def test_cli_simulate_from_to_on_an_upstream_sample(tmp_path, capsys) -> None:
    old = _doc(DIR / "examples_model-serving_rollingupdate.yaml")
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(_next_image(old)))
    code = main(
        ["simulate", "--from", str(tmp_path / "old.yaml"), "--to", str(tmp_path / "new.yaml"), "--format", "json"]
    )
    out = capsys.readouterr().out
    assert code == 0 and '"converged": true' in out and '"violations": []' in out
