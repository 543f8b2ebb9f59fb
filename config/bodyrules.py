"""The field rules of request body models (config.bodymodels), as pydantic's own types and
constraints, and MESSAGES: the one table from pydantic's error types to the words of the problem
document (docs/reference/conventions.md, Request bodies).

A string field is `Annotated[str, text(256)]` (pydantic's StringConstraints: length, not blank,
trimmed, no NUL, a pattern); a number `Annotated[float, Field(ge=0, le=1)]` (the body model
refuses infinities); an integer `Annotated[StrictInt, Field(ge=0)]`; a choice a `Literal`; an
array `Annotated[list[...], Field(min_length=1, max_length=1000)]`. What pydantic cannot say
is a small function here, each with its own message: a timestamp (any ISO 8601 string, a naive
one taken as UTC), a `from`/`to` bound, the size of a JSON object.

White space is Unicode's (the White_Space property): what pydantic's trimming removes and what
`\\s` matches in its regular expressions.
"""

import datetime as dt
import json
import re
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, WithJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from config.jsondoc import JSONObject
from config.jsonwalk import document_fault
from config.timeutils import BOUND_HELP, parse_bound, parse_timestamp

# A rule of ours raises a custom error of this type; its text is the message.
RULE = "rule"
NUL_OR_SURROGATE = "must not contain NUL or unpaired surrogates"

MAX_BIGINT = 2**63 - 1  # a 64-bit column's largest value
_NO_NUL = r"^[^\x00]*$"
_SOLID = r"^[^\x00]*[^\s\x00][^\x00]*$"  # not blank, no NUL
# The words of each field pattern (text(pattern=, help=)), for its string_pattern_mismatch.
_PATTERN_HELP: dict[str, str] = {}


def problem(message: str, *, at: str = "") -> PydanticCustomError:
    """The error a rule of ours raises: `message` is what the problem document says; `at` a
    path inside the value judged (a field of the model a model rule judges)."""
    return problems([(at, message)])


def problems(found: list[tuple[str, str]]) -> PydanticCustomError:
    """Several problems found by one rule (over several fields), each (path inside the value
    judged, message), listed in that order."""
    return PydanticCustomError(RULE, "{message}", {"message": found[0][1], "at": tuple(found)})


def text(
    max_length: int, *, blank: bool = False, trim: bool = False, pattern: str = "", help: str = ""
) -> StringConstraints:
    """A string of at most `max_length` characters (after trimming white space at both ends
    when `trim`), not blank unless `blank`, without NUL; matching the whole of `pattern` (said
    as "must be <help>") when given."""
    if pattern:
        shape = rf"^(?:{pattern.removeprefix('^').removesuffix('$')})$"
        _PATTERN_HELP[shape] = help or f"of the form {pattern}"
    else:
        shape = _NO_NUL if blank or trim else _SOLID
    return StringConstraints(
        strip_whitespace=trim,
        min_length=1 if trim and not blank else None,
        max_length=max_length,
        pattern=shape,
    )


def _timestamp(raw: object) -> object:
    if type(raw) is str:
        # The usual form ("...Z") read here, without parse_timestamp's call (a tenth of a
        # 1,000-item batch's validation is this function); anything else is read by it.
        try:
            usual = dt.datetime.fromisoformat(raw)
        except ValueError:
            pass
        else:
            if usual.tzinfo is dt.UTC:
                return usual
        value = parse_timestamp(raw)
        if value is not None:
            return value
    elif raw is None or isinstance(raw, dt.datetime):
        return raw
    raise problem("must be an ISO 8601 timestamp in years 1..9999")


def _bound(raw: str) -> str:
    if parse_bound(raw, end=False) is None or parse_bound(raw, end=True) is None:
        raise problem(f"must be {BOUND_HELP}")
    return raw


def json_object(limit: int = 0) -> AfterValidator:
    """Any JSON object (`dict[str, Any]`) of at most `limit` bytes as compact UTF-8 JSON (0: no
    limit), kept as sent; its strings and numbers judged as every document's (config.jsonwalk)."""

    def judged(value: JSONObject) -> JSONObject:
        if not value:
            return value
        fault = document_fault(value)
        if fault is not None:
            raise problem(fault[1], at=fault[0].removeprefix("body"))
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if limit and size > limit:
            raise problem(f"must be at most {limit} bytes as JSON ({size} given)")
        return value

    return AfterValidator(judged)


