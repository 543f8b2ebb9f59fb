"""seed_demo's oversight data (console/demo_oversight.py): a few rubber-stampers flagged, the rest
careful, and a probe programme of about 2 % of decisions with a spread of catch rates."""

import io

import pytest
from django.core.management import call_command

from console import demo_oversight
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


def test_the_demo_flags_its_rubber_stampers_and_runs_a_probe_programme():
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert "Vigilance probes: 66 known cases" in out.getvalue()
    api = client_for(make_key("demo-bank").value)
    effort = api.get("/v1/oversight/review-effort", {"limit": 100}).json()
    flagged = {row["user_id"] for row in effort["data"] if row["flagged"]}
    assert flagged == demo_oversight._rubber_stampers()
    assert all(row["timed_decisions"] > 0 for row in effort["data"])
    vigilance = api.get("/v1/oversight/vigilance", {"limit": 100}).json()
    assert vigilance["totals"]["probes"] == 66
    rates = [row["catch_rate"] for row in vigilance["data"] if row["catch_rate"] is not None]
    assert min(rates) == 0.0 and max(rates) == 1.0
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
