"""The export reads its chunks one FETCH ahead in a thread of its own (audit/export.py): the
lines are the same whatever the chunk size, an error in the reader reaches the request, and a
client that goes away stops the reader before the connection is used again."""

import threading

import pytest

from audit import export
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key


class _Cursor:
    def __init__(self, chunks: list[list[tuple]], error: Exception | None = None):
        self.chunks, self.error, self.fetches = list(chunks), error, 0

    def fetchmany(self, size: int) -> list[tuple]:
        self.fetches += 1
        if self.chunks:
            return self.chunks.pop(0)
        if self.error is not None:
            raise self.error
        return []


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "export-read-ahead"]


def test_every_chunk_arrives_in_order_and_the_reader_ends():
    chunks = [[(i, j) for j in range(3)] for i in range(7)]
    assert list(export._read_ahead(_Cursor(chunks))) == chunks
    assert _readers() == []


def test_an_error_of_the_reader_is_raised_in_the_request_after_the_chunks_before_it():
    read = export._read_ahead(_Cursor([[(1,)], [(2,)]], error=RuntimeError("connection lost")))
    assert next(read) == [(1,)]
    assert next(read) == [(2,)]
    with pytest.raises(RuntimeError, match="connection lost"):
        next(read)
    assert _readers() == []


def test_a_client_that_goes_away_stops_the_reader_and_it_reads_no_further():
    cursor = _Cursor([[(i,)] for i in range(1000)])
    read = export._read_ahead(cursor)
    assert next(read) == [(0,)]
    read.close()  # what the WSGI server does when the client has gone
    assert _readers() == []
    # It read at most the chunk taken, the chunks the queue holds and the one it was handing.
    assert cursor.fetches <= 1 + export._AHEAD + 1


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
    assert _readers() == []
    assert api.get("/v1/audit-trail").status_code == 200  # the connection serves the next request
