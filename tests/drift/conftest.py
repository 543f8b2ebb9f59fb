# Real loopback receivers for the drift events, and in-process dispatch on the test's connection.
from tests.webhooks.conftest import _no_kept_connections, _single_thread_dispatch, insecure, receiver  # noqa: F401
