"""``preview``/``up`` output in the shape of ``pulumi preview`` / ``pulumi up`` (pure text).

- the resource tree: ``Type  Name  Plan  Info`` with ``+`` create, ``~`` update, ``-`` delete,
  ``+-`` replace, children under their parent (``├─``/``└─``); unchanged resources only as the
  parents of changed ones or of diagnostics (``--show-sames``: all of them);
- ``--diff``: each changed resource with its property diff (``~ image: "a" => "b"``), as
  ``pulumi preview --diff`` prints it;
- ``Diagnostics:``: what each resource logged through ``pulumi.log`` under ``type (name):``
  (the workload components log their stage table and blocker there);
- ``Outputs:`` (secrets as ``[secret]``, changes marked in a preview) and ``Resources:`` counts.

Properties are listed in key order, as Pulumi lists them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pulumi_lws.cli.stack.changes import STACK_TYPE, Change, counts
from pulumi_lws.cli.stack.state import SECRET

SYMBOL = {"create": "+", "update": "~", "delete": "-", "replace": "+-", "same": ""}
PAST = {"create": "created", "update": "updated", "delete": "deleted", "replace": "replaced", "same": ""}
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # Pulumi's wire sentinel of an unknown value


def plan_word(op: str, preview: bool) -> str:
    return op if preview and op != "same" else ("" if preview else PAST[op])


# ---- values --------------------------------------------------------------------------------
def _scalar(value: Any) -> str:
    if isinstance(value, dict) and SECRET in value:
        return "[secret]"
    if value == UNKNOWN:
        return "[unknown]"
    return json.dumps(value)


def value_lines(value: Any, indent: str) -> list[str]:
    """A value as Pulumi prints properties: scalars inline, objects and lists nested."""
    if isinstance(value, dict) and value and SECRET not in value:
        width = max(len(str(k)) for k in value)
        lines = ["{"]
        for key, item in sorted(value.items()):
            head = f"{indent}    {str(key).ljust(width)}: "
            sub = value_lines(item, indent + "    ")
            lines.append(head + sub[0])
            lines += sub[1:]
        return lines + [f"{indent}}}"]
    if isinstance(value, list) and value:
        lines = ["["]
        for i, item in enumerate(value):
            sub = value_lines(item, indent + "    ")
            lines.append(f"{indent}    [{i}]: {sub[0]}")
            lines += sub[1:]
        return lines + [f"{indent}]"]
    return [_scalar(value)]


def diff_lines(old: Any, new: Any, indent: str = "") -> list[str]:
    """The property diff of two input values, ``pulumi preview --diff`` style."""
    lines: list[str] = []
    if isinstance(old, dict) and isinstance(new, dict) and SECRET not in old and SECRET not in new:
        keys = sorted(set(old) | set(new), key=str)
        width = max((len(str(k)) for k in keys if old.get(k) != new.get(k)), default=0)
        for key in keys:
            label = str(key).ljust(width)
            if key not in old:
                sub = value_lines(new[key], indent + "  ")
                lines += [f"{indent}+ {label}: {sub[0]}", *sub[1:]]
            elif key not in new:
                sub = value_lines(old[key], indent + "  ")
                lines += [f"{indent}- {label}: {sub[0]}", *sub[1:]]
            elif old[key] != new[key]:
                lines += _changed(label, old[key], new[key], indent)
        return lines
    return [f"{indent}~ {_scalar(old)} => {_scalar(new)}"]


def _changed(label: str, old: Any, new: Any, indent: str) -> list[str]:
    both_dicts = isinstance(old, dict) and isinstance(new, dict) and SECRET not in old and SECRET not in new
    if both_dicts:
        return [f"{indent}~ {label}: {{", *diff_lines(old, new, indent + "    "), f"{indent}  }}"]
    if isinstance(old, list) and isinstance(new, list):
        inner: list[str] = []
        for i in range(max(len(old), len(new))):
            if i >= len(old):
                sub = value_lines(new[i], indent + "      ")
                inner += [f"{indent}    + [{i}]: {sub[0]}", *sub[1:]]
            elif i >= len(new):
                sub = value_lines(old[i], indent + "      ")
                inner += [f"{indent}    - [{i}]: {sub[0]}", *sub[1:]]
            elif old[i] != new[i]:
                inner += _changed(f"[{i}]", old[i], new[i], indent + "    ")
        return [f"{indent}~ {label}: [", *inner, f"{indent}  ]"]
    return [f"{indent}~ {label}: {_scalar(old)} => {_scalar(new)}"]


def _diff_keys(change: Change) -> str:
    old, new = change.old or {}, change.resource.inputs
    marks = [
        ("+" if k not in old else "-" if k not in new else "~") + str(k)
        for k in sorted({*old, *new}, key=str)  # by name, as Pulumi lists property keys (stable across runs)
        if old.get(k) != new.get(k)
    ]
    return f"[diff: {' '.join(marks)}]" if marks else ""


# ---- the tree --------------------------------------------------------------------------------
def _children(items: list[Change]) -> tuple[list[Change], dict[str, list[Change]]]:
    urns = {c.urn for c in items}
    roots: list[Change] = []
    kids: dict[str, list[Change]] = {}
    for change in items:
        parent = change.resource.parent
        if parent and parent in urns:
            kids.setdefault(parent, []).append(change)
        else:
            roots.append(change)
    return roots, kids


#: the tree's branches: Pulumi's box drawing, and ASCII for a terminal that cannot print it (``--ascii``)
BRANCHES = {False: ("├─ ", "└─ ", "│  "), True: ("|- ", "`- ", "|  ")}


def tree_lines(
    items: list[Change],
    messages: Mapping[str, int],
    *,
    preview: bool,
    show_sames: bool = False,
    ascii_only: bool = False,
) -> list[str]:
    """The resource table of ``pulumi preview``/``pulumi up`` (see the module docstring)."""
    tee, last, bar = BRANCHES[ascii_only]
    roots, kids = _children(items)
    shown: set[str] = set()

    def visit(change: Change) -> bool:
        keep = (
            show_sames or change.op != "same" or messages.get(change.urn, 0) > 0 or change.resource.type == STACK_TYPE
        )
        for child in kids.get(change.urn, []):
            keep = visit(child) or keep
        if keep:
            shown.add(change.urn)
        return keep

    for root in roots:
        visit(root)
    rows: list[tuple[str, str, str, str, str]] = []

    def walk(change: Change, prefix: str, branch: str) -> None:
        info = [_diff_keys(change)] if change.op in ("update", "replace") else []
        if messages.get(change.urn):
            n = messages[change.urn]
            info.append(f"{n} message{'s' if n != 1 else ''}")
        rows.append(
            (
                SYMBOL[change.op],
                prefix + branch + change.resource.type,
                change.resource.name,
                plan_word(change.op, preview),
                "; ".join(i for i in info if i),
            )
        )
        visible = [c for c in kids.get(change.urn, []) if c.urn in shown]
        child_prefix = prefix + ("" if not branch else (bar if branch == tee else "   "))
        for i, child in enumerate(visible):
            walk(child, child_prefix, last if i == len(visible) - 1 else tee)

    for root in roots:
        if root.urn in shown:
            walk(root, "", "")
    header = ("", "Type", "Name", "Plan" if preview else "Status", "Info")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    out = []
    for row in [header, *rows]:
        out.append((f" {row[0]:<3}" + "  ".join(row[i].ljust(widths[i]) for i in (1, 2, 3)) + "  " + row[4]).rstrip())
    return out


def diff_listing(items: list[Change], *, preview: bool) -> list[str]:
    """``pulumi preview --diff``: every changed resource, its URN and its property diff."""
    out: list[str] = []
    for change in items:
        if change.op == "same" and change.resource.type != STACK_TYPE:
            continue
        r = change.resource
        label = "same" if change.op == "same" else plan_word(change.op, preview)
        out.append(f"{SYMBOL[change.op] or ' '} {r.type}: ({label})")
        out.append(f"    [urn={r.urn}]")
        if change.op == "create":
            out += _property_block(r.inputs, "    ")
        elif change.op == "delete":
            out += _property_block(change.old or {}, "    ", mark="- ")
        elif change.op in ("update", "replace"):
            out += diff_lines(change.old or {}, r.inputs, "    ")
    return out


def _property_block(props: Mapping[str, Any], indent: str, mark: str = "") -> list[str]:
    if not props:
        return []
    width = max(len(str(k)) for k in props)
    lines = []
    for key, value in sorted(props.items()):
        sub = value_lines(value, indent)
        lines += [f"{indent}{mark}{str(key).ljust(width)}: {sub[0]}", *sub[1:]]
    return lines


# ---- diagnostics, outputs, summary -----------------------------------------------------------
def diagnostics_lines(logs: Iterable[Any], names: Mapping[str, tuple[str, str]], stack_urn: str) -> list[str]:
    """``Diagnostics:`` grouped by resource (``type (name):``), in the order first logged;
    debug messages are left out as ``pulumi`` does without ``--debug``."""
    groups: dict[str, list[Any]] = {}
    for entry in logs:
        if entry.severity == "debug":
            continue
        groups.setdefault(entry.urn or stack_urn, []).append(entry)
    out: list[str] = []
    for urn, entries in groups.items():
        type_, name = names.get(urn, (urn.split("::")[-2] if "::" in urn else STACK_TYPE, urn.split("::")[-1]))
        out.append(f"  {type_} ({name}):")
        for entry in entries:
            prefix = "" if entry.severity == "info" else f"{entry.severity}: "
            for i, line in enumerate(str(entry.message).splitlines() or [""]):
                out.append(f"    {prefix if i == 0 else ''}{line}".rstrip())
        out.append("")
    return ["Diagnostics:", *out] if out else []


def outputs_lines(old: Mapping[str, Any], new: Mapping[str, Any], *, preview: bool) -> list[str]:
    keys = sorted(set(new) | set(old if preview else ()))  # Pulumi lists outputs by name
    if not keys:
        return []
    width = max(len(k) for k in keys)
    out = ["Outputs:"]
    for key in keys:
        mark = ""
        if preview and key in old and key in new and old[key] != new[key]:
            out += _changed(key.ljust(width), old[key], new[key], "  ")  # ~ key: old => new, nested as --diff
            continue
        if preview:
            mark = "+ " if key not in old else "- " if key not in new else "  "
        value = new.get(key, old.get(key))
        sub = value_lines(value, "    ")
        out += [f"  {mark}{key.ljust(width)}: {sub[0]}", *sub[1:]]
    return out + [""]


def summary_lines(items: list[Change], *, preview: bool) -> list[str]:
    tally = counts(items)
    words = (
        {"create": "to create", "update": "to update", "delete": "to delete", "replace": "to replace"}
        if preview
        else {k: PAST[k] for k in ("create", "update", "delete", "replace")}
    )
    lines = ["Resources:"]
    changed = 0
    for op in ("create", "update", "delete", "replace"):
        if tally[op]:
            symbol = SYMBOL[op]
            lines.append(f"    {symbol}{' ' if len(symbol) == 1 else ''}{tally[op]} {words[op]}")
            changed += tally[op]
    kinds = sum(1 for op in ("create", "update", "delete", "replace") if tally[op])
    if kinds > 1:
        lines.append(f"    {changed} changes. {tally['same']} unchanged" if tally["same"] else f"    {changed} changes")
    elif tally["same"]:
        lines.append(f"    {tally['same']} unchanged")
    return lines
