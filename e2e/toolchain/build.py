"""Build the e2e toolchain from the Go module proxy into a cache outside the repository.

``python3 e2e/toolchain/build.py`` (``make e2e-tools``) builds every program the e2e tier runs from
the Go modules pinned in ``e2e/toolchain/*/go.mod`` (each with its ``go.sum``) into
``$PULUMI_LWS_E2E_CACHE/<key>/bin`` (default ``~/.cache/pulumi-lws-e2e``). The key is a hash of the
Go version, every ``go.mod``/``go.sum`` and this file, so a changed pin builds a new directory and a
warm cache is a no-op. Each module is stamped when its programs are built: an interrupted build
resumes with the next module. ``--print-bin`` prints the bin directory (building nothing).

Modules, one per upstream project, because their dependency graphs cannot share one ``go.mod``
(kubernetes replaces its staging modules; the Pulumi CLI and its provider need other versions of
the same libraries):

========== ======================================================================================
kube       etcd (etcdmain), kube-apiserver, kube-controller-manager, kube-scheduler, kubectl 1.35.4
kwok       kwok 0.7.0 (fake nodes; the pod stages that make pods Ready)
pulumi     the Pulumi CLI 3.276.0 (+ pulumi-language-python-exec, the shim the host runs)
pylang     pulumi-language-python from sdk/v3 3.68.0 (see pylang/go.mod for why that version)
yaml       pulumi-language-yaml 1.25.0
provider   pulumi-resource-kubernetes 4.25.0
========== ======================================================================================
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

KUBE_VERSION = "v1.35.4"
PROVIDER_VERSION = "4.25.0"


def _version_flags(packages: tuple[str, ...]) -> str:
    flags = ["-s", "-w"]
    for package in packages:
        flags += [
            f"-X {package}.gitVersion={KUBE_VERSION}",
            "-X " + package + ".gitMajor=1",
            "-X " + package + ".gitMinor=35",
            f"-X {package}.gitTreeState=clean",
        ]
    return " ".join(flags)


#: module folder -> (packages to build, ldflags). Versions stamped into binaries that report one
#: (the API server's /version, which pulumi-kubernetes reads to pick server-side apply).
MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "kube": (
        (
            "./etcd",
            "k8s.io/kubernetes/cmd/kube-apiserver",
            "k8s.io/kubernetes/cmd/kube-controller-manager",
            "k8s.io/kubernetes/cmd/kube-scheduler",
            "k8s.io/kubernetes/cmd/kubectl",
        ),
        _version_flags(("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")),
    ),
    "kwok": (("sigs.k8s.io/kwok/cmd/kwok",), "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v0.7.0"),
    "provider": (
        ("./pulumi-resource-kubernetes",),
        f"-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version={PROVIDER_VERSION}",
    ),
    "pulumi": (
        ("github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",),
        "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.276.0",
    ),
    "pylang": (
        ("github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python",),
        "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.68.0",
    ),
    "yaml": (
        ("github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml",),
        "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v1.25.0",
    ),
}

#: every program the e2e tier needs, for `require` (a missing one names `make e2e-tools`)
PROGRAMS = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "kwok",
    "pulumi",
    "pulumi-language-python",
    "pulumi-language-python-exec",
    "pulumi-language-yaml",
    "pulumi-resource-kubernetes",
)


def go_binary() -> str | None:
    """``go`` on PATH, else where the machine's Go install puts it (a non-login shell may not have it on PATH)."""
    return shutil.which("go") or next((p for p in ("/usr/local/go/bin/go",) if os.access(p, os.X_OK)), None)


def go_version() -> str:
    go = go_binary()
    if go is None:
        raise SystemExit("e2e-tools: no `go` on PATH (Go 1.26 comes with the polyglot machine; see docs/e2e.md)")
    return subprocess.run([go, "version"], check=True, capture_output=True, text=True).stdout.strip()


def cache_key() -> str:
    """A hash of the pins: the Go version, every module's go.mod, go.sum and Go files, and the
    packages and link flags built from each (not this file's other text: editing the script
    rebuilds nothing)."""
    digest = hashlib.sha256(go_version().encode())
    digest.update(repr(sorted(MODULES.items())).encode())
    for module in sorted(MODULES):
        for name in ("go.mod", "go.sum"):
            digest.update(f"{module}/{name}".encode())
            digest.update((HERE / module / name).read_bytes())
        for source in sorted((HERE / module).rglob("*.go")):
            digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def cache_root() -> pathlib.Path:
    base = os.environ.get("PULUMI_LWS_E2E_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pulumi-lws-e2e"
    )
    return pathlib.Path(base)


