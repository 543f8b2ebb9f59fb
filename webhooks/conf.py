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
    return int(value if value is not None else _env.int("WEBHOOK_DISPATCH_THREADS", default=8))


def max_per_customer() -> int:
    return int(getattr(settings, "WEBHOOK_MAX_PER_CUSTOMER", 25))


def _setting(name: str, default: float) -> float:
    value = getattr(settings, name, None)
    return float(value if value is not None else _env.float(name, default=default))


def dispatch_per_webhook() -> int:
    """Rows of one webhook taken by one claim (sent in order by one sender)."""
    return int(_setting("WEBHOOK_DISPATCH_PER_WEBHOOK", 50))


def dispatch_per_customer() -> int:
    """Webhooks of one customer being sent to at the same time, across all workers."""
    return int(_setting("WEBHOOK_DISPATCH_PER_CUSTOMER", 4))


def outcome_batch() -> int:
    return int(_setting("WEBHOOK_OUTCOME_BATCH", 25))


def outcome_flush_seconds() -> float:
    return _setting("WEBHOOK_OUTCOME_FLUSH_SECONDS", 0.05)


def outcome_writers() -> int:
    """Threads per process writing the senders' outcomes while they go on sending."""
    return max(1, int(_setting("WEBHOOK_OUTCOME_WRITERS", 2)))


def backoff_base_seconds() -> float:
    return _setting("WEBHOOK_BACKOFF_BASE_SECONDS", 5.0)


def backoff_max_seconds() -> float:
    return _setting("WEBHOOK_BACKOFF_MAX_SECONDS", 300.0)


def internal_error_retry_seconds() -> float:
    return _setting("WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS", 60.0)


def max_connections_per_host() -> int:
    return int(getattr(settings, "WEBHOOK_MAX_CONNECTIONS_PER_HOST", 8))


def keepalive_seconds() -> float:
    """How long an idle connection to a webhook is kept for its next delivery; 0 sends every
    attempt over a connection of its own (`Connection: close`)."""
    return _setting("WEBHOOK_KEEPALIVE_SECONDS", 2.0)


def test_per_minute() -> int:
    return int(getattr(settings, "WEBHOOK_TEST_PER_MINUTE", 10))


def test_wait_seconds() -> float:
    return float(getattr(settings, "WEBHOOK_TEST_WAIT_SECONDS", 3.0))


def test_threads() -> int:
    return int(_setting("WEBHOOK_TEST_THREADS", 4))
