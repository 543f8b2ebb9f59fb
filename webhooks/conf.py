"""Webhook settings read at call time (so tests can override them with the `settings`
fixture); WEBHOOK_LEASE_SECONDS may also come from the environment of a worker process."""

import environ
from django.conf import settings

_env = environ.Env()

# Delays before attempts 2..5, after each failure (C9).
RETRY_DELAYS_SECONDS = (60, 5 * 60, 30 * 60, 2 * 60 * 60)
MAX_ATTEMPTS = len(RETRY_DELAYS_SECONDS) + 1
SECRET_GRACE_HOURS = 24
RESPONSE_BODY_LIMIT = 2048
DISABLED_REASON_FAILURES = "delivery_failures"


def timeout_seconds() -> float:
    return float(settings.WEBHOOK_TIMEOUT_SECONDS)


def allow_insecure_urls() -> bool:
    return bool(settings.WEBHOOK_ALLOW_INSECURE_URLS)


def lease_seconds() -> float:
    """How long a claimed delivery is reserved for its worker. It must outlast one attempt
    (the timeout) plus the bookkeeping; after it a crashed worker's rows are claimed again."""
    value = getattr(settings, "WEBHOOK_LEASE_SECONDS", None)
    if value is None:
        value = _env.float("WEBHOOK_LEASE_SECONDS", default=timeout_seconds() + 30.0)
    return float(value)


def dispatch_batch_size() -> int:
    value = getattr(settings, "WEBHOOK_DISPATCH_BATCH", None)
    return int(value if value is not None else _env.int("WEBHOOK_DISPATCH_BATCH", default=100))


def dispatch_threads() -> int:
    value = getattr(settings, "WEBHOOK_DISPATCH_THREADS", None)
    return int(value if value is not None else _env.int("WEBHOOK_DISPATCH_THREADS", default=4))
