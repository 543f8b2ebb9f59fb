"""The organisation's POST /trust-score judges again only the reviewers whose sums changed since
the process last judged them (calibration.selectors, the risk-user figures remembered by packed
sums) and fits the confidence check again only when its rows changed (calibration.reporting),
and its answer is the one computed afresh gives: after new decisions, late outcomes, an erasure
and a day's rollover."""

import datetime as dt
import math

import pytest
import time_machine

from calibration import reporting, rules, selectors
from keys.models import Customer
from tests.audit.erasure_helpers import erase

pytestmark = pytest.mark.django_db

REVIEWERS = 40


def at(days_ago: int, hour: int) -> str:
    day = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=days_ago)
    return dt.datetime.combine(day, dt.time(hour), tzinfo=dt.UTC).isoformat()


def log_batch(api, items) -> None:
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content


def history(api) -> None:
    """40 reviewers with 32 to 71 decisions each over 30 days (no two with the same sums):
    followers of any AI, overriders of a strong one and reviewers who follow a confident AI, a
    known outcome on some (the AI right about as often as its confidence says, so the confidence
    check does not reject it and the figures come from the aggregates)."""
    items = []
    for u in range(REVIEWERS):
        for i in range(32 + u):
            confidence = [0.95, 0.8, 0.6, 0.35, 0.15][(u + i) % 5]
            follows = (u % 3 == 0) or (u % 3 == 1 and confidence < 0.5) or (u % 3 == 2 and confidence > 0.5)
            items.append(
                {
                    "decision_id": f"d-{u}-{i}",
                    "user_id": f"rev-{u:02d}",
                    "model_id": ["m-a", "m-b"][i % 2],
                    "ai_recommendation": "approve",
                    "ai_confidence": confidence,
                    "user_decision": "approve" if follows else "deny",
                    **(
                        {"outcome": "approve" if (7 * u + i) % 20 < 20 * confidence else "deny"}
                        if i % 3 == 0
                        else {}
                    ),
                    "timestamp": at((u + i * 5) % 30, hour=(u + i) % 24),
                }
            )
    for first in range(0, len(items), 500):
        log_batch(api, items[first : first + 500])


