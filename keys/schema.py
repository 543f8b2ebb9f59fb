"""The API key scheme in the OpenAPI schema: drf-spectacular learns that ApiKeyAuthentication
is the `ApiKeyAuth` bearer scheme the settings declare (config/settings/base.py,
SPECTACULAR_SETTINGS), instead of warning once per view that it cannot resolve it."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


# drf-spectacular registers an extension in its untyped __init_subclass__.
class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "keys.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    # Any: drf-spectacular's AutoSchema, an untyped class
    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "API key (tcal_...)"}
