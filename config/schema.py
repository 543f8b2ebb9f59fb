"""OpenAPI generation: every operation documents the problem-document errors of C2, so a
schema-driven fuzzer can hold the service to its error contract."""

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from config.api import PROBLEM_CONTENT_TYPE


class ProblemFieldError(serializers.Serializer):
    field = serializers.CharField()
    message = serializers.CharField()


class Problem(serializers.Serializer):
    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()
    errors = ProblemFieldError(many=True, required=False)  # type: ignore[assignment]  # the wire name
    request_id = serializers.CharField(allow_null=True)


ERROR_STATUSES = {
    "400": "Invalid request (VALIDATION_ERROR, INVALID_JSON, or a named domain code)",
    "401": "AUTHENTICATION_REQUIRED or INVALID_API_KEY",
    "403": "ADMIN_REQUIRED",
    "404": "NOT_FOUND (unknown id, or another customer's)",
    "405": "METHOD_NOT_ALLOWED",
    "406": "NOT_ACCEPTABLE",
    "409": "Conflict (a named domain code)",
    "413": "PAYLOAD_TOO_LARGE",
    "415": "UNSUPPORTED_MEDIA_TYPE",
    "429": "RATE_LIMIT_EXCEEDED or a named per-customer limit; carries Retry-After",
    "500": "INTERNAL_ERROR",
    "503": "SERVICE_UNAVAILABLE",
}


class TrustcalAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code, description in ERROR_STATUSES.items():
            if code in responses:
                content = responses[code].setdefault("content", {})
                if PROBLEM_CONTENT_TYPE not in content:
                    problem = self._get_response_for_code(Problem, code, [PROBLEM_CONTENT_TYPE], direction)
                    content.update(problem["content"])
                continue
            response = self._get_response_for_code(Problem, code, [PROBLEM_CONTENT_TYPE], direction)
            response["description"] = description
            responses[code] = response
        return responses


def canonical_paths(endpoints, **kwargs):
    """Preprocessing hook: document each path once, without the optional trailing slash (C1)."""
    seen = set()
    result = []
    for path, path_regex, method, callback in endpoints:
        if path.endswith("/") and path != "/":
            path = path.rstrip("/")
        if (path, method) in seen:
            continue
        seen.add((path, method))
        result.append((path, path_regex, method, callback))
    return result
