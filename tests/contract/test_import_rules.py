"""The package layout's rules, checked from the source tree (``ast``, nothing imported).

* ``core`` imports no other pulumi_lws package;
* an API package (``lws``, ``modelserving``, ``disaggregatedset``) imports ``core`` and itself,
  never a shell nor another API package — except ``disaggregatedset -> lws`` (it nests
  LeaderWorkerSets) — and no Pulumi SDK or Kubernetes client;
* inside an API package, no import goes from a lower layer to a higher one
  (names < api < observe/revision < rollout/status < render < reconcile/workload);
* the simulator's cluster side (store, controllers, scheduler, kubelet, gc, apply, cluster)
  imports no planner, renderer or reconcile (it must not know the answer);
* the shells (``components`` but its thin per-API modules, ``rbac``, ``provider``, ``cli``, ``sim``,
  ``cluster``, ``backend``) import no API package: they reach every API through the registry
  (``pulumi_lws.workloads``, ``core.workload``);
* no import cycles (imports under ``if TYPE_CHECKING:`` are annotations, not imports).
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

import pytest
from conftest import REPO_ROOT

PKG = REPO_ROOT / "pulumi_lws"
API_PACKAGES = ("lws", "modelserving", "disaggregatedset")
SHELLS = ("components", "sim", "cluster", "cli", "provider", "backend", "workloads")
ALLOWED_API_IMPORTS = {"disaggregatedset": {"lws"}}
CLIENT_LIBRARIES = ("pulumi", "pulumi_kubernetes", "lightkube", "httpx", "kubernetes")
#: layer of each top-level module/package inside an API package (missing = checked as layer 0)
API_LAYERS = {
    "labels": 0,
    "names": 0,
    "group_shape": 0,
    "api": 1,
    "observe": 2,
    "revision": 2,
    "trace_view": 2,
    "recovery": 3,
    "rollout": 3,
    "status": 3,
    "render": 4,
    "adoption": 5,
    "reconcile": 5,
    "rollback": 5,
    "workload": 5,
}
SIM_CLUSTER_SIDE = (
    "store",
    "clock",
    "defaults",
    "statefulset",
    "deployment",
    "kubelet",
    "scheduler",
    "gc",
    "apply",
    "cluster",
)


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imports_of(path: pathlib.Path) -> Iterator[str]:
    """Every module a file imports at run time (module level or inside functions)."""

    def walk(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                continue
            if isinstance(child, ast.Import):
                yield from (a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                yield child.module
                yield from (f"{child.module}.{a.name}" for a in child.names)  # `from pkg import module`
            yield from walk(child)

    yield from walk(ast.parse(path.read_text()))


SOURCES = {module_name(p): p for p in PKG.rglob("*.py")}
GRAPH = {
    mod: sorted({i for i in imports_of(path) if i in SOURCES or not i.startswith("pulumi_lws")})
    for mod, path in SOURCES.items()
}


def internal(mod: str) -> list[str]:
    return [i for i in GRAPH[mod] if i.startswith("pulumi_lws.")]


def part(mod: str, n: int) -> str:
    parts = mod.split(".")
    return parts[n] if len(parts) > n else ""


def violations() -> list[str]:
    out = []
    for mod in sorted(GRAPH):
        top = part(mod, 1)
        for dep in GRAPH[mod]:
            dep_top = part(dep, 1) if dep.startswith("pulumi_lws.") else ""
            if top == "core" and dep.startswith("pulumi_lws.") and dep_top != "core":
                out.append(f"{mod} -> {dep}: core imports only core")
            if top in API_PACKAGES:
                if dep.split(".")[0] in CLIENT_LIBRARIES:
                    out.append(f"{mod} -> {dep}: an API package imports no Pulumi SDK or Kubernetes client")
                if dep_top in SHELLS:
                    out.append(f"{mod} -> {dep}: an API package never imports a shell")
                if dep_top in API_PACKAGES and dep_top != top and dep_top not in ALLOWED_API_IMPORTS.get(top, ()):
                    out.append(f"{mod} -> {dep}: API packages do not import each other")
                if dep_top == top:
                    here, there = API_LAYERS.get(part(mod, 2), 0), API_LAYERS.get(part(dep, 2), 0)
                    if there > here:
                        out.append(
                            f"{mod} -> {dep}: layer {part(mod, 2) or top} ({here}) imports a higher layer ({there})"
                        )
            if top == "sim" and part(mod, 2) in SIM_CLUSTER_SIDE and dep.startswith("pulumi_lws."):
                if any(seg in dep.split(".") for seg in ("rollout", "render", "reconcile", "workload", "workloads")):
                    out.append(f"{mod} -> {dep}: the simulated cluster never imports a planner or renderer")
    return out


def cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), plus self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in internal(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_the_tree_follows_the_layering_rules() -> None:
    assert violations() == []


def test_there_are_no_import_cycles() -> None:
    assert cycles() == []


def test_the_checker_sees_the_tree() -> None:
    # guards against a checker that silently reads nothing
    assert "pulumi_lws.core.contract.stage" in GRAPH and "pulumi_lws.lws.reconcile" in GRAPH
    assert "pulumi_lws.core.contract.stage" in internal("pulumi_lws.lws.reconcile")


@pytest.mark.parametrize(
    "source, expected",
    [
        ({"pulumi_lws.core.x": ["pulumi_lws.lws.labels"]}, "core imports only core"),
        ({"pulumi_lws.lws.rollout.x": ["pulumi_lws.lws.render.pod"]}, "imports a higher layer"),
        ({"pulumi_lws.lws.api.x": ["pulumi_lws.sim.cluster.simcluster"]}, "never imports a shell"),
        ({"pulumi_lws.lws.api.x": ["pulumi"]}, "no Pulumi SDK"),
        ({"pulumi_lws.modelserving.x": ["pulumi_lws.lws.names"]}, "do not import each other"),
        ({"pulumi_lws.sim.cluster.kubelet": ["pulumi_lws.lws.rollout.hash.planner"]}, "never imports a planner"),
    ],
)
def test_the_checker_catches_each_kind_of_violation(source, expected) -> None:
    saved = dict(GRAPH)
    GRAPH.update(source)
    try:
        assert any(expected in v for v in violations())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_the_checker_catches_a_cycle() -> None:
    saved = dict(GRAPH)
    GRAPH.update({"pulumi_lws.core.a": ["pulumi_lws.core.b"], "pulumi_lws.core.b": ["pulumi_lws.core.a"]})
    try:
        assert ["pulumi_lws.core.a", "pulumi_lws.core.b"] in cycles()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


#: shells that import no API package: only the registry (core.workload via pulumi_lws.workloads).
REGISTRY_ONLY_SHELLS = ("components", "rbac", "provider", "cli", "sim", "cluster", "backend")
#: thin per-API modules of ``components`` that may name their API's own types (none do today but
#: the DisaggregatedSetRoleScaler CRD resource, which registers that API's CRD document)
THIN_PER_API_MODULES = ("pulumi_lws.components.disaggregatedset_crd",)


def shell_violations() -> list[str]:
    out = []
    for mod in sorted(GRAPH):
        if part(mod, 1) not in REGISTRY_ONLY_SHELLS or mod in THIN_PER_API_MODULES:
            continue
        for dep in GRAPH[mod]:
            if dep.startswith("pulumi_lws.") and part(dep, 1) in API_PACKAGES:
                out.append(f"{mod} -> {dep}: a shell imports no API package (only the registry)")
    return out


def test_the_shells_import_no_api_package() -> None:
    assert shell_violations() == []


@pytest.mark.parametrize(
    "source",
    [
        {"pulumi_lws.rbac.x": ["pulumi_lws.modelserving.api.modelserving"]},
        {"pulumi_lws.cli.plan": ["pulumi_lws.lws.reconcile"]},
        {"pulumi_lws.sim.cluster.kubelet": ["pulumi_lws.modelserving.labels"]},
        {"pulumi_lws.cluster.live": ["pulumi_lws.lws.labels"]},
        {"pulumi_lws.backend": ["pulumi_lws.disaggregatedset.api"]},
    ],
)
def test_the_shell_checker_catches_an_api_import(source) -> None:
    saved = dict(GRAPH)
    GRAPH.update(source)
    try:
        assert any("a shell imports no API package" in v for v in shell_violations())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
