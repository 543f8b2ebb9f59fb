"""seed_demo's oversight data (console/demo_oversight.py): a few rubber-stampers flagged, the rest
careful, and probes (a programme of 8 per reviewer in the older month, about 2 % of the recent
month's decisions) that the over-trusters catch less often than anyone else."""

import io

import pytest
from django.core.management import call_command

from console import demo_data, demo_oversight
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


def test_the_demo_flags_its_rubber_stampers_and_runs_a_probe_programme():
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert "Vigilance probes: 321 known cases" in out.getvalue()
    api = client_for(make_key("demo-bank").value)
    effort = api.get("/v1/oversight/review-effort", {"limit": 100}).json()
    flagged = {row["user_id"] for row in effort["data"] if row["flagged"]}
    assert flagged == demo_oversight._rubber_stampers()
    assert all(row["timed_decisions"] > 0 for row in effort["data"])
    vigilance = api.get("/v1/oversight/vigilance", {"limit": 100}).json()
    assert vigilance["totals"]["probes"] == 321
    over_trusters = {r.user_id for r in demo_data.reviewers() if r.profile == "over-trusting"}
    rates = {row["user_id"]: row["catch_rate"] for row in vigilance["data"]}
    assert set(rates) == {r.user_id for r in demo_data.reviewers()} and None not in rates.values()
    assert max(rates[u] for u in over_trusters) < min(r for u, r in rates.items() if u not in over_trusters)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
