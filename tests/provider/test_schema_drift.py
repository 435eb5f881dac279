"""schema.json: committed, regenerated offline, Pulumi's package-schema rules, all three components."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import REPO_ROOT
from pulumi_schema_rules import PACKAGE_RULES, semantic_problems

from pulumi_lws.provider import schema as S

COMPONENTS = ("lws:index:LeaderWorkerSet", "lws:index:ModelServing", "lws:index:DisaggregatedSet")


@pytest.fixture(scope="module")
def generated() -> dict:
    return S.package_schema()


def test_committed_schema_matches_the_generated_one():
    committed = (REPO_ROOT / "schema.json").read_text()
    assert committed == S.schema_text(), (
        f"schema.json is stale (a component argument or output changed): regenerate it with `{S.REGENERATE}` "
        "and commit it"
    )


def test_check_mode_names_the_regenerate_command(tmp_path, capsys):
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    assert S.main(["--check", str(stale)]) == 1
    assert S.REGENERATE in capsys.readouterr().err
    assert S.main([str(stale)]) == 0 and S.main(["--check", str(stale)]) == 0
    assert json.loads(stale.read_text()) == S.package_schema()


def test_schema_follows_the_package_schema_rules(generated):
    jsonschema.validate(generated, PACKAGE_RULES, cls=jsonschema.Draft202012Validator)
    assert semantic_problems(generated) == []


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({"type": "array"}, "items"),  # array without items
        ({"type": "string"}, "description"),  # undescribed input
        ({"type": "int", "description": "x"}, "int"),  # not a schema primitive
    ],
)
def test_the_rules_reject_what_pulumi_rejects(generated, bad, fragment):
    broken = json.loads(json.dumps(generated))
    broken["resources"]["lws:index:LeaderWorkerSet"]["inputProperties"]["replicas"] = bad
    errors = list(jsonschema.Draft202012Validator(PACKAGE_RULES).iter_errors(broken))
    assert errors and any(fragment in (str(e.message) + str(list(e.absolute_path)) + str(e.context)) for e in errors)


def test_semantic_rules_catch_dangling_names(generated):
    broken = json.loads(json.dumps(generated))
    res = broken["resources"]["lws:index:ModelServing"]
    res["required"] = [*res["required"], "nope"]
    res["inputProperties"]["rollout"] = {"$ref": "#/types/lws:index:Missing", "description": "x"}
    problems = semantic_problems(broken)
    assert "unresolved $ref #/types/lws:index:Missing" in problems
    assert any("'nope'" in p for p in problems)


@pytest.mark.parametrize("token", COMPONENTS)
def test_every_component_is_served_with_described_typed_inputs_and_outputs(generated, token):
    res = generated["resources"][token]
    assert res["isComponent"] is True and res["description"]
    for section in ("inputProperties", "properties"):
        for name, prop in res[section].items():
            assert prop.get("description"), f"{token}.{section}.{name}"
            assert {"type", "$ref", "oneOf"} & set(prop), f"{token}.{section}.{name} has no type"
    # outputs every stage publishes are always set; the blocker is null when nothing blocks
    assert {"stage", "revision", "actions", "remainingStages", "status"} <= set(res["required"])
    assert "blocker" not in res["required"]
    # inputs: either an upstream manifest or fields, so none is required by the schema
    assert res.get("requiredInputs", []) == [] and "manifest" in res["inputProperties"]


def test_int_or_percent_inputs_are_typed_as_users_write_them(generated):
    rollout = generated["types"]["lws:index:RolloutArgs"]["properties"]
    for name in ("maxUnavailable", "maxSurge"):
        assert rollout[name]["oneOf"] == [{"type": "integer"}, {"type": "string"}] and "type" not in rollout[name]
    assert rollout["partition"]["type"] == "integer"


def test_every_percent_input_is_registered_as_int_or_percent(generated):
    """A new IntOrString argument (described as 'a percent') must be in INT_OR_PERCENT."""
    registered = {(t, n) for t, names in S.INT_OR_PERCENT.items() for n in names}
    for token, typ in [*generated.get("types", {}).items(), *generated["resources"].items()]:
        for name, prop in [*(typ.get("properties") or {}).items(), *(typ.get("inputProperties") or {}).items()]:
            if "percent" in prop.get("description", "").lower() and prop.get("type") == "string":
                assert (token, name) in registered, f"{token}.{name} looks int-or-percent: add it to INT_OR_PERCENT"


def test_refine_names_a_vanished_int_or_percent_property(generated, monkeypatch):
    monkeypatch.setitem(S.INT_OR_PERCENT, "lws:index:RolloutArgs", ("maxUnavailable", "gone"))
    with pytest.raises(KeyError, match=r"RolloutArgs\.gone"):
        S.refine(generated)


def test_metadata_and_version_are_the_package_ones(generated):
    from pulumi_lws import __version__

    assert generated["name"] == "lws" and generated["version"] == __version__
    assert generated["license"] == "Apache-2.0" and generated["repository"].startswith("https://")
    assert generated["language"]["go"]["importBasePath"] == S.GO_IMPORT_BASE_PATH


def test_provider_accepts_integers_for_int_or_percent_inputs():
    """A YAML/TS/Go program sends maxSurge: 2 (a float on the wire) or "25%": both build the spec."""
    from pulumi_lws.components.args import build_spec

    provider = S.make_provider()
    definition = provider._component_defs["LeaderWorkerSet"]
    template = {"spec": {"containers": [{"name": "a", "image": "b"}]}}
    for sent, surge in ((2.0, 2), ("25%", "25%"), ("3", 3)):
        mapped = provider.map_inputs(
            {
                "replicas": 4.0,
                "size": 2.0,
                "workerTemplate": template,
                "rollout": {"maxSurge": sent, "maxUnavailable": 1.0},
            },
            definition,
        )
        lws = build_spec("LeaderWorkerSet", "demo", mapped).spec
        assert lws.spec.rollout_strategy.rolling_update_configuration.max_surge == surge
