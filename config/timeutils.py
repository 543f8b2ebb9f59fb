"""Timestamps on the wire: out as ISO 8601 UTC with Z and milliseconds; in as any ISO 8601."""

import datetime as dt
from typing import overload

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

UTC = dt.UTC
# What a `from`/`to` bound is (docs/reference/conventions.md, Time bounds), in the one wording of
# every body field, query parameter, their schema and their errors ("must be " + BOUND_HELP).
BOUND_HELP = (
    "a date (YYYY-MM-DD) covering its whole UTC day, or an exact ISO 8601 timestamp, in years 1..9999"
)


@overload
def isoformat(value: dt.datetime) -> str: ...
@overload
def isoformat(value: None) -> None: ...
@overload
def isoformat(value: dt.datetime | None) -> str | None: ...
def isoformat(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def iso8601(value: dt.datetime) -> str:
    """`isoformat` with the year written in four digits (`0001-01-01T...`, never `1-01-01T...`,
    which strftime writes for years before 1000): what an answer echoes of a query bound.
    `isoformat` itself is left as it is: the audit chain hashes what it writes."""
    text = isoformat(value)
    assert text is not None
    year = (value.replace(tzinfo=UTC) if timezone.is_naive(value) else value).astimezone(UTC).year
    return f"{year:04d}{text[text.index('-') :]}"


def parse_timestamp(raw: str) -> dt.datetime | None:
    """Parse an ISO 8601 timestamp; a naive one is taken as UTC. None when unparseable."""
    if not isinstance(raw, str):
        return None
    try:  # the usual form, read as the general path below would read it
        usual = dt.datetime.fromisoformat(raw)
    except ValueError:
        pass
    else:
        if usual.tzinfo is UTC:  # "Z": already what the conversion gives
            return usual
        try:
            return usual.replace(tzinfo=UTC) if usual.tzinfo is None else usual.astimezone(UTC)
        except OverflowError:
            return None
    text = raw.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        value = parse_datetime(text)
    except ValueError:
        return None
    if value is None:
        return None
    if timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # its UTC conversion leaves years 1..9999 (conventions.md, Timestamps)
        return None


def _parse_date(raw: str) -> dt.date | None:
    try:
        return parse_date(raw.strip())
    except ValueError:  # well-formed but impossible, e.g. 2026-02-30
        return None


def parse_day(raw: str) -> dt.date | None:
    """A date (YYYY-MM-DD), or the UTC day of an ISO 8601 timestamp: for daily aggregates."""
    if not isinstance(raw, str):
        return None
    day = _parse_date(raw)
    if day is not None:
        return day
    stamp = parse_timestamp(raw)
    return stamp.date() if stamp is not None else None


def parse_bound(raw: str, *, end: bool) -> dt.datetime | None:
    """A `from`/`to` bound: a date (whole day, inclusive, UTC) or a timestamp
    (docs/reference/conventions.md, Time bounds).

    For `to` given as a date, the bound is the start of the next day (use it exclusively);
    after 9999-12-31 that is the last representable instant.
    """
    if not isinstance(raw, str):
        return None
    day = _parse_date(raw)
    if day is not None:
        start = dt.datetime.combine(day, dt.time.min, tzinfo=UTC)
        if not end:
            return start
        try:
            return start + dt.timedelta(days=1)
        except OverflowError:
            return dt.datetime.max.replace(tzinfo=UTC)
    return parse_timestamp(raw)
