"""Compliance exports over HTTP (docs/reference/reports.md): the job's life, every format of both templates on a
seeded dataset, filters, the compliance-status rule, events and tenant isolation."""

import csv
import hashlib
import io
import json

import pytest
from pypdf import PdfReader

from compliance.catalogue import TEMPLATES
from tests.compliance.helpers import USERS, at, export_file, render, request_export, seed
from tests.fairness.factories import AlertFactory
from webhooks.models import Event

pytestmark = pytest.mark.django_db

SECTION_TITLES = {t["id"]: [s["title"] for s in t["sections"]] for t in TEMPLATES}
SECTION_IDS = {t["id"]: [s["id"] for s in t["sections"]] for t in TEMPLATES}
CSV_COLUMNS = [
    "decision_id",
    "timestamp",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "followed_ai",
    "calibration_category",
    "outcome",
    "context",
]


# --- the job -------------------------------------------------------------------------------------


def test_post_export_answers_202_with_a_queued_job(api):
    r = api.post(
        "/v1/export",
        {
            "template": "eu_ai_act",
            "format": "json",
            "time_period": {"from": "2026-10-01", "to": "2026-10-31"},
        },
        format="json",
    )
    assert r.status_code == 202, r.content
    body = r.json()
    assert body["export_id"].startswith("exp_")
    assert body["status"] == "queued"
    assert body["template"] == "eu_ai_act" and body["format"] == "json"
    assert body["time_period"] == {"from": "2026-10-01", "to": "2026-10-31"}
    assert body["filters"] == {} and body["download_url"] is None
    assert body["created_at"].endswith("Z")


def test_format_defaults_to_pdf_and_period_to_the_last_30_days(api):
    body = request_export(api, template="texas_traiga", time_period=None)
    assert body["format"] == "pdf"
    assert body["time_period"] == {"from": at(29)[:10], "to": at(0)[:10]}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "template"),
        ({"template": "gdpr"}, "template"),
        ({"template": "eu_ai_act", "format": "docx"}, "format"),
        (
            {"template": "eu_ai_act", "time_period": {"from": "2026-11-02", "to": "2026-11-01"}},
            "time_period.from",
        ),
        ({"template": "eu_ai_act", "time_period": {"from": "2026-13-01"}}, "time_period.from"),
        ({"template": "eu_ai_act", "time_period": "last month"}, "time_period"),
        ({"template": "eu_ai_act", "filters": {"calibration": ["SOMETIMES"]}}, "filters.calibration"),
        ({"template": "eu_ai_act", "filters": {"user_ids": "ana"}}, "filters.user_ids"),
        ({"template": "eu_ai_act", "filters": {"users": ["ana"]}}, "filters.users"),
        ({"template": "eu_ai_act", "filter": {"user_ids": ["ana"]}}, "filter"),
    ],
)
def test_invalid_export_requests_are_validation_problems(api, body, field):
    body.setdefault("time_period", {"from": "2026-10-01", "to": "2026-10-31"})
    if body["time_period"] is None:
        del body["time_period"]
    r = api.post("/v1/export", body, format="json")
    assert r.status_code == 400, r.content
    problem = r.json()
    assert r["Content-Type"] == "application/problem+json"
    assert problem["code"] == "VALIDATION_ERROR"
    # The field, or a place inside it (`filters.calibration[0]`).
    assert any(
        e["field"] == field or e["field"].startswith((f"{field}.", f"{field}[")) for e in problem["errors"]
    )


def test_download_before_completion_is_409_export_not_ready(api):
    job = request_export(api, template="eu_ai_act", format="csv")
    r = api.get(f"/v1/export/{job['export_id']}/download")
    assert r.status_code == 409
    assert r.json()["code"] == "EXPORT_NOT_READY"


def test_completed_job_has_size_sha256_and_a_download_url(api):
    seed(api, 12)
    job, content = export_file(api, template="eu_ai_act", format="json")
    assert job["download_url"] == f"/v1/export/{job['export_id']}/download"
    assert job["size_bytes"] == len(content)
    assert job["sha256"] == hashlib.sha256(content).hexdigest()
    assert job["completed_at"].endswith("Z")
    r = api.get(job["download_url"])
    assert r["Content-Type"] == "application/json"
    assert r["Content-Disposition"].startswith("attachment;")


