"""Reports after an erasure (docs/reference/erasure.md; docs/reference/reports.md): every format
of both templates lists the period's erasures (count and legal basis), prints `erased` where a
personal field was, holds none of the erased values, and still verifies by its printed recipe."""

import csv
import io
import json
import re

import pytest

from audit.offline_report import BY_REVIEWER
from tests.compliance.helpers import at, export_file, seed
from tests.compliance.test_offline_report import check, files
from tests.compliance.test_report_recipe import LOG_SECTION, _follow, _printed_recipe, _squeezed

pytestmark = pytest.mark.django_db

SUBJECT = "subject-5e0c-unique"
CONTEXT = "context-of-subject-5e0c"
REVIEWER = "reviewer-77aa-unique"


def _erase(api, **body) -> dict:
    body = {"reason": "asked", "override_minimum": True, **body}
    response = api.post("/v1/erasures", body, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def _erased_period(api) -> list[dict]:
    """12 decisions of ana, ben and chloe; 2 about SUBJECT and 2 reviewed by REVIEWER, both erased."""
    seed(api, 12)
    seed(api, 2, start=50, subject_id=SUBJECT, context=CONTEXT)
    seed(api, 2, start=60, user_id=REVIEWER)
    return [
        _erase(api, subject_id=SUBJECT, legal_basis="gdpr_art_17_1_a"),
        _erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b"),
    ]


def _absent(content: bytes) -> list[str]:
    return [value for value in (SUBJECT, CONTEXT, REVIEWER) if value in content.decode("utf-8", "replace")]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_the_json_report_lists_the_erasures_and_prints_erased_where_a_personal_field_was(api, template):
    done = _erased_period(api)
    _, content = export_file(api, template=template, format="json")
    assert _absent(content) == []
    section = json.loads(content)["sections"][LOG_SECTION[template]]
    erasures = section["erasures"]
    assert erasures["count"] == 2 and erasures["entries"] == 4
    assert erasures["by_legal_basis"] == {"gdpr_art_17_1_a": 1, "gdpr_art_17_1_b": 1}
    assert [(e["erasure_id"], e["legal_basis"], e["target"]) for e in erasures["items"]] == [
        (done[0]["erasure_id"], "gdpr_art_17_1_a", "subject_id"),
        (done[1]["erasure_id"], "gdpr_art_17_1_b", "user_id"),
    ]
    log = {row["decision_id"]: row for row in section["decision_log"]}
    assert [log[f"dec-{i}"]["context"] for i in (50, 51, 60, 61)] == ["erased"] * 4
    assert log["dec-50"]["user_id"] in ("ana", "ben", "chloe")  # the subject's reviewer was not erased
    assert log["dec-60"]["user_id"] == log["dec-61"]["user_id"] == "erased"
    assert log["dec-1"]["context"].startswith("application 1,") and log["dec-1"]["user_id"] == "ben"


def test_the_csv_decision_log_prints_erased_where_a_personal_field_was(api):
    _erased_period(api)
    _, content = export_file(api, template="eu_ai_act", format="csv")
    assert _absent(content) == []
    rows = {row["decision_id"]: row for row in csv.DictReader(io.StringIO(content.decode()))}
    assert len(rows) == 16
    assert [rows[f"dec-{i}"]["context"] for i in (50, 51, 60, 61)] == ["erased"] * 4
    assert rows["dec-60"]["user_id"] == "erased" and rows["dec-50"]["user_id"] != "erased"
    assert rows["dec-2"]["context"] == "application 2, amount 1020 EUR"


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_the_pdf_lists_the_erasures_and_its_printed_recipe_still_reaches_its_digest(api, template):
    done = _erased_period(api)
    _, pdf = export_file(api, template=template, format="pdf")
    text = _squeezed(pdf)
    assert "Erasuresofpersonaldata" in text
    assert "2erasure(s)deletedthepersonalfieldsof4auditentries" in text
    assert "GDPRArt.17(1)(a):nolongernecessary:1;GDPRArt.17(1)(b):consentwithdrawn:1" in text
    assert all(e["erasure_id"] in text for e in done)
    log = text[text.rindex("AppendixA.") : text.rindex("AppendixB.")]
    assert log.count("erased") == 6  # 4 contexts and 2 reviewers
    assert _absent(text.encode()) == [] and _absent(pdf) == []
    recipe = _printed_recipe(pdf)
    assert _follow(api, recipe) == recipe["digest"]


def test_the_offline_recomputation_checks_every_figure_the_erased_reviewers_do_not_decide(api, tmp_path):
    _erased_period(api)
    status, text = check(*files(api, tmp_path))
    assert status == 0, text
    lines = [line for line in text.splitlines() if line.startswith(("executive", "trust"))]
    # An erased decision names no reviewer: no reviewer's own figures are re-derived.
    reviewers = [line for line in lines if ".users[" in line]
    assert reviewers and all(line.endswith("not recomputable") for line in reviewers)
    results = {line.split()[0]: line for line in lines if ".users[" not in line}
    unknown = sorted(name for name, line in results.items() if line.endswith("not recomputable"))
    assert unknown == sorted(
        f"{part}.{key}"
        for part, keys in (
            ("executive_summary", ("overtrust_rate_ci", "overtrust_effective_n", "category")),
            ("trust_calibration_analysis", BY_REVIEWER),
        )
        for key in keys
    )
    assert all(line.endswith("match") for name, line in results.items() if name not in unknown)
    assert "4 decision(s) of the window had their personal fields erased" in text
    # a reviewer filter cannot be applied to decisions whose reviewer was erased
    status, text = check(*files(api, tmp_path, filters={"user_ids": ["ana"]}))
    assert status == 0 and "no figure is recomputable" in text
    assert re.search(
        r"no figure differs, and none could be checked \(\d+ not recomputable, named above\)$", text.strip()
    )


def test_an_erasure_deletes_the_reports_that_may_hold_the_erased_person_and_only_those(api):
    seed(api, 2, start=60, user_id=REVIEWER)  # days 1-5 ago
    old = {"time_period": {"from": at(60)[:10], "to": at(40)[:10]}}
    narrowed, _ = export_file(
        api, template="eu_ai_act", format="json", filters={"user_ids": [REVIEWER]}, **old
    )
    other, _ = export_file(api, template="eu_ai_act", format="json", filters={"user_ids": ["ana"]}, **old)
    recent, _ = export_file(api, template="eu_ai_act", format="csv")
    _erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b")
    # the recent period holds their decisions; the old one names them in its filters
    assert [api.get(f"/v1/export/{job['export_id']}").status_code for job in (narrowed, other, recent)] == [
        404,
        200,
        404,
    ]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_an_erasure_completed_after_the_period_is_listed_with_its_date(api, template):
    """A report generated after an erasure, for a period that ended before it, lists the erasure
    that touched its entries ("erased on DATE, after the period"); a period it did not touch does
    not list it."""
    seed(api, 4, start=60, user_id=REVIEWER, timestamp=at(3))
    seed(api, 4, start=70, timestamp=at(20))
    done = _erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_a")
    touched = {"from": at(6)[:10], "to": at(2)[:10]}  # ended two days before the erasure
    _, content = export_file(api, template=template, format="json", time_period=touched)
    erasures = json.loads(content)["sections"][LOG_SECTION[template]]["erasures"]
    assert erasures["count"] == 1 and erasures["completed_after_period"] == 1 and erasures["entries"] == 4
    assert [(e["erasure_id"], e["after_period"]) for e in erasures["items"]] == [(done["erasure_id"], True)]
    _, pdf = export_file(api, template=template, format="pdf", time_period=touched)
    text = _squeezed(pdf)
    assert _squeezed_text(f"erased on {at(0)[:10]}, after the period") in text
    assert _squeezed_text("1 of them completed after the period and erased entries of it") in text
    untouched = {"from": at(25)[:10], "to": at(15)[:10]}
    _, content = export_file(api, template=template, format="json", time_period=untouched)
    erasures = json.loads(content)["sections"][LOG_SECTION[template]]["erasures"]
    assert erasures["count"] == 0 and erasures["items"] == []


def _squeezed_text(text: str) -> str:
    return "".join(text.split())
