"""The answers gunicorn writes itself, before Django sees the request (a request line or a header
over its limit, a request that is not HTTP), as problem documents like every other error
(docs/reference/limits.md, Request lines and headers) instead of gunicorn's HTML page.

gunicorn's worker answers such a request through `gunicorn.util.write_error(sock, status,
reason, message)` and closes the connection; `install()` (called by gunicorn.conf.py in each
web worker) puts `write_problem` in its place. Only the body changes: the status, the log line
and the closed connection stay gunicorn's."""

import json
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from config.api import problem_body
from config.ids import new_id
from config.jsondoc import JSONObject

if TYPE_CHECKING:
    from gunicorn.config import Config

DETAIL_MAX = 200  # gunicorn's own message may quote the request; never more than this of it


@dataclass(frozen=True)
class Limits:
    """gunicorn's limits as gunicorn.conf.py sets them (docs/reference/limits.md, Request lines
    and headers), in bytes: the request line (method, path with query string, version), one
    header line, and how many header lines."""

    request_line: int = 8190
    field_size: int = 8190
    fields: int = 100


_limits = Limits()


def _known(status: int) -> tuple[str, str, str] | None:
    if status == 414:
        detail = f"The request line (method, path and query string) is over {_limits.request_line:,} bytes."
        return "URI_TOO_LONG", "URI too long", detail
    if status == 408:
        detail = "The request line and headers did not arrive in time (docs/reference/limits.md)."
        return "REQUEST_TIMEOUT", "Request timeout", detail
    if status == 431:
        detail = f"More than {_limits.fields} header lines, or one over {_limits.field_size:,} bytes."
        return "HEADERS_TOO_LARGE", "Request headers too large", detail
    return None


def problem_of(status: int, reason: str, message: str) -> JSONObject:
    """The problem document of what gunicorn would have answered with `status`."""
    known = _known(status)
    if known is not None:
        code, title, detail = known
    elif status == 429:  # a client address over its threads while its headers arrive (config/headerread.py)
        code, title, detail = "RATE_LIMIT_EXCEEDED", "Rate limit exceeded", message[:DETAIL_MAX]
    elif status == 500:  # gunicorn's own configuration problem, or an error of the application
        code, title, detail = "INTERNAL_ERROR", "Internal server error", "An unexpected error occurred."
    else:
        code, title = "MALFORMED_REQUEST", reason or "Bad request"
        detail = "The request is not valid HTTP" + (f": {message[:DETAIL_MAX]}" if message else ".")
    return problem_body(status=status, code=code, title=title, detail=detail, request_id=new_id("req"))


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    body = problem_of(status_int, reason, mesg)
    payload = json.dumps(body, ensure_ascii=True).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        + ("Retry-After: 1\r\n" if status_int == 429 else "")
        + "Content-Type: application/problem+json\r\n"
        f"X-Request-ID: {body['request_id']}\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    from gunicorn import util

    util.write_nonblock(sock, head.encode("latin-1") + payload)


def install(cfg: "Config") -> None:
    """In a web worker: gunicorn's own answers become problem documents naming `cfg`'s limits."""
    from gunicorn import util

    global _limits
    _limits = Limits(cfg.limit_request_line, cfg.limit_request_field_size, cfg.limit_request_fields)
    util.write_error = write_problem
