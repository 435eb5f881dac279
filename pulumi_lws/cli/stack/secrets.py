"""Pulumi's passphrase secrets provider: the ``secure:`` values of ``Pulumi.<stack>.yaml``.

The format is Pulumi's own (``pkg/secrets/passphrase/manager.go`` and
``sdk/go/common/resource/config/crypt.go`` of pulumi/pulumi), so a stack file written by
``pulumi config set --secret`` with the passphrase provider decrypts here and back:

- the stack file's ``encryptionsalt: v1:<base64 salt>:v1:<base64 nonce>:<base64 ciphertext>`` —
  the salt (8 random bytes when Pulumi makes it), then the word ``pulumi`` encrypted with the key,
  which is how a passphrase is checked (``symmetricCrypterFromPhraseAndState``);
- the key: PBKDF2-HMAC-SHA256(passphrase, salt, 1,000,000 iterations, 32 bytes)
  (``NewSymmetricCrypterFromPassphrase``);
- each value ``secure: v1:<base64 nonce>:<base64 ciphertext>``: AES-256-GCM with a 12-byte nonce,
  the 16-byte tag appended to the ciphertext, no associated data (``symmetricCrypter``);
- the passphrase: ``PULUMI_CONFIG_PASSPHRASE`` when set (even empty), else the trimmed content of
  the file ``PULUMI_CONFIG_PASSPHRASE_FILE`` names (``readPassphrase``). There is no prompt here.

Invariant: a plaintext is only returned after the passphrase check succeeded and the value's
GCM tag verified; every failure is a :class:`SecretsError` (bad input, exit 2) naming the stack
file and what to set, never a traceback and never the ciphertext used as a value.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import pathlib

from pulumi_lws.cli.stack.errors import ProjectError

PASSPHRASE_ENV = "PULUMI_CONFIG_PASSPHRASE"
PASSPHRASE_FILE_ENV = "PULUMI_CONFIG_PASSPHRASE_FILE"
PBKDF2_ITERATIONS = 1_000_000
KEY_BYTES = 32
NONCE_BYTES = 12
SALT_BYTES = 8
CHECK_PLAINTEXT = "pulumi"  # what the salt's ciphertext decrypts to under the right passphrase


class SecretsError(ProjectError):
    """A ``secure:`` value cannot be decrypted: no or a wrong passphrase, another secrets provider,
    or a malformed value (exit 2)."""


class IncorrectPassphrase(SecretsError):
    pass


class SymmetricCrypter:
    """AES-256-GCM with a 32-byte key, values as ``v1:<base64 nonce>:<base64 ciphertext+tag>``."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError("AES-256-GCM needs a 32 byte key")
        self._key = key

    @classmethod
    def from_passphrase(cls, passphrase: str, salt: bytes) -> SymmetricCrypter:
        return cls(_derive_key(passphrase, salt))

    def encrypt(self, plaintext: str, nonce: bytes | None = None) -> str:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
        sealed = AESGCM(self._key).encrypt(nonce, plaintext.encode(), None)
        return f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"

    def decrypt(self, value: str) -> str:
        """The plaintext of ``value``; ValueError when malformed or its tag does not verify."""
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        parts = value.split(":")
        if len(parts) != 3:
            raise ValueError("bad value")
        if parts[0] != "v1":
            raise ValueError("unknown value version")
        try:
            nonce = base64.b64decode(parts[1], validate=True)
            sealed = base64.b64decode(parts[2], validate=True)
        except binascii.Error as exc:
            raise ValueError(f"bad value: {exc}") from exc
        if len(nonce) != NONCE_BYTES:
            raise ValueError("bad value: nonce size is incorrect")
        try:
            return AESGCM(self._key).decrypt(nonce, sealed, None).decode()
        except InvalidTag as exc:
            raise ValueError("message authentication failed") from exc


