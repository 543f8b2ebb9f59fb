"""Webhook settings, read from django.conf.settings at call time (so tests can override them
with the `settings` fixture). They come from the environment in config/settings/webhooks.py; the
README's environment table and docs/reference/webhooks.md ("Dispatcher settings") list them."""

from django.conf import settings

# Delays before attempts 2..5, after each failure (docs/reference/webhooks.md, "Retry schedule").
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
    """How long a claimed delivery is reserved for its holder. It must outlast one attempt
    (the timeout) plus the bookkeeping; after it a crashed worker's rows are claimed again."""
    value = settings.WEBHOOK_LEASE_SECONDS
    return float(value) if value is not None else timeout_seconds() + 30.0


def dispatch_batch_size() -> int:
    """Due rows one look for work reads to choose the webhooks to start."""
    return int(settings.WEBHOOK_DISPATCH_BATCH)


def dispatch_threads() -> int:
    """Webhooks one dispatcher process sends to at the same time (1: the caller's thread)."""
    return int(settings.WEBHOOK_DISPATCH_THREADS)


def max_per_customer() -> int:
    return int(settings.WEBHOOK_MAX_PER_CUSTOMER)


def dispatch_per_webhook() -> int:
    """Rows of one webhook taken by one claim (sent in order by its holder)."""
    return max(1, int(settings.WEBHOOK_DISPATCH_PER_WEBHOOK))


def dispatch_per_customer() -> int:
    """Webhooks of one customer being sent to at the same time, across all workers."""
    return max(1, int(settings.WEBHOOK_DISPATCH_PER_CUSTOMER))


def dispatch_slice_seconds() -> float:
    """How long a holder keeps its webhook before it lets others have its sender when they
    wait for one."""
    return float(settings.WEBHOOK_DISPATCH_SLICE_SECONDS)


def outcome_batch() -> int:
    return max(1, int(settings.WEBHOOK_OUTCOME_BATCH))


def outcome_flush_seconds() -> float:
    return float(settings.WEBHOOK_OUTCOME_FLUSH_SECONDS)


def outcome_writers() -> int:
    """Threads per process writing the holders' outcomes and claiming ahead for them."""
    return max(1, int(settings.WEBHOOK_OUTCOME_WRITERS))


def backoff_base_seconds() -> float:
    return float(settings.WEBHOOK_BACKOFF_BASE_SECONDS)


def backoff_max_seconds() -> float:
    return float(settings.WEBHOOK_BACKOFF_MAX_SECONDS)


def internal_error_retry_seconds() -> float:
    return float(settings.WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS)


def max_connections_per_host() -> int:
    return int(settings.WEBHOOK_MAX_CONNECTIONS_PER_HOST)


def keepalive_seconds() -> float:
    """How long an idle connection to a webhook is kept for its next delivery; 0 sends every
    attempt over a connection of its own (`Connection: close`)."""
    return float(settings.WEBHOOK_KEEPALIVE_SECONDS)


def test_per_minute() -> int:
    return int(settings.WEBHOOK_TEST_PER_MINUTE)


def test_wait_seconds() -> float:
    return float(settings.WEBHOOK_TEST_WAIT_SECONDS)


def test_threads() -> int:
    return max(1, int(settings.WEBHOOK_TEST_THREADS))
