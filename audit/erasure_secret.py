"""The secret that keys an erasure's digest of the value it erased (docs/reference/erasure.md,
"Erasures"): the service's DJANGO_SECRET_KEY when one is set; on the embedded
default, which may run without one, a random secret generated once in the data folder (like
the checkpoint key), never the public development key, so the digest of a low-entropy id
cannot be reversed by trying values."""

import os
import secrets
import threading
from pathlib import Path

from django.conf import settings

FILE_NAME = "erasure-secret"
_lock = threading.Lock()
_cache: dict[Path, bytes] = {}


def secret_path() -> Path:
    return Path(settings.DATA_DIR) / FILE_NAME


def _generate(path: Path) -> None:
    """Create the file, owner-only, exactly once even when several processes start together
    (O_EXCL then a link: the loser reads the winner's file)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(32) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def erasure_secret() -> bytes:
    key: str = settings.SECRET_KEY
    if key and key != settings.INSECURE_SECRET_KEY:
        return key.encode()
    path = secret_path()
    with _lock:
        found = _cache.get(path)
        if found is None:
            if not path.exists():
                _generate(path)
            found = path.read_text(encoding="ascii").strip().encode()
            if len(found) < 64:
                raise RuntimeError(
                    f"{path}: the erasure secret is shorter than 32 bytes; restore it from a backup"
                )
            _cache[path] = found
        return found
