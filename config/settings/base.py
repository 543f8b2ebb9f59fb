"""Settings shared by every environment.

Configuration comes from the environment only. With nothing set, the service runs on
the embedded default: SQLite under ``var/``, a filesystem Celery broker, local-memory
cache and in-process rate limits. ``DATABASE_URL`` and ``REDIS_URL`` switch it to
PostgreSQL and Redis (broker, cache, rate limits, metrics) with the same code.
"""

from pathlib import Path

import environ
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# The data folder (embedded database, broker messages, exports, static files) is created and
# made owner-only when Django starts (config.datadir, from config.apps), never on import.
DATA_DIR = Path(env.str("TRUSTCAL_DATA_DIR", default=str(BASE_DIR / "var")))
# The address `manage.py serve` (make run) listens on.
BIND = env.str("TRUSTCAL_BIND", default="127.0.0.1:8000")

SERVICE_VERSION = "1.0.0"
INTEGRATION_VERSION = "1.1.0"

# Set by config.settings.production: its start checks refuse host-local state (config/checks.py).
TRUSTCAL_PRODUCTION = False

# An insecure development key is allowed here; config.settings.production refuses it.
INSECURE_SECRET_KEY = "django-insecure-trustcal-local-development-only"  # noqa: S105
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=INSECURE_SECRET_KEY)
# Earlier keys still accepted for sessions and signed values while a new key is rolled out
# (docs/deploy.md, "One key and one secret everywhere"); comma-separated.
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])

INSTALLED_APPS = [
    "config.apps.TrustcalAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.humanize",  # intcomma: counts with separators in the console
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "config.apps.CoreConfig",
    "keys",
    "audit",
    "calibration",
    "bias",
    "fairness",
    "webhooks",
    "compliance",
    "oversight",
    "drift",
    "console",
]

MIDDLEWARE = [
    "config.middleware.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's, Swagger UI's) from the web process itself, so that the embedded
    # default and /v1/docs work with no web server in front and no network.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Sessions, the signed-in user and messages: the console's only, passed by on /v1.
    "config.middleware.ConsoleSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "config.middleware.ConsoleAuthenticationMiddleware",
    "config.middleware.ConsoleMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Django's, with the header's text built once per policy.
    "config.middleware.CachedPolicyMiddleware",
]

# Content-Security-Policy on every response (docs/reference/limits.md, "Browser security"):
# scripts only from this origin (no inline script anywhere: the console has none, Swagger UI
# loads its start-up script from /v1/docs?script), no plugins, no framing, forms post here.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Applied by config.settings.production (plain http stays usable in development and tests):
# HTTPS only, with HSTS; /v1/health answers over http too, for load balancers' probes.
SSL_REDIRECT = env.bool("TRUSTCAL_SSL_REDIRECT", default=True)
HSTS_SECONDS = env.int("TRUSTCAL_HSTS_SECONDS", default=31_536_000)
HSTS_INCLUDE_SUBDOMAINS = env.bool("TRUSTCAL_HSTS_INCLUDE_SUBDOMAINS", default=True)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -----------------------------------------------------------------------
# SQLite options measured on this image (shared/notes): WAL + IMMEDIATE transactions
# + a busy timeout gave zero "database is locked" errors under web + worker writes.
SQLITE_OPTIONS = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'trustcal.sqlite3'}"),
}
# Connections a host leaves to others (migrations, psql, monitoring) when it checks its own
# against the server's max_connections (config/connections.py).
DATABASE_CONNECTIONS_RESERVE = env.int("TRUSTCAL_DATABASE_CONNECTIONS_RESERVE", default=10)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
    # Prepared statements only where the code asks for them (config.db.prepared, the hot write
    # path): Django's default (None) turns psycopg's preparing off altogether, a threshold no
    # statement reaches keeps psycopg's automatic preparing off and lets the asked-for ones be.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 2**31 - 1)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# An index's INCLUDE columns (for PostgreSQL's index-only scans) are ignored by SQLite, which
# says so (models.W040) on every command; the index itself works there without them.
# security.W021 (HSTS preload): submitting a domain to browsers' preload lists is a commitment
# for the operator to make (docs/deploy.md), not a default.
SILENCED_SYSTEM_CHECKS = ["models.W040", "security.W021"]

