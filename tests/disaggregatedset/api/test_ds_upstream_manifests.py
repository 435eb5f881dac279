"""Every mirrored upstream DisaggregatedSet manifest passes from_manifest, with its header."""

from __future__ import annotations

import pathlib

import pytest

from pulumi_lws.disaggregatedset.api import DisaggregatedSet

DIR = pathlib.Path(__file__).resolve().parents[2] / "manifests_upstream_ds"
FILES = sorted(DIR.glob("*.yaml"))


def test_every_mirror_is_listed_in_the_readme() -> None:
    readme = (DIR / "README.md").read_text()
    assert len(FILES) >= 4
    assert all(f"`{f.name}`" in readme for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_mirror_validates(path: pathlib.Path) -> None:
    assert path.read_text().splitlines()[0].startswith("# mirrors kubernetes-sigs/lws ")
    d = DisaggregatedSet.from_manifest(path)
    assert d.validation_errors() == [] and d.warnings() == []
    assert len(d.roles) >= 2
    for r in d.roles:
        assert d.role_spec_as_lws(r).validation_errors() == []


def test_mirror_facts() -> None:
    three = DisaggregatedSet.from_manifest(DIR / "config_samples_disaggregatedset_v1_3role.yaml")
    assert [r.spec.replicas for r in three.roles] == [4, 2, 2]
    assert all(r.rolling_update_config_given for r in three.roles)
    sample = DisaggregatedSet.from_manifest(DIR / "config_samples_disaggregatedset_v1_disaggregatedset.yaml")
    assert sample.slices == 2 and not any(r.rolling_update_config_given for r in sample.roles)
    assert sample.placement_type == "None"
