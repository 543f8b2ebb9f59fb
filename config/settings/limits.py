"""Bounds on the work one request may cause or hold (docs/reference/limits.md,
docs/reference/erasure.md), read from the environment like the rest of
config/settings/base.py, which imports them."""

import environ

env = environ.Env()

# An erasure reaching more entries than this runs on a worker (`running`), in parts of
# ERASURE_PART_ENTRIES entries, each its own transaction (docs/reference/erasure.md).
ERASURE_INLINE_ENTRIES = env.int("TRUSTCAL_ERASURE_INLINE_ENTRIES", default=1000)
ERASURE_PART_ENTRIES = env.int("TRUSTCAL_ERASURE_PART_ENTRIES", default=1000)
