"""Shared API plumbing: the tenant-scoped base viewset, pagination, the JSON parser and
the exception handler that turns every error into an RFC 9457 problem document
(docs/reference/errors.md, The problem document)."""

import datetime as dt
import json
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from django.core.exceptions import ImproperlyConfigured, RequestDataTooBig
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError, OperationalError
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, path, register_converter
from rest_framework import exceptions as drf_exceptions
from rest_framework import serializers, viewsets
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView

from config.exceptions import AdminRequired, DomainError, ValidationFailed
from config.inputs import query_choice as choice_param
from config.inputs import query_text as text_param
from config.jsondoc import JSONObject
from config.pagination import CamelPagePagination, PagePagination
from config.parsers import StrictJSONParser
from config.redis import RedisError, redis_failed
from config.scope_check import HasScope, require_declared_scopes
from config.scopes import Scope
from config.timeutils import isoformat, parse_timestamp

if TYPE_CHECKING:  # config imports no app at run time (docs/architecture.md, Boundaries)
    from keys.authentication import ApiPrincipal
    from keys.models import Customer

logger = logging.getLogger("trustcal.api")

PROBLEM_CONTENT_TYPE = "application/problem+json"

# The one /v1 router: every app registers its viewsets on it (trailing slash optional:
# docs/reference/conventions.md, Base path and trailing slash).
router = SimpleRouter()
router.trailing_slash = "/?"  # SimpleRouter only takes a bool; the regex form accepts both


# A path id: the alphabet of every id the service issues or keeps (prefixed ULIDs, client
# decision ids). Anything else (NUL, `%`, `/`, other characters) never reaches a view or a query:
# the route does not match and the answer is 404 NOT_FOUND (docs/reference/limits.md, "Path ids").
ID_PATTERN = r"[A-Za-z0-9._:-]{1,128}"


class IdConverter:
    regex = ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IdConverter, "id")


def paths(route: str, view: Callable[..., HttpResponse], name: str) -> list[URLPattern]:
    """A path that answers with and without a trailing slash, without redirecting."""
    return [path(route, view, name=name), path(route + "/", view)]


# --- problem documents -------------------------------------------------------------------------


def problem_body(
    *,
    status: int,
    code: str,
    title: str,
    detail: str,
    request_id: str | None,
    errors: list[dict[str, object]] | None = None,
) -> dict[str, object]:
    body: dict[str, object] = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "code": code,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    body["request_id"] = request_id
    return body


def problem_response(
    request: HttpRequest | None,
    *,
    status: int,
    code: str,
    title: str,
    detail: str,
    errors: list[dict[str, object]] | None = None,
    headers: dict[str, str] | None = None,
) -> HttpResponse:
    """A problem document as a plain Django response (for middleware and URL handlers)."""
    request_id = getattr(request, "request_id", None)
    body = problem_body(
        status=status, code=code, title=title, detail=detail, request_id=request_id, errors=errors
    )
    response = HttpResponse(
        json.dumps(body, ensure_ascii=False), status=status, content_type=PROBLEM_CONTENT_TYPE
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _flatten_errors(detail: object, prefix: str = "") -> list[dict[str, str]]:
    """DRF's error detail (nested dicts and lists of messages) as a flat list with paths."""
    out: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = str(key) if key != "non_field_errors" else ""
            out.extend(_flatten_errors(value, f"{prefix}.{name}" if prefix and name else (name or prefix)))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            for item in detail:
                out.append({"field": prefix or "body", "message": str(item)})
        else:
            for index, item in enumerate(detail):
                out.extend(_flatten_errors(item, f"{prefix}[{index}]" if prefix else f"[{index}]"))
    else:
        out.append({"field": prefix or "body", "message": str(detail)})
    return out


def validation_failed(exc: drf_exceptions.ValidationError) -> ValidationFailed:
    """A serializer's ValidationError as the VALIDATION_ERROR the handler would answer."""
    errors = _flatten_errors(exc.detail)
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5]) or "Invalid request"
    return ValidationFailed(detail, errors=errors)


