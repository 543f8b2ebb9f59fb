"""The rules of what enters besides request bodies (those are pydantic models: config/bodymodels.py
and config/bodyrules.py): the JSON decoder every body is read with, query parameters,
enumerations, free-text strings, headers and `from`/`to` bounds (docs/reference/conventions.md,
Strings, Time bounds).

The list endpoints declare their filter parameters as django-filter FilterSets (config.filters),
whose filters clean each value with these rules (text, choice, bound, check_order), so a bad
filter value answers the same VALIDATION_ERROR as a bad body field. What is not a filter of a
queryset stays here: JSON bodies, the day windows of the endpoints of daily figures (trust
score, trend, subgroups: query_day_window), paging (positive_int), headers.
"""

import datetime as dt
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn, overload

from rest_framework.exceptions import ParseError
from rest_framework.request import Request

from config.exceptions import ValidationFailed
from config.jsondoc import JSONObject, JSONValue
from config.jsonwalk import MAX_JSON_DEPTH, check_document, invalid, is_clean_text
from config.timeutils import BOUND_HELP, UTC, parse_bound, parse_day, parse_timestamp


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def unique_keys(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    """An object's members; a key given twice is not valid JSON here (which of the two a
    reader would take is not defined, so the service takes neither)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        keys = [key for key, _ in pairs]
        raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return value


def number_value(text: str) -> float:
    """A JSON number with a fraction or exponent, as the value it denotes: `-0.0` is 0.0 (a
    negative zero would be shown, and hashed, as `-0.0` but read back from the database as 0.0)."""
    return float(text) + 0.0


# The one JSON reading rule of request bodies and imported rows (docs/reference/decisions.md,
# "Numbers and keys"): no NaN/Infinity, no duplicate key, no negative zero.
JSON_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=number_value, object_pairs_hook=unique_keys
)


def json_loads(text: str) -> JSONValue:
    """One JSON document by JSON_DECODER (ValueError when it is not one)."""
    return JSON_DECODER.decode(text)


def json_error(exc: ValueError) -> str:
    """What a JSON reader's error says, in the service's words: an integer of more digits than
    Python converts names that bound, not the interpreter setting that would lift it."""
    text = str(exc)
    if "integer string conversion" in text:
        return f"a number has more than {sys.get_int_max_str_digits():,} digits"
    return text


def load_json(raw: bytes, *, strings: bool = True) -> JSONValue:
    """One JSON document from a request body: UTF-8, read by JSON_DECODER, nesting and (unless
    `strings=False`) strings checked by check_document. Malformed (or too deep to parse at
    all) is ParseError."""
    try:
        value = json_loads(raw.decode("utf-8"))
    except RecursionError as exc:
        raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ParseError(json_error(exc)) from exc
    check_document(value, strings=strings)
    return value


def query_problem(query: Mapping[str, str]) -> ValidationFailed | None:
    """The error for a query string holding NUL or an unpaired surrogate (any parameter,
    names included), or None. Checked once per request, before any view runs."""
    lists = query.lists() if hasattr(query, "lists") else ((k, [v]) for k, v in query.items())
    for name, values in lists:
        if not is_clean_text(name):
            return invalid("query", "parameter names must not contain NUL or unpaired surrogates")
        for value in values:
            if not is_clean_text(value):
                return invalid(name, "must not contain NUL or unpaired surrogates")
    return None


# --- query parameters ----------------------------------------------------------------------------


def text(value: object, name: str, *, max_length: int = 256) -> str | None:
    """A free-text value; absent or empty is None; overlong, or holding NUL or an unpaired
    surrogate, is a VALIDATION_ERROR."""
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value) > max_length or not is_clean_text(value):
        raise invalid(name, f"must be at most {max_length} characters without NUL")
    return value


def query_text(request: Request, name: str, *, max_length: int = 256) -> str | None:
    """A free-text query parameter (see text)."""
    return text(request.query_params.get(name), name, max_length=max_length)


def header_text(request: Request, name: str, *, max_length: int = 256) -> str | None:
    """A free-text request header the service reads (surrounding white space dropped); absent
    or blank is None; overlong, or holding NUL or another control character, is a
    VALIDATION_ERROR (docs/reference/conventions.md, Time bounds: headers the service reads are checked like any string)."""
    value = request.headers.get(name, "").strip()
    if not value:
        return None
    if (
        len(value) > max_length
        or not is_clean_text(value)
        or any(ord(c) < 32 or ord(c) == 127 for c in value)
    ):
        raise invalid(name, f"must be at most {max_length} characters without control characters")
    return value


@overload
def choice[C: str](value: object, name: str, choices: Sequence[C], default: C) -> C: ...


@overload
def choice[C: str](value: object, name: str, choices: Sequence[C], default: None = None) -> C | None: ...


def choice[C: str](value: object, name: str, choices: Sequence[C], default: C | None = None) -> C | None:
    """A value restricted to `choices`; absent or empty gives `default`."""
    if value in (None, ""):
        return default
    for allowed in choices:
        if value == allowed:
            return allowed
    raise invalid(name, f"must be one of: {', '.join(choices)}")


@overload
def query_choice[C: str](request: Request, name: str, choices: Sequence[C], default: C) -> C: ...


@overload
def query_choice[C: str](
    request: Request, name: str, choices: Sequence[C], default: None = None
) -> C | None: ...


def query_choice[C: str](
    request: Request, name: str, choices: Sequence[C], default: C | None = None
) -> C | None:
    """A query parameter restricted to `choices` (see choice)."""
    return choice(request.query_params.get(name), name, choices, default)


def positive_int(raw: str | None, *, name: str, default: int, minimum: int, maximum: int | None) -> int:
    """An integer query parameter in [minimum, maximum]; absent or empty gives `default`;
    anything else (no silent clamping) is a VALIDATION_ERROR."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        limits = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ValidationFailed(
            f"{name} must be an integer {limits}.",
            errors=[{"field": name, "message": f"must be an integer {limits}"}],
        )
    return value


