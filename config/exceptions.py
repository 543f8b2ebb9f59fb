"""The one error type of the domain: every DomainError becomes a problem document
(docs/reference/errors.md)."""

from rest_framework.exceptions import PermissionDenied

from config.jsondoc import JSONObject


class DomainError(Exception):
    code = "VALIDATION_ERROR"
    status = 400
    title = "Invalid request"

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        status: int | None = None,
        title: str | None = None,
        errors: list[JSONObject] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        if status:
            self.status = status
        if title:
            self.title = title
        self.errors = errors or []
        self.headers = headers or {}


class ValidationFailed(DomainError):
    code = "VALIDATION_ERROR"
    status = 400
    title = "Invalid request"


class NotFound(DomainError):
    code = "NOT_FOUND"
    status = 404
    title = "Not found"


class Conflict(DomainError):
    status = 409
    title = "Conflict"


class RateLimited(DomainError):
    code = "RATE_LIMIT_EXCEEDED"
    status = 429
    title = "Rate limit exceeded"

    def __init__(self, detail: str, *, retry_after: float, code: str | None = None) -> None:
        seconds = max(1, int(-(-retry_after // 1)))
        super().__init__(detail, code=code, headers={"Retry-After": str(seconds)})
        self.retry_after = seconds


class AdminRequired(PermissionDenied):
    default_detail = "This endpoint requires an admin API key."


class HealthProblem(RuntimeError):
    """A failed /health check (an app's `engine.health_checks`) whose message is safe to show
    on the public endpoint: no path, no secret (config/health.py)."""
