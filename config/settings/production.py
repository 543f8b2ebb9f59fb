"""Production: same as base, but refuses host-local state (a development secret key, a
generated checkpoint key, report files in one host's data folder, beat's schedule in the code
folder: config/checks.py, run by `manage.py check` and as every web and Celery process starts),
and serves HTTPS only (redirect, HSTS, secure cookies; README, "Environment")."""

from .base import *  # noqa: F403
from .base import HSTS_INCLUDE_SUBDOMAINS, HSTS_SECONDS, SSL_REDIRECT

TRUSTCAL_PRODUCTION = True

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_SSL_REDIRECT = SSL_REDIRECT
SECURE_REDIRECT_EXEMPT = [r"^v1/health/?$"]
SECURE_HSTS_SECONDS = HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = HSTS_INCLUDE_SUBDOMAINS
