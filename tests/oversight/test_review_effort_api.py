"""GET /oversight/review-effort over HTTP (docs/reference/oversight.md, "Review effort"): the
per-model medians and thresholds, the per-reviewer figures against an independent computation
(statistics.median, scipy's Wilson interval), flagging, order, windows, filters, paging."""

import statistics

import pytest
from scipy.stats import binomtest

from tests.conftest import client_for, make_key
from tests.oversight.helpers import ago, decision, log_all, probe

pytestmark = pytest.mark.django_db


def _get(api, **params):
    r = api.get("/v1/oversight/review-effort", params)
    assert r.status_code == 200, r.content
    return r.json()


def _wilson(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(ci.low, 4), round(ci.high, 4)]


def test_model_medians_are_exact_and_a_missing_model_is_its_own_group(api):
    m1 = [float(s) for s in range(1, 25)]  # 24 timed: even count, median the mean of the two middle
    m2 = [4.0, 100.0, 7.5]  # 3 timed: under 20, the threshold is the floor
    none = [2.0 * s for s in range(1, 22)]  # 21 timed, no model
    items = [decision("ann", seconds=s) for s in m1]
    items += [decision("bob", seconds=s, model_id="m2") for s in m2]
    items += [decision("cyd", seconds=s, model_id=None) for s in none]
    items += [decision("ann")]  # untimed: no part of any median
    log_all(api, items)
    body = _get(api)
    models = {m["model_id"]: m for m in body["models"]}
    assert set(models) == {"m1", "m2", None}
    assert models["m1"]["median_review_seconds"] == statistics.median(m1) == 12.5
    assert models["m1"]["threshold_seconds"] == 6.25
    assert models["m1"]["timed_decisions"] == 24
    assert models["m2"]["median_review_seconds"] == 7.5 and models["m2"]["threshold_seconds"] == 3.0
    assert models[None]["median_review_seconds"] == statistics.median(none) == 22.0
    assert models[None]["threshold_seconds"] == 11.0
    assert body["rule"] == {
        "floor_seconds": 3.0,
        "median_fraction": 0.5,
        "min_timed_for_median": 20,
        "flag_rate": 0.2,
        "min_timed_for_flag": 20,
    }


def test_the_floor_holds_when_half_the_median_is_below_it(api, settings):
    log_all(api, [decision("ann", seconds=4.0) for _ in range(20)])
    assert _get(api)["models"][0]["threshold_seconds"] == 3.0
    settings.OVERSIGHT_FLOOR_SECONDS = 1.0
    settings.OVERSIGHT_MEDIAN_FRACTION = 0.25
    body = _get(api)
    assert body["models"][0]["threshold_seconds"] == 1.0
    assert body["rule"]["floor_seconds"] == 1.0 and body["rule"]["median_fraction"] == 0.25


def test_ai_wrong_is_read_from_the_outcome_whatever_the_confidence_made_the_category(api):
    # A confidence of 0.7 makes a followed decision CALIBRATED, yet its outcome shows the AI wrong:
    # 8 of 10 quick decisions followed a wrong AI, 2 overrode it; the outcome is compared trimmed
    # and case-folded, as followed_ai is.
    items = [decision("ann", seconds=30.0) for _ in range(40)]  # threshold 15 s
    items += [decision("quin", seconds=2.0, ai_confidence=0.7, outcome=" DENY ") for _ in range(8)]
    items += [
        decision("quin", seconds=2.0, followed=False, ai_confidence=0.7, outcome="deny") for _ in range(2)
    ]
    items += [decision("quin", seconds=40.0, ai_confidence=0.7, outcome="Approve")]  # AI right: not counted
    log_all(api, items)
    rows = {row["user_id"]: row for row in _get(api)["data"]}
    assert rows["quin"]["overreliance_when_quick"] == 0.8
    assert rows["quin"]["overreliance_when_considered"] is None


