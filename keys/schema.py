"""The API key scheme in the OpenAPI schema: drf-spectacular learns that ApiKeyAuthentication
is the `ApiKeyAuth` bearer scheme the settings declare (config/settings/base.py,
SPECTACULAR_SETTINGS), instead of warning once per view that it cannot resolve it."""

from typing import TYPE_CHECKING

from drf_spectacular.extensions import OpenApiAuthenticationExtension

if TYPE_CHECKING:  # drf_spectacular.openapi imports DRF's views, which import the settings' classes
    from drf_spectacular.openapi import AutoSchema


# drf-spectacular registers an extension in its untyped __init_subclass__.
class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "keys.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: "AutoSchema") -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "API key (tcal_...)"}
