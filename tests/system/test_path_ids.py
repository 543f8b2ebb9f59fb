"""A path id holding NUL or any character outside the id alphabet answers 404 NOT_FOUND before
any query (docs/reference/limits.md, "Path ids"), on SQLite and PostgreSQL alike."""

import pytest

pytestmark = pytest.mark.django_db

PATHS = [
    "/v1/export/{}",
    "/v1/export/{}/download",
    "/v1/audit-trail/{}",
    "/v1/webhooks/{}",
    "/v1/model-fairness-signals/{}",
    "/v1/bias/amplification/{}",
]
BAD = ["%00", "exp_%00", "a%20b", "%C3%A9", "a%2Fb", "x" * 129, "a%25b", "%F0%9F%98%80"]


@pytest.mark.parametrize("template", PATHS)
@pytest.mark.parametrize("bad", BAD)
def test_an_id_outside_its_alphabet_is_404(api, template, bad):
    response = api.get(template.format(bad))
    assert response.status_code == 404, (template, bad, response.content[:200])
    assert response.json()["code"] == "NOT_FOUND"


@pytest.mark.parametrize("bad", BAD)
def test_an_admin_key_id_outside_its_alphabet_is_404(admin_api, bad):
    response = admin_api.get(f"/v1/admin/api-keys/{bad}")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"


def test_a_well_formed_unknown_id_is_still_404(api):
    response = api.get("/v1/export/exp_01jdoesnotexist")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"
