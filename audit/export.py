"""GET /audit-trail/export: the customer's entries as NDJSON, in sequence order, streamed
from a server-side cursor in chunks, so memory stays flat whatever the chain's length
(docs/reference/checkpoints.md, "The export").

On PostgreSQL the rows come from a server-side cursor, FETCH rows at a time. A format-2
entry's line is written from its canonical text and the columns shown beside it by
audit/export_lines.py, byte for byte what the database's jsonb would write (`_FORMAT2`, kept
here as that rendering's definition and used by the tests), at a fraction of the database's
cost. An older (format-1) entry's line is
rendered by the database (json_build_object over the entry's columns): the same JSON values as
GET /audit-trail shows (timestamps as ISO 8601 UTC with milliseconds and Z, an integral
confidence as `1.0`, so every line parses to the very object the chain hashed). Elsewhere each
row goes through the entry document of audit/chain.py."""

import json
from collections.abc import Iterator
from itertools import chain

from django.db import connection, transaction

from audit.chain import ENTRY_COLUMNS, document_from_values
from audit.export_lines import PIECES_SQL, SHARED_SQL, TEXT_SQL, WIDTH, Renderer
from audit.models import AuditEntry

CHUNK = 5000
FETCH = 2000  # rows a chunk on PostgreSQL: one FETCH
# Rows written at a time, one piece of the response: a quarter of a FETCH, whose text (about
# 0.9 MB of lines) stays in the processor's cache through the renderer's passes over it.
PIECE = 500

_UTC_MS = '\'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\''
# Python writes a float that holds an integer as `1.0` and a negative zero as `-0.0`; the
# database would write `1` (an integer once parsed, which would hash differently).
_CONFIDENCE = """(CASE
    WHEN ai_confidence IS NULL THEN 'null'
    WHEN ai_confidence = 0 AND ai_confidence::text LIKE '-%%' THEN '-0.0'
    WHEN ai_confidence = trunc(ai_confidence) THEN trunc(ai_confidence)::numeric::text || '.0'
    ELSE ai_confidence::text END)::json"""
# A format-2 line: the canonical text's fields as written (jsonb keeps each number's digits), its
# personal fields and salt (null once erased) when it has a commitment, `hash` and `canonical`.
_PERSONAL = """jsonb_build_object('context', context, 'subgroups', COALESCE(subgroups, '{}'::jsonb),
    'subject_id', subject_id, 'user_id', user_id)"""
_FORMAT2 = f"""(canonical::jsonb || jsonb_build_object('hash', hash, 'canonical', canonical)
    || CASE WHEN canonical::jsonb ? 'personal' THEN jsonb_build_object(
        'context', context, 'subgroups', subgroups, 'subject_id', subject_id, 'user_id', user_id,
        'personal_fields', CASE WHEN erased THEN NULL ELSE {_PERSONAL} END,
        'salt', encode(salt, 'hex'), 'erased', erased) ELSE '{{}}'::jsonb END)::text"""
_LINE_FORMAT1 = f"""json_build_object(
    'entry_id', id, 'sequence', sequence, 'type', type, 'decision_id', decision_ref,
    'timestamp', to_char("timestamp" AT TIME ZONE 'UTC', {_UTC_MS}),
    'logged_at', to_char(logged_at AT TIME ZONE 'UTC', {_UTC_MS}),
    'user_id', user_id, 'model_id', model_id, 'model_version', model_version,
    'ai_recommendation', ai_recommendation, 'ai_confidence', {_CONFIDENCE},
    'user_decision', user_decision, 'followed_ai', followed_ai,
    'calibration_category', calibration_category, 'outcome', outcome, 'context', context,
    'subgroups', COALESCE(subgroups, '{{}}'::jsonb), 'hash', hash, 'previous_hash', previous_hash
)::text"""
_LINE = f"CASE WHEN format = 2 THEN {_FORMAT2} ELSE {_LINE_FORMAT1} END"
# What the export reads: whether the entry is format 2, its text (format 1: its line) and the
# pieces of a format-2 line (audit/export_lines.py).
_COLUMNS = f"format = 2, CASE WHEN format = 2 THEN {TEXT_SQL} ELSE {_LINE_FORMAT1} END, {PIECES_SQL}"


def entries_ndjson(customer_id: str, first: int, last: int | None) -> Iterator[bytes]:
    if connection.vendor == "postgresql":
        yield from _streamed(customer_id, first, last)
        return
    rows = AuditEntry.objects.filter(customer_id=customer_id, sequence__gte=first)
    if last is not None:
        rows = rows.filter(sequence__lte=last)
    for values in rows.order_by("sequence").values_list(*ENTRY_COLUMNS).iterator(chunk_size=CHUNK):
        doc = document_from_values(values)
        yield (json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode()


def _streamed(customer_id: str, first: int, last: int | None) -> Iterator[bytes]:
    """The rows read from a server-side cursor, FETCH at a time, their lines written by
    audit/export_lines.py and sent PIECE rows at a time."""
    bound = "AND sequence <= %s" if last is not None else ""
    params: list[str | int] = [customer_id, first, *([last] if last is not None else [])]
    sql = (
        f"SELECT {_COLUMNS} FROM (SELECT *, {SHARED_SQL} FROM {AuditEntry._meta.db_table} "  # noqa: S608  (fixed text, bound values)
        f"WHERE customer_id = %s AND sequence >= %s {bound} ORDER BY sequence OFFSET 0) AS entry ORDER BY sequence"
    )
    renderer = Renderer()
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while fetched := cursor.fetchmany(FETCH):
            for at in range(0, len(fetched), PIECE):
                rows = fetched[at : at + PIECE]
                flat = list(chain.from_iterable(rows))
                if all(flat[::WIDTH]):
                    yield renderer.lines(flat).encode()
                    continue
                yield "".join(
                    [renderer.line(row[1:]) + "\n" if row[0] else row[1] + "\n" for row in rows]
                ).encode()
