"""``KUBECONFIG`` with several files is merged as client-go and kubectl merge it
(``pulumi_lws/cluster/kubeconfig.py``): per cluster/user/context name the first file to define it
wins, ``current-context`` comes from the first file that sets one, and a relative file path
resolves against the directory of the file that defined its entry. The pure :func:`merge`, then
:func:`load` / ``LiveCluster.from_kubeconfig`` reading the files, then one request to kmock with the
token a later file's relative ``tokenFile`` names."""

from __future__ import annotations

import asyncio
import os
import pathlib

import pytest
import yaml

from pulumi_lws.cluster import kubeconfig as K


def _cluster(name: str, server: str, **extra: str) -> dict:
    return {"name": name, "cluster": {"server": server, **extra}}


def _user(name: str, **fields: str) -> dict:
    return {"name": name, "user": dict(fields)}


def _context(name: str, cluster: str, user: str) -> dict:
    return {"name": name, "context": {"cluster": cluster, "user": user}}


def _write(directory: pathlib.Path, data: dict) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "config"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_merge_of_two_files_first_name_wins_and_current_context_from_the_first_setting_it():
    first = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [_cluster("shared", "https://first:6443", **{"certificate-authority": "ca.crt"})],
        "users": [_user("me", token="first-token")],
        "contexts": [_context("dev", "shared", "me")],
    }
    second = {
        "current-context": "prod",
        "clusters": [_cluster("shared", "https://second:6443"), _cluster("prod", "https://prod:6443")],
        "users": [_user("me", token="second-token"), _user("ops", **{"client-key": "keys/ops.key"})],
        "contexts": [_context("dev", "prod", "ops"), _context("prod", "prod", "ops")],
    }

    merged = K.merge([(first, "/etc/one"), (second, "/home/two")])

    clusters = {c["name"]: c["cluster"] for c in merged["clusters"]}
    assert clusters == {
        "shared": {"server": "https://first:6443", "certificate-authority": "/etc/one/ca.crt"},
        "prod": {"server": "https://prod:6443"},
    }
    users = {u["name"]: u["user"] for u in merged["users"]}
    assert users == {"me": {"token": "first-token"}, "ops": {"client-key": "/home/two/keys/ops.key"}}
    contexts = {c["name"]: c["context"] for c in merged["contexts"]}
    assert contexts["dev"] == {"cluster": "shared", "user": "me"}  # the first file's, not the second's
    assert merged["current-context"] == "prod"  # the first file sets none
    assert merged["apiVersion"] == "v1" and merged["kind"] == "Config"
    # the inputs are not changed
    assert first["clusters"][0]["cluster"]["certificate-authority"] == "ca.crt"


def test_merge_of_three_files_with_the_context_in_the_last_and_each_path_from_its_own_file():
    a = {"current-context": "", "clusters": [_cluster("c", "https://a:6443", **{"certificate-authority": "a/ca.crt"})]}
    b = {
        "current-context": "late",
        "users": [
            _user(
                "u",
                **{"client-certificate": "u.crt", "client-key": "/abs/u.key", "tokenFile": "tok"},
            ),
            {"name": "plugin", "user": {"exec": {"command": "./bin/auth", "apiVersion": "v1"}}},
            {"name": "on-path", "user": {"exec": {"command": "aws", "apiVersion": "v1"}}},
        ],
    }
    c = {
        "current-context": "ignored",
        "clusters": [_cluster("c", "https://c:6443")],
        "contexts": [_context("late", "c", "u")],
    }

    merged = K.merge([(a, "/dir/a"), (b, "/dir/b"), (c, "/dir/c")])

    assert merged["current-context"] == "late"  # an empty value sets nothing
    assert merged["clusters"] == [_cluster("c", "https://a:6443", **{"certificate-authority": "/dir/a/a/ca.crt"})]
    users = {u["name"]: u["user"] for u in merged["users"]}
    assert users["u"] == {
        "client-certificate": "/dir/b/u.crt",
        "client-key": "/abs/u.key",  # absolute: kept
        "tokenFile": "/dir/b/tok",
    }
    assert users["plugin"]["exec"]["command"] == os.path.join("/dir/b", "./bin/auth")
    assert users["on-path"]["exec"]["command"] == "aws"  # a program on PATH, not a path
    assert merged["contexts"] == [_context("late", "c", "u")]


