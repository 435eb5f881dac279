"""A real Kubernetes control plane on loopback for the e2e tier: ``make e2e-up`` / ``make e2e-down``.

``python e2e/cluster.py up`` starts, from the programs ``make e2e-tools`` built (Kubernetes 1.35):

* etcd (``--unsafe-no-fsync``: a test cluster's data is thrown away);
* kube-apiserver with RBAC and the Node authorizer, the default admission chain plus
  MutatingAdmissionPolicy (feature gate and ``admissionregistration.k8s.io/v1beta1`` on), static
  bearer tokens (``admin`` in ``system:masters``, ``deployer`` with no rights until a test binds
  some), service-account keys;
* kube-controller-manager (every default controller: StatefulSet, Deployment, ReplicaSet, garbage
  collector, pod GC, service accounts, ...) and kube-scheduler;
* kwok managing the fake nodes ``e2e/nodes.yaml`` declares (cpu, memory, ``nvidia.com/gpu``,
  zone and rack topology labels) with the pod stages in ``e2e/kwok-stages.yaml`` (a pod becomes
  Ready; an image listed there as broken stays unready in ``ImagePullBackOff``; a deleted pod is
  removed once its finalizers are gone, as the kubelet does, never by emptying them).

Everything lives in ``.e2e/`` of the repository (gitignored): ``kubeconfig`` (admin),
``kubeconfig-deployer``, ``env`` (``source .e2e/env``: KUBECONFIG, PATH with ``pulumi`` and
``kubectl``, a local file backend, a passphrase, a Pulumi home with the kubernetes plugin),
``state.json`` (process ids and ports), ``logs/``. ``python e2e/cluster.py down`` stops every process
``up`` started, by the process ids in ``state.json``, and removes the cluster's data. Only loopback
addresses are used: the API server binds 127.0.0.1 and the service and pod ranges are bookkeeping.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
STATE = REPO / ".e2e"
sys.path.insert(0, str(REPO / "e2e" / "toolchain"))

import build as toolchain  # noqa: E402

PULUMI_PASSPHRASE = "pulumi-lws-e2e"
FEATURE_GATES = "MutatingAdmissionPolicy=true"
RUNTIME_CONFIG = "admissionregistration.k8s.io/v1beta1=true"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_pki(pki: pathlib.Path) -> None:
    """A CA, the API server's serving certificate (127.0.0.1, localhost, kubernetes.default*), and
    the service-account signing key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    pki.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def key() -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def pem_key(k: rsa.RSAPrivateKey) -> bytes:
        return k.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )

    ca_key = key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pulumi-lws-e2e-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = key()
    import ipaddress

    names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"]
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    sa_key = key()
    (pki / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (pki / "ca.key").write_bytes(pem_key(ca_key))
    (pki / "apiserver.crt").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (pki / "apiserver.key").write_bytes(pem_key(server_key))
    (pki / "sa.key").write_bytes(pem_key(sa_key))
    (pki / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def _kubeconfig(server: str, ca: pathlib.Path, user: str, token: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca)}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": f"e2e-{user}", "context": {"cluster": "e2e", "user": user}}],
            "current-context": f"e2e-{user}",
        },
        indent=2,
    )


def _spawn(name: str, argv: list[str], logs: pathlib.Path) -> int:
    with open(logs / f"{name}.log", "ab") as log:  # the child keeps its own descriptor
        process = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    return process.pid


def _wait(what: str, check: Any, timeout: float, pids: dict[str, int], logs: pathlib.Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, pid in pids.items():
            if not _alive(pid):
                tail = (logs / f"{name}.log").read_text(errors="replace").splitlines()[-25:]
                raise SystemExit(f"e2e-up: {name} (pid {pid}) exited while waiting for {what}:\n" + "\n".join(tail))
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.5)
    raise SystemExit(f"e2e-up: {what} not ready after {timeout:.0f} s (logs: {logs})")


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (reaped by nobody when `up` was a different process) counts as gone
    with contextlib.suppress(OSError):
        if pathlib.Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return False
    return True


