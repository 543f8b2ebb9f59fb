"""A change of a model's favourable values is an entry of the chain (docs/reference/bias.md,
Favourable values; docs/reference/decisions.md, "What the hash covers"): `settings_changed` with
the values in force after it and before it, and who changed them; the same values again append
nothing. The chain still verifies."""

import json

import pytest

from bias.domain import DEFAULT_FAVORABLE_VALUES
from bias.models import ModelFavorableValues

pytestmark = pytest.mark.django_db


def _settings_entries(api) -> list[dict]:
    entries = api.get("/v1/audit-trail", {"limit": 100}).json()["data"]
    return sorted((e for e in entries if e["type"] == "settings_changed"), key=lambda e: e["sequence"])


def test_editing_favourable_values_in_the_console_appends_settings_changed(client, admin_user, api):
    client.force_login(admin_user)
    add = client.post(
        "/admin/bias/modelfavorablevalues/add/",
        {"customer": "acme", "model_id": "credit-v1", "values": '[" Low-Risk ", "ok"]'},
    )
    assert add.status_code == 302
    row = ModelFavorableValues.objects.get(customer_id="acme", model_id="credit-v1")
    (entry,) = _settings_entries(api)
    inner = json.loads(entry["canonical"])
    assert inner["setting"] == entry["setting"] == "favourable_values"
    assert inner["model_id"] == "credit-v1" and inner["values"] == ["low-risk", "ok"]
    assert inner["previous"] == list(DEFAULT_FAVORABLE_VALUES)
    assert inner["staff_user"] == admin_user.get_username()
    # The same values again (written differently): nothing is appended.
    client.post(
        f"/admin/bias/modelfavorablevalues/{row.pk}/change/",
        {"customer": "acme", "model_id": "credit-v1", "values": '["ok", "LOW-RISK"]'},
    )
    assert len(_settings_entries(api)) == 1
    client.post(
        f"/admin/bias/modelfavorablevalues/{row.pk}/change/",
        {"customer": "acme", "model_id": "credit-v1", "values": '["ok"]'},
    )
    client.post(f"/admin/bias/modelfavorablevalues/{row.pk}/delete/", {"post": "yes"})
    assert not ModelFavorableValues.objects.filter(pk=row.pk).exists()
    changed, deleted = _settings_entries(api)[1:]
    assert (changed["values"], changed["previous"]) == (["ok"], ["low-risk", "ok"])
    assert (deleted["values"], deleted["previous"]) == (list(DEFAULT_FAVORABLE_VALUES), ["ok"])
    assert api.get("/v1/audit-trail/verify").json()["valid"]
