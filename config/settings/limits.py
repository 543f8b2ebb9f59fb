"""Bounds on the work one request may cause or hold (docs/reference/limits.md,
docs/reference/erasure.md), read from the environment like the rest of
config/settings/base.py, which imports them."""

import environ

env = environ.Env()

# An erasure reaching more entries than this runs on a worker (`running`), in parts of
# ERASURE_PART_ENTRIES entries, each its own transaction (docs/reference/erasure.md).
ERASURE_INLINE_ENTRIES = env.int("TRUSTCAL_ERASURE_INLINE_ENTRIES", default=1000)
ERASURE_PART_ENTRIES = env.int("TRUSTCAL_ERASURE_PART_ENTRIES", default=1000)

# Under gunicorn, a request line and its headers must arrive within this many seconds of the
# first byte (else 408 and the connection closes), and before authentication one client
# address may hold at most this many web threads waiting on it (at most a quarter of a
# process's threads): docs/reference/limits.md, "Slow request lines and headers", "Web threads".
HEADER_READ_SECONDS = env.float("TRUSTCAL_HEADER_READ_SECONDS", default=10.0)
ADDRESS_THREADS = env.int("TRUSTCAL_ADDRESS_THREADS", default=4)
# POST /audit-trail/checkpoints signs a new checkpoint at most this often per customer (each one
# is stored and sent to every subscribed webhook); sooner, 429 with Retry-After
# (docs/reference/checkpoints.md, "When checkpoints are made").
CHECKPOINT_MIN_SECONDS = env.float("TRUSTCAL_CHECKPOINT_MIN_SECONDS", default=60.0)
