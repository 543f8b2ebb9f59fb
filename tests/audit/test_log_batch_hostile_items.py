"""POST /log/batch (docs/reference/decisions.md): a NUL or an unpaired surrogate in one item rejects that item alone,
with the 400 POST /log would have answered; the other items are stored. The envelope and the
nesting limit still apply to the whole request."""

import json

import pytest

from audit.models import Decision
from tests.audit.factories import decision_body

pytestmark = pytest.mark.django_db


def _item(decision_id: str, field: str, raw_value: str) -> str:
    """An item as JSON text with `field` set to a raw JSON value (escapes kept as sent; the
    field is left out of the rest, since a key given twice is INVALID_JSON)."""
    body = decision_body(decision_id=decision_id)
    body.pop(field, None)
    return json.dumps(body)[:-1] + f', "{field}": {raw_value}}}'


def _post(api, items: list[str], *, ndjson: bool = False):
    if ndjson:
        return api.generic(
            "POST", "/v1/log/batch", "\n".join(items).encode(), content_type="application/x-ndjson"
        )
    body = '{"decisions": [' + ", ".join(items) + "]}"
    return api.generic("POST", "/v1/log/batch", body.encode(), content_type="application/json")


@pytest.mark.parametrize("ndjson", [False, True])
def test_a_nul_or_lone_surrogate_in_one_item_rejects_only_that_item(api, ndjson):
    items = [
        json.dumps(decision_body(decision_id="ok-1")),
        _item("bad-nul", "context", '"a\\u0000b"'),
        _item("bad-surrogate", "metadata", '{"notes": ["fine", "\\ud800"]}'),
        json.dumps(decision_body(decision_id="ok-2")),
    ]
    response = _post(api, items, ndjson=ndjson)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["accepted"], body["replayed"], body["rejected"]) == (2, 0, 2)
    statuses = [(r["index"], r["status"], r["decision_id"]) for r in body["results"]]
    assert statuses == [(0, 201, "ok-1"), (1, 400, "bad-nul"), (2, 400, "bad-surrogate"), (3, 201, "ok-2")]
    nul, surrogate = body["results"][1]["error"], body["results"][2]["error"]
    assert nul["code"] == surrogate["code"] == "VALIDATION_ERROR"
    assert nul["errors"][0]["field"] == "context"
    assert surrogate["errors"][0]["field"] == "metadata.notes[1]"
    assert sorted(Decision.objects.values_list("decision_id", flat=True)) == ["ok-1", "ok-2"]
    assert body["results"][3]["sequence"] == body["results"][0]["sequence"] + 1
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_the_same_item_alone_on_post_log_answers_the_same_error(api):
    response = api.generic(
        "POST",
        "/v1/log",
        _item("bad-nul", "context", '"a\\u0000b"').encode(),
        content_type="application/json",
    )
    assert response.status_code == 400
    batch = _post(api, [_item("bad-nul", "context", '"a\\u0000b"')]).json()["results"][0]
    assert batch["error"]["code"] == response.json()["code"]
    assert batch["error"]["errors"] == response.json()["errors"]


def test_an_item_whose_decision_id_cannot_be_shown_is_reported_with_a_null_id(api):
    response = _post(
        api, [_item("x", "decision_id", '"d\\udc00"'), json.dumps(decision_body(decision_id="ok"))]
    )
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert (results[0]["status"], results[0]["decision_id"]) == (400, None)
    assert (results[1]["status"], results[1]["decision_id"]) == (201, "ok")


def test_a_bad_string_outside_the_items_rejects_the_whole_request(api):
    body = '{"decisions": [' + json.dumps(decision_body(decision_id="ok")) + '], "note\\u0000": 1}'
    response = api.generic("POST", "/v1/log/batch", body.encode(), content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"
    assert not Decision.objects.exists()


def test_nesting_deeper_than_64_in_one_item_is_invalid_json_for_the_whole_request(api):
    deep = '{"a":' * 70 + "{}" + "}" * 70
    response = _post(api, [json.dumps(decision_body(decision_id="ok")), _item("deep", "metadata", deep)])
    assert response.status_code == 400 and response.json()["code"] == "INVALID_JSON"
    assert not Decision.objects.exists()
