"""Key scopes (docs/reference/access.md, "Key scopes"): what a customer's key may do.

A key holds a non-empty subset of `ingest`, `read` and `manage`. How a view declares the scope
each of its handlers needs, and where it is checked: config/scope_check.py."""

from enum import StrEnum


class Scope(StrEnum):
    INGEST = "ingest"  # POST /log, /log/batch, /calibrate, /detect-bias, fairness signals
    READ = "read"  # every GET, POST /trust-score, exports and their downloads
    MANAGE = "manage"  # webhooks, erasures, the retention policy and legal hold, settings


ALL_SCOPES: tuple[str, ...] = tuple(scope.value for scope in Scope)
