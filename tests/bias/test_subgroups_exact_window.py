"""GET /bias/subgroups with a bound inside a day is exact (docs/reference/bias.md, Subgroup
figures; docs/reference/conventions.md, Time bounds): the whole days inside the window come
from the daily statistics and the partial edge days from the decisions themselves.

The check: one customer holds decisions over several days; another holds only those made
inside the window, logged the same way (the same subgroups, the same later attachments
through POST /detect-bias, the same late outcomes). The first customer's exact window must
answer exactly what the second answers for all its days."""

import datetime as dt

import pytest

from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

BASE = dt.datetime(2026, 11, 16, tzinfo=dt.UTC)


def _stamp(hours: float) -> dt.datetime:
    return BASE + dt.timedelta(hours=hours)


def _writes() -> list[tuple[dt.datetime, str, dict]]:
    """(decision time, path, body): decisions every 5 hours over 4 days, some re-attached
    subgroups and late outcomes."""
    writes: list[tuple[dt.datetime, str, dict]] = []
    for i in range(20):
        when = _stamp(5 * i + 1)
        body = {
            "decision_id": f"x{i}",
            "user_id": f"u{i % 3}",
            "model_id": ["m1", "m2"][i % 2],
            "ai_recommendation": ["approve", "deny"][i % 2],
            "user_decision": ["approve", "deny", "Approve "][i % 3],
            "ai_confidence": [0.2, 0.55, 0.95, None][i % 4],
            "timestamp": when.isoformat(),
        }
        if body["ai_confidence"] is None:
            del body["ai_confidence"]
        if i % 5 != 4:
            body["subgroups"] = {"gender": ["f", "m"][i % 2], "custom": {"region": ["n", "s", "e"][i % 3]}}
        writes.append((when, "/v1/log", body))
        if i % 4 == 1:
            writes.append((when, "/v1/detect-bias", {"decision_id": f"x{i}", "subgroups": {"gender": "x"}}))
        if i % 3 == 0:
            writes.append((when, "/v1/log", {"decision_id": f"x{i}", "outcome": ["deny", "approve"][i % 2]}))
    # Subgroups posted before their decision (pending, picked up when it is logged).
    writes.insert(0, (_stamp(42), "/v1/detect-bias", {"decision_id": "x8", "subgroups": {"gender": "p"}}))
    return writes


def _post_all(api, writes) -> None:
    for _, path, body in writes:
        response = api.post(path, body, format="json")
        assert response.status_code in (200, 201), response.content


WINDOWS = [
    ("2026-11-16T07:30:00Z", "2026-11-18T13:00:00Z"),  # partial head, a whole day, partial tail
    ("2026-11-17T03:00:00Z", "2026-11-17T20:00:00Z"),  # inside one day
    ("2026-11-16", "2026-11-17T12:00:00+02:00"),  # a whole day and a partial one
    ("2026-11-17T10:00:00Z", "2026-11-19"),  # a partial day then whole days
]


@pytest.mark.parametrize(("start", "end"), WINDOWS)
@pytest.mark.parametrize("params", [{}, {"model_id": "m1"}, {"attribute": "custom.region"}])
def test_a_window_inside_days_counts_exactly_the_decisions_made_in_it(start, end, params):
    everything = client_for(make_key("all", "enterprise").value)
    inside = client_for(make_key("inside", "enterprise").value)
    writes = _writes()
    _post_all(everything, writes)
    query = {"from": start, "to": end, **params}
    exact = everything.get("/v1/bias/subgroups", query)
    assert exact.status_code == 200, exact.content

    since = dt.datetime.fromisoformat(exact.json()["from"].replace("Z", "+00:00"))
    until = dt.datetime.fromisoformat(exact.json()["to"].replace("Z", "+00:00"))
    chosen = {
        body["decision_id"] for when, path, body in writes if path == "/v1/log" and since <= when < until
    }
    _post_all(inside, [w for w in writes if w[2]["decision_id"] in chosen])
    whole = inside.get("/v1/bias/subgroups", {"from": "2026-11-10", "to": "2026-11-25", **params})
    assert whole.status_code == 200, whole.content
    assert exact.json()["attributes"] == whole.json()["attributes"]
    assert exact.json()["attributes"], "the window holds decisions with subgroups"


def test_dates_and_day_boundaries_still_read_whole_days(api):
    _post_all(api, _writes())
    by_date = api.get("/v1/bias/subgroups", {"from": "2026-11-17", "to": "2026-11-18"}).json()
    by_stamp = api.get(
        "/v1/bias/subgroups", {"from": "2026-11-17T00:00:00Z", "to": "2026-11-19T00:00:00Z"}
    ).json()
    assert (by_date["from"], by_date["to"]) == ("2026-11-17", "2026-11-18")
    assert by_date == by_stamp