@functools.lru_cache(maxsize=8)
def _derive_key(passphrase: str, salt: bytes) -> bytes:
    """PBKDF2 with a million rounds takes about a second: once per (passphrase, salt) per process
    (Pulumi caches its secrets manager per state too)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, iterations=PBKDF2_ITERATIONS)
    return kdf.derive(passphrase.encode())


def new_encryption_salt(passphrase: str, salt: bytes | None = None) -> tuple[str, SymmetricCrypter]:
    """A fresh ``encryptionsalt`` for ``passphrase`` and its crypter (``NewPassphraseSecretsManager``)."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    crypter = SymmetricCrypter.from_passphrase(passphrase, salt)
    return f"v1:{base64.b64encode(salt).decode()}:{crypter.encrypt(CHECK_PLAINTEXT)}", crypter


def crypter_from_state(passphrase: str, state: str) -> SymmetricCrypter:
    """The crypter of ``encryptionsalt`` ``state`` once ``passphrase`` is checked against it."""
    version, sep, rest = state.partition(":")
    salt_b64, sep2, check = rest.partition(":")
    if not sep or not sep2:
        raise ValueError("malformed encryptionsalt (expected v1:<salt>:v1:<nonce>:<ciphertext>)")
    if version != "v1":
        raise ValueError(f"unknown encryptionsalt version {version!r}")
    try:
        salt = base64.b64decode(salt_b64, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"malformed encryptionsalt: {exc}") from exc
    crypter = SymmetricCrypter.from_passphrase(passphrase, salt)
    try:
        ok = crypter.decrypt(check) == CHECK_PLAINTEXT
    except ValueError:
        ok = False
    if not ok:
        raise IncorrectPassphrase("incorrect passphrase")
    return crypter


def read_passphrase(environ: os._Environ[str] | dict[str, str] | None = None) -> str | None:
    """The passphrase as the Pulumi CLI reads it without a terminal; None when neither is set."""
    env = os.environ if environ is None else environ
    if PASSPHRASE_ENV in env:
        return env[PASSPHRASE_ENV]
    path = env.get(PASSPHRASE_FILE_ENV)
    if path:
        try:
            return pathlib.Path(path).read_text().strip()
        except OSError as exc:
            raise SecretsError(f"unable to read {PASSPHRASE_FILE_ENV} ({path}): {exc.strerror or exc}") from exc
    return None


def stack_crypter(doc: dict, stack_file: pathlib.Path, keys: list[str]) -> SymmetricCrypter:
    """The crypter for the ``secure:`` values of ``keys`` in the stack file ``doc`` (see module)."""
    where = f"{stack_file.name}: {', '.join(keys)}"
    provider = str(doc.get("secretsprovider") or "")
    state = doc.get("encryptionsalt")
    if provider and provider != "passphrase":
        raise SecretsError(
            f"{where}: encrypted by the secrets provider {provider.split('?', 1)[0]!r}; the embedded "
            "engine supports only the passphrase secrets provider (encryptionsalt:); give the plain "
            "values with --config-secret KEY=VALUE"
        )
    if not isinstance(state, str) or not state:
        raise SecretsError(
            f"{where}: secure values without an encryptionsalt are encrypted by the Pulumi Cloud "
            "service's secrets provider; the embedded engine supports only the passphrase secrets "
            "provider; give the plain values with --config-secret KEY=VALUE"
        )
    passphrase = read_passphrase()
    if passphrase is None:
        raise SecretsError(
            f"{where}: secure values need the stack's passphrase: set {PASSPHRASE_ENV} or "
            f"{PASSPHRASE_FILE_ENV} (or give the plain values with --config-secret KEY=VALUE)"
        )
    try:
        return crypter_from_state(passphrase, state)
    except IncorrectPassphrase:
        raise SecretsError(
            f"{stack_file.name}: incorrect passphrase for stack file {stack_file}: set {PASSPHRASE_ENV} "
            f"to the correct passphrase or {PASSPHRASE_FILE_ENV} to a file containing it"
        ) from None
    except ValueError as exc:
        raise SecretsError(f"{stack_file.name}: encryptionsalt: {exc}") from None
