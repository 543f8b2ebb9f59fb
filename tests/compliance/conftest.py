from tests.webhooks.conftest import insecure, receiver  # noqa: F401  (real loopback receivers)
