"""GET /oversight/vigilance over HTTP (docs/reference/oversight.md, "Vigilance"): counts,
rates with Wilson intervals and d' against scipy, evidence levels, order, totals, windows."""

import pytest
from scipy.stats import binomtest, norm

from tests.oversight.helpers import ago, decision, log_all, probe

pytestmark = pytest.mark.django_db


def _get(api, **params):
    r = api.get("/v1/oversight/vigilance", params)
    assert r.status_code == 200, r.content
    return r.json()


def _wilson(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [round(ci.low, 4), round(ci.high, 4)]


def _d_prime(caught, known_wrong, false_overrides, known_right):
    hit = (caught + 0.5) / (known_wrong + 1)
    false_alarm = (false_overrides + 0.5) / (known_right + 1)
    return round(float(norm.ppf(hit) - norm.ppf(false_alarm)), 4)


def _programme(user, *, caught, missed, corrected_wrong_answer=0, right_kept, overridden):
    """`caught` known_wrong probes answered with the correct decision, `corrected_wrong_answer`
    caught but answered with a third value, `missed` followed; known_right kept/overridden."""
    items = [probe(user, "known_wrong", followed=False) for _ in range(caught)]
    items += [
        probe(user, "known_wrong", followed=False, user_decision="refer")
        for _ in range(corrected_wrong_answer)
    ]
    items += [probe(user, "known_wrong", followed=True) for _ in range(missed)]
    items += [probe(user, "known_right", followed=True) for _ in range(right_kept)]
    items += [probe(user, "known_right", followed=False) for _ in range(overridden)]
    return items


def test_reviewer_figures_match_scipy(api):
    log_all(
        api,
        _programme("ann", caught=20, corrected_wrong_answer=5, missed=10, right_kept=18, overridden=2)
        + _programme("bob", caught=0, missed=4, right_kept=3, overridden=0)
        + [decision("ann"), decision("cyd")],  # real decisions: no part of vigilance
    )
    body = _get(api)
    assert [row["user_id"] for row in body["data"]] == ["bob", "ann"]  # lowest catch rate first
    ann = body["data"][1]
    assert ann == {
        "user_id": "ann",
        "probes": 55,
        "known_wrong": 35,
        "caught": 25,
        "corrected": 20,
        "catch_rate": round(25 / 35, 4),
        "catch_rate_ci": _wilson(25, 35),
        "known_right": 20,
        "false_overrides": 2,
        "false_override_rate": 0.1,
        "false_override_rate_ci": _wilson(2, 20),
        "d_prime": _d_prime(25, 35, 2, 20),
        "evidence": "indicative",
    }
    bob = body["data"][0]
    assert bob["catch_rate"] == 0.0 and bob["catch_rate_ci"] == _wilson(0, 4)
    assert bob["d_prime"] == _d_prime(0, 4, 0, 3) and bob["evidence"] == "insufficient"
    assert body["totals"] == {
        "probes": 62,
        "known_wrong": 39,
        "caught": 25,
        "corrected": 20,
        "catch_rate": round(25 / 39, 4),
        "catch_rate_ci": _wilson(25, 39),
        "known_right": 23,
        "false_overrides": 2,
        "false_override_rate": round(2 / 23, 4),
        "false_override_rate_ci": _wilson(2, 23),
        "d_prime": _d_prime(25, 39, 2, 23),
        "evidence": "indicative",
    }


def test_d_prime_is_null_without_one_kind_and_rates_are_null_without_their_kind(api):
    log_all(api, _programme("ann", caught=3, missed=1, right_kept=0, overridden=0))
    log_all(api, _programme("bob", caught=0, missed=0, right_kept=2, overridden=1))
    rows = {row["user_id"]: row for row in _get(api)["data"]}
    assert rows["ann"]["d_prime"] is None and rows["ann"]["false_override_rate"] is None
    assert rows["ann"]["false_override_rate_ci"] is None
    assert rows["bob"]["catch_rate"] is None and rows["bob"]["catch_rate_ci"] is None
    assert rows["bob"]["d_prime"] is None and rows["bob"]["false_override_rate"] == round(1 / 3, 4)
    assert list(rows) == ["ann", "bob"]  # a reviewer with no known_wrong probe comes last


@pytest.mark.parametrize(
    ("known_wrong", "level"),
    [(29, "insufficient"), (30, "indicative"), (99, "indicative"), (100, "sufficient")],
)
def test_evidence_levels_follow_the_known_wrong_count(api, known_wrong, level):
    log_all(
        api,
        _programme(
            "ann", caught=known_wrong // 2, missed=known_wrong - known_wrong // 2, right_kept=1, overridden=0
        ),
    )
    body = _get(api)
    assert body["data"][0]["evidence"] == level and body["totals"]["evidence"] == level


def test_window_defaults_to_90_days_and_filters_narrow_rows_and_totals(api):
    log_all(
        api,
        [
            probe("ann", "known_wrong", followed=False, timestamp=ago(days=89)),
            probe("ann", "known_wrong", followed=True, timestamp=ago(days=91)),
            probe("bob", "known_wrong", followed=True, model_id="m2"),
        ],
    )
    body = _get(api)
    assert body["totals"]["known_wrong"] == 2
    assert {row["user_id"]: row["caught"] for row in body["data"]} == {"ann": 1, "bob": 0}
    assert _get(api, user_id="ann")["totals"]["known_wrong"] == 1
    assert [row["user_id"] for row in _get(api, model_id="m2")["data"]] == ["bob"]
    assert _get(api, **{"from": ago(days=100)})["totals"]["known_wrong"] == 3
    assert api.get("/v1/oversight/vigilance", {"from": "2026-02-01", "to": "2026-01-01"}).status_code == 400


def test_no_probe_gives_empty_rows_and_zero_totals(api):
    log_all(api, [decision("ann", seconds=3.0)])
    body = _get(api)
    assert body["data"] == [] and body["pagination"]["total"] == 0
    assert body["totals"]["probes"] == 0 and body["totals"]["catch_rate"] is None
    assert body["totals"]["evidence"] == "insufficient"
