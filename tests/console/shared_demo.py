"""One demo organisation for all the tests of a browser module that read it, in place of a demo
seeded (15-20 s) and emptied again (5-20 s) for every test. A module defines `demo_module`:

    @pytest.fixture(scope="module")
    def demo_module(django_db_setup, django_db_blocker):
        with demo_shared(django_db_blocker, prepare=...) as shared:
            yield shared

and its tests take `demo_site` (its `url`, its API `key`); a test that changes the demo also takes
`demo_changed`. The module carries an `xdist_group` of its own so that its tests share one worker."""

import contextlib
import dataclasses
from collections.abc import Callable, Iterator

import pytest
from django.core.management import call_command
from django.test.utils import modify_settings
from pytest_django.live_server_helper import LiveServer

from tests.console.test_browser import demo_seed


@dataclasses.dataclass
class SharedDemo:
    """The module's demo, committed, and the address of the server thread that serves it. A test
    that changes it sets `spent`; the next test gets it seeded anew."""

    url: str
    prepare: Callable[[], None]
    key: str = ""
    spent: bool = True
    seeded: bool = False

    def ready(self) -> None:
        if not self.spent:
            return
        if self.seeded:
            call_command("flush", interactive=False, verbosity=0)
        self.seeded = True
        self.key = demo_seed()
        self.prepare()
        self.spent = False


@contextlib.contextmanager
def demo_shared(django_db_blocker, prepare: Callable[[], None]) -> Iterator[SharedDemo]:
    """The module's demo (seeded when the first test asks, then `prepare`d) and its server, and the
    database emptied at the module's end as transactional_db empties it after each test. The server
    is pytest-django's own: SQLite's test database is a file here, an in-memory one it would share
    with the server thread as its live_server does."""
    server = LiveServer("localhost")
    shared = SharedDemo(url=server.url, prepare=prepare)
    try:
        with modify_settings(ALLOWED_HOSTS={"append": "localhost"}):
            yield shared
    finally:
        server.stop()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def transactional_db(django_db_setup, django_db_blocker) -> Iterator[None]:
    """pytest-django's transactional_db, without emptying the database after the test: the test
    writes and reads committed rows as the server thread does, and `demo_shared` empties the
    database at the module's end. Named so, pytest-django creates the test database for a session
    that runs only these tests. (Its `db` would hold each test in a transaction the server thread
    cannot see through, and SQLite's IMMEDIATE transactions would lock the server out.)"""
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def demo_site(demo_module, transactional_db) -> SharedDemo:
    """The module's demo, seeded anew when the test before changed it."""
    demo_module.ready()
    return demo_module


@pytest.fixture
def demo_changed(demo_site) -> Iterator[None]:
    """For a test that changes the shared demo: the next test gets it seeded anew."""
    yield
    demo_site.spent = True
