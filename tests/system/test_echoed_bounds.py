"""Every answer that echoes a query bound writes it as ISO 8601 with a four-digit year, for every
year the service accepts (docs/reference/conventions.md): a bound inside a day is echoed as the
exact instant, `0002-03-04T05:06:07.000Z`, never `2-03-04T05:06:07.000Z` (what strftime writes
for years before 1000)."""

import json
import re

import pytest

from tests.compliance.helpers import render, request_export

pytestmark = pytest.mark.django_db

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
YEARS = [1, 2, 999, 1000, 2026, 9999]


def _answer(api, where: str, since: str, until: str) -> dict:
    if where == "trust-score":
        response = api.post("/v1/trust-score", {"from": since, "to": until}, format="json")
        assert response.status_code == 200, response.content
        return response.json()
    paths = {
        "review-effort": "/v1/oversight/review-effort",
        "vigilance": "/v1/oversight/vigilance",
        "trend": "/v1/trust-score/trend",
        "subgroups": "/v1/bias/subgroups",
    }
    response = api.get(paths[where], {"from": since, "to": until})
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("where", ["review-effort", "vigilance", "trust-score", "trend", "subgroups"])
@pytest.mark.parametrize("year", YEARS)
def test_an_exact_bound_is_echoed_as_iso_8601_in_every_accepted_year(api, where, year):
    since, until = f"{year:04d}-03-04T05:06:07Z", f"{year:04d}-03-05T08:09:10Z"
    echoed = _answer(api, where, since, until)
    assert ISO.match(echoed["from"]) and ISO.match(echoed["to"]), echoed
    assert echoed["from"] == f"{year:04d}-03-04T05:06:07.000Z"
    assert echoed["to"] == f"{year:04d}-03-05T08:09:10.000Z"


@pytest.mark.parametrize("year", [2, 999])
def test_a_report_of_an_early_year_names_its_window_in_iso_8601(api, year):
    body = {"template": "eu_ai_act", "format": "json"}
    job = request_export(api, **body, time_period={"from": f"{year:04d}-03-01", "to": f"{year:04d}-03-31"})
    done = render(api, job["export_id"])
    assert done["status"] == "completed", done
    report = json.loads(b"".join(api.get(done["download_url"]).streaming_content))
    window = report["sections"]["trust_calibration_analysis"]["window"]
    assert window == {"from": f"{year:04d}-03-01T00:00:00.000Z", "to": f"{year:04d}-04-01T00:00:00.000Z"}


@pytest.mark.parametrize("where", ["review-effort", "vigilance"])
@pytest.mark.parametrize("year", YEARS)
def test_a_day_bound_of_the_oversight_figures_is_echoed_as_its_instants_in_every_accepted_year(
    api, where, year
):
    echoed = _answer(api, where, f"{year:04d}-12-01", f"{year:04d}-12-31")
    assert echoed["from"] == f"{year:04d}-12-01T00:00:00.000Z"
    # the end of the day `to` names; after 9999-12-31, the last instant there is
    end = "9999-12-31T23:59:59.999Z" if year == 9999 else f"{year + 1:04d}-01-01T00:00:00.000Z"
    assert echoed["to"] == end