# Any ISO 8601 timestamp (docs/reference/conventions.md, Timestamps): an offset is converted to
# UTC, a naive one is UTC. pydantic's own datetime takes Unix numbers and leaves a naive value
# naive, so the service's parser reads the string.
Timestamp = Annotated[
    dt.datetime, BeforeValidator(_timestamp), WithJsonSchema({"type": "string", "format": "date-time"})
]
# A `from`/`to` bound, kept as sent (the endpoint reads it with config.inputs.time_range).
Bound = Annotated[str, AfterValidator(_bound), Field(description=BOUND_HELP)]


def _one_of(error: ErrorDetails) -> str:
    expected = (error.get("ctx") or {}).get("expected", "")
    return "must be one of: " + ", ".join(re.findall(r"'([^']*)'", expected))


def _pattern(error: ErrorDetails) -> str:
    raw = error.get("input")
    if isinstance(raw, str) and "\x00" in raw:
        return NUL_OR_SURROGATE
    if isinstance(raw, str) and not raw.strip():
        return "must not be blank"
    return "must be " + _PATTERN_HELP.get((error.get("ctx") or {}).get("pattern", ""), "of the right form")


def _too_long(error: ErrorDetails) -> str:
    ctx = error.get("ctx") or {}
    if ctx.get("field_type") == "Dictionary":
        return f"must hold at most {ctx['max_length']} entries"
    return f"must hold at most {ctx['max_length']:,} items"


# InstanceOf's classes (a value checked and passed on as it is) in the words of their JSON type.
_SHAPES = {"dict": "must be an object", "list": "must be an array"}


def range_text(low: tuple[object, bool] | None, high: tuple[object, bool] | None) -> str:
    """A number's range in words from its bounds, each (value, inclusive): `between 0 and 1`,
    `at least 0`, `greater than 0 and at most 100`, `less than 1`."""
    if low and high and low[1] and high[1]:
        return f"between {low[0]:,} and {high[0]:,}"
    words = []
    if low:
        words.append(f"{'at least' if low[1] else 'greater than'} {low[0]:,}")
    if high:
        words.append(f"{'at most' if high[1] else 'less than'} {high[0]:,}")
    return " and ".join(words) or "in range"


# pydantic's error type -> the problem document's message (a string, or a function of the
# error for the ones that name a limit). A type not listed keeps pydantic's own message.
MESSAGES: dict[str, str | Callable[[ErrorDetails], str]] = {
    "missing": "is required",
    "string_type": "must be a string",
    "string_unicode": NUL_OR_SURROGATE,
    "string_too_short": "must not be blank",
    "string_too_long": lambda e: f"must be at most {e['ctx']['max_length']} characters",
    "string_pattern_mismatch": _pattern,
    "bool_type": "must be true or false",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a number that fits a finite double",
    "literal_error": _one_of,
    "dict_type": "must be an object",
    "is_instance_of": lambda e: _SHAPES.get(e["ctx"]["class"], e["msg"]),
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be an array",
    "too_short": lambda e: f"must hold at least {e['ctx']['min_length']:,} items",
    "too_long": _too_long,
}


def message(error: ErrorDetails) -> str:
    """The problem document's message for one of pydantic's errors."""
    if error["type"] == RULE:
        return error["msg"]
    if error.get("input", ...) is None:  # null where a value is needed
        return "must not be null" if isinstance(error["loc"][-1], int) else "is required"
    said = MESSAGES.get(error["type"], error["msg"])
    return said if isinstance(said, str) else said(error)


__all__ = [
    "BOUND_HELP",
    "MAX_BIGINT",
    "MESSAGES",
    "NUL_OR_SURROGATE",
    "RULE",
    "Bound",
    "Timestamp",
    "json_object",
    "message",
    "problem",
    "problems",
    "text",
]
