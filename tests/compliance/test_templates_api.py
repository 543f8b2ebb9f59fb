"""GET /export/templates (docs/reference/reports.md)."""

import pytest

pytestmark = pytest.mark.django_db


def test_templates_list_both_reports_with_sections_in_order(api):
    r = api.get("/v1/export/templates")
    assert r.status_code == 200, r.content
    by_id = {t["id"]: t for t in r.json()["data"]}
    assert set(by_id) == {"eu_ai_act", "texas_traiga"}
    eu = by_id["eu_ai_act"]
    assert [s["id"] for s in eu["sections"]] == [
        "executive_summary",
        "trust_calibration_analysis",
        "bias_detection_summary",
        "audit_trail",
        "recommendations",
    ]
    for template in by_id.values():
        assert template["formats"] == ["pdf", "csv", "json"]
        assert {"id", "name", "regulation", "description", "formats", "sections"} <= set(template)


def test_templates_need_a_key(anon_api):
    assert anon_api.get("/v1/export/templates").status_code in (401, 403)
