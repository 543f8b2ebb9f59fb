"""Every figure and status the README states of `seed_demo`'s organisation, read from the README
itself and compared with what the service serves after seeding (over the API), so the README
cannot drift from the demo: reviewer counts, what each kind of reviewer reads in each month, the
drift alarms of each month, the amplification and bias alerts, and each month's report status."""

import datetime as dt
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from console import demo_data
from tests.compliance.helpers import export_file
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[2] / "README.md"
NUMBERS = {"one": 1, "two": 2}


def _demo_text() -> str:
    """The README's demo paragraphs, white space folded."""
    text = README.read_text()
    start = text.index("`seed_demo` (what `make demo` runs")
    return " ".join(text[start : text.index("## The staff console", start)].split())


def _stated(pattern: str, text: str) -> tuple[Any, ...]:
    found = re.search(pattern, text)
    assert found, f"the README no longer says: {pattern}"
    return tuple(int(g.replace(",", "")) if g and g.replace(",", "").isdigit() else g for g in found.groups())


def _month(text: str, name: str) -> str:
    start = text.index(f"**The {name} month**")
    end = text.find("- **The", start + 1)
    return text[start : end if end > 0 else len(text)]


def _categories(api, first: dt.date, last: dt.date) -> dict[str, dict[str, int]]:
    """Per profile of the simulation, how many of its reviewers read each category over the month
    (POST /trust-score per reviewer)."""
    out: dict[str, dict[str, int]] = {}
    for reviewer in demo_data.reviewers():
        body = {"user_id": reviewer.user_id, "from": str(first), "to": str(last)}
        figures = api.post("/v1/trust-score", body, format="json").json()
        counts = out.setdefault(reviewer.profile, {})
        counts[figures["category"]] = counts.get(figures["category"], 0) + 1
    return out


def _in(moment: str, first: dt.date, last: dt.date) -> bool:
    return str(first) <= moment[:10] <= str(last)


def test_every_demo_figure_of_the_readme_is_what_the_service_serves():
    call_command("seed_demo", "--no-users", stdout=io.StringIO())
    api = client_for(make_key(demo_data.CUSTOMER).value)
    text = _demo_text()
    older, recent = demo_data.months(dt.datetime.now(dt.UTC))
    profiles = {r.user_id: r.profile for r in demo_data.reviewers()}
    over_trusters = {u for u, p in profiles.items() if p == "over-trusting"}

    # The organisation: its reviewers, decisions and probes.
    reviewers, over, under, calibrated, decisions, days, probes = _stated(
        r"([\d,]+) reviewers \((\d+) who over-trust it, (\d+) who under-trust it, (\d+) calibrated\), "
        r"([\d,]+) decisions over (\d+) days .*?, ([\d,]+) vigilance probes",
        text,
    )
    served = {
        p: sum(1 for q in profiles.values() if q == p)
        for p in ("over-trusting", "under-trusting", "calibrated")
    }
    assert (reviewers, over, under, calibrated) == (len(profiles), *served.values())
    lines = [
        json.loads(line)
        for line in b"".join(api.get("/v1/audit-trail/export").streaming_content).splitlines()
    ]
    logged = [e for e in lines if e.get("type") == "decision"]
    assert decisions == sum(1 for e in logged if e.get("probe") is None)
    assert probes == sum(1 for e in logged if e.get("probe") is not None)
    assert {e["user_id"] for e in logged} == set(profiles) and days == demo_data.DAYS

    alarms = api.get("/v1/drift-alarms", {"limit": 100}).json()["data"]
    amplification = api.get("/v1/bias/amplification?limit=100").json()["data"]
    for name, (first, last) in (("older", older), ("recent", recent)):
        month = _month(text, name)
        read = _categories(api, first, last)
        # The calibrated reviewers and the over-trusters.
        ok, of, rest, rest_category = _stated(
            r"(\d+) of the (\d+) calibrated reviewers read `CALIBRATED`(?: and the other (\d+) `([A-Z_]+)`)?",
            month,
        )
        assert of == served["calibrated"] and read["calibrated"].get("CALIBRATED", 0) == ok, read
        if rest is not None:
            assert read["calibrated"] == {"CALIBRATED": ok, rest_category: rest}, read
        (flagged,) = _stated(
            r"all (\d+) over-trusters(?: read)? `OVERTRUSTING` or `NON_DISCRIMINATING`", month
        )
        assert flagged == served["over-trusting"]
        assert set(read["over-trusting"]) <= {"OVERTRUSTING", "NON_DISCRIMINATING"}, read
        # The report's status.
        (status,) = _stated(r"EU AI Act report (?:reads )?`([A-Z_]+)`", month)
        _, body = export_file(
            api, template="eu_ai_act", format="json", time_period={"from": str(first), "to": str(last)}
        )
        summary = json.loads(body)["sections"]["executive_summary"]
        assert summary["compliance_status"] == status, summary["compliance_status_reason"]
        # The drift alarms raised in the month.
        own = [a for a in alarms if _in(a["raised_at"], first, last)]
        if name == "older":
            raised, of_over = _stated(
                r"raised alarms for (\d+) of the (\d+) over-trusters \(none for anyone else\)", month
            )
            probe = {a["user_id"] for a in own if a["chart"] == "probe_sprt" and a["user_id"]}
            assert of_over == len(over_trusters) and probe <= over_trusters and len(probe) == raised, probe
            total, acknowledged = _stated(
                r"the month holds (\d+) drift alarms, (\d+) of them acknowledged", month
            )
            assert total == len(own)
            assert acknowledged == sum(1 for a in own if a["status"] == "acknowledged")
            assert all(_in(a["acknowledged_at"], first, last) for a in own if a["status"] == "acknowledged")
            (confidence,) = _stated(r"confidence check reads `([a-z_]+)`", month)
            org = api.post("/v1/trust-score", {"from": str(first), "to": str(last)}, format="json").json()
            assert org["confidence_check"]["verdict"] == confidence and org["confidence_recalibrated"] is True
        else:
            (total,) = _stated(r"(No|\d+) drift alarms? (?:was|were) raised in it", month)
            assert (0 if total == "No" else total) == len(own)
        # The amplification alerts raised in the month, and their triage.
        (count, severity) = _stated(r"(one|two) (low|medium|high|critical) amplification alerts?", month)
        raised_here = [a for a in amplification if _in(a["createdAt"], first, last)]
        assert len(raised_here) == NUMBERS[count] and {a["severity"] for a in raised_here} == {severity}
        statuses = sorted(a["status"] for a in raised_here)
        expected = ["false_positive", "resolved"] if name == "older" else ["acknowledged", "open"]
        assert statuses == expected and all(
            w in month
            for w in (["resolved", "false positive"] if name == "older" else ["open", "acknowledged"])
        )

    # The recent month's critical bias-detection alert on gender.
    assert "a critical bias-detection alert on gender" in _month(text, "recent")
    feed = api.get("/v1/bias/feed", {"severity": "critical", "attribute": "gender"}).json()["data"]
    assert feed and all(_in(a["created_at"], *recent) for a in feed)
