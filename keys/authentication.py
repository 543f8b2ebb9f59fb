"""Bearer API-key authentication with the per-key tier rate limit
(docs/reference/access.md, Authentication and Rate limits)."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, cast

from django.conf import settings
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from config.clientaddr import client_address
from config.exceptions import AdminRequired, RateLimited
from config.ratelimit import TokenBucket
from config.threadshare import CLOSE_CONNECTION, share_message, thread_share
from keys.keycache import key_cached, key_lookup, tier_consume
from keys.models import ApiKey, Customer
from keys.services import key_digest, key_usage_record
from keys.throttle import auth_failures, known_digests

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings
    from rest_framework.views import APIView

tier_bucket = TokenBucket("tier")
# The request attribute that hands the tier bucket's state to config.middleware.
RATELIMIT_STATE = "trustcal_ratelimit"


@dataclass(frozen=True)
class ApiPrincipal:
    """request.user for API requests: the key's customer and admin flag."""

    key: ApiKey

    is_authenticated = True
    is_anonymous = False

    @property
    def customer(self) -> Customer:
        return self.key.customer

    @property
    def is_admin(self) -> bool:
        return self.key.is_admin

    @property
    def pk(self) -> str:
        return self.key.id


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[ApiPrincipal, ApiKey] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None  # -> 401 AUTHENTICATION_REQUIRED
        value = token.strip()
        digest = key_digest(value)
        # A key that just authenticated here is looked up whatever its address's count says (and
        # the client's address is then not needed).
        wait = 0
        if not known_digests.recently_valid(digest):
            wait = auth_failures.blocked_for(client_address(request.META))
        if wait and not known_digests.may_exist(digest):
            raise RateLimited(
                "Too many failed authentications from this address; try again later.", retry_after=wait
            )
        # A key this process verified is used without reading it again while the keys' stamp,
        # read in the tier bucket's round trip, is the one read before its lookup (keys/keycache.py).
        key, stamp = key_cached(digest)
        if key is None:
            key = key_lookup(digest)
            stamp = ""
        if key is None:
            self._fail(request)
        known_digests.authenticated(digest)
        if not thread_share.take(request._request, f"customer:{key.customer_id}"):
            setattr(request._request, CLOSE_CONNECTION, True)
            raise RateLimited(share_message("this customer"), retry_after=1)
        if settings.RATE_LIMITS_ENABLED:
            state = tier_consume(tier_bucket, key, expect=stamp)
            if not state.applied:  # a key changed since this process cached it: read it again
                key = key_lookup(digest, stamp=state.stamp)
                if key is None:
                    self._fail(request)
                state = tier_consume(tier_bucket, key)
            setattr(request._request, RATELIMIT_STATE, state)  # the middleware sets the headers
            if not state.allowed:
                per_minute, burst = settings.TIER_LIMITS[key.tier]
                raise RateLimited(
                    f"The {key.tier} tier allows {per_minute} requests per minute (burst {burst}).",
                    retry_after=state.retry_after,
                )
        key_usage_record(key_id=key.id)
        return ApiPrincipal(key), key

    @staticmethod
    def _fail(request: Request) -> NoReturn:
        auth_failures.fail(client_address(request.META))
        raise exceptions.AuthenticationFailed("The API key is unknown, revoked or expired.")

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="trustcal"'


class IsAdminKey(permissions.BasePermission):
    def has_permission(self, request: Request, view: "APIView") -> bool:
        if not getattr(request.user, "is_authenticated", False):
            return False
        principal = cast(ApiPrincipal, request.user)  # ApiKeyAuthentication's, the API's only one
        if not principal.is_admin:
            raise AdminRequired()
        if principal.key.status != ApiKey.Status.ACTIVE:
            # A key in its rotation grace keeps working for everything else, but may not
            # administer keys: it could otherwise mint or rotate its own replacements.
            raise AdminRequired("A key in its rotation grace cannot be used on /admin; use its replacement.")
        return True
