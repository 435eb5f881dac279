"""``secure:`` values of ``Pulumi.<stack>.yaml`` under ``pulumi-lws preview|up``: Pulumi's passphrase
secrets provider (pulumi_lws/cli/stack/secrets.py), on the committed fixture stack
``tests/cli/stack_project/Pulumi.secure.yaml`` (passphrase ``correct horse battery staple``)."""

from __future__ import annotations

import base64
import json
import pathlib
import shutil

import pytest

from pulumi_lws.cli import main
from pulumi_lws.cli.stack.project import load_project, stack_config
from pulumi_lws.cli.stack.secrets import (
    PASSPHRASE_ENV,
    PASSPHRASE_FILE_ENV,
    IncorrectPassphrase,
    SecretsError,
    SymmetricCrypter,
    crypter_from_state,
    new_encryption_salt,
)

PROJECT = pathlib.Path(__file__).resolve().parent / "stack_project"
PASSPHRASE = "correct horse battery staple"
TOKEN = "hf_from_the_stack_file"
#: a state written by the Pulumi CLI itself, with passphrase "password" (pulumi/pulumi
#: pkg/secrets/passphrase/manager_test.go): the check here accepts what Pulumi wrote
PULUMI_WRITTEN_STATE = "v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ=="


@pytest.fixture
def project(tmp_path, monkeypatch) -> pathlib.Path:
    target = tmp_path / "inference"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".pulumi-lws", "__pycache__"))
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    monkeypatch.delenv(PASSPHRASE_FILE_ENV, raising=False)
    return target


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_state_written_by_the_pulumi_cli_checks_with_its_passphrase_and_not_another():
    crypter_from_state("password", PULUMI_WRITTEN_STATE)
    with pytest.raises(IncorrectPassphrase):
        crypter_from_state("password123", PULUMI_WRITTEN_STATE)
    with pytest.raises(IncorrectPassphrase):
        crypter_from_state("", PULUMI_WRITTEN_STATE)  # an empty passphrase is a wrong one (manager_test.go)


def test_round_trip_in_pulumis_format():
    state, crypter = new_encryption_salt("pw", salt=b"12345678")
    version, salt, check = state.split(":", 2)
    assert version == "v1" and salt == "MTIzNDU2Nzg=" and check.startswith("v1:")
    value = crypter.encrypt("a secret", nonce=b"\0" * 12)
    v, nonce, sealed = value.split(":")
    assert (v, nonce) == ("v1", "AAAAAAAAAAAAAAAA")
    assert len(base64.b64decode(sealed)) == len("a secret") + 16  # the GCM tag appended to the ciphertext
    assert crypter_from_state("pw", state).decrypt(value) == "a secret"
    tampered = value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB")
    with pytest.raises(ValueError, match="authentication"):
        crypter.decrypt(tampered)
    with pytest.raises(ValueError, match="nonce size"):
        crypter.decrypt("v1:AAAA:" + sealed)
    other = SymmetricCrypter.from_passphrase("pw", b"87654321")
    with pytest.raises(ValueError):
        other.decrypt(value)


def test_the_fixture_stack_decrypts_with_the_passphrase_every_secure_value_a_secret(project, monkeypatch):
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    config = stack_config(load_project(project), "secure")
    assert config.values["inference:token"] == TOKEN
    assert json.loads(config.values["inference:database"]) == {"user": "app", "password": "s3cr3t-db"}
    assert config.secret_keys == {"inference:token", "inference:database"}
    assert config.values["inference:image"] == "vllm/vllm-openai:v0.8.0"


def test_the_passphrase_file_is_read_trimmed_as_pulumi_reads_it(project, monkeypatch, tmp_path):
    phrase = tmp_path / "phrase"
    phrase.write_text(PASSPHRASE + "\n")
    monkeypatch.setenv(PASSPHRASE_FILE_ENV, str(phrase))
    assert stack_config(load_project(project), "secure").values["inference:token"] == TOKEN


def test_up_of_the_fixture_stack_reaches_the_program_as_a_secret_and_is_never_printed(project, monkeypatch, capsys):
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    code, out, err = cli(capsys, "up", str(project), "--stack", "secure")
    assert code == 0, err
    assert TOKEN not in out and TOKEN not in err and "s3cr3t-db" not in out
    assert "  token        : [secret]" in out
    state = project / ".pulumi-lws" / "secure"
    assert TOKEN not in (state / "stack.json").read_text()  # only digests in the stack's state
    objects = [entry["object"] for entry in json.loads((state / "cluster.json").read_text())["objects"]]
    secret = next(o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == "hf-token")
    assert secret["stringData"] == {"token": TOKEN}  # the cluster's Secret holds the decrypted value