def lenient_choice(raw: str | None, choices: tuple[int, ...]) -> int:
    """A staff console page's window in days: one of `choices`, the first one for anything
    else (a page, not an API: a hand-edited address shows the default instead of an error)."""
    try:
        value = int(raw) if raw not in (None, "") else choices[0]
    except (TypeError, ValueError):
        return choices[0]
    return value if value in choices else choices[0]


# --- time bounds (docs/reference/conventions.md, Time bounds) -------------------------------------------------------------------


def bound(raw: object, name: str, *, end: bool) -> dt.datetime:
    """One `from`/`to` bound: a date covers its whole UTC day (an end bound is the start of
    the next day, to be used exclusively), a timestamp is exact."""
    value = parse_bound(raw, end=end) if isinstance(raw, str) else None
    if value is None:
        raise invalid(name, f"must be {BOUND_HELP}")
    return value


def _inclusive_end(raw: object, end: dt.datetime) -> dt.datetime:
    """The last instant a `to` bound covers (for the `from` after `to` check)."""
    return end - dt.timedelta(microseconds=1) if parse_day_only(raw) else end


def parse_day_only(raw: object) -> bool:
    return isinstance(raw, str) and len(raw.strip()) == 10 and parse_day(raw) is not None


def check_order(
    start: dt.datetime | None,
    end: dt.datetime | None,
    raw_to: object,  # as `bound` read it: a date covers its day
    *,
    from_name: str,
    to_name: str,
) -> None:
    """`from` after the last instant `to` covers is refused (a date `to` covers its day)."""
    if start is not None and end is not None and start > _inclusive_end(raw_to, end):
        raise invalid(from_name, f"must not be after {to_name}")


def time_range(
    raw_from: object, raw_to: object, *, from_name: str = "from", to_name: str = "to"
) -> tuple[dt.datetime | None, dt.datetime | None]:
    """A `from`/`to` pair of exact bounds: (start inclusive, end exclusive for a date `to`),
    None where absent (the endpoint's default applies). `from` after `to` is refused."""
    start = bound(raw_from, from_name, end=False) if raw_from not in (None, "") else None
    end = bound(raw_to, to_name, end=True) if raw_to not in (None, "") else None
    check_order(start, end, raw_to, from_name=from_name, to_name=to_name)
    return start, end


DAY_BOUND_HELP = (
    "must be a date (YYYY-MM-DD) or a timestamp on a UTC day boundary (00:00:00Z): "
    "this endpoint's figures are whole UTC days"
)


