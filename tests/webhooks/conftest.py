import pytest

from tests.webhooks.receiver import HOLD, Receiver, start
from webhooks import connections, pools


@pytest.fixture(autouse=True)
def _single_thread_dispatch(settings):
    """In-process dispatch runs on the test's own connection (its transaction), so no threads,
    unless the test asks for `threaded`."""
    settings.WEBHOOK_DISPATCH_THREADS = 1


@pytest.fixture
def threaded(transactional_db, settings, _single_thread_dispatch):
    """The production configuration: the default number of sender threads, each holder claiming
    ahead and writing outcomes on writer threads (their own database connections, so the test
    data must be committed: transactional_db). Pools are closed afterwards."""
    from config.settings import base

    settings.WEBHOOK_DISPATCH_THREADS = base.WEBHOOK_DISPATCH_THREADS
    settings.WEBHOOK_OUTCOME_WRITERS = base.WEBHOOK_OUTCOME_WRITERS
    assert settings.WEBHOOK_DISPATCH_THREADS > 1
    yield settings
    pools.send_pool_close()


@pytest.fixture(autouse=True)
def _no_kept_connections():
    """Connections kept alive by one test are closed before the next one."""
    yield
    connections.pool().sweep(everything=True)


@pytest.fixture
def insecure(settings):
    """Loopback receivers are only reachable with WEBHOOK_ALLOW_INSECURE_URLS
    (docs/reference/webhooks.md, "URL safety")."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    return settings


def _serving(rec: Receiver):
    server, _ = start(rec)
    try:
        yield rec
    finally:
        rec.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver():
    yield from _serving(Receiver())


@pytest.fixture
def hanging():
    """A receiver that accepts every request and never answers (until the test ends)."""
    yield from _serving(Receiver(behaviour=lambda req: HOLD))


@pytest.fixture
def eager_tasks():
    """Celery tasks run in the calling thread (test sends without a worker process)."""
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = False