def _get(url: str, token: str, ca: pathlib.Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca))
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, context=context, timeout=5) as response:
        return bytes(response.read())


def up(args: argparse.Namespace) -> None:
    """Start the cluster; on any failure stop what was started (nothing is left running)."""
    try:
        _up(args)
    except BaseException:
        if (STATE / "state.json").exists():
            down(args)
        raise


def _up(args: argparse.Namespace) -> None:
    bins = toolchain.bin_dir()
    absent = toolchain.missing(bins)
    if absent:
        raise SystemExit(f"e2e-up: {', '.join(absent)} not built: run `make e2e-tools` (builds into {bins})")
    if (STATE / "state.json").exists():
        state = json.loads((STATE / "state.json").read_text())
        if all(_alive(pid) for pid in state["pids"].values()):
            _write_env(bins, state["server"])
            print(f"e2e-up: already running ({state['server']}); `make e2e-down` stops it")
            return
        down(args)
    started = time.monotonic()
    logs = STATE / "logs"
    for sub in ("logs", "pki", "etcd"):
        shutil.rmtree(STATE / sub, ignore_errors=True)
    logs.mkdir(parents=True)
    pki = STATE / "pki"
    _write_pki(pki)
    admin_token, deployer_token = secrets.token_hex(16), secrets.token_hex(16)
    (pki / "tokens.csv").write_text(
        f'{admin_token},admin,admin,"system:masters"\n{deployer_token},deployer,deployer,"pulumi-lws:deployers"\n'
    )
    etcd_port, etcd_peer, api_port = _free_port(), _free_port(), _free_port()
    server = f"https://127.0.0.1:{api_port}"
    (STATE / "kubeconfig").write_text(_kubeconfig(server, pki / "ca.crt", "admin", admin_token))
    (STATE / "kubeconfig-deployer").write_text(_kubeconfig(server, pki / "ca.crt", "deployer", deployer_token))
    kubeconfig = str(STATE / "kubeconfig")
    pids: dict[str, int] = {}

    def save() -> None:
        (STATE / "state.json").write_text(
            json.dumps({"server": server, "pids": pids, "bin": str(bins), "etcd": etcd_port}, indent=2)
        )

    def start(name: str, argv: list[str]) -> None:
        pids[name] = _spawn(name, argv, logs)
        save()

    start(
        "etcd",
        [
            str(bins / "etcd"),
            "--name=e2e",
            f"--data-dir={STATE / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}",
            f"--initial-cluster=e2e=http://127.0.0.1:{etcd_peer}",
            "--unsafe-no-fsync",
            "--log-level=warn",
        ],
    )
    _wait(
        "etcd",
        lambda: b"true" in urllib.request.urlopen(f"http://127.0.0.1:{etcd_port}/health", timeout=2).read(),
        60,
        pids,
        logs,
    )
    print(f"e2e-up: etcd on 127.0.0.1:{etcd_port} ({time.monotonic() - started:.0f} s)", flush=True)
    start(
        "kube-apiserver",
        [
            str(bins / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--token-auth-file={pki / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--allow-privileged=true",
            f"--feature-gates={FEATURE_GATES}",
            f"--runtime-config={RUNTIME_CONFIG}",
            "--enable-admission-plugins=NodeRestriction",
            "--profiling=false",
            "--v=1",
        ],
    )
    _wait(
        "kube-apiserver /readyz",
        lambda: _get(f"{server}/readyz", admin_token, pki / "ca.crt") == b"ok",
        120,
        pids,
        logs,
    )
    print(f"e2e-up: kube-apiserver on {server} ({time.monotonic() - started:.0f} s)", flush=True)
    # the controller manager and the scheduler: the admin identity, no leader election, no serving port
    controller_flags = [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        "--secure-port=0",
    ]
    start(
        "kube-controller-manager",
        [
            str(bins / "kube-controller-manager"),
            *controller_flags,
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            "--use-service-account-credentials=false",
            f"--feature-gates={FEATURE_GATES}",
            "--v=1",
        ],
    )
    start(
        "kube-scheduler",
        [
            str(bins / "kube-scheduler"),
            *controller_flags,
            "--v=1",
        ],
    )
    start(
        "kwok",
        [
            str(bins / "kwok"),
            f"--kubeconfig={kubeconfig}",
            f"--config={REPO / 'e2e' / 'kwok-stages.yaml'}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",
            "--cidr=10.244.0.1/16",
            "--node-ip=127.0.0.1",
        ],
    )
    kubectl = [str(bins / "kubectl"), f"--kubeconfig={kubeconfig}"]
    subprocess.run([*kubectl, "apply", "-f", str(REPO / "e2e" / "nodes.yaml")], check=True, capture_output=True)

    def nodes_ready() -> bool:
        listed = json.loads(_get(f"{server}/api/v1/nodes", admin_token, pki / "ca.crt"))
        ready = [
            n
            for n in listed["items"]
            if any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))
        ]
        return len(ready) == len(listed["items"]) > 0

    _wait("kwok nodes Ready", nodes_ready, 90, pids, logs)
    _wait(
        "the default ServiceAccount",
        lambda: _get(f"{server}/api/v1/namespaces/default/serviceaccounts/default", admin_token, pki / "ca.crt"),
        90,
        pids,
        logs,
    )
    _write_env(bins, server)
    print(f"e2e-up: ready in {time.monotonic() - started:.0f} s: `source .e2e/env` (then kubectl, pulumi)")


