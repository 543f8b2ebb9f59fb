"""The named errors of the fairness integration (docs/reference/errors.md, Error codes)."""

from config.exceptions import DomainError, RateLimited


class InvalidSource(DomainError):
    code = "FAIRNESS_INVALID_SOURCE"
    title = "Unknown external tool"


class InvalidMetric(DomainError):
    code = "FAIRNESS_INVALID_METRIC"
    title = "Unsupported metric"


class SignalInFuture(DomainError):
    code = "SIGNAL_IN_FUTURE"
    title = "Signal timestamp in the future"


class SignalTooOld(DomainError):
    code = "SIGNAL_TOO_OLD"
    title = "Signal too old"


class FairnessRateLimited(RateLimited):
    title = "Fairness signal limit exceeded"

    def __init__(self, detail: str, *, retry_after: float) -> None:
        super().__init__(detail, retry_after=retry_after, code="FAIRNESS_RATE_LIMIT")


class AmplificationRateLimited(RateLimited):
    title = "Amplification analysis limit exceeded"

    def __init__(self, detail: str, *, retry_after: float) -> None:
        super().__init__(detail, retry_after=retry_after, code="AMPLIFICATION_RATE_LIMIT")
