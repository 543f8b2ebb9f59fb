"""Writes for API keys: create, rotate, revoke, the bootstrap key, and batched usage."""

import datetime as dt
import hashlib
import itertools
import logging
import re
import secrets
import string
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from config.db.bulk import additive_upsert
from config.jsonwalk import invalid
from config.ratelimit import stamp_renew
from config.scopes import ALL_SCOPES
from keys.exceptions import ApiKeyNotActive
from keys.models import CUSTOMER_ID_HELP, AdminAuditLog, ApiKey, ApiKeyUsageDay, Customer, customer_id_valid
from keys.throttle import known_digests

logger = logging.getLogger("trustcal.keys")

_BASE62 = string.ascii_letters + string.digits
KEY_PREFIX = "tcal_"
# The stamp every change to a key renews once it commits: a process's cached keys are used only
# while the stamp is the one read before their lookup (keys/keycache.py).
KEYS_STAMP = "keys"


def _keys_changed() -> None:
    """Renew the keys' stamp now (this process and any transaction around the change see it at
    once) and again once the change commits (a process that read the key in between, before the
    commit, reads it again)."""
    stamp_renew(KEYS_STAMP)
    transaction.on_commit(lambda: stamp_renew(KEYS_STAMP), robust=True)


def key_digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def key_value_generate() -> str:
    return KEY_PREFIX + "".join(secrets.choice(_BASE62) for _ in range(40))


@dataclass(frozen=True)
class IssuedKey:
    """A key together with its value; the value exists only here, never in the database."""

    key: ApiKey
    value: str


@dataclass(frozen=True)
class AdminActor:
    key_id: str | None
    user: str | None


def scopes_text(scopes: Iterable[str]) -> str:
    """A key's `scopes` column: the known scopes it holds, space-separated in their order."""
    held = set(scopes)
    unknown = held - set(ALL_SCOPES)
    if unknown or not held:
        raise invalid("scopes", f"must be a non-empty subset of: {', '.join(ALL_SCOPES)}")
    return " ".join(scope for scope in ALL_SCOPES if scope in held)


def _store_key(
    *,
    customer: Customer,
    tier: str,
    description: str,
    is_admin: bool,
    scopes: Iterable[str] = ALL_SCOPES,
    value: str | None = None,
) -> IssuedKey:
    value = value or key_value_generate()
    key = ApiKey.objects.create(
        customer=customer,
        digest=key_digest(value),
        prefix=value[:9],
        tier=tier,
        description=description,
        is_admin=is_admin,
        scopes=scopes_text(scopes),
    )
    known_digests.add(key.digest)
    _keys_changed()
    return IssuedKey(key=key, value=value)


@transaction.atomic
def api_key_create(
    *,
    customer_id: str,
    tier: str,
    description: str = "",
    is_admin: bool = False,
    scopes: Iterable[str] = ALL_SCOPES,
    actor: AdminActor | None = None,
) -> IssuedKey:
    """A new key; `scopes`: a non-empty subset of ingest, read and manage (docs/reference/
    access.md, Key scopes)."""
    if not customer_id_valid(customer_id):
        raise invalid("customer_id", f"must be {CUSTOMER_ID_HELP}")
    text = scopes_text(scopes)
    customer, _ = Customer.objects.get_or_create(id=customer_id)
    issued = _store_key(
        customer=customer, tier=tier, description=description, is_admin=is_admin, scopes=text.split()
    )
    AdminAuditLog.objects.create(
        action=AdminAuditLog.Action.CREATED,
        key_id=issued.key.id,
        customer_id=customer.id,
        tier=tier,
        admin_key_id=actor.key_id if actor else None,
        admin_user=actor.user if actor else None,
    )
    return issued


