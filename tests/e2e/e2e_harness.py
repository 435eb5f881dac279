"""The e2e tier's harness: the real Pulumi CLI, its Python language host and pulumi-kubernetes
provider against the real control plane ``make e2e-up`` starts (docs/e2e.md).

* :class:`Cluster` reads ``.e2e/env`` (written by ``e2e/cluster.py up``), runs ``kubectl`` and the
  ``pulumi-lws`` command with it, reads objects, and waits for the cluster to settle (every
  StatefulSet's controller caught up, no pod changing) so what a test compares is what the next
  reconcile will see.
* :class:`Stack` copies an example project into a temporary directory with its workload manifest
  moved into the test's namespace, and runs ``pulumi up`` / ``preview`` / ``destroy`` on it; each
  command is timed against a stated bound.
* :class:`Invariants` checks the budget after every ``pulumi up`` on an independent reading of the
  live cluster (``Workload.trace_view`` over the live observer's snapshot), with the same trackers
  the simulator checks every trace row with (:mod:`pulumi_lws.sim.driver.budgets`), and the lesson
  of the upstream incident in the seeds: no worker StatefulSet of a group the leader partition
  has not admitted changes.

A missing cluster or tool is a failure naming the command that provides it, never a skip.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
STATE = REPO / ".e2e"

#: every ``pulumi up`` / ``preview`` of an example fleet returns within this many seconds (the
#: CLI, the language host, the program's observation and the provider's applies of ~20 objects)
UP_BOUND = 120.0
PREVIEW_BOUND = 90.0
#: ``pulumi destroy`` of a stack with delete hooks needs the program (pulumi#19933; docs/component.md)
DESTROY = ("destroy", "--yes", "--run-program", "--skip-preview")


def load_env() -> dict[str, str]:
    path = STATE / "env"
    if not path.exists():
        pytest.fail("no e2e cluster: run `make e2e-up` (builds the toolchain with `make e2e-tools` first)")
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export ") :].partition("=")
            values[key] = json.loads(value)
    state = json.loads((STATE / "state.json").read_text()) if (STATE / "state.json").exists() else None
    if state is None:
        pytest.fail("the e2e cluster is not running: run `make e2e-up`")
    for name, pid in state["pids"].items():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            pytest.fail(f"the e2e cluster's {name} (pid {pid}) is not running: run `make e2e-down && make e2e-up`")
    env = dict(os.environ)
    env.update(values)
    for tool in ("pulumi", "kubectl", "pulumi-language-python", "pulumi-resource-kubernetes", "pulumi-lws"):
        if shutil.which(tool, path=env["PATH"]) is None:
            pytest.fail(f"`{tool}` is not on the e2e PATH: run `make e2e-tools` and `make e2e-up`")
    return env


class CommandFailed(AssertionError):
    def __init__(self, argv: list[str], result: subprocess.CompletedProcess[str]) -> None:
        self.result = result
        lines = (result.stdout + "\n" + result.stderr).strip().splitlines()
        errors = [line for line in lines if "error" in line.lower()][:40]
        tail = "\n".join(lines[-40:])
        super().__init__(
            f"`{' '.join(argv)}` exited {result.returncode}:\n" + "\n".join(errors) + "\n--- last lines:\n" + tail
        )


@dataclass
class Cluster:
    env: dict[str, str]

    def run(
        self,
        argv: list[str],
        *,
        cwd: pathlib.Path | None = None,
        timeout: float = 300,
        check: bool = True,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        merged = dict(self.env)
        if env:
            merged.update(env)
        result = subprocess.run(
            argv, cwd=cwd, env=merged, capture_output=True, text=True, timeout=timeout, input=stdin, check=False
        )
        if check and result.returncode != 0:
            raise CommandFailed(argv, result)
        return result

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        return self.run(["kubectl", *args], stdin=stdin, check=check).stdout

    def get(self, kind: str, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
        argv = ["get", kind, "-n", namespace, "-o", "json"]
        if selector:
            argv += ["-l", selector]
        return list(json.loads(self.kubectl(*argv))["items"])

    def fresh_namespace(self, name: str) -> str:
        if self.kubectl("get", "namespace", name, "--ignore-not-found", "-o", "name").strip():
            self.kubectl("delete", "namespace", name, "--wait=true", "--timeout=120s")
        self.kubectl("create", "namespace", name)
        deadline = time.monotonic() + 60
        while not self.kubectl("get", "serviceaccount", "default", "-n", name, "--ignore-not-found", "-o", "name"):
            if time.monotonic() > deadline:
                raise AssertionError(f"namespace {name}: no default ServiceAccount after 60 s")
            time.sleep(0.3)
        return name

    def fingerprint(self, namespace: str) -> str:
        """What changes while controllers and kwok still act on the namespace."""
        parts = []
        for sts in self.get("statefulsets", namespace):
            s, st = sts["metadata"], sts.get("status", {})
            parts.append(
                (
                    "sts",
                    s["name"],
                    s.get("generation"),
                    st.get("observedGeneration"),
                    st.get("replicas"),
                    st.get("readyReplicas"),
                    st.get("updatedReplicas"),
                    st.get("currentRevision"),
                    st.get("updateRevision"),
                )
            )
        for pod in self.get("pods", namespace):
            m, st = pod["metadata"], pod.get("status", {})
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in st.get("conditions", []))
            parts.append(("pod", m["name"], m["uid"], st.get("phase"), ready, bool(m.get("deletionTimestamp"))))
        return hashlib.sha256(json.dumps(sorted(parts, key=str), default=str).encode()).hexdigest()

    def settle(self, namespace: str, *, quiet: float = 2.0, timeout: float = 120.0) -> None:
        """Wait until every StatefulSet's controller observed its generation and nothing in the
        namespace changed for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            caught_up = all(
                s.get("status", {}).get("observedGeneration") == s["metadata"].get("generation")
                for s in self.get("statefulsets", namespace)
            )
            now = self.fingerprint(namespace)
            if now != last or not caught_up:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.5)
        raise AssertionError(f"namespace {namespace} did not settle within {timeout:.0f} s")

    def status(self, manifest: pathlib.Path, namespace: str) -> dict[str, Any]:
        """``pulumi-lws status --format json`` of the manifest: what the next ``pulumi up`` plans."""
        out = self.run(["pulumi-lws", "status", "-n", namespace, str(manifest), "--format", "json"], check=False)
        if out.returncode not in (0, 1):
            raise CommandFailed(["pulumi-lws", "status", str(manifest)], out)
        return dict(json.loads(out.stdout)["workloads"][0])


