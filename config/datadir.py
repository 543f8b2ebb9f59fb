"""The data folder: the embedded database, broker messages, export files and static files.

They hold customers' data, so the folder is owner-only (0700) and so is every file made in it
later by SQLite, the broker or the exports (umask 077). Prepared once when Django starts
(`config.apps.CoreConfig.ready`), so that importing the settings has no side effect."""

import contextlib
import os
from pathlib import Path

from django.conf import settings


def data_dir_prepare() -> None:
    os.umask(0o077)
    data_dir = Path(settings.DATA_DIR)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        data_dir.chmod(0o700)
        for existing in data_dir.glob("trustcal.sqlite3*"):
            existing.chmod(0o600)
    broker_dir = getattr(settings, "BROKER_DIR", None)
    if broker_dir is not None:
        for sub in ("queue", "processed", "control"):
            (Path(broker_dir) / sub).mkdir(parents=True, exist_ok=True)
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