def day_bound(raw: object, name: str, *, end: bool) -> dt.date:
    """A bound of an endpoint whose figures are daily aggregates (trust score, trend, subgroups),
    as an inclusive day. A date covers its UTC day. A timestamp is exact (docs/reference/conventions.md, Time bounds), so it is
    taken where it falls on a UTC day boundary (`from` at midnight starts that day; `to` at
    midnight is an exclusive end, so the day before is the last) and refused inside a day,
    where the daily figures cannot honour it, rather than silently widened to the whole day."""
    if isinstance(raw, str) and parse_day_only(raw):
        return parse_day(raw)  # type: ignore[return-value]
    stamp = parse_timestamp(raw) if isinstance(raw, str) else None
    if stamp is None:
        raise invalid(name, f"must be {BOUND_HELP}")
    if stamp.time() != dt.time.min:
        raise invalid(name, DAY_BOUND_HELP)
    if not end:
        return stamp.date()
    if stamp.date() == dt.date.min:
        raise invalid(name, "must be after 0001-01-01T00:00:00Z (it ends before the calendar begins)")
    return stamp.date() - dt.timedelta(days=1)


def _inside_a_day(raw: object) -> bool:
    if not isinstance(raw, str) or parse_day_only(raw):
        return False
    stamp = parse_timestamp(raw)
    return stamp is not None and stamp.time() != dt.time.min


def exact_window(
    raw_from: object, raw_to: object, *, default_days: int, max_days: int | None = None
) -> tuple[dt.datetime, dt.datetime] | None:
    """For endpoints of daily figures that can also compute from the decisions themselves:
    when a bound is a timestamp inside a UTC day, the exact [start, end) with the endpoint's
    defaults for a missing bound (`to` the end of today, `from` default_days - 1 days before
    the day `to` falls in); else None, and the daily figures apply (day_range)."""
    if not (_inside_a_day(raw_from) or _inside_a_day(raw_to)):
        return None
    start, end = time_range(raw_from, raw_to)
    if end is None:
        today = dt.datetime.now(UTC).date()
        last = max(today, start.date()) if start is not None else today
        end = dt.datetime.combine(shift_days(last, 1), dt.time.min, tzinfo=UTC)
    if start is None:
        last_day = (end - dt.timedelta(microseconds=1)).date()
        start = dt.datetime.combine(shift_days(last_day, -(default_days - 1)), dt.time.min, tzinfo=UTC)
    if max_days is not None and (end - start).days > max_days + 1:
        raise invalid("from", f"at most {max_days} days before to")
    return start, end


def day_range(
    raw_from: object, raw_to: object, *, default_days: int, max_days: int | None = None
) -> tuple[dt.date, dt.date]:
    """Inclusive days for daily aggregates from raw bounds (see days_window)."""
    start = day_bound(raw_from, "from", end=False) if raw_from not in (None, "") else None
    end = day_bound(raw_to, "to", end=True) if raw_to not in (None, "") else None
    return days_window(start, end, default_days=default_days, max_days=max_days)


def days_window(
    start: dt.date | None, end: dt.date | None, *, default_days: int, max_days: int | None = None
) -> tuple[dt.date, dt.date]:
    """A missing bound takes the endpoint's default (`to` today, or `from` when that is
    later; `from` default_days - 1 before `to`), held at the ends of the calendar. `from` after
    `to`, or a window longer than max_days, is refused."""
    today = dt.datetime.now(UTC).date()
    if end is None:
        end = max(start or today, today)
    if start is None:
        start = shift_days(end, -(default_days - 1))
    if start > end:
        raise invalid("from", "must not be after to")
    if max_days is not None and (end - start).days > max_days:
        raise invalid("from", f"at most {max_days} days before to")
    return start, end


@dataclass(frozen=True)
class DayWindow:
    """The window of an endpoint of daily figures: `exact` [start, end) when a bound is a
    timestamp inside a UTC day (the figures are then computed from the decisions; `days` are
    then the days of start and end), else None and the inclusive `days` of the daily
    aggregates."""

    exact: tuple[dt.datetime, dt.datetime] | None
    days: tuple[dt.date, dt.date]


def query_day_window(request: Request, *, default_days: int, max_days: int | None = None) -> DayWindow:
    """The one reading of `from`/`to` for trust-score trend and subgroups (see exact_window
    and day_range)."""
    raw_from, raw_to = request.query_params.get("from"), request.query_params.get("to")
    exact = exact_window(raw_from, raw_to, default_days=default_days, max_days=max_days)
    if exact is not None:
        return DayWindow(exact=exact, days=(exact[0].date(), exact[1].date()))
    return DayWindow(
        exact=None, days=day_range(raw_from, raw_to, default_days=default_days, max_days=max_days)
    )


def shift_days(value: dt.date, days: int) -> dt.date:
    """`value + days`, held at the ends of the calendar instead of overflowing."""
    try:
        return value + dt.timedelta(days=days)
    except OverflowError:
        return dt.date.min if days < 0 else dt.date.max
