"""Every upstream DisaggregatedSet example mirrored in tests/manifests_upstream_ds/ validates, renders
valid objects (``pulumi-lws render`` at ``--stage first`` and ``steady``; every object through
``conftest.validate_manifest``, strict Kubernetes 1.35) and simulates a one-image change to
convergence: ``pulumi_lws.sim.driver.quick.scenario_from_change(old, new)`` (what ``pulumi-lws simulate
--from OLD --to NEW`` runs) with ``ds_helpers.Bounds`` as the per-tick probe, and one sample through
the CLI itself."""

from __future__ import annotations

import json
import pathlib

import pytest
import yaml
from conftest import TESTS_DIR, validate_manifest
from support.ds_helpers import converged_on, next_image, run

from pulumi_lws.cli import main
from pulumi_lws.disaggregatedset.api import DisaggregatedSet
from pulumi_lws.disaggregatedset.revision import compute_revision
from pulumi_lws.sim.driver.quick import scenario_from_change

DIR = TESTS_DIR / "manifests_upstream_ds"
FILES = sorted(DIR.glob("*.yaml"))


def _doc(path: pathlib.Path) -> dict:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "DisaggregatedSet")


def _ns(doc: dict) -> str:
    return (doc.get("metadata") or {}).get("namespace") or "default"


def test_every_mirrored_manifest_is_listed() -> None:
    assert len(FILES) == 4


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_upstream_manifest_validates(path: pathlib.Path) -> None:
    ds = DisaggregatedSet.from_manifest(_doc(path))
    assert ds.validation_errors() == []


@pytest.mark.parametrize("stage", ["first", "steady"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_upstream_manifest_renders_valid_objects(path: pathlib.Path, stage: str, capsys) -> None:
    code = main(["render", str(path), "--stage", stage])
    out, err = capsys.readouterr()
    assert code == 0, err
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert docs
    for d in docs:
        validate_manifest(d)
    ds = DisaggregatedSet.from_manifest(_doc(path))
    rev = compute_revision(ds)
    leaders = {d["metadata"]["name"] for d in docs if d["kind"] in ("StatefulSet", "Deployment")}
    for s in range(ds.slices):
        for r in ds.roles:
            assert f"{ds.name}-{s}-{rev}-{r.name}" in leaders
    if stage == "steady":
        services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
        assert {f"{ds.name}-{s}-{rev}-{r.name}-prv" for s in range(ds.slices) for r in ds.roles} <= services


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_upstream_manifest_image_change_converges(path: pathlib.Path) -> None:
    old = _doc(path)
    new = next_image(old)
    assert new != old
    sc = scenario_from_change(old, new, max_time=900, name=path.stem)
    assert sc.namespace == _ns(old)
    result, bounds = run(sc)
    assert result.exit_code == 0 and result.trace.converged and not result.trace.violations, result.reason
    assert not bounds.violations, bounds.violations[:3]
    spec = DisaggregatedSet.from_manifest(new, namespace=sc.namespace)
    assert converged_on(result.cluster, spec) == []


def test_cli_simulate_from_to_on_an_upstream_sample(tmp_path, capsys) -> None:
    old = _doc(DIR / "config_samples_disaggregatedset_v1_3role.yaml")
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(next_image(old)))
    code = main(
        ["simulate", "--from", str(tmp_path / "old.yaml"), "--to", str(tmp_path / "new.yaml"), "--format", "json"]
    )
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert code == 0 and doc["converged"] is True and doc["violations"] == []
    assert [lane["name"] for lane in doc["rows"][0]["lanes"]] == [r["name"] for r in old["spec"]["roles"]]