def bin_dir() -> pathlib.Path:
    return cache_root() / cache_key() / "bin"


def missing(bin_path: pathlib.Path) -> list[str]:
    return [name for name in PROGRAMS if not os.access(bin_path / name, os.X_OK)]


def _build(module: str, out: pathlib.Path, index: int, total: int) -> None:
    packages, ldflags = MODULES[module]
    started = time.monotonic()
    print(f"[{index}/{total}] {module}: building {', '.join(p.rsplit('/', 1)[-1] for p in packages)}", flush=True)
    go = go_binary()
    assert go is not None
    env = dict(
        os.environ, GOFLAGS="-mod=readonly -buildvcs=false", PATH=f"{os.path.dirname(go)}:{os.environ.get('PATH', '')}"
    )
    command = [go, "build", "-v", "-trimpath", "-ldflags", ldflags, "-o", str(out) + "/", *packages]
    process = subprocess.Popen(
        command, cwd=HERE / module, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    log: list[str] = []
    compiled = 0
    for line in process.stdout:
        log.append(line)
        compiled += 1
        if compiled % 200 == 0:
            elapsed = time.monotonic() - started
            print(f"      {module}: {compiled} packages compiled ({elapsed:.0f} s)", flush=True)
    if process.wait() != 0:
        sys.stdout.write("".join(log[-60:]))
        raise SystemExit(f"e2e-tools: building {module} failed: {' '.join(command)} (in {HERE / module})")
    print(f"      {module}: done in {time.monotonic() - started:.0f} s", flush=True)


def _module_dir(module: str, path: str) -> pathlib.Path:
    """Where the pinned ``path`` module sits in the module cache (downloaded if absent)."""
    go = go_binary() or "go"
    subprocess.run([go, "mod", "download", path], cwd=HERE / module, check=True)
    directory = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", path], cwd=HERE / module, check=True, capture_output=True, text=True
    ).stdout.strip()
    return pathlib.Path(directory)


def _provider_embeds() -> None:
    """The two files pulumi-resource-kubernetes embeds, as the provider's go:generate step writes
    them (cmd/pulumi-resource-kubernetes/generate.go): schema.json with ``version`` set, and the
    terraform mapping, both re-serialised compactly."""
    source = (
        _module_dir("provider", "github.com/pulumi/pulumi-kubernetes/provider/v4")
        / "cmd"
        / "pulumi-resource-kubernetes"
    )
    target = HERE / "provider" / "pulumi-resource-kubernetes"
    schema = json.loads((source / "schema.json").read_text())
    schema["version"] = PROVIDER_VERSION
    (target / "schema-embed.json").write_text(json.dumps(schema, separators=(",", ":")))
    mapping = json.loads((source / "terraform-mapping.json").read_text())
    (target / "terraform-mapping-embed.json").write_text(json.dumps(mapping, separators=(",", ":")))


#: steps a module needs before ``go build`` (files its upstream build generates)
PREPARE = {"provider": _provider_embeds}


def _python_exec_shim(out: pathlib.Path) -> None:
    """The CLI distribution ships sdk/python/cmd/pulumi-language-python-exec beside the host; it
    comes from the sdk/v3 module the CLI is built with."""
    sdk = _module_dir("pulumi", "github.com/pulumi/pulumi/sdk/v3")
    target = out / "pulumi-language-python-exec"
    shutil.copyfile(sdk / "python" / "cmd" / "pulumi-language-python-exec", target)
    target.chmod(0o755)


def build() -> pathlib.Path:
    out = bin_dir()
    if not missing(out):
        print(f"e2e-tools: warm ({out})")
        return out
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(
        f"e2e-tools: building into {out} (cold: 60-90 min and ~16 GB of Go caches on 2 cores; see docs/e2e.md)",
        flush=True,
    )
    todo = [module for module in MODULES if not (out / f".{module}.built").exists()]
    for index, module in enumerate(todo, 1):
        if module in PREPARE:
            PREPARE[module]()
        _build(module, out, index, len(todo))
        (out / f".{module}.built").touch()
    _python_exec_shim(out)
    absent = missing(out)
    if absent:
        raise SystemExit(f"e2e-tools: built, but {', '.join(absent)} missing from {out}")
    print(f"e2e-tools: ready in {time.monotonic() - started:.0f} s ({out})")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print-bin", action="store_true", help="print the bin directory and exit")
    args = parser.parse_args(argv)
    if args.print_bin:
        print(bin_dir())
        return
    build()


if __name__ == "__main__":
    main()