@transaction.atomic
def api_key_rotate(*, key: ApiKey, actor: AdminActor | None = None) -> IssuedKey:
    """A new key with the same customer, tier, description and scopes; the old one keeps working
    for the grace period (24 h), then answers 401 (docs/reference/access.md, Rotation grace)."""
    key = ApiKey.objects.select_for_update().get(pk=key.pk)
    if key.effective_status() != ApiKey.Status.ACTIVE:
        raise ApiKeyNotActive(f"Key {key.id} is {key.effective_status()}; only an active key can be rotated.")
    issued = _store_key(
        customer=key.customer,
        tier=key.tier,
        description=key.description,
        is_admin=key.is_admin,
        scopes=key.scope_list,
    )
    key.status = ApiKey.Status.ROTATED
    key.expires_at = timezone.now() + dt.timedelta(hours=settings.KEY_ROTATION_GRACE_HOURS)
    key.replaced_by = issued.key
    key.save(update_fields=["status", "expires_at", "replaced_by"])  # _store_key renews the stamp
    AdminAuditLog.objects.create(
        action=AdminAuditLog.Action.ROTATED,
        key_id=key.id,
        new_key_id=issued.key.id,
        customer_id=key.customer_id,
        tier=key.tier,
        admin_key_id=actor.key_id if actor else None,
        admin_user=actor.user if actor else None,
    )
    return issued


@transaction.atomic
def api_key_revoke(*, key: ApiKey, reason: str = "", actor: AdminActor | None = None) -> ApiKey:
    """Stops the key at once, whether active or in its rotation grace
    (docs/reference/access.md, Key administration)."""
    key = ApiKey.objects.select_for_update().get(pk=key.pk)
    if not key.is_usable():
        raise ApiKeyNotActive(f"Key {key.id} is already {key.effective_status()}.")
    key.status = ApiKey.Status.REVOKED
    key.revoked_at = timezone.now()
    key.revoke_reason = reason
    key.save(update_fields=["status", "revoked_at", "revoke_reason"])
    known_digests.discard(key.digest)
    _keys_changed()
    AdminAuditLog.objects.create(
        action=AdminAuditLog.Action.REVOKED,
        key_id=key.id,
        customer_id=key.customer_id,
        tier=key.tier,
        admin_key_id=actor.key_id if actor else None,
        admin_user=actor.user if actor else None,
        reason=reason or None,
    )
    return key


KEY_PATTERN = re.compile(r"^tcal_[A-Za-z0-9]{40}$")


# A bootstrap key's 40 characters must look drawn at random (docs/reference/limits.md, "The
# bootstrap admin key"): at least 20 different characters (a random key has about 30; fewer
# than 20 happens about once in 100,000 draws) and at most 8 steps to the same or the next
# character (`aaaa`, `abcd`; a random key has about 1).
BOOTSTRAP_MIN_DISTINCT = 20
BOOTSTRAP_MAX_RUN_STEPS = 8


def key_looks_random(value: str) -> bool:
    body = value.removeprefix(KEY_PREFIX)
    steps = sum(1 for a, b in itertools.pairwise(body) if ord(b) - ord(a) in (0, 1, -1))
    return len(set(body)) >= BOOTSTRAP_MIN_DISTINCT and steps <= BOOTSTRAP_MAX_RUN_STEPS


@transaction.atomic
def bootstrap_admin_key_ensure(*, value: str) -> ApiKey | None:
    """Make sure an active admin key with exactly this value exists (TRUSTCAL_BOOTSTRAP_ADMIN_KEY).

    The value must look like a generated key (`tcal_` + 40 base62 that look random:
    key_looks_random), so a guessable word or `tcal_aaaa...` is never an admin key. A key with this value that was revoked, rotated or demoted is never
    brought back: that would undo an administrator's decision silently at the next start.
    Both cases log an error and change nothing (returns None)."""
    if not KEY_PATTERN.fullmatch(value) or not key_looks_random(value):
        logger.error(
            "TRUSTCAL_BOOTSTRAP_ADMIN_KEY is ignored: it must be tcal_ followed by 40 letters or digits "
            "drawn at random (at least %s different characters, no long runs such as aaaa or abcd); "
            "generate one with `manage.py create_api_key --admin` or a password generator.",
            BOOTSTRAP_MIN_DISTINCT,
        )
        return None
    existing = ApiKey.objects.filter(digest=key_digest(value)).first()
    if existing is not None:
        if existing.status != ApiKey.Status.ACTIVE or not existing.is_admin:
            logger.error(
                "TRUSTCAL_BOOTSTRAP_ADMIN_KEY names key %s, which is %s%s; it is not restored. "
                "Unset the variable or set a new value.",
                existing.id,
                existing.effective_status(),
                "" if existing.is_admin else " and not an admin key",
            )
            return None
        return existing
    customer, _ = Customer.objects.get_or_create(id="admin")
    issued = _store_key(
        customer=customer, tier="enterprise", description="bootstrap admin key", is_admin=True, value=value
    )
    AdminAuditLog.objects.create(
        action=AdminAuditLog.Action.CREATED,
        key_id=issued.key.id,
        customer_id=customer.id,
        tier="enterprise",
        admin_user="bootstrap",
    )
    return issued.key


