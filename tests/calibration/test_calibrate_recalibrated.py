"""POST /calibrate's profile is judged as POST /trust-score judges the same user (docs/reference/calibration.md,
A miscalibrated confidence): when the confidence check over the organisation's decisions of the
window rejects the AI's confidence, every figure of the profile uses the recalibrated p'."""

import pytest

from calibration.serializers import FIGURE_KEYS
from tests.audit.factories import decision_body

pytestmark = pytest.mark.django_db


def _decisions(count: int) -> list[dict]:
    """An AI that says 0.55-0.70 and is right 24 times in 25 (the check finds intercept > 0);
    reviewer r1 follows every time, r2 overrides where the AI says under 0.6."""
    out = []
    for n in range(count):
        confidence = (0.55, 0.6, 0.65, 0.7)[n % 4]
        user = ("r1", "r2")[n % 2]
        follows = user == "r1" or confidence >= 0.6
        out.append(
            decision_body(
                user_id=user,
                ai_recommendation="approve",
                ai_confidence=confidence,
                user_decision="approve" if follows else "deny",
                outcome="deny" if n % 25 == 0 else "approve",
            )
        )
    return out


def test_the_profile_uses_the_recalibrated_confidence_when_the_check_rejects(api):
    batch = api.post("/v1/log/batch", {"decisions": _decisions(400)}, format="json")
    assert batch.json()["accepted"] == 400
    check = api.post("/v1/trust-score", {}, format="json").json()["confidence_check"]
    assert check["verdict"] == "miscalibrated" and check["intercept"] > 0
    body = api.post("/v1/calibrate", _decisions(1)[0] | {"user_id": "r1"}, format="json").json()
    profile = body["user_profile"]
    assert profile["confidence_recalibrated"] is True
    served = api.post("/v1/trust-score", {"user_id": "r1"}, format="json").json()
    assert served["confidence_recalibrated"] is True
    assert {key: profile[key] for key in FIGURE_KEYS} == {key: served[key] for key in FIGURE_KEYS}


def test_the_profile_keeps_the_logged_confidence_when_the_check_does_not_reject(api):
    body = api.post("/v1/calibrate", decision_body(user_id="r1"), format="json").json()
    assert body["user_profile"]["confidence_recalibrated"] is False


def test_the_written_check_statement_is_the_one_the_orm_compiles():
    """audit.selectors.scored_latest_sql, which POST /calibrate reads, is the ORM's statement for
    the same window, text and parameters (reporting.decisions_confidence_check compiles it)."""
    import datetime as dt

    from audit import selectors as audit_selectors
    from calibration.reporting import CONFIDENCE_CHECK_LIMIT
    from keys.models import Customer

    customer = Customer.objects.create(id="written-check")
    since = dt.datetime(2026, 9, 2, tzinfo=dt.UTC)
    until = since + dt.timedelta(days=90)
    window = audit_selectors.decision_set(customer, since=since, until=until)
    latest = (
        window.filter(ai_confidence__isnull=False, outcome__isnull=False)
        .order_by("-timestamp", "-decision_id")
        .values_list("ai_confidence", "ai_recommendation", "outcome")[:CONFIDENCE_CHECK_LIMIT]
    )
    sql, params = latest.query.sql_with_params()
    written = audit_selectors.scored_latest_sql(
        customer, since=since, until=until, limit=CONFIDENCE_CHECK_LIMIT
    )
    assert written == (sql, list(params))
