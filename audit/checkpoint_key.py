"""The checkpoint signing key (docs/reference/checkpoints.md, "The signing key"): read from
TRUSTCAL_CHECKPOINT_KEY's file, or generated once in the data folder for the embedded default,
and the names a checkpoint is signed and verified under. `audit.checkpoints` signs with it;
/health reports `key_problem`."""

import base64
import functools
import os
import threading
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.db import DatabaseError

from audit import note
from audit.exceptions import CheckpointKeyError
from audit.models import SignedCheckpoint

_key_lock = threading.Lock()


def _key_from_bytes(raw: bytes, path: Path) -> Ed25519PrivateKey:
    text = raw.strip()
    if text.startswith(b"-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(text, password=None)
        except (ValueError, TypeError) as exc:
            raise CheckpointKeyError(
                f"TRUSTCAL_CHECKPOINT_KEY: {path}: not a readable PEM private key"
            ) from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise CheckpointKeyError(f"TRUSTCAL_CHECKPOINT_KEY: {path}: the PEM key is not an Ed25519 key")
        return key
    try:
        seed = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise CheckpointKeyError(f"TRUSTCAL_CHECKPOINT_KEY: {path}: neither PEM nor a base64 seed") from exc
    if len(seed) != 32:
        raise CheckpointKeyError(f"TRUSTCAL_CHECKPOINT_KEY: {path}: an Ed25519 seed is 32 bytes")
    return Ed25519PrivateKey.from_private_bytes(seed)


def _generate(path: Path) -> None:
    """Create the embedded default's key file, owner-only, exactly once even when several
    processes start together (O_EXCL: the loser reads the winner's file)."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)  # atomic, and fails when another process got there first
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def key_path() -> tuple[Path, bool]:
    """The key file, and whether it is configured (TRUSTCAL_CHECKPOINT_KEY) rather than the
    embedded default's generated one in the data folder."""
    configured = settings.TRUSTCAL_CHECKPOINT_KEY
    return (Path(configured), True) if configured else (Path(settings.TRUSTCAL_CHECKPOINT_KEY_DEFAULT), False)


def _checkpoints_signed() -> int:
    """How many checkpoints exist (0 when the table cannot be read yet: before migrations)."""
    try:
        return SignedCheckpoint.objects.count()
    except DatabaseError:
        return 0


def _read_key_file(path: Path) -> bytes:
    try:
        mode = path.stat().st_mode
        raw = path.read_bytes()
    except OSError as exc:
        raise CheckpointKeyError(
            f"TRUSTCAL_CHECKPOINT_KEY: cannot read {path} ({exc.strerror or type(exc).__name__})."
        ) from exc
    if mode & 0o077:
        raise CheckpointKeyError(
            f"TRUSTCAL_CHECKPOINT_KEY: {path} is readable by group or others (mode "
            f"{oct(mode & 0o777)}); a signing key must be owner-only: chmod 600 {path}."
        )
    return raw


@functools.cache
def signing_key() -> Ed25519PrivateKey:
    """The checkpoint signing key: TRUSTCAL_CHECKPOINT_KEY's file, or the data folder's,
    generated on first use when that setting is unset and no checkpoint exists yet. A
    generated key that went missing while checkpoints signed by it exist is never replaced:
    a new key would make every earlier checkpoint fail verification."""
    path, configured = key_path()
    with _key_lock:
        if not configured and not path.exists():
            signed = _checkpoints_signed()
            if signed:
                raise CheckpointKeyError(
                    f"The generated checkpoint signing key {path} is missing, and {signed} "
                    "checkpoints signed by it exist: a new key would make them all fail "
                    f"verification. Restore the file from a backup to {path} (mode 0600), or set "
                    "TRUSTCAL_CHECKPOINT_KEY to a copy of it."
                )
            _generate(path)
        raw = _read_key_file(path)
    return _key_from_bytes(raw, path)


def key_problem() -> str | None:
    """Why checkpoints cannot be signed now (None when the key is readable): /health shows it
    and checkpoints are paused until it is fixed; logging goes on."""
    try:
        signing_key()
    except CheckpointKeyError as exc:
        return exc.detail
    return None


def key_name() -> str:
    return str(settings.TRUSTCAL_LOG_ORIGIN)


def public_key() -> bytes:
    return note.public_bytes(signing_key())


def verifier_key() -> str:
    return note.verifier_key(key_name(), public_key())


def origin(customer_id: str) -> str:
    return f"{settings.TRUSTCAL_LOG_ORIGIN}/{customer_id}"


def verifier() -> note.Verifier:
    return note.parse_verifier_key(verifier_key())
