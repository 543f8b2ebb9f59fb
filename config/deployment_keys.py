"""One checkpoint key and one secret key on every host (docs/deploy.md, "One key and one secret
everywhere"). The first process of a deployment records each key's fingerprint in the
database; a process whose key has another fingerprint refuses to start (trustcal.E007 for
DJANGO_SECRET_KEY, trustcal.E008 for the checkpoint key), instead of signing sessions or
checkpoints that the other hosts cannot check. A rotation ends with
`python manage.py deployment_keys --register`, run on a host that has the new key.

A fingerprint reveals nothing of its key: the secret key's is an HMAC keyed by the secret
over a fixed text, the checkpoint key's the SHA-256 of its public key."""

import hashlib
import hmac

from django.db import DatabaseError, transaction

from config.models import DeploymentKey

SECRET_KEY = "secret_key"  # noqa: S105 (the row's name, not a key)
CHECKPOINT_KEY = "checkpoint_key"


def secret_fingerprint(secret: str) -> str:
    return hmac.new(secret.encode(), b"trustcal deployment fingerprint", hashlib.sha256).hexdigest()


def public_key_fingerprint(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()


def fingerprint_claim(name: str, fingerprint: str) -> str | None:
    """The deployment's fingerprint of `name`: the one recorded, or `fingerprint`, recorded now
    if none was. None when it cannot be read (before the first migrate, or the database down:
    other checks and /health say so)."""
    try:
        with transaction.atomic():
            row, _ = DeploymentKey.objects.get_or_create(name=name, defaults={"fingerprint": fingerprint})
    except DatabaseError:
        return None
    return row.fingerprint


def fingerprint_register(name: str, fingerprint: str) -> None:
    DeploymentKey.objects.update_or_create(name=name, defaults={"fingerprint": fingerprint})


def fingerprints_registered() -> dict[str, str]:
    return dict(DeploymentKey.objects.values_list("name", "fingerprint"))
