"""Request context for every response: X-Request-ID, the 1 MiB body limit, rate-limit
headers, request metrics, and problem documents for errors raised outside DRF
(docs/reference/conventions.md, Sizes; docs/reference/errors.md)."""

import copy
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.csp import ContentSecurityPolicyMiddleware
from django.utils.csp import CSP, build_policy
from django.utils.deprecation import MiddlewareMixin

from config import metrics, ratelimit
from config.api import problem_response
from config.bodyread import BodyReadTimeout, body_guard
from config.clientaddr import from_trusted_proxy
from config.headerread import header_phase_end
from config.ids import ulid
from config.inputs import query_problem
from config.jsonwalk import invalid, is_clean_text
from config.threadshare import CLOSE_CONNECTION, ShareExceeded, admit_wait, thread_share

logger = logging.getLogger("trustcal.request")

_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
API_PREFIX = "/v1/"


class RequestContextMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        header_phase_end()  # the request line and headers are in (config/headerread.py)
        started = time.perf_counter()
        client_id = request.META.get("HTTP_X_REQUEST_ID", "")
        request.request_id = client_id if _CLIENT_REQUEST_ID.match(client_id) else f"req_{ulid()}"  # type: ignore[attr-defined]
        is_api = request.path.startswith(API_PREFIX) or request.path == "/v1"

        response = (self._too_large(request) or self._unclean_input(request)) if is_api else None
        guard = (
            body_guard(
                request,
                admit=lambda: admit_wait(request),
                on_finish=lambda: thread_share.give_back(request, address_only=True),
            )
            if response is None
            else None
        )
        if guard is not None and not is_api and not guard.admit_now():
            # A console form is read before anyone signs in: its address's share, asked now.
            response = self._problem_for(request, ShareExceeded())
            guard.abandon(drain=False, proxied=from_trusted_proxy(request.META))
        elif guard is not None and not is_api and (late := self._console_body_late(request)) is not None:
            response = late
            guard.abandon(drain=False)
            thread_share.give_back(request)
        elif response is None:
            hits = ratelimit.request_hits_begin()
            succeeded = False
            try:
                response = self.get_response(request)
                succeeded = response.status_code < 400
            finally:
                ratelimit.request_hits_end(hits, succeeded=succeeded)
                if guard is not None:
                    guard.abandon(
                        drain=not getattr(request, CLOSE_CONNECTION, False),
                        proxied=from_trusted_proxy(request.META),
                    )
                thread_share.give_back(request)
            if guard is not None and guard.expired and response.status_code >= 500:
                # A body read by a part of Django that lets no error through as a problem (a
                # large console upload's parser): its deadline, not a fault of the service.
                response = self._problem_for(request, BodyReadTimeout())
        if is_api:
            response = self._problem_for_plain_errors(request, response)
            state = getattr(request, "trustcal_ratelimit", None)
            if state is not None:
                for name, value in state.headers().items():
                    response[name] = value
            metrics.record_request(
                metrics.route_group(request), response.status_code, (time.perf_counter() - started) * 1000
            )
        response["X-Request-ID"] = request.request_id  # type: ignore[attr-defined]
        return response

    @staticmethod
    def _problem_for(request: HttpRequest, exception: BodyReadTimeout | ShareExceeded) -> HttpResponse:
        return problem_response(
            request,
            status=exception.status,
            code=exception.code,
            title=exception.title,
            detail=exception.detail,
            headers=exception.headers or None,
        )

    def _console_body_late(self, request: HttpRequest) -> HttpResponse | None:
        """A console form's body, read now under its deadline (docs/reference/limits.md, Slow
        request bodies): late, it answers 408 as /v1 does, instead of failing inside the CSRF
        check, which lets no error but an unreadable body through. A body over Django's
        in-memory limit is left to the upload parser (its lateness: __call__)."""
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return None
        if length > (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0):
            return None
        try:
            request.body  # noqa: B018  (read and kept: the form's parser takes it from there)
        except BodyReadTimeout as exc:
            return self._problem_for(request, exc)
        return None

    @staticmethod
    def _too_large(request: HttpRequest) -> HttpResponse | None:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = settings.MAX_REQUEST_BYTES
        if request.path.rstrip("/") in settings.LARGE_BODY_PATHS:
            limit = settings.MAX_BATCH_REQUEST_BYTES
        if length > limit:
            return problem_response(
                request,
                status=413,
                code="PAYLOAD_TOO_LARGE",
                title="Payload too large",
                detail=f"Request bodies are limited to {limit} bytes.",
            )
        return None

    @staticmethod
    def _unclean_input(request: HttpRequest) -> HttpResponse | None:
        """A query string or a header the service reads holding NUL or an unpaired surrogate
        is refused before any view (docs/reference/conventions.md, Strings)."""
        problem = query_problem(request.GET)
        if problem is None and not is_clean_text(request.META.get("HTTP_AUTHORIZATION", "")):
            problem = invalid("Authorization", "must not contain NUL or unpaired surrogates")
        if problem is None:
            return None
        return problem_response(
            request,
            status=problem.status,
            code=problem.code,
            title=problem.title,
            detail=problem.detail,
            errors=problem.errors,
        )

    @staticmethod
    def _problem_for_plain_errors(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        """Django's own 404/405/500 pages become problem documents under /v1."""
        content_type = response.get("Content-Type", "")
        if response.status_code < 400 or "json" in content_type:
            return response
        if response.status_code == 404:
            return problem_response(
                request,
                status=404,
                code="NOT_FOUND",
                title="Not found",
                detail=f"No route for {request.path}.",
            )
        if response.status_code == 405:
            allow = response.get("Allow")
            return problem_response(
                request,
                status=405,
                code="METHOD_NOT_ALLOWED",
                title="Method not allowed",
                detail=f"{request.method} is not allowed here.",
                headers={"Allow": allow} if allow else None,
            )
        if response.status_code == 400:
            return problem_response(
                request, status=400, code="VALIDATION_ERROR", title="Invalid request", detail="Bad request."
            )
        if response.status_code >= 500:
            return problem_response(
                request,
                status=500,
                code="INTERNAL_ERROR",
                title="Internal server error",
                detail="An unexpected error occurred.",
            )
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, BodyReadTimeout | ShareExceeded):  # the console's forms as well as the API
            return self._problem_for(request, exception)
        if not request.path.startswith(API_PREFIX):
            return None
        from config.api import problem_exception_handler

        drf_response = problem_exception_handler(exception, {"request": request})
        if drf_response is None:
            return None
        return problem_response(
            request,
            status=drf_response.status_code,
            code=drf_response.data["code"],
            title=drf_response.data["title"],
            detail=drf_response.data["detail"],
            errors=drf_response.data.get("errors"),
            headers={
                k: v for k, v in drf_response.items() if k.lower() in ("retry-after", "www-authenticate")
            },
        )


