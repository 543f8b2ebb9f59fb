import pytest

from tests.webhooks.receiver import Receiver, start


@pytest.fixture(autouse=True)
def _single_thread_dispatch(settings):
    """In-process dispatch runs on the test's own connection (its transaction), so no threads."""
    settings.WEBHOOK_DISPATCH_THREADS = 1


@pytest.fixture
def insecure(settings):
    """Loopback receivers are only reachable with WEBHOOK_ALLOW_INSECURE_URLS (C10)."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    return settings


@pytest.fixture
def receiver():
    rec = Receiver()
    server, _ = start(rec)
    try:
        yield rec
    finally:
        rec.release.set()
        server.shutdown()
        server.server_close()
