"""pulumi_lws.cli.stack.changes / display (pure): ops against the last registered state and the
tree, diff, outputs and summary as ``pulumi preview`` prints them."""

from __future__ import annotations

from pulumi_lws.cli.stack import display
from pulumi_lws.cli.stack.changes import changes, counts
from pulumi_lws.cli.stack.state import Resource, StackState, masked

STACK = "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev"
COMP = "urn:pulumi:dev::p::lws:index:LeaderWorkerSet::web"


def _sts(name: str, image: str, selector: str = "web") -> Resource:
    return Resource(
        f"urn:pulumi:dev::p::lws:index:LeaderWorkerSet$kubernetes:apps/v1:StatefulSet::{name}",
        "kubernetes:apps/v1:StatefulSet",
        name,
        COMP,
        True,
        {
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": selector}},
                "template": {"spec": {"containers": [{"image": image}]}},
            },
        },
    )


def _state(*resources: Resource) -> dict[str, Resource]:
    base = [
        Resource(STACK, "pulumi:pulumi:Stack", "p-dev", "", False),
        Resource(COMP, "lws:index:LeaderWorkerSet", "web", STACK, False),
    ]
    return {r.urn: r for r in [*base, *resources]}


def test_create_update_replace_delete_and_same():
    old = StackState(_state(_sts("a", "v1"), _sts("b", "v1"), _sts("c", "v1"), _sts("gone", "v1")))
    new = _state(_sts("a", "v1"), _sts("b", "v2"), _sts("c", "v1", selector="other"), _sts("d", "v1"))
    ops = {c.resource.name: c.op for c in changes(old, new)}
    assert ops == {
        "p-dev": "same",
        "web": "same",
        "a": "same",
        "b": "update",
        "c": "replace",
        "d": "create",
        "gone": "delete",
    }  # a StatefulSet's selector is immutable: delete and recreate
    items = changes(old, new)
    tree = display.tree_lines(items, {}, preview=True)
    assert [line[:4] for line in tree[1:]] == ["    ", "    ", " ~  ", " +- ", " +  ", " -  "]  # `a` (same) hidden
    assert "└─ kubernetes:apps/v1:StatefulSet" in tree[-1] and "├─ lws:index:LeaderWorkerSet" not in "".join(tree)
    assert tree[3].split()[-3:] == ["update", "[diff:", "~spec]"] and tree[4].split()[-3:] == [
        "replace",
        "[diff:",
        "~spec]",
    ]
    assert display.summary_lines(items, preview=True) == [
        "Resources:",
        "    + 1 to create",
        "    ~ 1 to update",
        "    - 1 to delete",
        "    +-1 to replace",
        "    4 changes. 3 unchanged",
    ]
    assert display.summary_lines(items, preview=False)[1] == "    + 1 created"
    assert counts(items)["same"] == 3


def test_property_diff_as_pulumi_preview_diff():
    old, new = _sts("b", "v1").inputs, _sts("b", "v2").inputs
    assert display.diff_lines(old, new, "    ") == [
        "    ~ spec: {",
        "        ~ template: {",
        "            ~ spec: {",
        "                ~ containers: [",
        "                    ~ [0]: {",
        '                        ~ image: "v1" => "v2"',
        "                      }",
        "                  ]",
        "              }",
        "          }",
        "      }",
    ]


def test_secrets_are_compared_by_digest_and_printed_as_secret():
    sig = "4dabf18193072939515e22adb298388d"
    a = masked({"token": {sig: "1b47061264138c4ac30d75fd1eb44270", "value": "one"}})
    b = masked({"token": {sig: "1b47061264138c4ac30d75fd1eb44270", "value": "two"}})
    assert a != b and "one" not in str(a)
    assert display.diff_lines(a, b) == ["~ token: [secret] => [secret]"]
    lines = display.outputs_lines({"token": a["token"]}, {"token": b["token"], "n": 1}, preview=True)
    assert lines == ["Outputs:", "  + n    : 1", "  ~ token: [secret] => [secret]", ""]


def test_the_diff_marks_list_changed_keys_by_name_whatever_order_the_inputs_came_in():
    """Was: ``[diff: ~spec ~metadata]`` or ``~metadata ~spec`` depending on the registration's key order."""
    old = _sts("a", "v1")
    new = _sts("a", "v2")
    new.inputs = {"spec": new.inputs["spec"], "metadata": {"name": "a", "labels": {"x": "1"}}, "kind": "StatefulSet"}
    (change,) = [c for c in changes(StackState(_state(old)), _state(new)) if c.resource.name == "a"]
    assert display._diff_keys(change) == "[diff: +kind ~metadata ~spec]"
