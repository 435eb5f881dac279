"""The CLI commands that run more than a render (issue 27): ``simulate --from/--to`` and
``preview`` / ``up`` of a generated Pulumi project, per API, each against a floor of the same run.

Floors (what no implementation of the command can skip; docs/performance.md "CLI commands"):

* ``simulate --from OLD --to NEW`` — reading both files with libyaml (``CSafeLoader``), the
  simulation itself (the library's :class:`~pulumi_lws.sim.driver.timeline.TimelineRunner` on the
  same change, no CLI around it) and writing the same output text. The simulator's own speed is
  the fleet-scale section's (``simulate-lws`` / ``-ms`` / ``-ds`` rows); this row is what the CLI
  adds on top: reading, validating, the header, the stage table, the summary.
* ``preview DIR`` — reading the manifest with libyaml, registering the same objects bare (each
  rendered manifest as its pulumi_kubernetes resource, no component, no parent, no
  ``depends_on``) under the same mock engine, and writing the same output text.
* ``up --reset DIR`` — the preview floor plus writing the same state files (``cluster.json``,
  ``stack.json``) with the JSON encoder.

The project is what a user writes: ``Pulumi.yaml``, a ``__main__.py`` that reads ``manifest.yaml``
and declares the one component; ``preview`` and ``up --reset`` start from an empty cluster (the
first stage: every object of every group).
"""

from __future__ import annotations

import json
import pathlib
import tempfile
from typing import Any

import yaml
from bench_cli import MANIFESTS, Dumper, Loader, _cpu, _run_cli
from bench_scale import row

TARGET = "<= 2x its floor"

PROGRAM = """\
import pathlib

import yaml

import pulumi_lws

here = pathlib.Path(__file__).resolve().parent
manifest = yaml.load((here / "manifest.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
getattr(pulumi_lws, manifest["kind"])("fleet", {"manifest": manifest})
"""


def project_dir(root: pathlib.Path, kind: str, groups: int, image: str = "vllm/vllm-openai:v1") -> pathlib.Path:
    """A Pulumi project under ``root`` declaring one ``kind`` component of ``groups`` groups."""
    d = root / "project"
    d.mkdir()
    (d / "Pulumi.yaml").write_text("name: bench\nruntime: python\n", encoding="utf-8")
    (d / "__main__.py").write_text(PROGRAM, encoding="utf-8")
    (d / "manifest.yaml").write_text(yaml.dump(MANIFESTS[kind](groups, image), Dumper=Dumper), encoding="utf-8")
    return d


def _bare_program(manifests: list[dict[str, Any]]):
    def program() -> None:
        import pulumi

        from pulumi_lws.components.registration import register_manifest

        for m in manifests:
            register_manifest("bare", m, pulumi.ResourceOptions())

    return program


def _registered(project: pathlib.Path) -> list[dict[str, Any]]:
    """The manifests a preview of ``project`` registers (first stage, empty cluster)."""
    from pulumi_lws.sim.cluster.simcluster import SimCluster
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    cluster = SimCluster()
    return run_program(project / "__main__.py", cluster, cluster, preview=True, stack="dev", project="bench").manifests


def _stack_floor(project: pathlib.Path, out: pathlib.Path, repeat: int, *, state: bool) -> float:
    """Read the manifest (libyaml), register its objects bare (mock engine), write the output
    (and, for ``up``, the state files with the JSON encoder)."""
    from pulumi_lws.sim.cluster.simcluster import SimCluster
    from pulumi_lws.sim.driver.pulumi_engine import run_program

    manifests = _registered(project)
    text = (project / "manifest.yaml").read_text(encoding="utf-8")
    printed = out.read_text(encoding="utf-8")
    states = [json.loads(p.read_text()) for p in sorted((project / ".pulumi-lws").glob("*/*.json"))] if state else []
    sink = out.with_suffix(".floor")

    def floor() -> None:
        yaml.load(text, Loader=Loader)
        cluster = SimCluster()
        run_program(_bare_program(manifests), cluster, cluster, stack="dev", project="bench")
        sink.write_text(printed, encoding="utf-8")
        for doc in states:
            sink.write_text(json.dumps(doc, indent=1), encoding="utf-8")

    return _cpu(floor, repeat)


def _simulate_floor(old: pathlib.Path, new: pathlib.Path, out: pathlib.Path, repeat: int) -> float:
    """Read both files (libyaml), run the same change in the library's simulator, write the output."""
    from pulumi_lws.sim.driver.change import change_scenario
    from pulumi_lws.sim.driver.timeline import TimelineRunner

    texts = [old.read_text(encoding="utf-8"), new.read_text(encoding="utf-8")]
    printed = out.read_text(encoding="utf-8")
    sink = out.with_suffix(".floor")

    def floor() -> None:
        docs = [yaml.load(t, Loader=Loader) for t in texts]
        TimelineRunner(change_scenario(docs[0], docs[1]).scenario, None).run()
        sink.write_text(printed, encoding="utf-8")

    return _cpu(floor, repeat)


def _measured(label: str, kind: str, groups: int, argv: list[str], out: pathlib.Path, repeat: int, floor_of) -> dict:
    figure = f"{label}: {kind}, {groups:,} groups"
    try:
        if repeat > 1 or groups < 10_000:  # at 10,000 the 1,000-group row has warmed imports and caches
            _run_cli(argv, out)  # warm: imports, first-call caches
        t = _cpu(lambda: _run_cli(argv, out), repeat)
        floor = floor_of()
    except Exception as exc:
        return row(figure, f"error: {type(exc).__name__}: {exc}", TARGET, False)
    ratio = t / floor if floor > 0 else float("inf")
    return row(
        figure,
        f"{ratio:.2f}x its floor ({t:.2f} s CPU vs {floor:.2f} s)",
        TARGET,
        ratio <= 2.0,
        "" if ratio <= 2.0 else _why(label),
    )


def _why(label: str) -> str:
    if label.startswith("simulate"):
        return "the CLI's reading, validation and stage table on top of the simulation"
    return (
        "the component's own work on top of bare registration: validation, reconcile, parent= and "
        "depends_on= per child, the outputs, the stage table and (up) applying to the simulated cluster"
    )


def simulate_rows(kind: str, groups: int, repeat: int = 1) -> list[dict[str, Any]]:
    """``simulate --from OLD --to NEW`` (an image change) of one API at one size."""
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        old, new, out = d / "old.yaml", d / "new.yaml", d / "out.txt"
        old.write_text(yaml.dump(MANIFESTS[kind](groups, "vllm/vllm-openai:v1"), Dumper=Dumper), encoding="utf-8")
        new.write_text(yaml.dump(MANIFESTS[kind](groups, "vllm/vllm-openai:v2"), Dumper=Dumper), encoding="utf-8")
        argv = ["simulate", "--from", str(old), "--to", str(new)]
        return [
            _measured(
                "simulate --from/--to", kind, groups, argv, out, repeat, lambda: _simulate_floor(old, new, out, repeat)
            )
        ]


def stack_rows(kind: str, groups: int, repeat: int = 1) -> list[dict[str, Any]]:
    """``preview`` and ``up --reset`` of a generated project (first stage) of one API at one size."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        project, out = project_dir(d, kind, groups), d / "out.txt"
        for label, argv, state in (
            ("preview", ["preview", str(project)], False),
            ("up", ["up", "--reset", str(project)], True),
        ):
            rows.append(
                _measured(
                    label,
                    kind,
                    groups,
                    argv,
                    out,
                    repeat,
                    lambda state=state: _stack_floor(project, out, repeat, state=state),
                )
            )
    return rows