# --- redis, cache, broker ----------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
# While Redis is unreachable it is tried again after this many seconds (config/redis.py).
REDIS_RETRY_SECONDS = 2.0
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "config.cache.DegradingRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "trustcal",
            # An unreachable Redis fails a call within 2 s instead of the TCP connect's minutes
            # (docs/deploy.md, "When Redis is down").
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {
        "visibility_timeout": 3600,
        "socket_connect_timeout": 2,
        "socket_timeout": 2,
    }
    # A publish that fails is not retried for long: what it announces is a database row that
    # beat claims again, and a request must not wait on a broker that is down.
    CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "trustcal"}}
    BROKER_DIR = DATA_DIR / "broker"
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="trustcalfs://")  # config/broker.py
    # Measured (shared/notes): processed folder on the same filesystem, 0.1 s polling.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": True,
        "polling_interval": 0.1,
    }

CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
# Redis: one message per process at a time (acks_late redelivers what a dead worker held).
# Embedded: a fetched message file is already moved out of the queue, so prefetching loses
# nothing more on a crash (durable work is a database row that beat claims again), and
# fetching one at a time drained at ~100 messages/s against ~490/s with 16 (measured).
CELERY_WORKER_PREFETCH_MULTIPLIER = 1 if REDIS_URL else 16
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Beat's own file (when each periodic task last ran): in the data folder, not wherever beat was
# started. Production refuses a path inside the code folder (config/checks.py).
CELERY_BEAT_SCHEDULE_FILENAME = env.str(
    "TRUSTCAL_BEAT_SCHEDULE", default=str(DATA_DIR / "celerybeat-schedule")
)

# --- i18n / time ----------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The console prints times in ISO order with their zone (config/formats/en/formats.py).
FORMAT_MODULE_PATH = ["config.formats"]

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
# Served by WhiteNoise straight from the installed apps' static folders: no collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = False

# Request bodies over 1 MiB answer 413 PAYLOAD_TOO_LARGE (docs/reference/conventions.md).
MAX_REQUEST_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
# Bulk endpoints take up to 8 MiB (docs/reference/decisions.md); their parsers read the stream, not
# request.body, so DATA_UPLOAD_MAX_MEMORY_SIZE does not apply to them.
MAX_BATCH_REQUEST_BYTES = 8 * 1024 * 1024
LARGE_BODY_PATHS = {"/v1/log/batch"}
# A body must arrive within BODY_READ_SECONDS plus its length at BODY_READ_MIN_BYTES_PER_SECOND,
# else 408 (config/bodyread.py; docs/reference/limits.md, "Slow request bodies").
BODY_READ_SECONDS = env.float("TRUSTCAL_BODY_READ_SECONDS", default=10.0)
# The share of a web process's threads one customer (or, before authentication, one client
# address) may hold at once; beyond it 429 at once (docs/reference/limits.md, "Web threads").
THREAD_SHARE = env.float("TRUSTCAL_THREAD_SHARE", default=0.5)
BODY_READ_MIN_BYTES_PER_SECOND = env.int("TRUSTCAL_BODY_READ_MIN_BYTES_PER_SECOND", default=256 * 1024)

# --- REST framework ---------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["keys.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["config.filters.FilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "config.schema.TrustcalAutoSchema",
    "EXCEPTION_HANDLER": "config.api.problem_exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DATETIME_FORMAT": "iso-8601",
    "COERCE_DECIMAL_TO_STRING": False,
    "UNICODE_JSON": True,
    "STRICT_JSON": True,
}

# Admin messages live in the session (server side), not in the signed but readable messages
# cookie: rotating a key in the admin shows the new key once, and it must not travel in a cookie.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

SPECTACULAR_SETTINGS = {
    "TITLE": "Trustcal API",
    "DESCRIPTION": (
        "Trust calibration, bias monitoring, audit trail, compliance reports, fairness signals "
        "and signed webhooks for AI-assisted decisions. Every request carries "
        "`Authorization: Bearer <api_key>` except `GET /v1/health`. Errors are RFC 9457 "
        "problem documents (`application/problem+json`) with a stable `code`."
    ),
    "VERSION": SERVICE_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PUBLIC": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/v1",
    "SECURITY": [{"ApiKeyAuth": []}],
    # Not part of `check --deploy` on every host: the schema is the code's, not the host's, and
    # tests/system/test_docs.py generates it and fails on any warning but enum naming.
    "ENABLE_DJANGO_DEPLOY_CHECK": False,
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "ApiKeyAuth": {"type": "http", "scheme": "bearer", "description": "API key (tcal_...)"}
        }
    },
    # Two fields named risk level with different values (a reviewer's or an organisation's
    # risk, an amplification alert's): each its own enum component, not one overwriting the other.
    "ENUM_NAME_OVERRIDES": {
        "TrustRiskLevelEnum": "calibration.rules.RISK_LEVELS",
        "AmplificationRiskLevelEnum": "fairness.amplification.RISK_LEVELS",
    },
    "PREPROCESSING_HOOKS": ["config.schema.canonical_paths"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.operation_links",
    ],
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "DISABLE_ERRORS_AND_WARNINGS": True,
}

