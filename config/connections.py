"""The PostgreSQL connections a host opens, and whether the server allows them (docs/deploy.md,
"Database connections").

Each thread that touches the database holds a connection of its own for DATABASE_CONN_MAX_AGE:
- a web process: one per request thread (gunicorn's `--threads`);
- a Celery worker process (each of `--concurrency`): its task thread, the webhook dispatcher's
  senders (WEBHOOK_DISPATCH_THREADS), outcome writers (WEBHOOK_OUTCOME_WRITERS) and test
  senders (WEBHOOK_TEST_THREADS);
- beat: none.
A host whose own connections exceed what the server allows (`max_connections` less
`superuser_reserved_connections` less TRUSTCAL_DATABASE_CONNECTIONS_RESERVE) refuses to start
with the figures: it would be refused connections under load, and its worker tasks would fail
one by one. The check cannot see the other hosts; docs/deploy.md gives the deployment's sum."""

from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection


def web_process_connections(threads: int) -> int:
    return threads


def worker_process_connections() -> int:
    return (
        1
        + int(settings.WEBHOOK_DISPATCH_THREADS)
        + int(settings.WEBHOOK_OUTCOME_WRITERS)
        + int(settings.WEBHOOK_TEST_THREADS)
    )


@dataclass(frozen=True)
class ServerLimit:
    max_connections: int
    superuser_reserved: int
    reserve: int

    @property
    def allowed(self) -> int:
        return self.max_connections - self.superuser_reserved - self.reserve


def server_limit() -> ServerLimit | None:
    """The server's limit, or None (SQLite, or the database unreachable: other checks say so)."""
    if connection.vendor != "postgresql":
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int"
            )
            max_connections, superuser_reserved = cursor.fetchone()
    except DatabaseError:
        return None
    finally:
        connection.close()  # a process's first connection is its request thread's, not the check's
    return ServerLimit(max_connections, superuser_reserved, int(settings.DATABASE_CONNECTIONS_RESERVE))


def budget_problem(role: str, processes: int, per_process: int) -> str | None:
    """Why this host must not start (its connections exceed the server's), or None."""
    limit = server_limit()
    total = processes * per_process
    if limit is None or total <= limit.allowed:
        return None
    return (
        f"This {role} host would open up to {total} PostgreSQL connections ({processes} processes x "
        f"{per_process}), more than the server allows: max_connections {limit.max_connections} less "
        f"{limit.superuser_reserved} reserved for superusers less TRUSTCAL_DATABASE_CONNECTIONS_RESERVE "
        f"{limit.reserve} = {limit.allowed}. Run fewer processes or threads on this host, or raise "
        "max_connections (docs/deploy.md, 'Database connections')."
    )
