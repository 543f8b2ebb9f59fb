"""manage.py import_decisions: CSV and JSON Lines through the batch service, a summary, and
rejected rows in a side file with their error."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from audit.models import Decision

pytestmark = pytest.mark.django_db

CSV = """decision_id,user_id,model_id,ai_recommendation,ai_confidence,user_decision,outcome,subgroups,timestamp
c-1,alice,credit-v1,approve,0.9,approve,,"{""gender"": ""f""}",2026-11-20T09:00:00Z
c-2,bob,,deny,0.3,approve,deny,,
c-3,bob,,deny,high,approve,,,
c-1,alice,credit-v1,approve,0.9,approve,,"{""gender"": ""f""}",2026-11-20T09:00:00Z
"""


def run(path, *extra):
    out = io.StringIO()
    call_command("import_decisions", str(path), "--customer-id", "acme", "--no-progress", *extra, stdout=out)
    return out.getvalue()


def test_csv_import_reports_and_writes_rejected_rows(api, tmp_path):
    path = tmp_path / "decisions.csv"
    path.write_text(CSV)
    out = run(path, "--batch-size", "2")
    assert "accepted 2, replayed 1, rejected 1" in out
    rejects = [
        json.loads(line) for line in (tmp_path / "decisions.csv.rejected.jsonl").read_text().splitlines()
    ]
    assert [(r["line"], r["error"]["code"]) for r in rejects] == [(4, "VALIDATION_ERROR")]
    assert "ai_confidence" in {e["field"] for e in rejects[0]["error"]["errors"]}
    assert Decision.objects.get(customer_id="acme", decision_id="c-1").subgroups == {"gender": "f"}
    verify = api.get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True and verify["entries_checked"] == 2


def test_jsonl_import_with_outcome_updates_and_bad_lines(api, tmp_path):
    lines = [
        json.dumps({"decision_id": "j-1", "user_id": "u", "ai_recommendation": "a", "user_decision": "a"}),
        "{not json",
        json.dumps({"decision_id": "j-1", "outcome": "b"}),
        json.dumps({"decision_id": "nope", "outcome": "b"}),
    ]
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = run(path)
    assert "accepted 2, replayed 0, rejected 2" in out
    codes = [json.loads(x)["error"]["code"] for x in (tmp_path / "decisions.jsonl.rejected.jsonl").open()]
    assert codes == ["INVALID_JSON", "NOT_FOUND"]
    assert Decision.objects.get(customer_id="acme", decision_id="j-1").outcome == "b"


def test_unknown_customer_is_an_error(db, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(CSV)
    with pytest.raises(CommandError):
        run(path)


def test_nan_infinity_and_deep_nesting_are_rejected_rows_and_the_import_goes_on(api, tmp_path):
    """docs/reference/limits.md, "Imports": no traceback, no half-done import, every bad row
    in the rejects file with its line."""
    good = {"user_id": "u", "ai_recommendation": "approve", "user_decision": "approve"}
    lines = [
        json.dumps({**good, "decision_id": "ok-1"}),
        '{"decision_id": "nan", "user_id": "u", "ai_recommendation": "a", "user_decision": "a", "ai_confidence": NaN}',
        json.dumps({**good, "decision_id": "inf"})[:-1] + ', "metadata": {"x": Infinity}}',
        json.dumps({**good, "decision_id": "big"})[:-1] + ', "metadata": {"x": 1e400}}',
        "[" * 5000 + "]" * 5000,
        '{"decision_id": "deep", "metadata": ' + '{"a": ' * 100 + "1" + "}" * 100 + "}",
        json.dumps({**good, "decision_id": "ok-2"}),
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = run(path)
    assert "accepted 2, replayed 0, rejected 5" in out
    rejects = [
        json.loads(line) for line in (tmp_path / "hostile.jsonl.rejected.jsonl").read_text().splitlines()
    ]
    assert sorted(r["line"] for r in rejects) == [2, 3, 4, 5, 6]
    assert sorted(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True)) == [
        "ok-1",
        "ok-2",
    ]

    csv_path = tmp_path / "hostile.csv"
    csv_path.write_text(
        "decision_id,user_id,ai_recommendation,ai_confidence,user_decision,metadata\n"
        "c-nan,u,approve,nan,approve,\n"
        "c-inf,u,approve,inf,approve,\n"
        'c-deep,u,approve,0.5,approve,"' + "[" * 5000 + "]" * 5000 + '"\n'
        "c-ok,u,approve,0.5,approve,\n"
    )
    out = run(csv_path)
    assert "accepted 1, replayed 0, rejected 3" in out
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_a_line_that_is_not_utf8_is_a_rejected_row_with_its_reason_and_the_import_goes_on(api, tmp_path):
    good = {"user_id": "u", "ai_recommendation": "approve", "user_decision": "approve"}
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        json.dumps({**good, "decision_id": "u-1"}).encode()
        + b"\n"
        + b'{"decision_id": "u-2", "user_id": "caf\xe9", "ai_recommendation": "a", "user_decision": "a"}\n'
        + json.dumps({**good, "decision_id": "u-3", "context": "caf\u00e9 \u2713"}).encode()
        + b"\n"
    )
    out = run(path)
    assert "accepted 2, replayed 0, rejected 1" in out
    (reject,) = [json.loads(x) for x in (tmp_path / "mixed.jsonl.rejected.jsonl").open(encoding="utf-8")]
    assert reject["line"] == 2 and reject["error"]["code"] == "INVALID_JSON"
    assert reject["error"]["detail"] == "not valid UTF-8: byte 0xe9 at character 39"
    assert "caf\ufffd" in reject["row"]
    ids = Decision.objects.filter(customer_id="acme").values_list("decision_id", "context")
    assert sorted(ids) == [("u-1", ""), ("u-3", "caf\u00e9 \u2713")]

    csv_path = tmp_path / "mixed.csv"
    csv_path.write_bytes(
        b"decision_id,user_id,ai_recommendation,user_decision,context\n"
        b"c-1,u,approve,approve,caf\xff\n"
        b"c-2,u,approve,approve,ok\n"
    )
    out = run(csv_path)
    assert "accepted 1, replayed 0, rejected 1" in out
    (reject,) = [json.loads(x) for x in (tmp_path / "mixed.csv.rejected.jsonl").open(encoding="utf-8")]
    assert reject["line"] == 2 and reject["error"]["code"] == "VALIDATION_ERROR"
    assert reject["error"]["errors"] == [
        {"field": "context", "message": "not valid UTF-8: byte 0xff at character 4"}
    ]
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


@pytest.mark.parametrize("cell", ["1e400", "-1e400", "1E999"])
def test_a_csv_number_beyond_a_double_is_rejected_for_that_reason(api, tmp_path, cell):
    path = tmp_path / "big.csv"
    path.write_text(
        "decision_id,user_id,ai_recommendation,ai_confidence,user_decision\n"
        f"c-big,u,approve,{cell},approve\nc-word,u,approve,inf,approve\nc-ok,u,approve,0.5,approve\n"
    )
    out = run(path)
    assert "accepted 1, replayed 0, rejected 2" in out
    rejects = [json.loads(x) for x in (tmp_path / "big.csv.rejected.jsonl").open()]
    assert [(r["line"], r["error"]["errors"]) for r in rejects] == [
        (2, [{"field": "ai_confidence", "message": "must be a number that fits a finite double"}]),
        (3, [{"field": "ai_confidence", "message": "must be a number"}]),
    ]
    assert rejects[0]["row"]["ai_confidence"] == ("-Infinity" if cell.startswith("-") else "Infinity")
    assert rejects[1]["row"]["ai_confidence"] == "inf"