def test_get_and_require_secret_read_the_decrypted_value(project, monkeypatch, capsys):
    main_py = project / "__main__.py"
    main_py.write_text(
        main_py.read_text()
        + "\nplain = config.get('token')\n"
        + "pulumi.export('tokenLength', len(plain))\n"
        + "pulumi.export('required', config.require_secret('token'))\n"
    )
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    code, out, err = cli(capsys, "preview", str(project), "--stack", "secure")
    assert code == 0, err
    assert f"tokenLength  : {len(TOKEN)}" in out and "required     : [secret]" in out and TOKEN not in out


@pytest.mark.parametrize("phrase", [None, "wrong passphrase"])
def test_a_missing_or_wrong_passphrase_is_exit_2_naming_the_stack_file_and_the_variables(
    project, monkeypatch, capsys, phrase
):
    if phrase is not None:
        monkeypatch.setenv(PASSPHRASE_ENV, phrase)
    code, out, err = cli(capsys, "up", str(project), "--stack", "secure")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "Pulumi.secure.yaml" in err and PASSPHRASE_ENV in err and PASSPHRASE_FILE_ENV in err
    assert ("incorrect passphrase" in err) == (phrase is not None)
    assert not (project / ".pulumi-lws").exists()


def test_config_secret_overrides_a_secure_value_and_then_no_passphrase_is_needed(project, monkeypatch, capsys):
    stack_file = project / "Pulumi.secure.yaml"
    stack_file.write_text(stack_file.read_text().split("  inference:database:")[0])
    code, out, err = cli(capsys, "preview", str(project), "-s", "secure", "--config-secret", "token=tok_given_9")
    assert code == 0, err
    assert "tok_given_9" not in out and "  + token        : [secret]" in out


def test_another_secrets_provider_is_refused_with_exit_2(project, capsys):
    stack_file = project / "Pulumi.secure.yaml"
    text = stack_file.read_text().replace("encryptionsalt: v1:", "secretsprovider: awskms://alias/x?region=eu\n#")
    stack_file.write_text(text)
    code, out, err = cli(capsys, "preview", str(project), "-s", "secure")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "'awskms://alias/x'" in err and "only the passphrase secrets provider" in err and "--config-secret" in err


def test_a_secure_value_without_encryptionsalt_is_the_service_provider_refused_with_exit_2(project, capsys):
    stack_file = project / "Pulumi.dev.yaml"
    stack_file.write_text(stack_file.read_text() + "  inference:token:\n    secure: v1:abc:def\n")
    code, out, err = cli(capsys, "preview", str(project))
    assert code == 2 and out == ""
    assert "Pulumi.dev.yaml: inference:token" in err and "only the passphrase secrets provider" in err
    assert cli(capsys, "preview", str(project), "--config-secret", "token=x")[0] == 0


def test_a_corrupt_secure_value_names_its_key(project, monkeypatch, capsys):
    stack_file = project / "Pulumi.secure.yaml"
    stack_file.write_text(stack_file.read_text().replace("OvT9VxKF", "OvT9VxKG"))
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    with pytest.raises(SecretsError, match="inference:token: cannot decrypt"):
        stack_config(load_project(project), "secure")


def test_config_file_replaces_the_stack_file_as_pulumi_up_config_file_does(project, monkeypatch, capsys, tmp_path):
    elsewhere = tmp_path / "ci-config.yaml"
    (project / "Pulumi.secure.yaml").rename(elsewhere)
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    code, out, err = cli(capsys, "preview", str(project), "-s", "ci", "--config-file", str(elsewhere))
    assert code == 0, err
    assert "Previewing update (ci)" in out and "  + token        : [secret]" in out and TOKEN not in out
    monkeypatch.setenv(PASSPHRASE_ENV, "wrong")
    code, _, err = cli(capsys, "preview", str(project), "-s", "ci", "--config-file", str(elsewhere))
    assert code == 2 and "ci-config.yaml" in err
    code, _, err = cli(capsys, "up", str(project), "--config-file", str(tmp_path / "missing.yaml"))
    assert code == 2 and "--config-file" in err and "no such file" in err
