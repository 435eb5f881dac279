"""Where the live backend's kubeconfig comes from, and one clear error when it cannot be used.

A kubeconfig *value* (``--kubeconfig``, the stack's ``kubernetes:kubeconfig``) is either the
file's content — it holds a newline, or is a JSON object (``{...}``), as the pulumi-kubernetes
provider accepts — or else a path, always read as a path (``~`` expanded): a path that does not
exist is "no such file", never parsed as YAML text. No value: ``KUBECONFIG`` (every existing file
of its path list, merged as client-go and kubectl merge them: :func:`merge`; lightkube itself
reads only one file), else ``~/.kube/config``, else the in-cluster service account.

Merging (:func:`merge`, client-go's ``ClientConfigLoadingRules.Load``): for the ``clusters``,
``users`` and ``contexts`` maps the first file to define a name wins; ``current-context`` is the
first file's that sets one; a relative file path of an entry (``certificate-authority``,
``client-certificate``, ``client-key``, ``tokenFile``, an ``exec`` command with a path separator)
resolves against the directory of the file that defined the entry — so it is made absolute
before the files are merged (lightkube would resolve it against one file, and ``tokenFile``
against the working directory). Missing files of the list are skipped, an empty one adds
nothing; a file that is not YAML or not a mapping is named in the error.

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
from collections.abc import Mapping, Sequence
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


def env_sources() -> list[str]:
    """The files ``KUBECONFIG`` / ``~/.kube/config`` name, in precedence order: every existing
    file of ``KUBECONFIG``'s path list (none exists: its first, to be named "no such file"),
    else ``~/.kube/config``."""
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    existing = [p for p in dict.fromkeys(listed) if os.path.exists(os.path.expanduser(p))]
    if existing:
        return existing
    if listed:
        return listed[:1]  # none exists: name the first, as "no such file"
    return [DEFAULT_PATH]


def env_source() -> str:
    """What :func:`env_sources` names, as errors name it: the files joined by the path-list separator."""
    return os.pathsep.join(env_sources())


#: section -> (the key of an entry's body, the fields of the body holding a file path)
PATH_FIELDS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}
#: the named maps of a kubeconfig (client-go: the first file to define a name wins)
SECTIONS = ("clusters", "users", "contexts")


def _absolute(path: Any, directory: str | None) -> Any:
    """``path`` joined to ``directory`` when relative (client-go ``ResolvePath``: no ``~`` expansion)."""
    if directory is None or not isinstance(path, str) or not path or os.path.isabs(path):
        return path
    return os.path.join(directory, path)


def _resolved(section: str, entry: Any, directory: str | None) -> Any:
    """``entry`` of ``section`` with its relative file paths resolved against ``directory``."""
    if section not in PATH_FIELDS or not isinstance(entry, Mapping):
        return entry
    body_key, fields = PATH_FIELDS[section]
    body = entry.get(body_key)
    if not isinstance(body, Mapping):
        return entry
    body = {**body, **{f: _absolute(body[f], directory) for f in fields if f in body}}
    exec_ = body.get("exec")
    if isinstance(exec_, Mapping) and os.sep in str(exec_.get("command") or ""):
        # client-go resolves an exec command only when it names a path, not a program on PATH
        body["exec"] = {**exec_, "command": _absolute(exec_["command"], directory)}
    return {**entry, body_key: body}


def merge(configs: Sequence[tuple[Mapping[str, Any], str | None]]) -> dict[str, Any]:
    """One kubeconfig from ``(data, directory of its file)`` pairs in precedence order, as
    client-go merges ``KUBECONFIG`` (module docstring): per name of ``clusters``/``users``/
    ``contexts`` the first file's entry, with its relative paths resolved against its own file's
    directory (None: left as they are); ``current-context`` from the first file setting one; any
    other top-level key from the first file that has it. Pure; the inputs are not changed."""
    out: dict[str, Any] = {}
    names: dict[str, set[str]] = {s: set() for s in SECTIONS}
    for data, directory in configs:
        for key, value in data.items():
            if key in SECTIONS:
                for entry in value or ():
                    name = entry.get("name") if isinstance(entry, Mapping) else None
                    if name in names[key]:
                        continue  # an earlier file defined it: it wins
                    if name is not None:
                        names[key].add(name)
                    out.setdefault(key, []).append(_resolved(key, entry, directory))
            elif key == "current-context":
                if value and not out.get(key):
                    out[key] = value
            else:
                out.setdefault(key, value)
    return out


def _data(text: str, source: str, is_file: bool) -> dict[str, Any]:
    """The mapping of one kubeconfig's text ({} for an empty file of a list)."""
    if not text.strip():
        raise KubeconfigError(source, "the file is empty" if is_file else "empty")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubeconfigError(source, f"not valid YAML ({' '.join(str(exc).split())})") from exc
    if not isinstance(data, dict):
        raise KubeconfigError(source, f"not a kubeconfig (a YAML {type(data).__name__}, not a mapping)")
    return data


def _config(data: Mapping[str, Any], source: str, fname: pathlib.Path | None) -> KubeConfig:
    missing = [k for k in ("clusters", "contexts") if not data.get(k)]
    if missing:
        raise KubeconfigError(source, f"not a usable kubeconfig: no {' and no '.join(missing)}")
    try:
        return KubeConfig.from_dict(dict(data), fname=fname)
    except Exception as exc:
        raise KubeconfigError(source, f"malformed entry ({type(exc).__name__}: {exc})") from exc


def _text(path: str) -> tuple[str, pathlib.Path]:
    full = pathlib.Path(os.path.expanduser(path))
    try:
        return full.read_text(encoding="utf-8"), full
    except FileNotFoundError as exc:
        raise KubeconfigError(path, "no such file") from exc
    except IsADirectoryError as exc:
        raise KubeconfigError(path, "is a directory, not a file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise KubeconfigError(path, f"cannot be read ({exc})") from exc


def _read(paths: Sequence[str]) -> KubeConfig:
    """The kubeconfig of one file, or of several merged (:func:`merge`). One file: it must not be
    empty; of several, an empty one adds nothing (client-go), but each must be YAML and a mapping."""
    source = os.pathsep.join(paths)
    configs = []
    for path in paths:
        text, full = _text(path)
        if len(paths) > 1 and not text.strip():
            continue
        configs.append((_data(text, path, True), str(full.parent)))
    fname = pathlib.Path(os.path.expanduser(paths[0]))
    return _config(merge(configs), source, fname)


def load(value: str | None) -> tuple[KubeConfig, str]:
    """(the kubeconfig, what it came from) for a value as the module docstring reads it; from
    ``KUBECONFIG``'s files the source names them all, joined by the path-list separator."""
    if value:
        if is_inline(value):
            return _config(_data(value, "inline kubeconfig", False), "inline kubeconfig", None), "inline kubeconfig"
        return _read([value]), value
    sources = env_sources()
    if (
        sources == [DEFAULT_PATH]
        and not os.path.exists(os.path.expanduser(DEFAULT_PATH))
        and os.environ.get("KUBERNETES_SERVICE_HOST")
        and os.path.exists(os.path.join(SERVICE_ACCOUNT, "token"))
    ):
        try:
            return KubeConfig.from_service_account(SERVICE_ACCOUNT), "in-cluster service account"
        except Exception as exc:
            raise KubeconfigError("in-cluster service account", str(exc)) from exc
    return _read(sources), os.pathsep.join(sources)


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