def test_exports_list_is_newest_first_paged_and_tenant_scoped(api, other_api):
    ids = [request_export(api, template="eu_ai_act", format="csv")["export_id"] for _ in range(3)]
    request_export(other_api, template="eu_ai_act", format="csv")
    r = api.get("/v1/exports", {"limit": 2})
    assert r.status_code == 200
    body = r.json()
    assert [e["export_id"] for e in body["data"]] == ids[::-1][:2]
    assert body["pagination"]["total"] == 3 and body["pagination"]["has_more"] is True


def test_another_customers_export_is_404(api, other_api):
    seed(api, 5)
    job, _ = export_file(api, template="eu_ai_act", format="csv")
    assert other_api.get(f"/v1/export/{job['export_id']}").status_code == 404
    assert other_api.get(f"/v1/export/{job['export_id']}/download").status_code == 404


def test_a_failed_render_keeps_its_error_on_the_job(api, settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": "/proc/0"},
        },
    }
    job = render(api, request_export(api, template="eu_ai_act", format="json")["export_id"])
    assert job["status"] == "failed"
    assert job["error"] and job["download_url"] is None


# --- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_json_holds_every_section_in_order_and_the_whole_decision_log(api, template):
    items = seed(api, 30, overtrust=3)
    _, content = export_file(api, template=template, format="json")
    data = json.loads(content)
    assert data["template"] == template
    assert {"generated_at", "time_period", "filters", "sections"} <= set(data)
    assert list(data["sections"]) == SECTION_IDS[template]
    log_section = "audit_trail" if template == "eu_ai_act" else "monitoring_and_safeguards"
    log = data["sections"][log_section]["decision_log"]
    assert sorted(row["decision_id"] for row in log) == sorted(i["decision_id"] for i in items)
    assert data["sections"]["recommendations"], "recommendations are derived from the figures"
    for recommendation in data["sections"]["recommendations"]:
        assert recommendation["figure"] and recommendation["text"]


def test_eu_executive_summary_counts_the_filtered_decisions(api):
    seed(api, 40, overtrust=4)
    _, content = export_file(api, template="eu_ai_act", format="json")
    summary = json.loads(content)["sections"]["executive_summary"]
    assert summary["total_decisions"] == 40
    assert summary["automation_bias_incidents"] == 4
    assert summary["automation_bias_rate"] == 0.1
    assert summary["human_override_rate"] == pytest.approx(sum(1 for i in range(4, 40) if i % 5 == 0) / 40)
    assert (
        summary["scored_decisions"] == 40
        and summary["unscored_decisions"] == 0
        and summary["coverage"] == 1.0
    )
    assert summary["compliance_status"] == "INSUFFICIENT_EVIDENCE"  # under 100 scored decisions
    assert "100" in summary["compliance_status_reason"]
    points = [m["point"] for m in summary["oversight_measures"]]
    assert points == ["14(4)(a)", "14(4)(b)", "14(4)(c)", "14(4)(d)", "14(4)(e)"]


def test_audit_trail_section_holds_the_chain_verification(api):
    seed(api, 8)
    _, content = export_file(api, template="eu_ai_act", format="json")
    chain = json.loads(content)["sections"]["audit_trail"]["chain_verification"]
    verify = api.get("/v1/audit-trail/verify").json()
    assert chain["valid"] is True
    assert chain["entries_checked"] == 8
    assert chain["head_hash"] == verify["head_hash"]


def test_csv_is_the_filtered_decision_log_with_the_documented_columns(api):
    items = seed(api, 25)
    _, content = export_file(api, template="eu_ai_act", format="csv")
    rows = list(csv.reader(io.StringIO(content.decode())))
    assert rows[0] == CSV_COLUMNS
    assert len(rows) == 1 + 25
    by_id = {row[0]: dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]}
    first = items[0]
    row = by_id[first["decision_id"]]
    assert row["user_id"] == first["user_id"] and row["outcome"] == first["outcome"]
    assert row["timestamp"] == first["timestamp"].replace("Z", ".000Z")
    assert row["followed_ai"] in ("true", "false")
    assert float(row["ai_confidence"]) == first["ai_confidence"]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_pdf_opens_and_holds_every_section_title_in_order(api, template):
    seed(api, 30, overtrust=2)
    job, content = export_file(api, template=template, format="pdf")
    assert api.get(job["download_url"])["Content-Type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(content))
    assert len(reader.pages) >= 3
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages[2:])
    positions = [text.find(f"{n}. {title}") for n, title in enumerate(SECTION_TITLES[template], start=1)]
    assert all(p >= 0 for p in positions), list(zip(SECTION_TITLES[template], positions, strict=True))
    assert positions == sorted(positions)
    # A short decision log is printed, not attached; what every report carries is its checkpoint
    # note (when the chain has one) and the key to check it (docs/reference/reports.md).
    assert "decision-log.csv" not in reader.attachments, "a short log is printed, not attached"
    assert "verifier-key.txt" in reader.attachments