def test_reviewer_figures_match_an_independent_computation(api):
    # Model m1: 40 timed decisions with median 20 s -> threshold 10 s.
    careful = [decision("carl", seconds=30.0, followed=i % 3 != 0) for i in range(30)]
    quick = []
    # quinn: 10 timed, 6 quick (<10 s), 5 quick agreements; outcomes known on some
    quick += [
        decision("quinn", seconds=2.0, followed=True, outcome="deny") for _ in range(3)
    ]  # AI wrong, followed
    quick += [decision("quinn", seconds=2.0, followed=True, outcome="approve") for _ in range(2)]  # AI right
    quick += [decision("quinn", seconds=9.99, followed=False, outcome="approve")]  # quick override, AI right
    quick += [decision("quinn", seconds=10.0, followed=True, outcome="deny")]  # at the threshold: considered
    quick += [
        decision("quinn", seconds=15.0, followed=False, outcome="deny")
    ]  # considered, AI wrong, overrode
    quick += [decision("quinn", seconds=15.0, followed=False)]
    quick += [decision("quinn", seconds=15.0, followed=True)]
    quick += [decision("quinn"), decision("quinn")]  # untimed
    log_all(api, careful + quick)
    body = _get(api)
    assert body["models"] == [
        {"model_id": "m1", "timed_decisions": 40, "median_review_seconds": 30.0, "threshold_seconds": 15.0}
    ]
    # threshold 15: quinn's 10.0 and 9.99 are quick too, 15.0 is not
    rows = {row["user_id"]: row for row in body["data"]}
    q = rows["quinn"]
    assert q["decisions"] == 12 and q["timed_decisions"] == 10
    assert q["median_review_seconds"] == statistics.median([2, 2, 2, 2, 2, 9.99, 10, 15, 15, 15])
    assert q["quick_decisions"] == 7 and q["quick_agreements"] == 6
    assert q["quick_agreement_rate"] == 0.6
    assert q["quick_agreement_rate_ci"] == _wilson(6, 10)
    # quick with known outcome and AI wrong: 3 followed + the 10.0 followed = 4, all followed
    assert q["overreliance_when_quick"] == 1.0
    # considered with AI wrong: one, overrode
    assert q["overreliance_when_considered"] == 0.0
    assert q["flagged"] is False  # fewer than 20 timed
    c = rows["carl"]
    assert c["quick_decisions"] == 0 and c["quick_agreement_rate"] == 0.0
    assert c["overreliance_when_quick"] is None and c["overreliance_when_considered"] is None
    assert c["quick_agreement_rate_ci"] == _wilson(0, 30)


def test_flagged_needs_20_timed_and_the_interval_above_the_flag_rate(api):
    items = [decision("base", seconds=60.0) for _ in range(40)]  # median 60 -> threshold 30
    # rita: 20 timed, 9 quick agreements: 0.45, Wilson low 0.258 > 0.2 -> flagged
    items += [decision("rita", seconds=1.0) for _ in range(9)] + [
        decision("rita", seconds=60.0) for _ in range(11)
    ]
    # sam: 19 timed, 19 quick agreements: under 20 timed -> not flagged
    items += [decision("sam", seconds=1.0) for _ in range(19)]
    # tom: 20 timed, 6 quick agreements: 0.3, Wilson low 0.145 -> not flagged
    items += [decision("tom", seconds=1.0) for _ in range(6)] + [
        decision("tom", seconds=60.0) for _ in range(14)
    ]
    # una: no timed decision at all
    items += [decision("una")]
    log_all(api, items)
    data = _get(api)["data"]
    assert [row["user_id"] for row in data] == ["rita", "sam", "tom", "base", "una"]
    flags = {row["user_id"]: row["flagged"] for row in data}
    assert flags == {"rita": True, "sam": False, "tom": False, "base": False, "una": False}
    assert _wilson(9, 20)[0] > 0.2 and _wilson(6, 20)[0] < 0.2
    una = data[-1]
    assert una["timed_decisions"] == 0 and una["quick_agreement_rate"] is None
    assert una["quick_agreement_rate_ci"] is None and una["median_review_seconds"] is None


