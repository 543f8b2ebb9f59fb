"""Where key scopes (config/scopes.py, docs/reference/access.md, "Key scopes") are declared
and checked.

Every view of a customer's data declares, in its `scopes` mapping, the scope each of its
handlers needs: an API view's HTTP methods (`{"get": Scope.READ, "put": Scope.MANAGE}`), a
viewset's actions (`{"list": Scope.READ, "create": Scope.MANAGE, "rotate_secret":
Scope.MANAGE}`). The tenant bases (config.api) refuse, when the class is defined, a view with a
handler whose scope is not declared, and check the caller's key against the declaration before
any handler runs (403 INSUFFICIENT_SCOPE naming the scope needed). The OpenAPI schema shows each
operation's scope as `x-required-scope`."""

from collections.abc import Mapping

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView
from rest_framework.viewsets import ViewSetMixin

from config.exceptions import DomainError
from config.scopes import ALL_SCOPES, Scope

# A viewset's standard actions and an API view's HTTP methods: the handlers that need a scope.
_ACTIONS = ("list", "create", "retrieve", "update", "partial_update", "destroy")
_METHODS = ("get", "post", "put", "patch", "delete")


class InsufficientScope(DomainError):
    code = "INSUFFICIENT_SCOPE"
    status = 403
    title = "Insufficient scope"


def handler_names(cls: type[APIView]) -> list[str]:
    """The handlers `cls` serves: a viewset's actions (its extra actions included), an API
    view's HTTP methods (HEAD is GET's; OPTIONS describes the route and needs no scope)."""
    if issubclass(cls, ViewSetMixin):
        names = [name for name in _ACTIONS if callable(getattr(cls, name, None))]
        return names + [extra.__name__ for extra in cls.get_extra_actions()]
    return [name for name in _METHODS if callable(getattr(cls, name, None))]


def undeclared_handlers(cls: type[APIView]) -> list[str]:
    declared: Mapping[str, Scope] = getattr(cls, "scopes", {})
    return [name for name in handler_names(cls) if not isinstance(declared.get(name), Scope)]


def require_declared_scopes(cls: type[APIView]) -> None:
    """Refuse a view with a handler whose scope is not declared (called when it is defined)."""
    missing = undeclared_handlers(cls)
    if missing:
        raise TypeError(
            f"{cls.__qualname__} serves {', '.join(missing)} without a declared scope: add "
            f"{{{', '.join(repr(name) + ': Scope....' for name in missing)}}} to its `scopes` "
            "(config/scopes.py)."
        )


def handler_for(view: APIView, method: str) -> str | None:
    """The handler a request with `method` reaches: the viewset's action, or the method."""
    if isinstance(view, ViewSetMixin):
        return getattr(view, "action", None)
    method = method.lower()
    return "get" if method == "head" else method


def scope_needed(view: APIView, method: str) -> Scope | None:
    """The scope a request with `method` needs on `view`; None when it reaches no handler
    (OPTIONS, or a method the route does not serve: 405)."""
    name = handler_for(view, method)
    declared: Mapping[str, Scope] = getattr(view, "scopes", {})
    return declared.get(name) if name else None


class HasScope(BasePermission):
    """The caller's key holds the scope the handler declares (keys/models.py, ApiKey.scope_set)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        needed = scope_needed(view, request.method or "")
        if needed is None:
            return True
        granted: frozenset[str] = getattr(request.auth, "scope_set", frozenset())
        if needed not in granted:
            held = ", ".join(scope for scope in ALL_SCOPES if scope in granted) or "none"
            raise InsufficientScope(
                f"This request needs a key with the `{needed}` scope; this key's scopes are: {held}."
            )
        return True
