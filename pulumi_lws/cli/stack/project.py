"""A Pulumi project directory as the Pulumi CLI reads it: ``Pulumi.yaml``, the stack, its config.

Invariants:
- the stack is ``--stack``, else ``PULUMI_STACK``, else the only ``Pulumi.<stack>.yaml`` in the
  directory, else ``dev`` (a new stack);
- config keys reach the program as the Pulumi CLI passes them: ``<namespace>:<key>`` (a key
  without a namespace gets the project's), values as strings (other YAML values as JSON, as
  ``pulumi config`` stores them); ``--config`` overrides the stack file;
- a secret is ``--config-secret key=value`` or a ``secure:`` value of the stack file (also nested
  in a structured value: the whole key is then secret); the program reads it with
  ``Config.get_secret``/``require_secret`` as a secret Output. ``secure:`` values are decrypted
  with Pulumi's passphrase secrets provider (:mod:`.secrets`); a key given with ``--config`` or
  ``--config-secret`` is not decrypted (the flag's value wins), and no passphrase is needed when
  none is left to decrypt. A ciphertext is never used as a value.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from pulumi_lws.cli.stack.errors import ProjectError

STATE_DIR = ".pulumi-lws"


@dataclass(frozen=True)
class Project:
    directory: pathlib.Path
    name: str
    program: pathlib.Path  # the program's entry file (``main`` of Pulumi.yaml, else __main__.py)


@dataclass(frozen=True)
class StackConfig:
    stack: str
    values: dict[str, str] = field(default_factory=dict)
    secret_keys: frozenset[str] = frozenset()


def load_project(directory: str | os.PathLike) -> Project:
    root = pathlib.Path(directory).resolve()
    manifest = root / "Pulumi.yaml"
    if not manifest.is_file():
        manifest = root / "Pulumi.yml"
    if not manifest.is_file():
        raise ProjectError(f"{root}: no Pulumi.yaml (a Pulumi project directory holds Pulumi.yaml and the program)")
    doc = yaml.safe_load(manifest.read_text()) or {}
    if not isinstance(doc, dict) or not doc.get("name"):
        raise ProjectError(f"{manifest}: name is required")
    runtime = doc.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name not in (None, "python"):
        raise ProjectError(
            f"{manifest}: runtime {runtime_name!r}: pulumi-lws preview/up run Python programs "
            "(for other languages use the component provider with `pulumi preview`)"
        )
    main = root / str(doc.get("main") or "")
    program = main / "__main__.py" if main.is_dir() else main
    if not program.is_file():
        raise ProjectError(f"{program}: the program's entry file does not exist")
    return Project(root, str(doc["name"]), program)


def choose_stack(project: Project, stack: str | None) -> str:
    if stack:
        return stack
    if os.environ.get("PULUMI_STACK"):
        return os.environ["PULUMI_STACK"]
    files = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in project.directory.glob("Pulumi.*.yaml"))
    return files[0] if len(files) == 1 else "dev"


def _full_key(project: Project, key: str) -> str:
    return key if ":" in key else f"{project.name}:{key}"


def _as_config_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)


def _pairs(items: Iterable[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ProjectError(f"{flag} {item!r}: expected key=value")
        out.append((key, value))
    return out


def _has_secure(value: Any) -> bool:
    if isinstance(value, dict):
        return set(value) == {"secure"} or any(_has_secure(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_secure(v) for v in value)
    return False


def _decrypted(value: Any, decrypt: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"secure"}:
        return decrypt(str(value["secure"]))
    if isinstance(value, dict):
        return {k: _decrypted(v, decrypt) for k, v in value.items()}
    if isinstance(value, list):
        return [_decrypted(v, decrypt) for v in value]
    return value


def stack_config(
    project: Project,
    stack: str,
    config: Iterable[str] = (),
    secrets: Iterable[str] = (),
    *,
    config_file: str | os.PathLike | None = None,
) -> StackConfig:
    """The configuration ``pulumi up`` would hand the program (see the module docstring);
    ``config_file`` replaces ``DIR/Pulumi.<stack>.yaml`` (``--config-file``: it must exist)."""
    path = pathlib.Path(config_file) if config_file else project.directory / f"Pulumi.{stack}.yaml"
    if config_file and not path.is_file():
        raise ProjectError(f"--config-file {config_file}: no such file")
    try:
        doc = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    except yaml.YAMLError as exc:
        raise ProjectError(f"{path.name}: invalid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise ProjectError(f"{path.name}: expected a mapping (config:, encryptionsalt:...)")
    overrides = [(_full_key(project, k), v, False) for k, v in _pairs(config, "--config")]
    overrides += [(_full_key(project, k), v, True) for k, v in _pairs(secrets, "--config-secret")]
    overridden = {key for key, _, _ in overrides}
    values: dict[str, str] = {}
    secret: set[str] = set()
    encrypted: dict[str, Any] = {}
    for key, value in (doc.get("config") or {}).items():
        full = _full_key(project, str(key))
        if full in overridden:
            continue
        if _has_secure(value):
            encrypted[full] = value
        else:
            values[full] = _as_config_string(value)
    if encrypted:
        from pulumi_lws.cli.stack.secrets import SecretsError, stack_crypter

        crypter = stack_crypter(doc, path, list(encrypted))
        for full, value in encrypted.items():
            try:
                values[full] = _as_config_string(_decrypted(value, crypter.decrypt))
            except ValueError as exc:
                raise SecretsError(f"{path.name}: {full}: cannot decrypt its secure value ({exc})") from None
            secret.add(full)
    for full, value, is_secret in overrides:
        values[full] = value
        if is_secret:
            secret.add(full)
        else:
            secret.discard(full)
    return StackConfig(stack, values, frozenset(secret))
