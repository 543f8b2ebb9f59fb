"""Logging filters: no query string in a logged request line (it may hold an API key)."""

import logging
import re

_QUERY = re.compile(r"(\S)\?\S*")


class StripQueryString(logging.Filter):
    """Django's development server logs `"GET /v1/x?api_key=... HTTP/1.1" 401`: the query
    string is cut from the request line (and from any string argument) before it is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_QUERY.sub(r"\1", a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _QUERY.sub(r"\1", record.msg)
        return True