# --- Trustcal ---------------------------------------------------------------------------
TRUSTCAL_BOOTSTRAP_ADMIN_KEY = env.str("TRUSTCAL_BOOTSTRAP_ADMIN_KEY", default="")
# Signed checkpoints of each customer's audit tree (docs/reference/checkpoints.md): the
# Ed25519 key's file (PEM, or the base64 of its 32-byte seed) and the log's name. Unset, the
# key lives in the data folder and is generated (mode 0600) the first time one is needed.
TRUSTCAL_CHECKPOINT_KEY = env.str("TRUSTCAL_CHECKPOINT_KEY", default="")
TRUSTCAL_CHECKPOINT_KEY_DEFAULT = DATA_DIR / "checkpoint-ed25519.pem"
TRUSTCAL_LOG_ORIGIN = env.str("TRUSTCAL_LOG_ORIGIN", default="trustcal.local")
# The webhook settings and the bounds on a request's work, modules of their own
# (config/settings/webhooks.py, config/settings/limits.py).
from config.settings.limits import *  # noqa: E402, F403
from config.settings.storage import storages  # noqa: E402
from config.settings.webhooks import *  # noqa: E402, F403

# Tier -> (requests per minute, burst). See docs/reference/access.md.
TIER_LIMITS = {"pilot": (100, 150), "growth": (500, 750), "enterprise": (1000, 1500)}
RATE_LIMITS_ENABLED = env.bool("TRUSTCAL_RATE_LIMITS_ENABLED", default=True)
# Group commit of concurrent POST /log and POST /calibrate writes of one customer in one process
# (docs/reference/decisions.md, Group commit), and the most items one group writes.
DECISION_GROUP_COMMIT = env.bool("TRUSTCAL_DECISION_GROUP_COMMIT", default=True)
DECISION_GROUP_MAX = env.int("TRUSTCAL_DECISION_GROUP_MAX", default=200)
DECISION_GROUP_WAIT_SECONDS = env.float("TRUSTCAL_DECISION_GROUP_WAIT_SECONDS", default=30.0)
# From how many changes one write derives its calibration aggregates and subgroup statistics
# set-wise on PostgreSQL (docs/architecture.md, "The set-wise batch path"); fewer are folded in
# Python. The tests run both appliers through it.
INGEST_SETWISE_FROM = env.int("TRUSTCAL_INGEST_SETWISE_FROM", default=50)
KEY_ROTATION_GRACE_HOURS = 24
# The staff console's sign-in: failures per client address and per user name in one window,
# then 429 until the window ends (docs/reference/limits.md, "Console sign-in").
ADMIN_LOGIN_FAILURES = env.int("TRUSTCAL_ADMIN_LOGIN_FAILURES", default=10)
# Front proxies whose X-Forwarded-For names the client (docs/reference/access.md, "Client
# address"): addresses or CIDR blocks; empty, the client address is REMOTE_ADDR.
TRUSTED_PROXIES = env.list("TRUSTCAL_TRUSTED_PROXIES", default=[])
ADMIN_LOGIN_WINDOW_SECONDS = env.int("TRUSTCAL_ADMIN_LOGIN_WINDOW_SECONDS", default=900)
# How often a process writes its buffered key usage (last_used, request counts).
KEY_USAGE_FLUSH_SECONDS = env.float("TRUSTCAL_KEY_USAGE_FLUSH_SECONDS", default=30.0)
WORKER_HEARTBEAT_MAX_AGE_SECONDS = 60
# Full audit-chain checks (docs/reference/limits.md, "Chain verification"): how long a worker
# holds one, how many runs before it is failed, and how often every chain is checked whole.
VERIFY_LEASE_SECONDS = env.float("TRUSTCAL_VERIFY_LEASE_SECONDS", default=600.0)
VERIFY_MAX_ATTEMPTS = env.int("TRUSTCAL_VERIFY_MAX_ATTEMPTS", default=3)
# How often beat sends again full-check jobs whose worker died or whose message was lost.
VERIFY_RECOVER_SECONDS = env.float("TRUSTCAL_VERIFY_RECOVER_SECONDS", default=30.0)
VERIFY_FULL_EVERY_SECONDS = env.float("TRUSTCAL_VERIFY_FULL_EVERY_SECONDS", default=86400.0)
# Automatic calibration of drift monitors (docs/reference/drift.md, Calibration): how long a
# worker holds a monitor between renewals (renewed every third of it while the Monte Carlo
# runs), and how often beat sends again the calibrations nobody holds.
DRIFT_CALIBRATION_LEASE_SECONDS = env.float("TRUSTCAL_DRIFT_CALIBRATION_LEASE_SECONDS", default=60.0)
DRIFT_CALIBRATION_RECOVER_SECONDS = env.float("TRUSTCAL_DRIFT_CALIBRATION_RECOVER_SECONDS", default=30.0)
# Review effort (docs/reference/oversight.md): a timed decision is quick under
# max(floor, fraction x its model's median review time).
OVERSIGHT_FLOOR_SECONDS = env.float("TRUSTCAL_OVERSIGHT_FLOOR_SECONDS", default=3.0)
OVERSIGHT_MEDIAN_FRACTION = env.float("TRUSTCAL_OVERSIGHT_MEDIAN_FRACTION", default=0.5)
# Compliance exports (docs/reference/reports.md): a worker holds a job for EXPORT_LEASE_SECONDS at a time (renewed
# while it renders); a job whose lease ran out is queued again, at most EXPORT_MAX_ATTEMPTS times.
EXPORT_LEASE_SECONDS = env.float("TRUSTCAL_EXPORT_LEASE_SECONDS", default=300.0)
EXPORT_MAX_ATTEMPTS = env.int("TRUSTCAL_EXPORT_MAX_ATTEMPTS", default=3)
# How often beat looks for export jobs whose worker died or whose broker message was lost.
EXPORT_RECOVER_SECONDS = env.float("TRUSTCAL_EXPORT_RECOVER_SECONDS", default=30.0)
EXPORTS_PER_CUSTOMER_ACTIVE = env.int("TRUSTCAL_EXPORTS_PER_CUSTOMER_ACTIVE", default=5)
# What one render may cost, and what a customer's reports may keep (docs/reference/limits.md,
# "Exports"): wall time and extra memory of one render (0: no limit), renders of one customer
# at a time (its other jobs wait their turn, others' jobs go on), days a finished export is
# kept, and the storage of a customer's completed exports (oldest deleted past it).
EXPORT_RENDER_SECONDS = env.float("TRUSTCAL_EXPORT_RENDER_SECONDS", default=300.0)
EXPORT_RENDER_MEMORY_MB = env.int("TRUSTCAL_EXPORT_RENDER_MEMORY_MB", default=2048)
# A worker's pool process that holds more than this after a task is replaced by a fresh one
# (Celery's worker_max_memory_per_child, in KiB; Linux reads the process's peak resident size).
# A report render grows its process by 200 MB or more, which CPython keeps once the render is
# over; an idle pool process holds about 100 MB. So a process that rendered a report is
# recycled after it, and gives that memory back (docs/deploy.md, Memory). 0: never.
WORKER_MAX_MEMORY_PER_CHILD_MB = env.int("TRUSTCAL_WORKER_MAX_MEMORY_PER_CHILD_MB", default=200)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = WORKER_MAX_MEMORY_PER_CHILD_MB * 1024 or None
EXPORT_RENDERS_PER_CUSTOMER = env.int("TRUSTCAL_EXPORT_RENDERS_PER_CUSTOMER", default=1)
EXPORT_RETENTION_DAYS = env.int("TRUSTCAL_EXPORT_RETENTION_DAYS", default=30)
EXPORT_STORAGE_QUOTA_MB = env.int("TRUSTCAL_EXPORT_STORAGE_QUOTA_MB", default=500)
# Report storage: config/settings/storage.py (TRUSTCAL_EXPORT_STORAGE_BACKEND, _OPTIONS).
STORAGES = storages(DATA_DIR)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {"no_query_string": {"()": "config.logfilters.StripQueryString"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["no_query_string"]}
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        # WeasyPrint logs every layout step at INFO while a report renders.
        "weasyprint": {"level": "WARNING"},
        "fontTools": {"level": "WARNING"},
    },
}
