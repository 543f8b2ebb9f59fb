"""config.db.jsonrows: a small write's rows sent as one JSON parameter (the values psycopg would
have sent, read back: tests/system/test_array_params.py), a naive time and a JSON member read
as before, a row JSON cannot carry exactly goes as arrays instead, and a POST /log's writes
send their rows so."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import Decision
from config.db.jsonrows import rows_json, rows_select
from webhooks.models import Event

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_a_naive_time_is_read_in_the_session_s_time_zone_and_an_integer_as_a_double():
    text = rows_json([[dt.datetime(2026, 1, 1, 12, 30), 1]], [False, True])
    with connection.cursor() as cursor:
        cursor.execute(rows_select(["timestamptz", "double precision"]), [text])
        assert cursor.fetchone() == (dt.datetime(2026, 1, 1, 12, 30, tzinfo=dt.UTC), 1.0)
    assert text is not None and '"c1":1.0' in text


def test_a_json_member_is_stored_as_its_json_text():
    text = rows_json([['{"a": [1, "é"], "b": null}'], [None]], [False])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT array_agg(c0::text) FROM ({rows_select(['jsonb'])}) AS t(c0)", [text])  # noqa: S608
        assert cursor.fetchone()[0] == ['{"a": [1, "é"], "b": null}', None]


@pytest.mark.parametrize(
    ("value", "floats"),
    [(b"bytes", False), (float("inf"), True), (float("nan"), True), (2**64, False), ("a\ud800", False)],
)
def test_a_value_json_cannot_carry_exactly_goes_as_arrays(value, floats):
    assert rows_json([[value]], [floats]) is None


def test_post_log_sends_each_write_s_rows_as_one_json_parameter(api):
    body = {
        "decision_id": "json-rows-1",
        "user_id": "officer-1",
        "model_id": "credit-v3",
        "ai_recommendation": "approve",
        "ai_confidence": 0.1 + 0.2,
        "user_decision": "approve",
        "context": 'quoted "context" ünd \\',
        "subgroups": {"gender": "f"},
    }
    with CaptureQueriesContext(connection) as captured:
        assert api.post("/v1/log", body, format="json").status_code == 201
    inserts = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("INSERT INTO")]
    by_json = [sql for sql in inserts if "json_to_recordset" in sql]
    assert any(sql.startswith('INSERT INTO "audit_decision"') for sql in by_json)
    assert any("calibration_userdailyaggregate" in sql for sql in by_json)
    assert any(sql.startswith('INSERT INTO "webhooks_event"') for sql in by_json)  # trust.miscalibrated
    decision = Decision.objects.get(decision_id="json-rows-1")
    assert decision.ai_confidence == 0.1 + 0.2
    assert decision.context == 'quoted "context" ünd \\'
    assert Event.objects.get(data__decision_id="json-rows-1").data["ai_confidence"] == 0.1 + 0.2
