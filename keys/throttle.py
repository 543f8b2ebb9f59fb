"""Failed authentication, throttled per client address: after AUTH_FAILURES_PER_MINUTE
failures in a fixed one-minute window, the address answers 429 without its key being looked
up, so keys cannot be guessed at the speed of the service (config/failures.py)."""

from django.conf import settings

from config.failures import FailureWindow

WINDOW_SECONDS = 60

auth_failures = FailureWindow(
    "authfail",
    limit=lambda: int(getattr(settings, "AUTH_FAILURES_PER_MINUTE", 20)),
    window_seconds=lambda: WINDOW_SECONDS,
)
