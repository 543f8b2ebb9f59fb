"""The category thresholds the figures are judged with are in the chain (docs/reference/calibration.md,
Settings): while they are the documented defaults nothing is appended; a deployment that changes
them gets one `settings_changed` entry per customer at its first figure (POST /trust-score, the
trend, POST /calibrate's profile, a report), with the new values and the previous ones."""

import json

import pytest

from audit import settings_trail
from tests.audit.factories import decision_body

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget():
    settings_trail._known.clear()  # what a process knows, as at its start
    yield
    settings_trail._known.clear()


def _settings_entries(api) -> list[dict]:
    entries = api.get("/v1/audit-trail", {"limit": 100}).json()["data"]
    return sorted((e for e in entries if e["type"] == "settings_changed"), key=lambda e: e["sequence"])


def test_the_default_thresholds_append_nothing(api):
    api.post("/v1/calibrate", decision_body(), format="json")
    assert api.post("/v1/trust-score", {}, format="json").status_code == 200
    assert _settings_entries(api) == []


def test_a_change_of_the_thresholds_appends_one_entry_with_the_new_and_previous_values(api, settings):
    api.post("/v1/log", decision_body(), format="json")
    settings.CALIBRATION_OVERTRUST_THRESHOLD = 0.4
    assert api.post("/v1/trust-score", {}, format="json").status_code == 200
    assert api.get("/v1/trust-score/trend").status_code == 200
    api.post("/v1/calibrate", decision_body(), format="json")
    (entry,) = _settings_entries(api)
    inner = json.loads(entry["canonical"])
    assert inner["setting"] == "calibration_thresholds" and inner["model_id"] is None
    assert inner["values"]["overtrust"] == 0.4 and inner["previous"]["overtrust"] == 0.5
    assert {k: v for k, v in inner["values"].items() if k != "overtrust"} == {
        k: v for k, v in inner["previous"].items() if k != "overtrust"
    }
    # Another process (nothing known) reads the last recorded values from the chain: nothing new.
    settings_trail._known.clear()
    api.post("/v1/trust-score", {}, format="json")
    assert len(_settings_entries(api)) == 1
    # Back to the defaults: one more entry.
    settings.CALIBRATION_OVERTRUST_THRESHOLD = 0.5
    api.post("/v1/trust-score", {}, format="json")
    back = _settings_entries(api)[1]
    assert (back["values"]["overtrust"], back["previous"]["overtrust"]) == (0.5, 0.4)
    assert api.get("/v1/audit-trail/verify").json()["valid"]
