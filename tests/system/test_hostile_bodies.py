"""Bodies a hostile caller sends (docs/reference/limits.md, "Batch bodies" and "Numbers"):
a batch is refused at its 1,001st item before the rest of the body is read, and a number
that does not fit a finite double is a 400 that stores nothing, anywhere in a body."""

import json
import socket

import pytest

from audit.models import Decision
from fairness.models import FairnessSignal
from tests.audit.factories import decision_body
from tests.conftest import make_key
from tests.fairness.helpers import SIGNALS, signal_body
from tests.processes import gunicorn

ONE_LINE = json.dumps(decision_body(decision_id="x")).encode()


def _raw_post(base: str, key: str, content_type: str, head: bytes, declared: int) -> bytes:
    """Send the headers of a `declared`-byte body and only its first bytes (`head`, padded with
    64 KiB more of the same), then read the answer: a server that waited for the whole body
    would never answer."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(
            (
                f"POST /v1/log/batch HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {declared}\r\nConnection: close\r\n\r\n"
            ).encode()
            + head
            + head[-2:] * 32768
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.mark.django_db(transaction=True)
def test_an_oversized_batch_is_refused_before_the_rest_of_its_body_is_sent():
    key = make_key("acme", "pilot").value
    declared = 8 * 1024 * 1024 - 1
    with gunicorn(threads=2) as base:
        ndjson = _raw_post(base, key, "application/x-ndjson", b"1\n" * 1001, declared)
        json_head = b'{"decisions": [' + b"1," * 1001
        enveloped = _raw_post(base, key, "application/json", json_head, declared)
    for answer in (ndjson, enveloped):
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        problem = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert problem["code"] == "VALIDATION_ERROR"
        assert problem["errors"][0]["field"] == "decisions"
    assert Decision.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("ndjson", [False, True])
def test_a_batch_of_exactly_1000_items_is_read_whole_and_1001_is_refused(api, ndjson):
    def post(count: int):
        if ndjson:
            return api.generic(
                "POST", "/v1/log/batch", b"\n".join([ONE_LINE] * count), "application/x-ndjson"
            )
        body = b'{"decisions": [' + b", ".join([ONE_LINE] * count) + b'], "note": "x"}'
        return api.generic("POST", "/v1/log/batch", body, "application/json")

    accepted = post(1000)
    assert accepted.status_code == 200, accepted.content
    assert (accepted.json()["accepted"], accepted.json()["replayed"]) == (1, 999)
    refused = post(1001)
    assert refused.status_code == 400
    assert refused.json()["code"] == "VALIDATION_ERROR"
    assert Decision.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        b'{"decisions": [{"a": 1}',  # ends inside the array
        b'{"decisions": [{"a": 1}] x',  # garbage after the envelope
        b'{"decisions" [1]}',
        b'{"decisions": [NaN]}',
    ],
)
def test_a_malformed_streamed_envelope_is_invalid_json(api, body):
    response = api.generic("POST", "/v1/log/batch", body, "application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_JSON"


@pytest.mark.django_db
@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E999"])
def test_a_number_beyond_a_finite_double_is_a_400_that_stores_nothing(api, number):
    body = json.dumps(decision_body(decision_id="big"))[:-1] + f', "metadata": {{"n": [{number}]}}}}'
    response = api.generic("POST", "/v1/log", body.encode(), "application/json")
    assert response.status_code == 400, response.content
    problem = response.json()
    assert problem["code"] == "VALIDATION_ERROR"
    assert problem["errors"][0]["field"] == "metadata.n[0]"
    assert not Decision.objects.exists()

    # The body's own rawPayload is left out first: a key given twice is INVALID_JSON.
    base = {key: value for key, value in signal_body().items() if key != "rawPayload"}
    signal = json.dumps(base)[:-1] + f', "rawPayload": {{"difference": {number}}}}}'
    response = api.generic("POST", SIGNALS, signal.encode(), "application/json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "VALIDATION_ERROR"
    assert not FairnessSignal.objects.exists()
    assert api.get(SIGNALS).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("ndjson", [False, True])
def test_a_batch_item_with_an_infinite_number_is_rejected_alone(api, ndjson):
    bad = json.dumps(decision_body(decision_id="inf"))[:-1] + ', "metadata": {"n": 1e400}}'
    items = [
        json.dumps(decision_body(decision_id="ok-1")),
        bad,
        json.dumps(decision_body(decision_id="ok-2")),
    ]
    if ndjson:
        response = api.generic("POST", "/v1/log/batch", "\n".join(items).encode(), "application/x-ndjson")
    else:
        body = '{"decisions": [' + ", ".join(items) + "]}"
        response = api.generic("POST", "/v1/log/batch", body.encode(), "application/json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 400, 201]
    assert results[1]["error"]["errors"][0]["field"] == "metadata.n"
    assert sorted(Decision.objects.values_list("decision_id", flat=True)) == ["ok-1", "ok-2"]


@pytest.mark.django_db
def test_an_infinite_number_in_the_batch_envelope_refuses_the_whole_batch(api):
    body = '{"decisions": [' + json.dumps(decision_body()) + '], "x": 1e400}'
    response = api.generic("POST", "/v1/log/batch", body.encode(), "application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "VALIDATION_ERROR"
    assert not Decision.objects.exists()