def test_pdf_attaches_the_whole_log_as_csv_beyond_500_decisions(api):
    items = seed(api, 520)
    _, content = export_file(api, template="eu_ai_act", format="pdf")
    reader = PdfReader(io.BytesIO(content))
    attached = reader.attachments["decision-log.csv"][0]
    rows = list(csv.reader(io.StringIO(attached.decode())))
    assert rows[0] == CSV_COLUMNS
    assert sorted(r[0] for r in rows[1:]) == sorted(i["decision_id"] for i in items)


# --- filters -------------------------------------------------------------------------------------


FILTER_CASES = [
    ({"user_ids": ["ana"]}, lambda item: item["user_id"] == "ana"),
    ({"model_ids": ["loan-v2"]}, lambda item: item["model_id"] == "loan-v2"),
    (
        {"calibration": ["OVERTRUSTING"]},
        lambda item: (
            item["user_decision"] != item["outcome"] and item["user_decision"] == item["ai_recommendation"]
        ),
    ),
]


@pytest.mark.parametrize(("filters", "keep"), FILTER_CASES)
def test_filters_narrow_csv_json_and_pdf(api, filters, keep):
    items = seed(api, 40, overtrust=10)
    expected = sorted(i["decision_id"] for i in items if keep(i))
    assert 0 < len(expected) < 40
    _, content = export_file(api, template="eu_ai_act", format="csv", filters=filters)
    assert sorted(r[0] for r in list(csv.reader(io.StringIO(content.decode())))[1:]) == expected
    _, content = export_file(api, template="eu_ai_act", format="json", filters=filters)
    data = json.loads(content)
    assert data["filters"] == filters
    assert sorted(r["decision_id"] for r in data["sections"]["audit_trail"]["decision_log"]) == expected
    assert data["sections"]["executive_summary"]["total_decisions"] == len(expected)
    _, content = export_file(api, template="eu_ai_act", format="pdf", filters=filters)
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)
    printed = {
        i["decision_id"] for i in items if f"{i['decision_id']} " in text or f"{i['decision_id']}\n" in text
    }
    assert printed == set(expected)


def test_period_bounds_select_on_the_decision_timestamp(api):
    seed(api, 20)  # days 1..5 ago
    _, content = export_file(
        api, template="eu_ai_act", format="csv", time_period={"from": at(2)[:10], "to": at(1)[:10]}
    )
    rows = list(csv.reader(io.StringIO(content.decode())))[1:]
    assert rows and {r[1][:10] for r in rows} == {at(2)[:10], at(1)[:10]}


# --- compliance status ---------------------------------------------------------------------------


def _status(api) -> str:
    _, content = export_file(api, template="eu_ai_act", format="json")
    return json.loads(content)["sections"]["executive_summary"]["compliance_status"]


@pytest.mark.parametrize(
    ("overtrust", "expected"),
    # Of 1,000 decisions about 190 overrode an unsure AI; the first `overtrust` followed one. The
    # organisation's over-trust rate is about overtrust / (overtrust + 190).
    [(49, "COMPLIANT"), (150, "INSUFFICIENT_EVIDENCE"), (400, "NON_COMPLIANT")],
)
def test_compliance_status_follows_the_over_trust_interval(api, overtrust, expected):
    seed(api, 1000, overtrust=overtrust)
    assert _status(api) == expected


def test_an_over_trusting_reviewer_needs_review(api):
    seed(api, 1000)
    seed(api, 60, overtrust=60, start=1000, user_id="zed")  # follows every unsure AI
    assert _status(api) == "NEEDS_REVIEW"


