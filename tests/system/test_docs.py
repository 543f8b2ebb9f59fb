"""The API reference pages work with no network: every asset they reference is served by the
service itself (Swagger UI and ReDoc come from drf-spectacular-sidecar, never from a CDN)."""

import re

import pytest
from django.test import Client


def _assets(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', html)


@pytest.mark.parametrize("page", ["/v1/docs", "/v1/redoc"])
def test_docs_page_references_only_assets_the_service_serves(db, page):
    client = Client()
    response = client.get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assets = _assets(html)
    assert assets, "the page references its scripts"
    for url in assets:
        assert url.startswith("/"), f"{url} is not served by the service (no network at run time)"
        asset = client.get(url)
        assert asset.status_code == 200, url
        body = b"".join(asset.streaming_content) if asset.streaming else asset.content
        assert len(body) > 0, url


def test_docs_page_loads_the_schema_from_the_service(db):
    html = Client().get("/v1/docs").content.decode()
    script = Client().get("/v1/docs?script=").content.decode()  # the start-up script, a file (CSP)
    assert "/v1/docs?script=" in html and "/v1/schema" in script


def test_the_schema_generates_without_errors_and_warns_only_of_enum_names(db):
    """`check --deploy` leaves the schema out (it is the code's, not a host's): its warnings
    are checked here instead. Only drf-spectacular's enum-naming notes are tolerated."""
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    warnings = list(GENERATOR_STATS._warn_cache)
    errors = list(GENERATOR_STATS._error_cache)
    GENERATOR_STATS.reset()
    assert errors == []
    assert [
        w for w in warnings if "enum naming" not in w and "multiple names for the same choice set" not in w
    ] == []
    assert schema["components"]["securitySchemes"]["ApiKeyAuth"]["scheme"] == "bearer"
