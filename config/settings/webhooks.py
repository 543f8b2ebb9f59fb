"""The webhook settings (docs/reference/webhooks.md), read from the environment like the rest of
config/settings/base.py, which imports them; webhooks/conf.py reads them at call time."""

import environ

env = environ.Env()

# http and loopback webhook targets (development, tests); named networks (addresses or CIDR
# blocks) webhooks may reach, never link-local (docs/reference/webhooks.md, "URL safety").
WEBHOOK_ALLOW_INSECURE_URLS = env.bool("WEBHOOK_ALLOW_INSECURE_URLS", default=False)
WEBHOOK_ALLOWED_NETWORKS = env.list("WEBHOOK_ALLOWED_NETWORKS", default=[])
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=30.0)
# Noisy-neighbour limits (README, webhooks): webhooks per customer, concurrent requests per
# destination host, test sends per webhook per minute.
WEBHOOK_MAX_PER_CUSTOMER = env.int("WEBHOOK_MAX_PER_CUSTOMER", default=25)
WEBHOOK_MAX_CONNECTIONS_PER_HOST = env.int("WEBHOOK_MAX_CONNECTIONS_PER_HOST", default=8)
WEBHOOK_TEST_PER_MINUTE = env.int("WEBHOOK_TEST_PER_MINUTE", default=10)
WEBHOOK_TEST_WAIT_SECONDS = env.float("WEBHOOK_TEST_WAIT_SECONDS", default=3.0)
WEBHOOK_TEST_THREADS = env.int("WEBHOOK_TEST_THREADS", default=4)
# The dispatcher (docs/reference/webhooks.md, "Dispatcher settings"). The lease defaults to
# the timeout + 30 s when unset.
WEBHOOK_LEASE_SECONDS = env.float("WEBHOOK_LEASE_SECONDS", default=None)
WEBHOOK_DISPATCH_BATCH = env.int("WEBHOOK_DISPATCH_BATCH", default=100)
WEBHOOK_DISPATCH_THREADS = env.int("WEBHOOK_DISPATCH_THREADS", default=8)
WEBHOOK_DISPATCH_PER_WEBHOOK = env.int("WEBHOOK_DISPATCH_PER_WEBHOOK", default=50)
WEBHOOK_DISPATCH_PER_CUSTOMER = env.int("WEBHOOK_DISPATCH_PER_CUSTOMER", default=4)
WEBHOOK_DISPATCH_SLICE_SECONDS = env.float("WEBHOOK_DISPATCH_SLICE_SECONDS", default=2.0)
WEBHOOK_OUTCOME_BATCH = env.int("WEBHOOK_OUTCOME_BATCH", default=50)
WEBHOOK_OUTCOME_FLUSH_SECONDS = env.float("WEBHOOK_OUTCOME_FLUSH_SECONDS", default=0.1)
WEBHOOK_OUTCOME_WRITERS = env.int("WEBHOOK_OUTCOME_WRITERS", default=2)
WEBHOOK_BACKOFF_BASE_SECONDS = env.float("WEBHOOK_BACKOFF_BASE_SECONDS", default=5.0)
WEBHOOK_BACKOFF_MAX_SECONDS = env.float("WEBHOOK_BACKOFF_MAX_SECONDS", default=300.0)
WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS = env.float("WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS", default=60.0)
WEBHOOK_KEEPALIVE_SECONDS = env.float("WEBHOOK_KEEPALIVE_SECONDS", default=2.0)
