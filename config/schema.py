"""OpenAPI generation: every operation documents the problem-document errors
(docs/reference/errors.md), so a schema-driven fuzzer can hold the service to them."""

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from config.api import PROBLEM_CONTENT_TYPE
from config.scope_check import scope_needed


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
    "403": "ADMIN_REQUIRED or INSUFFICIENT_SCOPE (the key lacks the operation's x-required-scope)",
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
    def get_operation(self, *args, **kwargs):
        """The operation, with the key scope it needs as `x-required-scope` (config/scope_check.py)."""
        operation = super().get_operation(*args, **kwargs)
        scope = scope_needed(self.view, self.method)
        if operation is not None and scope is not None:
            operation["x-required-scope"] = str(scope)
        return operation

    def get_filter_backends(self):
        """Lists, and single-GET views whose answer is not a bare list but that declare a
        filterset (the oversight figures: their rows are paged inside the answer)."""
        if self.method == "GET" and getattr(self.view, "filterset_class", None) is not None:
            return getattr(self.view, "filter_backends", [])
        return super().get_filter_backends()

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
    """Preprocessing hook: document each path once, without the optional trailing slash
    (docs/reference/conventions.md, Base path and trailing slash)."""
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


# OpenAPI links: where an operation's response supplies the id another operation needs, so a
# schema-driven fuzzer (schemathesis' stateful phase) reaches the object endpoints with ids
# that exist instead of ids it made up. (source operation, status) -> [(target, parameter,
# runtime expression)].
_LINKS: dict[tuple[str, str], list[tuple[str, str, str]]] = {
    ("webhooks_create", "201"): [
        (op, "id", "$response.body#/webhook_id")
        for op in (
            "webhooks_retrieve",
            "webhooks_partial_update",
            "webhooks_destroy",
            "webhooks_deliveries_list",
            "webhooks_enable_create",
            "webhooks_rotate_secret_create",
            "webhooks_test_create",
        )
    ],
    ("admin_api_keys_create", "201"): [
        (op, "id", "$response.body#/key_id")
        for op in ("admin_api_keys_retrieve", "admin_api_keys_destroy", "admin_api_keys_rotate_create")
    ],
    ("model_fairness_signals_create", "201"): [
        ("model_fairness_signals_retrieve", "id", "$response.body#/id"),
        ("bias_amplification_analyze", "signalId", "$response.body#/id"),
        ("bias_amplification_retrieve", "id", "$response.body#/alertId"),
        ("bias_amplification_partial_update", "id", "$response.body#/alertId"),
    ],
    ("log_decision", "201"): [("audit_trail_retrieve", "id", "$response.body#/entry_id")],
    ("detect_bias_create", "200"): [("bias_feed_retrieve", "id", "$response.body#/alert_id")],
    ("export_create", "202"): [
        ("export_retrieve", "id", "$response.body#/export_id"),
        ("export_download", "id", "$response.body#/export_id"),
    ],
}


def operation_links(result: dict, generator, request, public) -> dict:
    """Postprocessing hook: adds the links above to the generated schema."""
    operations = {
        op.get("operationId"): op for item in result.get("paths", {}).values() for op in item.values()
    }
    for (source, status), targets in _LINKS.items():
        response = operations.get(source, {}).get("responses", {}).get(status)
        if response is None:
            continue
        links = response.setdefault("links", {})
        for target, parameter, expression in targets:
            if target in operations:
                links[target] = {"operationId": target, "parameters": {parameter: expression}}
    return result
