"""The walk over a parsed JSON document that every body and imported row takes before its
fields are read (docs/reference/conventions.md, Strings): its nesting, and NUL, unpaired
surrogates and numbers beyond a finite double anywhere in it."""

import math
from typing import Any

from rest_framework.exceptions import ParseError

from config.exceptions import ValidationFailed

MAX_JSON_DEPTH = 64


def invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed(f"{field}: {message}.", errors=[{"field": field, "message": message}])


def is_clean_text(text: str) -> bool:
    """No NUL and no unpaired surrogate: PostgreSQL text and jsonb refuse both, and a
    surrogate cannot be encoded as UTF-8 at all."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_document(value: object, *, strings: bool = True) -> None:
    """Walk a parsed JSON document without recursion: deeper than MAX_JSON_DEPTH is
    INVALID_JSON (ParseError); a key or string holding NUL or an unpaired surrogate, or a
    number that does not fit a finite double (`1e400` parses as infinity), is a
    VALIDATION_ERROR naming where it is (with `strings=False` only the nesting is checked:
    a batch's items are judged one by one by their model, so that one bad item is rejected
    alone)."""
    fault = document_fault(value, strings=strings)
    if fault is not None:
        raise invalid(*fault)


def document_fault(value: object, *, strings: bool = True) -> tuple[str, str] | None:
    """The first (path, message) check_document refuses in the document, or None."""
    if _clean(value, strings=strings):
        return None  # the usual document: nothing to name, so no path is built
    stack: list[tuple[object, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, str):
            if strings and not is_clean_text(node):
                return where or "body", "must not contain NUL or unpaired surrogates"
            continue
        if isinstance(node, float):
            if strings and not math.isfinite(node):
                return where or "body", "must be a number that fits a finite double"
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(node, dict):
            for key, item in node.items():
                name = f"{where}.{key}" if where else str(key)
                if strings and not is_clean_text(key):
                    return where or "body", "keys must not contain NUL or unpaired surrogates"
                stack.append((item, depth + 1, name))
        else:
            for index, item in enumerate(node):
                stack.append((item, depth + 1, f"{where}[{index}]"))
    return None


def _clean(value: object, *, strings: bool) -> bool:
    """Whether check_document has nothing to say about the document: the same walk without
    the paths it names a fault by (building them was most of the walk's cost). Every string
    and key is checked at once, joined: NUL in any of them is NUL in the join, and Python
    never pairs two surrogates that meet, so an unpaired one still fails to encode. False
    sends the document through the full walk, which finds what is wrong."""
    if type(value) is not dict and type(value) is not list:
        return False
    # Any: the walk tells types apart by `type(x) is`, which mypy does not narrow by
    texts: list[Any] = []
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        if type(node) is dict:
            if strings:
                texts.extend(node)  # the keys
            members = node.values()
        else:
            members = node
        for item in members:
            kind = type(item)
            if kind is str:
                if strings:
                    texts.append(item)
            elif kind is float:
                if strings and not math.isfinite(item):
                    return False
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif isinstance(item, dict | list | str | float):
                return False  # a subclass: the full walk judges it
    try:
        return not strings or is_clean_text("".join(texts))
    except TypeError:  # a key that is not a string: the full walk judges it
        return False