# --- usage: counted in memory, written every KEY_USAGE_FLUSH_SECONDS by one thread per process ----

_usage_lock = threading.Lock()
_usage_counts: Counter[tuple[str, dt.date]] = Counter()
_usage_last_used: dict[str, dt.datetime] = {}
_usage_flusher: threading.Thread | None = None


def key_usage_record(*, key_id: str, at: dt.datetime | None = None) -> None:
    """Called on every authenticated request; costs no I/O. A background thread of this process
    writes what was counted, so `last_used` lags by at most one flush interval even when no
    further request comes."""
    global _usage_flusher
    at = at or timezone.now()
    with _usage_lock:
        _usage_counts[(key_id, at.date())] += 1
        _usage_last_used[key_id] = at
        # Started on first use rather than at import: a forked web worker has no thread of its
        # parent's (is_alive() is false there), so each process gets its own.
        if _usage_flusher is None or not _usage_flusher.is_alive():
            _usage_flusher = threading.Thread(
                target=_usage_flush_forever, name="key-usage-flush", daemon=True
            )
            _usage_flusher.start()


def _usage_flush_forever() -> None:
    last_flush = time.monotonic()
    while True:
        # Short naps, so that a changed interval takes effect within a second.
        time.sleep(min(settings.KEY_USAGE_FLUSH_SECONDS, 1.0))
        if time.monotonic() - last_flush < settings.KEY_USAGE_FLUSH_SECONDS:
            continue
        last_flush = time.monotonic()
        try:
            key_usage_flush()
        finally:
            connection.close()  # this thread's own connection; a new one next time


def key_usage_flush() -> None:
    """Write buffered usage: one additive upsert per (key, day) and a monotonic last_used.
    Rows are written in sorted order, so processes flushing at once never deadlock."""
    with _usage_lock:
        counts = dict(_usage_counts)
        last_used = dict(_usage_last_used)
        _usage_counts.clear()
        _usage_last_used.clear()
    if counts:
        key_usage_write(counts=counts, last_used=last_used)


def key_usage_write(*, counts: dict[tuple[str, dt.date], int], last_used: dict[str, dt.datetime]) -> None:
    try:
        existing = set(
            ApiKey.objects.filter(pk__in={key_id for key_id, _ in counts}).values_list("pk", flat=True)
        )
        rows = [(key_id, day, count) for (key_id, day), count in counts.items() if key_id in existing]
        if not rows:
            return  # keys revoked and deleted since: nothing to write, no write lock taken
        with transaction.atomic():
            additive_upsert(ApiKeyUsageDay, key=("key_id", "day"), values=("count",), rows=rows)
            for key_id in sorted(last_used.keys() & existing):
                at = last_used[key_id]
                ApiKey.objects.filter(pk=key_id).exclude(last_used__gte=at).update(last_used=at)
    except DatabaseError:
        # Usage figures may lag (docs/reference/access.md); the counts are kept for the next flush.
        logger.warning("key usage flush failed; will retry with the next flush", exc_info=True)
        with _usage_lock:
            _usage_counts.update(counts)
            for key_id, at in last_used.items():
                if _usage_last_used.get(key_id) is None or _usage_last_used[key_id] < at:
                    _usage_last_used[key_id] = at


def key_usage_discard() -> None:
    """Forget buffered usage (tests)."""
    with _usage_lock:
        _usage_counts.clear()
        _usage_last_used.clear()