def test_probes_are_left_out_of_review_effort(api):
    items = [decision("ann", seconds=float(s)) for s in range(1, 41)]
    items += [decision("bob", seconds=2.0) for _ in range(25)]
    log_all(api, items)
    before = _get(api)
    log_all(
        api,
        [probe("ann", "known_wrong", followed=True, review_seconds=0.5) for _ in range(30)]
        + [probe("zed", "known_right", followed=True, review_seconds=100.0) for _ in range(30)],
    )
    after = _get(api)
    assert after == {**before, "to": after["to"], "from": after["from"]}


def test_window_defaults_to_the_last_30_days_and_takes_bounds(api):
    log_all(
        api,
        [
            decision("ann", seconds=5.0, timestamp=ago(days=29)),
            decision("ann", seconds=5.0, timestamp=ago(days=31)),
            decision("bob", seconds=5.0, timestamp="2026-01-10T12:00:00Z"),
        ],
    )
    body = _get(api)
    assert [row["user_id"] for row in body["data"]] == ["ann"] and body["data"][0]["decisions"] == 1
    body = _get(api, **{"from": "2026-01-10", "to": "2026-01-10"})
    assert body["from"] == "2026-01-10T00:00:00.000Z" and body["to"] == "2026-01-11T00:00:00.000Z"
    assert [row["user_id"] for row in body["data"]] == ["bob"]
    assert _get(api, **{"from": "2026-01-10T12:00:00.001Z", "to": "2026-01-10"})["data"] == []
    r = api.get("/v1/oversight/review-effort", {"from": "2026-02-01", "to": "2026-01-01"})
    assert r.status_code == 400 and r.json()["code"] == "VALIDATION_ERROR"
    assert api.get("/v1/oversight/review-effort", {"to": "soon"}).status_code == 400


def test_filters_and_paging(api):
    items = [decision(f"u{i:02d}", seconds=5.0) for i in range(7)]
    items += [decision("u00", seconds=5.0, model_id="m2")]
    log_all(api, items)
    body = _get(api, limit=3, page=2)
    assert len(body["data"]) == 3
    assert body["pagination"] == {"page": 2, "limit": 3, "total": 7, "total_pages": 3, "has_more": True}
    assert _get(api, page=9)["data"] == []
    only = _get(api, user_id="u00")
    assert [row["user_id"] for row in only["data"]] == ["u00"] and only["data"][0]["decisions"] == 2
    assert len(only["models"]) == 2  # the thresholds are the models', not the one reviewer's
    by_model = _get(api, model_id="m2")
    assert [row["user_id"] for row in by_model["data"]] == ["u00"] and by_model["data"][0]["decisions"] == 1
    assert [m["model_id"] for m in by_model["models"]] == ["m2"]
    assert api.get("/v1/oversight/review-effort", {"limit": 101}).status_code == 400


def test_review_effort_is_tenant_scoped_and_needs_a_key(api, anon_api):
    log_all(api, [decision("ann", seconds=5.0)])
    other = client_for(make_key("globex").value)
    assert _get(other)["data"] == [] and _get(other)["models"] == []
    assert anon_api.get("/v1/oversight/review-effort").status_code == 401
    assert anon_api.get("/v1/oversight/vigilance").status_code == 401


@pytest.mark.parametrize("path", ["/v1/oversight/review-effort", "/v1/oversight/vigilance"])
def test_the_echoed_bounds_are_iso_8601_with_a_four_digit_year(api, path):
    answer = api.get(path, {"from": "0001-01-01", "to": "0001-01-31"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["from"] == "0001-01-01T00:00:00.000Z"
    assert answer.json()["to"] == "0001-02-01T00:00:00.000Z"  # the end of the day `to` names
