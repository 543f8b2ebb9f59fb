"""Where report files go, read from the environment like the rest of config/settings/base.py,
which calls storages() (docs/deploy.md, "The environment file").

Report files go through Django's storage API: a folder under the data folder by default (every
process of one host serves it); any django-storages backend (S3, GCS, Azure) at scale, e.g.
TRUSTCAL_EXPORT_STORAGE_BACKEND=storages.backends.s3.S3Storage with its own settings.
TRUSTCAL_EXPORT_STORAGE_OPTIONS is `key=value` pairs separated by commas
(`location=/mnt/trustcal-reports`), which every way of loading an environment file reads alike,
or a JSON object for options that are not strings."""

import json
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

_OPTIONS = "TRUSTCAL_EXPORT_STORAGE_OPTIONS"


def storage_options(text: str) -> dict[str, object]:  # a storage backend's own option values
    """TRUSTCAL_EXPORT_STORAGE_OPTIONS read: a JSON object, or `key=value,key=value`."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{_OPTIONS} is not valid JSON ({exc}). Write it as key=value pairs "
                "(location=/mnt/trustcal-reports), or quote the JSON as your loader needs "
                "(docs/deploy.md, 'The environment file')."
            ) from exc
        if not isinstance(value, dict):
            raise ImproperlyConfigured(f"{_OPTIONS} must be a JSON object or key=value pairs.")
        return value
    options: dict[str, object] = {}
    for pair in text.split(","):
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ImproperlyConfigured(
                f"{_OPTIONS}: {pair.strip()!r} is not key=value (e.g. location=/mnt/trustcal-reports)."
            )
        options[key.strip()] = value.strip()
    return options


def storages(data_dir: Path) -> dict[str, dict[str, object]]:
    given = env.str("TRUSTCAL_EXPORT_STORAGE_OPTIONS", default="")
    return {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        "exports": {
            "BACKEND": env.str(
                "TRUSTCAL_EXPORT_STORAGE_BACKEND", default="django.core.files.storage.FileSystemStorage"
            ),
            "OPTIONS": storage_options(given)
            if given.strip()
            else {
                "location": str(data_dir / "exports"),
                "directory_permissions_mode": 0o700,
                "file_permissions_mode": 0o600,
            },
        },
    }