def comparable_stage(stage: Mapping[str, Any]) -> dict[str, Any]:
    """A stage summary without the clock readings (``control``'s instants move between reads) and
    the component-only ``pods`` (what ``rollout`` polls)."""
    return {k: v for k, v in stage.items() if k not in ("control", "pods")}


@dataclass
class Timed:
    command: str
    seconds: float


@dataclass
class Stack:
    cluster: Cluster
    example: str
    namespace: str
    workdir: pathlib.Path
    manifest_file: str
    timings: list[Timed] = field(default_factory=list)

    @classmethod
    def create(cls, cluster: Cluster, example: str, manifest_file: str, namespace: str, tmp: pathlib.Path) -> Stack:
        source = REPO / "examples" / example
        workdir = tmp / example
        shutil.copytree(source, workdir, ignore=shutil.ignore_patterns("scenario*.yaml", ".pulumi-lws", "__pycache__"))
        project = yaml.safe_load((workdir / "Pulumi.yaml").read_text())
        project["name"] = f"{project['name']}-{namespace}"
        # The CLI gives a language host no runtime options on its command line; the host runs the
        # python on PATH, the e2e virtualenv's (.e2e/env).
        project["runtime"] = "python"
        (workdir / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        stack = cls(cluster, example, namespace, workdir, manifest_file)
        stack.edit(lambda doc: doc["metadata"].__setitem__("namespace", namespace))
        # a stack (and its lock) an interrupted run left behind names objects its namespace no longer holds
        backend = pathlib.Path(cluster.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
        shutil.rmtree(backend / ".pulumi" / "locks" / "organization" / project["name"] / namespace, ignore_errors=True)
        cluster.run(
            ["pulumi", "stack", "rm", namespace, "--yes", "--force", "--non-interactive"], cwd=workdir, check=False
        )
        cluster.run(["pulumi", "stack", "init", namespace, "--non-interactive"], cwd=workdir)
        return stack

    @property
    def manifest_path(self) -> pathlib.Path:
        return self.workdir / self.manifest_file

    def manifest(self) -> dict[str, Any]:
        return dict(yaml.safe_load(self.manifest_path.read_text()))

    def edit(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        doc = copy.deepcopy(self.manifest())
        change(doc)
        self.manifest_path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return doc

    def _pulumi(self, *args: str, bound: float) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        result = self.cluster.run(
            ["pulumi", *args, "--stack", self.namespace, "--non-interactive"], cwd=self.workdir, timeout=bound + 30
        )
        seconds = time.monotonic() - started
        self.timings.append(Timed(args[0], seconds))
        assert seconds <= bound, f"`pulumi {args[0]}` took {seconds:.1f} s > the {bound:.0f} s bound"
        return result

    def up(self) -> dict[str, Any]:
        self._pulumi("up", "--yes", "--skip-preview", bound=UP_BOUND)
        return self.outputs()

    def preview(self, *extra: str) -> str:
        return self._pulumi("preview", *extra, bound=PREVIEW_BOUND).stdout

    def outputs(self) -> dict[str, Any]:
        out = self.cluster.run(
            ["pulumi", "stack", "output", "--json", "--show-secrets", "--stack", self.namespace], cwd=self.workdir
        )
        return dict(json.loads(out.stdout))

    def destroy(self) -> None:
        self._pulumi(*DESTROY, bound=UP_BOUND)


@dataclass
class Invariants:
    """Budget trackers fed one live reading after every ``pulumi up`` (module docstring)."""

    cluster: Cluster
    namespace: str
    violations: list[str] = field(default_factory=list)
    readings: int = 0

    def __post_init__(self) -> None:
        from pulumi_lws.sim.driver.budgets import RoleBudgets, WorkloadBudget

        self.whole = WorkloadBudget()
        self.roles = RoleBudgets()
        self._workers: dict[str, tuple[Any, Any]] = {}

    def check(self, manifest: Mapping[str, Any], label: str) -> Any:
        """Read the cluster once; record every violated bound; return the trace view."""
        from pulumi_lws.backend import current_backend
        from pulumi_lws.core.contract.trace import TraceRow
        from pulumi_lws.workloads import modelled

        workload = modelled(manifest)
        spec = workload.parse(dict(manifest))
        backend = current_backend(kubeconfig=self.cluster.env["KUBECONFIG"])
        snapshot = backend.observer.observe(workload.scope(spec, nodes=False))
        view = workload.trace_view(spec, snapshot)
        budgets = workload.budgets(spec)
        self.whole.use(budgets[""])
        self.roles.use(budgets)
        row = TraceRow(
            time=float(self.readings),
            replicas=view.replicas,
            partition=view.partition,
            groups=view.cells,
            live=view.live,
            available=view.available,
            lanes=view.lanes,
        )
        self.readings += 1
        self.violations += [f"{label}: {line}" for line in self.whole.check(row) + self.roles.check(row)]
        return view

    def workers_unadmitted_unchanged(self, label: str, lws_name: str) -> None:
        """The seeds' incident (003): the worker StatefulSet of a group below the leader
        StatefulSet's partition (a group the rollout has not admitted) keeps its template."""
        statefulsets = self.cluster.get("statefulsets", self.namespace, f"leaderworkerset.sigs.k8s.io/name={lws_name}")
        partition = 0
        for sts in statefulsets:
            if sts["metadata"]["name"] == lws_name:
                rolling = (sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
                partition = int(rolling.get("partition") or 0)
        for sts in statefulsets:
            name, labels = sts["metadata"]["name"], sts["metadata"].get("labels") or {}
            if name == lws_name or "leaderworkerset.sigs.k8s.io/group-index" not in labels:
                continue
            index = int(labels["leaderworkerset.sigs.k8s.io/group-index"])
            template = hashlib.sha256(json.dumps(sts["spec"]["template"], sort_keys=True).encode()).hexdigest()
            before = self._workers.get(name)
            if before is not None and index < min(partition, before[1]) and before[0] != template:
                self.violations.append(
                    f"{label}: worker StatefulSet {name} (group {index}) changed while the partition ({partition}) "
                    "had not admitted its group"
                )
            self._workers[name] = (template, partition)


def fleet_objects(cluster: Cluster, namespace: str, kinds: Iterable[str]) -> list[str]:
    out = []
    for kind in kinds:
        for item in cluster.get(kind, namespace):
            if item["metadata"]["name"] in ("default", "kube-root-ca.crt"):
                continue
            out.append(f"{kind}/{item['metadata']['name']}")
    return out


@dataclass
class Rollout:
    """What :func:`roll` saw: one entry per ``pulumi up``."""

    stages: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False


def roll(
    stack: Stack,
    invariants: Invariants,
    *,
    limit: int = 15,
    lws_name: str | None = None,
    predict: bool = True,
) -> Rollout:
    """``pulumi up`` until the workload reports ``stage.complete`` (at most ``limit`` times).

    Before each ``up`` the namespace settles and ``pulumi-lws status`` predicts the stage from the
    same observed state; the ``up``'s ``stage`` output must equal it. After each ``up`` (settled
    again) the invariants are read from the cluster."""
    seen = Rollout()
    for n in range(1, limit + 1):
        stack.cluster.settle(stack.namespace)
        predicted = stack.cluster.status(stack.manifest_path, stack.namespace)["stage"] if predict else None
        outputs = stack.up()
        stage = outputs["stage"]
        seen.stages.append(stage)
        if predicted is not None:
            assert comparable_stage(stage) == comparable_stage(predicted), (
                f"up {n}: the stage pulumi up took differs from what `pulumi-lws status` predicted for the same "
                f"observed state:\n took     {comparable_stage(stage)}\n predicted {comparable_stage(predicted)}"
            )
        stack.cluster.settle(stack.namespace)
        invariants.check(stack.manifest(), f"up {n}")
        if lws_name is not None:
            invariants.workers_unadmitted_unchanged(f"up {n}", lws_name)
        if stage.get("complete"):
            seen.complete = True
            return seen
    return seen


def set_images(image: str, *, only: Callable[[list[Any]], bool] | None = None) -> Callable[[dict[str, Any]], None]:
    """A manifest change: every container ``image`` (optionally only those whose path ``only``
    accepts, e.g. one role's) becomes ``image``."""

    def walk(node: Any, path: list[Any]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "image" and isinstance(value, str):
                    if only is None or only(path):
                        node[key] = image
                else:
                    walk(value, [*path, key])
        elif isinstance(node, list):
            for item in node:  # a list item's name (a role's, a container's) is part of the path
                walk(item, [*path, item.get("name") if isinstance(item, dict) else None])

    return lambda doc: walk(doc, [])


def pod_images(cluster: Cluster, namespace: str) -> set[str]:
    return {c["image"] for pod in cluster.get("pods", namespace) for c in pod["spec"]["containers"]}


#: every kind any of the three APIs creates (and the ReplicaSets/Pods their controllers create)
FLEET_KINDS = (
    "statefulsets",
    "deployments",
    "replicasets",
    "services",
    "pods",
    "controllerrevisions",
    "configmaps",
    "poddisruptionbudgets",
)


def _dedupe(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    for pair in pairs:
        if not out or out[-1] != pair:
            out.append(pair)
    return out


def assert_plan_agrees(
    cluster: Cluster, tmp: pathlib.Path, old: Mapping[str, Any], new: Mapping[str, Any], rolled: Rollout
) -> None:
    """The differential check of the simulator against the real control plane: every (replicas,
    partition) shape the real ``pulumi up``s took is one ``pulumi-lws plan OLD NEW`` predicts on
    the embedded cluster, in the same order, ending in the same shape. The real run may skip a
    planned shape: kwok makes pods Ready at once and each ``up`` runs on a settled namespace, so a
    fixed point can fold two planned stages whose pods the simulated kubelet readies at different
    times (the quickstart: partition 2 -> 0 and the surge reclaimed in one ``up``, where the plan
    has a row at (6, 0) in between; docs/simulator.md)."""
    (tmp / "old.yaml").write_text(yaml.safe_dump(dict(old), sort_keys=False))
    (tmp / "new.yaml").write_text(yaml.safe_dump(dict(new), sort_keys=False))
    plan = json.loads(
        cluster.run(["pulumi-lws", "plan", str(tmp / "old.yaml"), str(tmp / "new.yaml"), "--format", "json"]).stdout
    )
    rows = plan["rows"]
    # a partition of None (no partition set: the trace rows' form) and 0 (the stage output's) are the same
    planned = _dedupe((r["replicas"], r["partition"] or 0) for r in rows)
    taken = _dedupe(
        [(rows[0]["replicas"], rows[0]["partition"] or 0)]
        + [(s["replicas"], s["partition"] or 0) for s in rolled.stages]
    )
    remaining = iter(planned)
    in_order = all(any(shape == p for p in remaining) for shape in taken)
    assert in_order and taken[-1] == planned[-1], f"real stages {taken} are not the simulator's plan {planned} in order"