def answer(api) -> dict:
    response = api.post("/v1/trust-score", {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    body.pop("computed_at")
    return body


def afresh(api) -> dict:
    """The answer with every reviewer judged again (nothing remembered)."""
    selectors._risk_judged.clear()
    reporting._checked.clear()
    return answer(api)


@pytest.fixture
def judged(monkeypatch) -> list[int]:
    """The reviewers judged per call of `risk_user_figures` (counted)."""
    calls: list[int] = []
    judge = rules.risk_user_figures

    def counted(sums, th):
        calls.append(1)
        return judge(sums, th)

    monkeypatch.setattr(rules, "risk_user_figures", counted)
    selectors._risk_judged.clear()
    return calls


def close(a, b) -> bool:
    """Equal, floats to 1e-12: PostgreSQL may add a reviewer's rows in another order from one
    grouping to the next (the same sums to the last bits or two)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def test_an_answer_with_remembered_reviewers_is_the_answer_with_every_reviewer_judged_again(api, judged):
    history(api)
    first = answer(api)
    assert 10 <= len(first["risk_users"]) < REVIEWERS and len(judged) == REVIEWERS  # everyone judged once
    assert close(answer(api), first)

    # new decisions of two reviewers, a late outcome of a third
    log_batch(
        api,
        [
            {"user_id": u, "ai_recommendation": "approve", "ai_confidence": 0.2, "user_decision": "approve"}
            for u in ("rev-01", "rev-05")
            for _ in range(3)
        ],
    )
    outcome = {"decision_id": "d-7-4", "outcome": "deny"}
    assert api.post("/v1/log", outcome, format="json").status_code == 201
    remembered = answer(api)
    assert not close(remembered, first)
    assert close(remembered, afresh(api))

    # an erasure moves a reviewer's sums to its pseudonym
    assert erase(api, user_id="rev-03", legal_basis="gdpr_art_17_1_b").status_code == 202
    remembered = answer(api)
    assert all(u["user_id"] != "rev-03" for u in remembered["risk_users"])
    assert close(remembered, afresh(api))

    # the next day the window leaves its first day behind and takes a new one
    for later in (1, 61):
        with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(days=later), tick=True):
            moved = answer(api)
            assert close(moved, afresh(api))
    assert not close(moved, remembered)  # 61 days on, the window lost the oldest day's decisions


def test_only_reviewers_whose_sums_changed_are_judged_again_and_the_figures_are_the_same_to_the_bit(
    api, judged, monkeypatch
):
    history(api)
    customer = Customer.objects.get(pk="acme")
    days = selectors.DayRange.last_days(90)
    rows = selectors._per_user_rows(customer, days, None)
    monkeypatch.setattr(selectors, "_per_user_rows", lambda *args: rows)  # the same bits each call
    first = selectors.organization_window(customer, days=days)
    assert len(judged) == REVIEWERS and 10 <= len(first.risk_users) < REVIEWERS
    judged.clear()
    assert selectors.organization_window(customer, days=days) == first and judged == []

    # three reviewers' sums change (one scored decision more, a sum's last bit, another
    # reviewer's sums): the first two are judged again, the third's sums were judged already
    # (the sums are the key, not the reviewer), and the figures are the ones every reviewer
    # judged afresh gives, to the bit
    scored = 1 + rules.SUM_FIELDS.index("scored_n")
    q_sum = 1 + rules.SUM_FIELDS.index("q_sum")
    changed = list(rows)
    changed[4] = (*rows[4][:scored], rows[4][scored] + 1, *rows[4][scored + 1 :])
    changed[9] = (*rows[9][:q_sum], math.nextafter(rows[9][q_sum], 0), *rows[9][q_sum + 1 :])
    changed[12] = (rows[12][0], *rows[30][1:])
    monkeypatch.setattr(selectors, "_per_user_rows", lambda *args: changed)
    judged.clear()
    remembered = selectors.organization_window(customer, days=days)
    assert len(judged) == 2
    assert [u["user_id"] for u in remembered.risk_users].count(rows[12][0]) == any(
        u["user_id"] == rows[30][0] for u in first.risk_users
    )
    selectors._risk_judged.clear()
    assert remembered == selectors.organization_window(customer, days=days)
    assert remembered != first


def test_reviewers_judged_under_other_settings_are_judged_again(api, judged, settings):
    history(api)
    first = answer(api)
    settings.CALIBRATION_RISK_HIGH_GAP = 0.3
    judged.clear()
    stricter = answer(api)
    assert len(judged) == REVIEWERS and close(stricter, afresh(api))
    assert stricter["risk_users"] != first["risk_users"]


def test_a_zero_and_a_negative_zero_sum_are_different_keys():
    zero = dict.fromkeys(rules.RISK_USER_FIELDS, 0.0)
    negative = {**zero, "q_sum": -0.0}
    assert selectors._RISK_KEY(*zero.values()) != selectors._RISK_KEY(*negative.values())
    assert selectors._RISK_KEY(*dict.fromkeys(rules.RISK_USER_FIELDS, 3).values()) == selectors._RISK_KEY(
        *dict.fromkeys(rules.RISK_USER_FIELDS, 3.0).values()
    )


def test_a_remembered_confidence_check_is_the_check_fitted_again(api, monkeypatch):
    history(api)
    fits: list[int] = []
    fit = reporting.confidence_check

    def counted(pairs, **kwargs):
        fits.append(1)
        return fit(pairs, **kwargs)

    monkeypatch.setattr(reporting, "confidence_check", counted)
    reporting._checked.clear()
    first = answer(api)["confidence_check"]
    assert first["verdict"] != "not_checked" and first["limit"] == 10_000 and len(fits) == 1
    assert answer(api)["confidence_check"] == first and len(fits) == 1  # the same rows: not fitted again

    # a decision without an outcome is not one the check reads
    unscored = {
        "user_id": "rev-00",
        "ai_recommendation": "approve",
        "ai_confidence": 0.9,
        "user_decision": "deny",
    }
    assert api.post("/v1/log", unscored, format="json").status_code == 201
    assert answer(api)["confidence_check"] == first and len(fits) == 1

    # one with both a confidence and an outcome is: fitted again, as a process that never fitted
    assert api.post("/v1/log", {**unscored, "outcome": "deny"}, format="json").status_code == 201
    remembered = answer(api)["confidence_check"]
    assert len(fits) == 2 and remembered != first and remembered["decisions"] == first["decisions"] + 1
    assert afresh(api)["confidence_check"] == remembered and len(fits) == 3
