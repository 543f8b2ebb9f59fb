"""A small write's rows as one JSON parameter (config.db.bulk, PostgreSQL).

bulk_insert's small INSERT and additive_upsert send one array literal per column
(config.db.bulk.array_param), each a parameter psycopg dumps: about 80 of them per POST /log, a
tenth of its profiled CPU. Here the rows go as one JSON text instead, an array of one object
per row written by orjson's C encoder in one call, and the statement reads it with
`json_to_recordset`, each column declared with its PostgreSQL type, so the server converts every
value as it converts an array element: a double from its shortest text (the same double), a
string unescaped, a date or an aware datetime from its ISO 8601 text (a naive one in the
session's time zone, as psycopg's timestamp would be), a JSON field's stored JSON text cast to
jsonb. A row JSON cannot carry exactly (bytes, a non-finite double, an integer beyond 64 bits, a
string with an unpaired surrogate, a type orjson does not write) gives None: the caller sends the
arrays as before."""

import functools
import math
from collections.abc import Sequence
from typing import Any

import orjson


# Any: the columns' values, of mixed types
def rows_json(rows: Sequence[Sequence[Any]], floats: Sequence[bool]) -> str | None:
    """The rows (each the columns' values in order) as the JSON text rows_select reads, the
    values of the `floats` columns as doubles; None when a value cannot go as JSON."""
    keys = _keys(len(floats))
    if any(floats):
        objects = []
        for row in rows:
            values = list(row)
            for at, is_float in enumerate(floats):
                value = values[at]
                if is_float and value is not None:
                    value = values[at] = float(value)
                    if not math.isfinite(value):
                        return None
            objects.append(dict(zip(keys, values, strict=True)))
    else:
        objects = [dict(zip(keys, row, strict=True)) for row in rows]
    try:
        return orjson.dumps(objects).decode("utf-8")
    except orjson.JSONEncodeError:
        return None


@functools.cache
def _keys(count: int) -> tuple[str, ...]:
    return tuple(f"c{at}" for at in range(count))


def rows_select(types: Sequence[str]) -> str:
    """`SELECT ... FROM json_to_recordset(%s::json)`, one column of each of `types` in order
    (a `jsonb` column read as its JSON text, then cast)."""
    declared = ", ".join(f"c{at} {'text' if kind == 'jsonb' else kind}" for at, kind in enumerate(types))
    values = ", ".join(f"r.c{at}::jsonb" if kind == "jsonb" else f"r.c{at}" for at, kind in enumerate(types))
    return f"SELECT {values} FROM json_to_recordset(%s::json) AS r({declared})"  # noqa: S608 (types from the models)
