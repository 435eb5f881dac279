"""Where the live backend's kubeconfig comes from, and one clear error when it cannot be used.

A kubeconfig *value* (``--kubeconfig``, the stack's ``kubernetes:kubeconfig``) is either the
file's content — it holds a newline, or is a JSON object (``{...}``), as the pulumi-kubernetes
provider accepts — or else a path, always read as a path (``~`` expanded): a path that does not
exist is "no such file", never parsed as YAML text. No value: ``KUBECONFIG`` (the first existing
file of its ``:``-separated list; lightkube reads only one), else ``~/.kube/config``, else the
in-cluster service account.

Invariant: every way a kubeconfig can be unusable — missing, unreadable, empty, not YAML, not a
mapping, without clusters or contexts, an unknown or absent current context, a context naming a
cluster or user it does not define, a certificate file the client cannot load — raises
:class:`KubeconfigError` (a :class:`~pulumi_lws.core.contract.ports.ClusterError`: CLI exit 4) whose one
line names the file (or "inline kubeconfig") and the cause; never the client library's own
exception type.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig, SingleConfig

from pulumi_lws.core.contract.ports import ClusterError

DEFAULT_PATH = "~/.kube/config"
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class KubeconfigError(ClusterError):
    """The kubeconfig cannot be used; ``source`` is its path or "inline kubeconfig"."""

    def __init__(self, source: str, cause: str) -> None:
        self.source, self.cause = source, cause
        super().__init__(f"kubeconfig {source}: {cause}")


def is_inline(value: str) -> bool:
    """The value is a kubeconfig's content, not a path (see the module docstring)."""
    return "\n" in value or value.lstrip().startswith("{")


def env_source() -> str | None:
    """The file ``KUBECONFIG`` / ``~/.kube/config`` names (None: in-cluster or nothing)."""
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    for path in listed:
        if os.path.exists(os.path.expanduser(path)):
            return path
    if listed:
        return listed[0]  # none exists: name the first, as "no such file"
    return DEFAULT_PATH


def _parse(text: str, source: str, fname: pathlib.Path | None) -> KubeConfig:
    if not text.strip():
        raise KubeconfigError(source, "the file is empty" if fname else "empty")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubeconfigError(source, f"not valid YAML ({' '.join(str(exc).split())})") from exc
    if not isinstance(data, dict):
        raise KubeconfigError(source, f"not a kubeconfig (a YAML {type(data).__name__}, not a mapping)")
    missing = [k for k in ("clusters", "contexts") if not data.get(k)]
    if missing:
        raise KubeconfigError(source, f"not a usable kubeconfig: no {' and no '.join(missing)}")
    try:
        return KubeConfig.from_dict(data, fname=fname)
    except Exception as exc:
        raise KubeconfigError(source, f"malformed entry ({type(exc).__name__}: {exc})") from exc


def _read(path: str) -> KubeConfig:
    full = pathlib.Path(os.path.expanduser(path))
    try:
        text = full.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise KubeconfigError(path, "no such file") from exc
    except IsADirectoryError as exc:
        raise KubeconfigError(path, "is a directory, not a file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise KubeconfigError(path, f"cannot be read ({exc})") from exc
    return _parse(text, path, full)


def load(value: str | None) -> tuple[KubeConfig, str]:
    """(the kubeconfig, what it came from) for a value as the module docstring reads it."""
    if value:
        return (
            (_parse(value, "inline kubeconfig", None), "inline kubeconfig")
            if is_inline(value)
            else (_read(value), value)
        )
    source = env_source()
    if (
        source == DEFAULT_PATH
        and not os.path.exists(os.path.expanduser(DEFAULT_PATH))
        and os.environ.get("KUBERNETES_SERVICE_HOST")
        and os.path.exists(os.path.join(SERVICE_ACCOUNT, "token"))
    ):
        try:
            return KubeConfig.from_service_account(SERVICE_ACCOUNT), "in-cluster service account"
        except Exception as exc:
            raise KubeconfigError("in-cluster service account", str(exc)) from exc
    assert source is not None
    return _read(source), source


def select(config: KubeConfig, source: str, context: str | None) -> SingleConfig:
    """The configuration of ``context`` (None: the current context), or KubeconfigError naming
    what is missing."""
    name = context or config.current_context
    if name is None:
        raise KubeconfigError(
            source,
            "no current-context set (pass --context or set current-context); contexts: "
            + ", ".join(sorted(config.contexts)),
        )
    if name not in config.contexts:
        raise KubeconfigError(source, f"no context {name!r} (contexts: {', '.join(sorted(config.contexts)) or 'none'})")
    ctx = config.contexts[name]
    if ctx.cluster not in config.clusters:
        raise KubeconfigError(source, f"context {name!r} names cluster {ctx.cluster!r}, which it does not define")
    if ctx.user and ctx.user not in config.users:
        raise KubeconfigError(source, f"context {name!r} names user {ctx.user!r}, which it does not define")
    single = config.get(context_name=name)
    assert single is not None
    return single


def server_of(config: Any) -> str:
    """The API server URL of a lightkube client's configuration ("?" when it has none)."""
    cluster = getattr(config, "cluster", None)
    return str(getattr(cluster, "server", None) or "?")