# --- the console's middleware, passed by on /v1 ----------------------------------------------------
#
# Sessions, messages and the signed-in user serve the staff console (/admin) only: a /v1 request
# is authenticated by its API key (keys.authentication), and no /v1 view reads a session, a
# message or Django's user. On /v1 these three hand the request straight on; the admin's checks
# (admin.E408-E410) accept them as the subclasses they are.


class _ConsoleOnly(MiddlewareMixin):
    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        return super().__call__(request)


class ConsoleSessionMiddleware(_ConsoleOnly, SessionMiddleware):
    pass


class ConsoleAuthenticationMiddleware(_ConsoleOnly, AuthenticationMiddleware):
    pass


class ConsoleMessageMiddleware(_ConsoleOnly, MessageMiddleware):
    pass


class CachedPolicyMiddleware(ContentSecurityPolicyMiddleware):
    """Django's Content-Security-Policy middleware with the header's text built once per policy
    (it was built from SECURE_CSP on every response); a policy with a nonce is built each time."""

    _built: tuple[object, str] | None = None

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (
            hasattr(response, "_csp_config")
            or hasattr(response, "_csp_ro_config")
            or settings.SECURE_CSP_REPORT_ONLY
            or CSP.HEADER_ENFORCE in response
        ):
            return super().process_response(request, response)
        config: dict[str, Any] = settings.SECURE_CSP  # Any: a directive's source list or flag
        built = self._built
        if built is None or built[0] != config:
            text = build_policy(config)
            if not config or text != build_policy(config, "nonce"):  # none, or one with a nonce
                return super().process_response(request, response)
            built = self._built = (copy.deepcopy(config), text)
        response.headers[str(CSP.HEADER_ENFORCE)] = built[1]
        return response
