"""The export reads its rows FETCH at a time and sends them PIECE rows at a time
(audit/export.py): the lines are the same whatever the sizes, and a client that goes away
leaves the connection free for the next request."""

import pytest

from audit import export
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_the_export_is_the_same_whatever_the_chunk_size_and_the_connection_is_free_after_a_client_leaves(
    monkeypatch,
):
    api = client_for(make_key().value)
    batch = {"decisions": [decision_body() for _ in range(40)]}
    assert api.post("/v1/log/batch", batch, format="json").json()["rejected"] == 0
    whole = b"".join(api.get("/v1/audit-trail/export").streaming_content)
    monkeypatch.setattr(export, "FETCH", 3)
    small = api.get("/v1/audit-trail/export")
    assert b"".join(small.streaming_content) == whole and whole.count(b"\n") == 40
    monkeypatch.setattr(export, "FETCH", 7)
    monkeypatch.setattr(export, "PIECE", 3)  # pieces of 3, 3 and 1 rows of each FETCH
    pieces = list(api.get("/v1/audit-trail/export").streaming_content)
    assert b"".join(pieces) == whole and [piece.count(b"\n") for piece in pieces[:4]] == [3, 3, 1, 3]
    left = api.get("/v1/audit-trail/export")
    next(iter(left.streaming_content))
    left.close()  # the client went away after the first chunk
    assert api.get("/v1/audit-trail").status_code == 200  # the connection serves the next request