def test_load_merges_every_existing_file_of_kubeconfig(tmp_path, monkeypatch):
    one = _write(tmp_path / "one", {"clusters": [_cluster("c1", "https://one:6443")], "contexts": []})
    two = _write(
        tmp_path / "two",
        {
            "current-context": "ctx",
            "users": [_user("u", tokenFile="token")],
            "contexts": [_context("ctx", "c1", "u")],
        },
    )
    three = _write(tmp_path / "three", {"clusters": [_cluster("c1", "https://three:6443")]})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([one, str(tmp_path / "absent"), two, three]))

    config, source = K.load(None)

    assert source == os.pathsep.join([one, two, three])  # the missing file is skipped
    single = K.select(config, source, None)
    assert single.context_name == "ctx"
    assert single.cluster.server == "https://one:6443"
    assert single.user.token_file == str(tmp_path / "two" / "token")


def test_a_context_only_a_later_file_defines_is_selectable_and_errors_name_every_file(tmp_path, monkeypatch):
    one = _write(tmp_path / "one", {"current-context": "a", "clusters": [_cluster("c", "https://c")]})
    two = _write(
        tmp_path / "two",
        {"users": [_user("v", token="t")], "contexts": [_context("a", "c", "u"), _context("b", "c", "v")]},
    )
    (tmp_path / "empty").write_text("")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "empty"), one, two]))

    config, source = K.load(None)
    assert K.select(config, source, "b").context_name == "b"
    with pytest.raises(K.KubeconfigError) as raised:
        K.select(config, source, "a")  # names user u, which no file defines
    assert str(raised.value) == (
        f"kubeconfig {os.pathsep.join([str(tmp_path / 'empty'), one, two])}: "
        "context 'a' names user 'u', which it does not define"
    )


def test_a_broken_file_of_the_list_is_named(tmp_path, monkeypatch):
    good = _write(tmp_path / "good", {"clusters": [_cluster("c", "https://c")], "contexts": [_context("x", "c", "")]})
    bad = tmp_path / "bad.yaml"
    bad.write_text("clusters: [\n  {name: x\n")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([good, str(bad)]))
    with pytest.raises(K.KubeconfigError, match=rf"^kubeconfig {bad}: not valid YAML"):
        K.load(None)


@pytest.mark.asyncio
async def test_the_live_backend_uses_the_merged_files(kmock, tmp_path, monkeypatch):
    """The current context is set by the first file, defined by the second (with a ``tokenFile``
    relative to the second file's directory), its cluster by the third: the requests go to kmock
    with that token."""
    from lightkube.resources.apps_v1 import StatefulSet

    from pulumi_lws.cluster.live import LiveCluster

    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "token").write_text("from-the-second-file\n")
    one = _write(tmp_path / "one", {"current-context": "kmock", "contexts": [], "clusters": []})
    two = _write(
        tmp_path / "two",
        {"users": [_user("u", tokenFile="token")], "contexts": [_context("kmock", "kmock", "u")]},
    )
    three = _write(tmp_path / "three", {"clusters": [_cluster("kmock", str(kmock.url).rstrip("/"))]})
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([one, two, three]))
    kmock.resources["apps/v1/statefulsets"] = {}

    live = LiveCluster.from_kubeconfig()
    await asyncio.to_thread(lambda: list(live.client.list(StatefulSet, namespace="serving")))

    assert live.context == "kmock" and live.server == str(kmock.url).rstrip("/")
    request = next(r for r in kmock if r.resource is not None)
    assert request.headers.get("Authorization") == "Bearer from-the-second-file"
