"""Standard Webhooks signing (standardwebhooks.com; docs/reference/webhooks.md, "Signatures")."""

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)


def secret_generate() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def _key(secret: str) -> bytes:
    raw = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
    return base64.b64decode(raw)


def signature(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    to_sign = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), to_sign, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signature_header(*, secrets_in_order: list[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """One `v1,<sig>` per valid secret, space-separated, the newest first."""
    return " ".join(
        signature(secret=s, msg_id=msg_id, timestamp=timestamp, body=body) for s in secrets_in_order
    )
