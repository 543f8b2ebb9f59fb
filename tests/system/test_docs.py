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
