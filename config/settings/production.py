"""Production: same as base, but refuses to start without a real secret key, and serves
HTTPS only (redirect, HSTS, secure cookies; README, "Environment")."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import HSTS_INCLUDE_SUBDOMAINS, HSTS_SECONDS, INSECURE_SECRET_KEY, SECRET_KEY, SSL_REDIRECT

if not SECRET_KEY or SECRET_KEY == INSECURE_SECRET_KEY or len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a random value of at least 32 characters.")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_SSL_REDIRECT = SSL_REDIRECT
SECURE_REDIRECT_EXEMPT = [r"^v1/health/?$"]
SECURE_HSTS_SECONDS = HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = HSTS_INCLUDE_SUBDOMAINS
