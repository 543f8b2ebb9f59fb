"""Start checks (docs/deploy.md, "What every start checks"): Django system checks tagged
`trustcal`, run by `manage.py check` (and so by `migrate` and `serve`) and by every web and
Celery process as it starts (`startup_check`), so a misconfigured host never serves.

Under production settings (`config.settings.production`) nothing may live on one host that
another host needs: each host generating its own checkpoint key, report files in one host's
data folder, a development secret key, or beat's schedule inside the code folder is an error
with its reason. A SQLite database and in-process limits (no `REDIS_URL`) are warnings: a
single production host may run so, several may not."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.checks import CheckMessage, Error, Warning

TAG = "trustcal"
SECRET_KEY_MIN_LENGTH = 32
_FILE_SYSTEM_STORAGE = "django.core.files.storage.FileSystemStorage"


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _secret_key() -> list[CheckMessage]:
    key = settings.SECRET_KEY
    if not key or key == settings.INSECURE_SECRET_KEY or len(key) < SECRET_KEY_MIN_LENGTH:
        return [
            Error(
                "DJANGO_SECRET_KEY must be set to a random value of at least 32 characters, the "
                "same on every web host (sessions and CSRF tokens signed on one host are checked "
                "on another).",
                id="trustcal.E001",
            )
        ]
    return []


def _checkpoint_key() -> list[CheckMessage]:
    if settings.TRUSTCAL_CHECKPOINT_KEY:
        return []
    return [
        Error(
            "TRUSTCAL_CHECKPOINT_KEY is not set: each host would generate a checkpoint signing "
            "key of its own, and a checkpoint signed on one host fails the check with another's "
            "key. Make one key (docs/deploy.md, 'The checkpoint signing key') and give every web "
            "host and worker the same file.",
            id="trustcal.E002",
        )
    ]


def _export_storage() -> list[CheckMessage]:
    exports: dict[str, Any] = settings.STORAGES["exports"]  # Any: the storage backend's own settings
    if exports.get("BACKEND") != _FILE_SYSTEM_STORAGE:
        return []
    location = Path(exports.get("OPTIONS", {}).get("location") or settings.MEDIA_ROOT or ".")
    if not _inside(location, Path(settings.DATA_DIR)):
        return []
    return [
        Error(
            f"Report files would be stored in this host's data folder ({location}): a report "
            "rendered by a worker on one host cannot be downloaded through another. Set "
            "TRUSTCAL_EXPORT_STORAGE_BACKEND to a shared storage (e.g. S3), or "
            "TRUSTCAL_EXPORT_STORAGE_OPTIONS' location to a folder every web host and worker "
            "mounts.",
            id="trustcal.E003",
        )
    ]


def _beat_schedule() -> list[CheckMessage]:
    schedule = Path(settings.CELERY_BEAT_SCHEDULE_FILENAME)
    if schedule.is_absolute() and not _inside(schedule, Path(settings.BASE_DIR)):
        return []
    return [
        Error(
            f"Beat's schedule file ({schedule}) is inside the code folder, which a release "
            "replaces. Set TRUSTCAL_BEAT_SCHEDULE (or TRUSTCAL_DATA_DIR) to an absolute path "
            "outside it, on the one host that runs beat.",
            id="trustcal.E004",
        )
    ]


def _host_local_services() -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        found.append(
            Warning(
                "DATABASE_URL is not set: the database is SQLite in this host's data folder. "
                "Fine for one host; several hosts need one PostgreSQL (docs/deploy.md).",
                id="trustcal.W001",
            )
        )
    if not settings.REDIS_URL:
        found.append(
            Warning(
                "REDIS_URL is not set: rate limits, the cache and the broker are this host's "
                "own. Fine for one host; several hosts need one Redis (docs/deploy.md).",
                id="trustcal.W002",
            )
        )
    return found


def _database_identity() -> str:
    """This process's database, as the embedded broker's folder records it (no password). A
    SQLite file inside the data folder is named by its place there, so the folder moved whole
    (the checkout moved, a backup restored elsewhere) still belongs to its database."""
    from django.db import connections

    db = connections["default"].settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        path = Path(db["NAME"]).resolve()
        if path.is_relative_to(Path(settings.DATA_DIR).resolve()):
            return f"sqlite:data-folder/{path.relative_to(Path(settings.DATA_DIR).resolve()).as_posix()}"
        return f"sqlite:///{path}"
    return f"postgres://{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


@checks.register(TAG)
def embedded_broker_checks(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """The embedded broker's queue folder carries one database's messages (config/broker.py)."""
    from config.broker import OWNER_FILE, SCHEME, folder_owner_claim

    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in")
    if not folder or not settings.CELERY_BROKER_URL.startswith(f"{SCHEME}://"):
        return []
    mine = _database_identity()
    owner = folder_owner_claim(folder, mine)
    if owner == mine:
        return []
    return [
        Error(
            f"The embedded broker's folder {folder} carries the messages of another database "
            f"({owner}), not of this process's ({mine}): a worker here would take that "
            "service's messages and run them against the wrong database. Give each database a "
            "data folder of its own (TRUSTCAL_DATA_DIR), or a broker of its own (REDIS_URL). If "
            "the other database is gone for good, stop its processes and delete "
            f"{Path(folder) / OWNER_FILE}.",
            id="trustcal.E006",
        )
    ]


def _secret_key_shared() -> list[CheckMessage]:
    """trustcal.E007: this host's DJANGO_SECRET_KEY is the deployment's (config/deployment_keys.py).
    A host in the middle of a rotation passes with the deployment's key among its fallbacks."""
    from config.deployment_keys import SECRET_KEY, fingerprint_claim, secret_fingerprint

    mine = secret_fingerprint(settings.SECRET_KEY)
    registered = fingerprint_claim(SECRET_KEY, mine)
    accepted = {mine} | {secret_fingerprint(old) for old in settings.SECRET_KEY_FALLBACKS}
    if registered is None or registered in accepted:
        return []
    return [
        Error(
            "DJANGO_SECRET_KEY differs from the key the other hosts of this deployment use (its "
            f"fingerprint {mine[:12]}... against the registered {registered[:12]}...): staff "
            "sessions and CSRF tokens signed here would fail on every other host. Give this host "
            "the same environment file as the others; to rotate the key, follow docs/deploy.md, "
            "'One key and one secret everywhere'.",
            id="trustcal.E007",
        )
    ]