_DRF_MAP: list[tuple[type[Exception], int, str, str]] = [
    (drf_exceptions.NotAuthenticated, 401, "AUTHENTICATION_REQUIRED", "Authentication required"),
    (drf_exceptions.AuthenticationFailed, 401, "INVALID_API_KEY", "Invalid API key"),
    (AdminRequired, 403, "ADMIN_REQUIRED", "Admin key required"),
    (drf_exceptions.PermissionDenied, 403, "FORBIDDEN", "Forbidden"),
    (drf_exceptions.NotFound, 404, "NOT_FOUND", "Not found"),
    (drf_exceptions.MethodNotAllowed, 405, "METHOD_NOT_ALLOWED", "Method not allowed"),
    (drf_exceptions.NotAcceptable, 406, "NOT_ACCEPTABLE", "Not acceptable"),
    (drf_exceptions.UnsupportedMediaType, 415, "UNSUPPORTED_MEDIA_TYPE", "Unsupported media type"),
    (drf_exceptions.Throttled, 429, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded"),
    (drf_exceptions.ParseError, 400, "INVALID_JSON", "Malformed JSON"),
]


def _problem(
    request_id: str | None,
    status: int,
    code: str,
    title: str,
    detail: str,
    errors: list[dict[str, object]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = problem_body(
        status=status, code=code, title=title, detail=detail, request_id=request_id, errors=errors
    )
    return Response(body, status=status, content_type=PROBLEM_CONTENT_TYPE, headers=headers)


def problem_exception_handler(exc: Exception, context: dict[str, object]) -> Response | None:
    request = context.get("request")
    request_id = getattr(request, "request_id", None) if request is not None else None
    if isinstance(exc, DomainError):
        return _problem(request_id, exc.status, exc.code, exc.title, exc.detail, exc.errors, exc.headers)
    if isinstance(exc, drf_exceptions.ValidationError):
        failed = validation_failed(exc)
        return _problem(request_id, 400, failed.code, failed.title, failed.detail, failed.errors)
    if isinstance(exc, Http404):
        return _problem(request_id, 404, "NOT_FOUND", "Not found", "No such resource.")
    if isinstance(exc, DjangoPermissionDenied):
        return _problem(request_id, 403, "FORBIDDEN", "Forbidden", "Forbidden.")
    if isinstance(exc, RequestDataTooBig):
        return _problem(
            request_id, 413, "PAYLOAD_TOO_LARGE", "Payload too large", "Request bodies are limited to 1 MiB."
        )
    for klass, status, code, title in _DRF_MAP:
        if isinstance(exc, klass):
            detail = str(getattr(exc, "detail", "")) or title
            headers: dict[str, str] = {}
            if status == 401:
                headers["WWW-Authenticate"] = 'Bearer realm="trustcal"'
            if isinstance(exc, drf_exceptions.Throttled):
                headers["Retry-After"] = str(max(1, math.ceil(getattr(exc, "wait", None) or 1)))
            if isinstance(exc, drf_exceptions.ParseError):
                detail = f"The request body is not valid JSON: {detail}"
            return _problem(request_id, status, code, title, detail, headers=headers)
    if isinstance(exc, OperationalError | DatabaseError) and _database_unreachable(exc):
        # SQLite's one writer held past its busy timeout is a busy database, not a lost one: the
        # client is told to send again (a decision's replay rules make that safe).
        busy = "locked" in str(exc).lower()
        logger.error("database unavailable: %s%s", type(exc).__name__, " (locked)" if busy else "")
        detail = (
            BUSY_DETAIL
            if busy
            else "The database is unreachable or refuses connections; send the request again."
        )
        retry = {"Retry-After": "1" if busy else "2"}
        return _problem(request_id, 503, "SERVICE_UNAVAILABLE", "Service unavailable", detail, headers=retry)
    if isinstance(exc, RedisError):
        # A Redis call with no in-process fallback (docs/deploy.md, "When Redis is down"); the
        # next requests take their fallbacks while Redis is marked down.
        redis_failed(exc)
        logger.error("redis unavailable: %s", type(exc).__name__)
        detail = "A service this request needs (Redis) is unreachable; send the request again."
        return _problem(
            request_id,
            503,
            "SERVICE_UNAVAILABLE",
            "Service unavailable",
            detail,
            headers={"Retry-After": "2"},
        )
    logger.exception("unhandled error", extra={"request_id": request_id})
    return _problem(
        request_id, 500, "INTERNAL_ERROR", "Internal server error", "An unexpected error occurred."
    )


BUSY_DETAIL = "The database is busy: its writer stayed locked past the busy timeout. Send the request again."


def _database_unreachable(exc: Exception) -> bool:
    text = str(exc).lower()
    return isinstance(exc, OperationalError) and any(
        marker in text
        for marker in ("connection", "could not connect", "server closed", "unable to open", "locked")
    )


# --- parsing -----------------------------------------------------------------------------------


def require_object(data: object) -> JSONObject:  # a JSON object's members, not yet validated
    """Request bodies are JSON objects; anything else is a VALIDATION_ERROR."""
    if not isinstance(data, dict):
        raise ValidationFailed(
            "The request body must be a JSON object.",
            errors=[{"field": "body", "message": "expected an object"}],
        )
    return data


class UTCDateTimeField(serializers.DateTimeField):
    """ISO 8601 in (naive taken as UTC), ISO 8601 UTC with Z and milliseconds out
    (docs/reference/conventions.md, Timestamps)."""

    def to_internal_value(self, value: object) -> dt.datetime:
        parsed = parse_timestamp(value) if isinstance(value, str) else None
        if parsed is None:
            raise serializers.ValidationError("Not a valid ISO 8601 timestamp.")
        return parsed

    def to_representation(self, value: dt.datetime) -> str:
        return isoformat(value)  # DRF renders a None attribute as null without calling this


# --- the tenant-scoped bases ---------------------------------------------------------------------
#
# Every view that serves a customer's data derives from TenantViewSet (resources) or
# TenantAPIView (actions such as POST /log): `self.customer` is the caller's customer and a
# resource's queryset is filtered to it in one place. What could drop that filter or the
# authentication in front of it cannot be replaced by a subclass, nor by a mixin listed before
# the base: the check follows the whole method resolution order when the class is defined.
# Each handler declares the key scope it needs (config/scopes.py), also checked at definition.
# tests/system/test_tenancy.py walks the URL resolver and fails for any /v1 route that is
# neither public, nor admin-only, nor served by one of these bases, and for any route whose
# answer to one customer holds another customer's rows.


def _refuse_tenant_overrides(cls: type, base: type, names: tuple[str, ...], hint: str) -> None:
    """Each name must resolve to `base` itself or to a class below it in `cls`'s MRO."""
    mro = cls.__mro__
    floor = mro.index(base)
    for name in names:
        owner = next((klass for klass in mro if name in klass.__dict__), None)
        if owner is not None and mro.index(owner) < floor:
            raise TypeError(
                f"{cls.__qualname__} replaces {name} (in {owner.__qualname__}), which "
                f"{base.__name__} keeps so that the tenant filter and authentication hold: {hint}"
            )


# What keeps a request authenticated as one customer's key, and what keeps a resource's rows
# filtered to that customer. Module constants, so that no subclass can shorten the lists.
_AUTHENTICATED = (
    "customer",
    "authentication_classes",
    "permission_classes",
    "get_authenticators",
    "get_permissions",
    "initial",
)
_FILTERED = ("get_queryset", "filter_queryset", "get_object", "customer_field")


class _CallerCustomer(APIView):
    # A key, holding the scope the handler declares in `scopes` (config/scopes.py).
    permission_classes: list[type[BasePermission]] = [IsAuthenticated, HasScope]
    scopes: dict[str, Scope] = {}

    @property
    def customer(self) -> "Customer":
        """The authenticated key's customer (the authentication sets `request.user` to its key)."""
        return cast("ApiPrincipal", self.request.user).customer


class TenantAPIView(_CallerCustomer):
    """A non-resource endpoint on the caller's own data (POST /log, /calibrate, ...): always
    authenticated by an API key, `self.customer` always the key's customer."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        _refuse_tenant_overrides(
            cls, TenantAPIView, _AUTHENTICATED, "read the caller's data through self.customer."
        )
        require_declared_scopes(cls)


class TenantViewSet[M: Model](_CallerCustomer, viewsets.GenericViewSet[M]):
    """Every resource viewset derives from this: the queryset is always filtered to the
    caller's customer, so another customer's id is a 404, a list shows only the caller's rows,
    and no view can forget the filter. A subclass provides `queryset` or
    `get_base_queryset()`, and lists take their rows from `self.get_queryset()`."""

    customer_field = "customer"
    lookup_value_regex = ID_PATTERN

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        _refuse_tenant_overrides(
            cls, TenantViewSet, _AUTHENTICATED + _FILTERED, "override get_base_queryset() instead."
        )
        require_declared_scopes(cls)

    def get_base_queryset(self) -> QuerySet[M]:
        queryset = getattr(self, "queryset", None)
        if queryset is None:
            raise ImproperlyConfigured(f"{type(self).__name__} needs a queryset or get_base_queryset()")
        return cast("QuerySet[M]", queryset).all()

    def get_queryset(self) -> QuerySet[M]:
        if getattr(self, "swagger_fake_view", False):
            return self.get_base_queryset().none()
        return self.get_base_queryset().filter(**{self.customer_field: self.customer})

    def filter_queryset[R](self, queryset: QuerySet[M, R]) -> QuerySet[M, R]:
        # The filter backends narrow what get_queryset() gave; the tenant filter is applied
        # again so that no backend can widen it.
        queryset = super().filter_queryset(queryset)
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        return queryset.filter(**{self.customer_field: self.customer})


__all__ = [
    "CamelPagePagination",
    "PagePagination",
    "StrictJSONParser",
    "choice_param",
    "text_param",
]