def _write_env(bins: pathlib.Path, server: str) -> None:
    """``.e2e/env``: what a person (and the e2e tests) need to use the real CLI on this cluster."""
    home = STATE / "pulumi-home"
    backend = STATE / "pulumi-state"
    backend.mkdir(parents=True, exist_ok=True)
    venv_bin = STATE / "venv" / "bin"
    values = {
        "KUBECONFIG": str(STATE / "kubeconfig"),
        "PATH": f"{venv_bin}:{bins}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PULUMI_HOME": str(home),
        "PULUMI_BACKEND_URL": f"file://{backend}",
        "PULUMI_CONFIG_PASSPHRASE": PULUMI_PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_LWS_E2E_SERVER": server,
    }
    # The plugin the e2e virtualenv's pulumi-kubernetes SDK asks for, from the built binary: the
    # CLI downloads nothing (automatic acquisition is off).
    plugin = home / "plugins" / f"resource-kubernetes-v{toolchain.PROVIDER_VERSION}"
    if not plugin.exists():
        subprocess.run(
            [
                str(bins / "pulumi"),
                "plugin",
                "install",
                "resource",
                "kubernetes",
                toolchain.PROVIDER_VERSION,
                "--file",
                str(bins / "pulumi-resource-kubernetes"),
            ],
            env=dict(os.environ, **values),
            check=True,
            capture_output=True,
        )
    lines = [f"export {k}={json.dumps(v)}" for k, v in values.items()]
    (STATE / "env").write_text(
        "# source me: the e2e cluster and the real Pulumi CLI (make e2e-up)\n" + "\n".join(lines) + "\n"
    )


def down(_args: argparse.Namespace | None = None) -> None:
    path = STATE / "state.json"
    if not path.exists():
        print("e2e-down: nothing running")
        return
    state = json.loads(path.read_text())
    # reverse start order: kwok and the controllers first, etcd last
    for name, pid in reversed(list(state["pids"].items())):
        if not _alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        print(f"e2e-down: stopped {name} (pid {pid})")
    path.unlink()
    shutil.rmtree(STATE / "etcd", ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="start the cluster (idempotent)").set_defaults(run=up)
    sub.add_parser("down", help="stop every process `up` started, by process id").set_defaults(run=down)
    args = parser.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
