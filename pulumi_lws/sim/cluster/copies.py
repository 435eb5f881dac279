"""Stripped copies of stored objects: what the simulator hands to observers.

Invariant: a copy shares nothing with the stored object (every dict and list below it is new or
comes from an earlier copy), and never carries the simulator-private ``_sim*`` keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_lws.core.k8s.copying import json_copy

_ATOMIC = (str, int, float, bool, type(None))
_MISSING = object()


def refreshed(previous: Mapping[str, Any], obj: Mapping[str, Any]) -> dict[str, Any]:
    """``strip_internal(obj)`` sharing with ``previous`` (the stripped copy of an earlier version
    of ``obj``) every part, down to the second level, that is still equal: a write usually changes
    the status and the resourceVersion, not the spec, the labels or the owner references. A copy
    shares nothing with ``obj``, and read-only consumers cannot tell it from a fresh copy as long
    as no write replaces a value by an equal one of another form (``1`` by ``True`` or ``1.0``, a
    dict by the same items in another order): ``==`` keeps the earlier form then. No controller,
    action or apply does (tests/sim/driver/test_sim_linear.py compares every shared copy with a fresh
    one, types and key order included, after every tick of every example)."""
    out = {}
    for k, v in obj.items():
        if k.startswith("_sim"):
            continue
        if type(v) in _ATOMIC:
            out[k] = v
            continue
        old = previous.get(k, _MISSING)
        if old == v:
            out[k] = old
        elif type(v) is dict and type(old) is dict:
            out[k] = {
                kk: vv if type(vv) in _ATOMIC else (ov if (ov := old.get(kk, _MISSING)) == vv else json_copy(vv))
                for kk, vv in v.items()
            }
        else:
            out[k] = json_copy(v)
    return out


def strip_internal(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy without simulator-private keys (those starting with ``_sim``)."""
    return {k: json_copy(v) for k, v in obj.items() if not k.startswith("_sim")}
