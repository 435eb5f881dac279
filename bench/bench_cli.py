"""What a user waits for: ``pulumi-lws render`` and ``plan`` end to end, per API, against the I/O
floor of the same run.

Each figure runs the CLI's own ``main`` in this process (stdout to a file, CPU seconds, best of a
few runs) on a fleet manifest written to a temporary directory: LeaderWorkerSet (groups of 4),
ModelServing (2 roles, an entry and a worker each), DisaggregatedSet (10 roles sharing the groups).
The floor is what no implementation can skip: reading the input with libyaml (``CSafeLoader``) and
writing the same output with libyaml (``CSafeDumper``) — or the JSON encoder for
``--format json`` — measured on the command's own input and output in the same run. Target: each
command within 2x its floor (issue 27). ``plan``'s table: reading the inputs and writing the same
table text (the same cells laid out in the same columns: :func:`_table_floor`). ``simulate``,
``preview`` and ``up``: :mod:`bench_cli_stack`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import pathlib
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import yaml
from bench_scale import row

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def lws_manifest(groups: int, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "fleet", "namespace": "bench"},
        "spec": {
            "replicas": groups,
            "rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "5%"}},
            "leaderWorkerTemplate": {
                "size": 4,
                "workerTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "vllm", "image": image, "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                        ]
                    }
                },
            },
        },
    }


def ms_manifest(groups: int, image: str) -> dict[str, Any]:
    from bench_ms import fleet_manifest

    return fleet_manifest(groups, image)


#: every role of the DisaggregatedSet rolls 10% at a time: with its default (one group per role
#: per stage) 100 groups per role outrun simulate's 600 simulated seconds, and 1,000 per role make
#: plan walk ~2,000 stages (shown in waves: a different path than the rollouts users mostly plan)
ROLE_BUDGET = {"rollingUpdateConfiguration": {"maxUnavailable": "10%", "maxSurge": "10%"}}


def ds_manifest(groups: int, image: str) -> dict[str, Any]:
    """10 roles of ``groups // 10`` groups each (``groups`` LeaderWorkerSet groups in all)."""
    from bench_ds import fleet_manifest

    doc = fleet_manifest(10, max(1, groups // 10), image)
    for role in doc["spec"]["roles"]:
        role["spec"]["rolloutStrategy"] = copy.deepcopy(ROLE_BUDGET)
    return doc


MANIFESTS: dict[str, Callable[[int, str], dict[str, Any]]] = {
    "LeaderWorkerSet": lws_manifest,
    "ModelServing": ms_manifest,
    "DisaggregatedSet": ds_manifest,
}


@contextlib.contextmanager
def _stdout_to(path: pathlib.Path) -> Iterator[None]:
    with path.open("w", encoding="utf-8") as out, contextlib.redirect_stdout(out):
        yield


def _cpu(fn: Callable[[], object], repeat: int, *, collector_off: bool = False) -> float:
    """Best CPU seconds of ``repeat`` runs of ``fn``, under the collector settings the CLI gives
    the command measured (``cli/collector.py``: thresholds raised; ``collector_off`` for
    ``render`` and ``plan``), so a floor and its command meet the same collector: a floor run
    under the defaults once read 1.5 s instead of 5 ms, a full collection of the bench's heap."""
    from pulumi_lws.cli.collector import fewer_collections

    best = float("inf")
    for _ in range(repeat):
        with fewer_collections(off=collector_off):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
    return best


def _run_cli(argv: list[str], out: pathlib.Path) -> None:
    """One command as a user runs it: ``plan``'s per-process memos (OLD's converged snapshot, the
    last reconcile) are emptied first, so a repeated run pays for its warm-up as the first does."""
    from pulumi_lws.cli import main
    from pulumi_lws.cli import plan as plan_command

    plan_command._CONVERGED.clear()
    plan_command._RECONCILED.clear()

    with _stdout_to(out):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"pulumi-lws {' '.join(argv)} exited {code}")


def _yaml_floor(inputs: list[pathlib.Path], output: pathlib.Path, repeat: int) -> float:
    docs = list(yaml.load_all(output.read_text(encoding="utf-8"), Loader=Loader))
    texts = [p.read_text(encoding="utf-8") for p in inputs]

    def floor() -> None:
        for text in texts:
            list(yaml.load_all(text, Loader=Loader))
        yaml.dump_all(docs, Dumper=Dumper, sort_keys=False, explicit_start=True)

    return _cpu(floor, repeat, collector_off=True)  # as render and plan run


def _json_floor(inputs: list[pathlib.Path], output: pathlib.Path, repeat: int) -> float:
    doc = json.loads(output.read_text(encoding="utf-8"))
    texts = [p.read_text(encoding="utf-8") for p in inputs]

    def floor() -> None:
        for text in texts:
            list(yaml.load_all(text, Loader=Loader))
        json.dumps(doc, indent=2)

    return _cpu(floor, repeat, collector_off=True)  # as render and plan run


def command_rows(kind: str, groups: int, repeat: int = 3) -> list[dict[str, Any]]:
    """``render`` (first, steady) and ``plan`` (table, json) of one API at one size."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        old, new, out = d / "old.yaml", d / "new.yaml", d / "out.txt"
        old.write_text(yaml.dump(MANIFESTS[kind](groups, "vllm/vllm-openai:v1"), Dumper=Dumper), encoding="utf-8")
        new.write_text(
            yaml.dump(copy.deepcopy(MANIFESTS[kind](groups, "vllm/vllm-openai:v2")), Dumper=Dumper), encoding="utf-8"
        )
        cases = [
            ("render", ["render", str(new)], [new], _yaml_floor),
            ("render --stage steady", ["render", str(new), "--stage", "steady"], [new], _yaml_floor),
            ("plan", ["plan", str(old), str(new)], [old, new], _table_floor),
            ("plan --format json", ["plan", str(old), str(new), "--format", "json"], [old, new], _json_floor),
        ]
        converging = None  # plan's rows: what converging OLD alone costs (context, not the floor)
        for label, argv, inputs, floor_of in cases:
            try:
                _run_cli(argv, out)  # warm: imports, first-call caches
                t = _cpu(lambda argv=argv: _run_cli(argv, out), repeat, collector_off=True)
                floor = floor_of(inputs, out, repeat)
                if label.startswith("plan") and converging is None:
                    converging = _convergence(old, new, repeat)
            except Exception as exc:
                rows.append(row(f"{label}: {kind}, {groups:,} groups", f"error: {exc}", "<= 2x the I/O floor", False))
                continue
            ratio = t / floor if floor > 0 else float("inf")
            context = (
                f"; converging OLD alone {converging:.2f} s, plan {t / converging:.1f}x that"
                if label.startswith("plan") and converging
                else ""
            )
            rows.append(
                row(
                    f"{label}: {kind}, {groups:,} groups",
                    f"{ratio:.1f}x the I/O floor ({t:.2f} s CPU vs {floor:.3f} s{context})",
                    "<= 2x the I/O floor",
                    ratio <= 2.0,
                    "" if ratio <= 2.0 else _why(label),
                )
            )
    return rows


def _convergence(old: pathlib.Path, new: pathlib.Path, repeat: int) -> float:
    """CPU seconds of what every ``plan`` starts with and no printing floor contains: reading
    both inputs and converging OLD on the embedded cluster (``converged_snapshot``, the same
    call ``plan`` makes). Printed next to the plan rows as context: planning NEW on top of it
    (the reconcile, the predicted stages, the demand line) is the rest of the command."""
    from pulumi_lws.sim.driver.change import converged_snapshot

    def converge() -> None:
        old_doc = yaml.load(old.read_text(encoding="utf-8"), Loader=Loader)
        new_doc = yaml.load(new.read_text(encoding="utf-8"), Loader=Loader)
        converged_snapshot(old_doc, new_doc)

    return _cpu(converge, repeat, collector_off=True)  # as plan runs


def _table_floor(inputs: list[pathlib.Path], output: pathlib.Path, repeat: int) -> float:
    """A table's floor: reading its inputs (libyaml) and writing the same table text — laying out
    the same cells, known in advance (split from the command's own output, untimed), in columns
    of the same widths. What no implementation printing that table can skip; the planning that
    finds the cells is the command's work, not the floor's."""
    texts = [p.read_text(encoding="utf-8") for p in inputs]
    rows = [line.split() for line in output.read_text(encoding="utf-8").splitlines()]
    widths: dict[int, int] = {}
    for cells in rows:
        for i, cell in enumerate(cells):
            widths[i] = max(widths.get(i, 0), len(cell))
    sink = output.with_suffix(".floor")

    def floor() -> None:
        for text in texts:
            list(yaml.load_all(text, Loader=Loader))
        sink.write_text(
            "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(cells)) for cells in rows), encoding="utf-8"
        )

    return _cpu(floor, repeat, collector_off=True)  # as render and plan run


def _why(label: str) -> str:
    if label.startswith("plan"):
        return (
            "plan reconciles OLD to convergence and predicts every stage of NEW: work proportional to "
            "groups x stages that no I/O floor contains"
        )
    return "validation, planning and rendering of every object on top of the YAML I/O"


def all_rows(quick: bool = False) -> list[dict[str, Any]]:
    sizes = (20,) if quick else (1_000, 10_000)
    out: list[dict[str, Any]] = []
    for kind in MANIFESTS:
        for n in sizes:
            out += command_rows(kind, n, repeat=1 if quick or n >= 10_000 else 3)
    return out