@checks.register(TAG)
def production_checks(app_configs: Sequence[AppConfig] | None = None, **kwargs: object) -> list[CheckMessage]:
    """Host-local state refused under production settings (module docstring)."""
    if not settings.TRUSTCAL_PRODUCTION:
        return []
    secret = _secret_key()
    return [
        *secret,
        *(_secret_key_shared() if not secret else []),
        *_checkpoint_key(),
        *_export_storage(),
        *_beat_schedule(),
        *_host_local_services(),
    ]


HARFBUZZ_SUBSET = "harfbuzz-subset"


@checks.register(TAG)
def report_font_checks(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    """trustcal.W003: PDF reports subset their fonts with HarfBuzz-Subset (Debian's
    libharfbuzz-subset0); without it WeasyPrint falls back to fontTools, slower and logging a
    warning on every render (docs/reference/reports.md, "The PDF")."""
    import ctypes.util

    if ctypes.util.find_library(HARFBUZZ_SUBSET):
        return []
    return [
        Warning(
            "HarfBuzz-Subset (libharfbuzz-subset0) is not installed: PDF reports still render, but "
            "their fonts are subset by fontTools, slower and with a warning logged on every render. "
            "Install it: sudo apt-get install -y libharfbuzz-subset0 (Debian and Ubuntu).",
            id="trustcal.W003",
        )
    ]


def startup_check() -> None:
    """Run the `trustcal` checks as a process starts (web and Celery, which Django's own
    commands do not check): an error stops the start with its reason
    (django.core.management.base.SystemCheckError), warnings are printed."""
    from django.core.management.base import BaseCommand

    BaseCommand().check(tags=[TAG], display_num_errors=False)