def test_unscored_decisions_leave_the_evidence_insufficient(api):
    seed(api, 200)
    assert _status(api) == "COMPLIANT"
    seed(api, 60, start=200, ai_confidence=None, outcome=None)  # coverage 200 / 260 < 0.80
    assert _status(api) == "INSUFFICIENT_EVIDENCE"


def test_an_open_critical_alert_makes_the_report_non_compliant(api):
    seed(api, 200)
    assert _status(api) == "COMPLIANT"
    alert = AlertFactory(severity="critical", status="open")
    assert _status(api) == "NON_COMPLIANT"
    alert.status = "resolved"
    alert.save()
    assert _status(api) == "COMPLIANT"


def test_an_open_high_alert_needs_review(api):
    seed(api, 200)
    AlertFactory(severity="high", status="acknowledged")
    assert _status(api) == "NEEDS_REVIEW"


# --- events --------------------------------------------------------------------------------------


def test_completion_stores_report_ready_and_non_compliance_audit_required(api):
    seed(api, 200, overtrust=150)
    job, content = export_file(api, template="eu_ai_act", format="csv")
    ready = Event.objects.get(type="compliance.report_ready")
    assert ready.data["export_id"] == job["export_id"]
    assert ready.data["sha256"] == hashlib.sha256(content).hexdigest()
    assert ready.data["download_url"] == job["download_url"]
    assert ready.data["template"] == "eu_ai_act" and ready.data["format"] == "csv"
    required = Event.objects.get(type="audit.required")
    assert required.data["export_id"] == job["export_id"]
    assert required.data["compliance_status"] == "NON_COMPLIANT"


def test_a_compliant_report_fires_no_audit_required(api):
    seed(api, 200)
    export_file(api, template="eu_ai_act", format="csv")
    assert Event.objects.filter(type="compliance.report_ready").count() == 1
    assert not Event.objects.filter(type="audit.required").exists()


def test_users_table_matches_the_trust_score_endpoint(api):
    seed(api, 60, overtrust=9)
    _, content = export_file(api, template="eu_ai_act", format="json")
    users = {u["user_id"]: u for u in json.loads(content)["sections"]["trust_calibration_analysis"]["users"]}
    assert set(users) == set(USERS)
    for user_id in USERS:
        api_figures = api.post("/v1/trust-score", {"user_id": user_id}, format="json").json()
        for key in ("trust_score", "agreement_rate", "overtrust_rate", "calibration_gap", "category"):
            reported, served = users[user_id][key], api_figures[key]
            if isinstance(served, float):
                # The report sums per-user daily rows in another order than the endpoint: the
                # same figure to the last bits of a double.
                assert reported == pytest.approx(served, rel=1e-12, abs=1e-12), (user_id, key)
            else:
                assert reported == served, (user_id, key)


# --- system endpoints ----------------------------------------------------------------------------


def test_engine_status_and_metrics_count_the_callers_exports(api, other_api):
    request_export(api, template="eu_ai_act", format="csv")
    request_export(api, template="texas_traiga", format="json")
    request_export(other_api, template="eu_ai_act", format="csv")
    engines = {e["name"]: e for e in api.get("/v1/engines/status").json()["engines"]}
    assert engines["report_generation"]["queued_exports"] == 2
    assert engines["report_generation"]["failed_exports_24h"] == 0
    assert api.get("/v1/metrics").json()["exports"]["queued"] == 2
    assert other_api.get("/v1/metrics").json()["exports"]["queued"] == 1


def test_a_report_file_missing_from_storage_is_a_404_that_says_so_not_a_500(api):
    """A completed job whose file this host's storage lacks (several hosts without shared
    report storage, docs/deploy.md) says the file is missing from storage; it never claims
    the file is "no longer stored", which sends a client to request it again for nothing."""
    from compliance.models import ExportJob
    from compliance.services import exports_storage

    seed(api, 3)
    job, _ = export_file(api, template="eu_ai_act", format="csv")
    exports_storage().delete(ExportJob.objects.get(pk=job["export_id"]).file_name)
    r = api.get(job["download_url"])
    assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND"
    detail = r.json()["detail"]
    assert "missing from the configured report storage" in detail and "no longer stored" not in detail
