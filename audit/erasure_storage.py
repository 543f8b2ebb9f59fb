"""After an erasure: the erased values out of the database's files where the database lets us
(docs/reference/erasure.md, "What the database files and backups keep").

SQLite writes a changed page to its write-ahead log first, and keeps the old page there until
a checkpoint copies the log back; the erasure's own connection writes with `secure_delete` on
(freed space is overwritten with zeros), and after it commits the log is checkpointed with
TRUNCATE, so the old pages leave the files. PostgreSQL keeps an updated row's old version as a
dead row until VACUUM: the tables an erasure touches are vacuumed once it commits, on a worker
(a vacuum scans every index of a table)."""

import contextlib
import logging

from django.apps import apps
from django.db import DatabaseError, connection, transaction

logger = logging.getLogger("trustcal.erasure")

# The tables an erasure changes (by model label: audit imports none of the other apps).
TOUCHED = (
    "audit.AuditEntry",
    "audit.Decision",
    "audit.Erasure",
    "webhooks.Event",
    "bias.SubgroupAttachment",
    "calibration.UserDailyAggregate",
    "calibration.RiskUserState",
    "oversight.RubberStampState",
)


def secure_delete_on() -> None:
    """SQLite: overwrite what this connection frees with zeros (the erasure's transaction)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete = ON")


def erasure_storage_clean() -> None:
    """Called after an erasure commits: SQLite's log checkpointed (TRUNCATE) now; PostgreSQL's
    touched tables vacuumed on a worker. Inside a transaction (a test's) it waits for its end."""
    if connection.in_atomic_block:
        transaction.on_commit(erasure_storage_clean)
        return
    if connection.vendor == "sqlite":
        wal_checkpoint()
    elif connection.vendor == "postgresql":
        from audit.tasks import erasure_vacuum

        with contextlib.suppress(Exception):  # the broker down: the next erasure's vacuum covers it
            erasure_vacuum.delay()


def wal_checkpoint() -> tuple[int, int, int]:
    """PRAGMA wal_checkpoint(TRUNCATE): (busy, log pages, checkpointed pages). Busy when a reader
    still holds an older snapshot; the next erasure's checkpoint (or SQLite's own) then does it."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        busy, pages, done = cursor.fetchone()
    if busy:
        logger.warning("erasure: the SQLite log could not be checkpointed now (a reader holds it)")
    return busy, pages, done


def tables_vacuum() -> list[str]:
    """VACUUM the tables an erasure touches (PostgreSQL, outside a transaction)."""
    tables = []
    for label in TOUCHED:
        with contextlib.suppress(LookupError):
            tables.append(apps.get_model(label)._meta.db_table)
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return []
    with connection.cursor() as cursor:
        for table in tables:
            try:
                cursor.execute(f"VACUUM {connection.ops.quote_name(table)}")
            except DatabaseError:
                logger.exception("erasure: VACUUM of %s failed", table)
    return tables
