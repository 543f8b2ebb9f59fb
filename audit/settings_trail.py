"""The settings the figures rest on, in the chain (docs/reference/decisions.md, "What the hash
covers"): a change of a model's favourable values (docs/reference/bias.md, Favourable values) or
of the category thresholds (docs/reference/calibration.md, Settings) appends one
`settings_changed` entry with the new values and the previous ones, and who changed them where
someone did (a staff user; the thresholds change with the deployment's settings).

The entry is format 2 with no personal part: `setting` (`favourable_values` or
`calibration_thresholds`), `model_id` (the model whose favourable values changed; null for the
thresholds), `values`, `previous` and `staff_user`."""

import datetime as dt
import json

from django.db import transaction
from django.utils import timezone

from audit.apply import entries_append
from audit.models import AuditEntry
from audit.own_entries import chain_lock, own_entry
from config.jsondoc import JSONValue

ENTRY_TYPE = AuditEntry.Type.SETTINGS_CHANGED
FAVOURABLE_VALUES = "favourable_values"
THRESHOLDS = "calibration_thresholds"


# a setting's values, JSON of the setting's shape
def settings_entry(
    customer_id: str,
    *,
    setting: str,
    values: JSONValue,
    previous: JSONValue,
    model_id: str | None = None,
    staff_user: str | None = None,
    at: dt.datetime | None = None,
) -> AuditEntry:
    """A sealed, unsaved `settings_changed` entry."""
    return own_entry(
        customer_id=customer_id,
        type=ENTRY_TYPE,
        ref=setting,
        at=at or timezone.now(),
        fields={
            "setting": setting,
            "model_id": model_id,
            "values": values,
            "previous": previous,
            "staff_user": staff_user,
        },
    )


# a setting's values, JSON of the setting's shape
def settings_changed_append(customer_id: str, **fields: JSONValue) -> AuditEntry:
    """Append one settings_entry (the caller's transaction, or its own)."""
    entry = settings_entry(customer_id, **fields)
    with transaction.atomic():
        entries_append(customer_id, [entry], decisions=0)
    return entry


def _last_recorded(customer_id: str) -> dict[str, float] | None:
    """The thresholds the customer's last `settings_changed` entry of them recorded, or None."""
    canonical = (
        AuditEntry.objects.filter(customer_id=customer_id, decision_ref=THRESHOLDS, type=ENTRY_TYPE)
        .order_by("-sequence")
        .values_list("canonical", flat=True)
        .first()
    )
    if canonical is None:
        return None
    values = json.loads(canonical).get("values")
    return values if isinstance(values, dict) else None


# The thresholds each process knows to be recorded in a customer's chain (by customer): a
# request then costs no statement unless the deployment's settings changed.
_known: dict[str, str] = {}


def thresholds_recorded(customer_id: str, current: dict[str, float], defaults: dict[str, float]) -> bool:
    """Make the customer's chain hold the thresholds in force (`current`): when they differ from
    the last ones it recorded (from `defaults`, the documented ones, when it recorded none),
    append a `settings_changed` entry with both. Under the chain head's lock, so two processes
    that see the same change append it once. True when an entry was appended."""
    text = json.dumps(current, sort_keys=True)
    if _known.get(customer_id) == text:
        return False
    with transaction.atomic():
        previous = _last_recorded(customer_id)
        if (previous if previous is not None else defaults) == current:
            _known[customer_id] = text
            return False
        chain_lock(customer_id)
        previous = _last_recorded(customer_id)
        baseline = previous if previous is not None else defaults
        appended = baseline != current
        if appended:
            entries_append(
                customer_id,
                [settings_entry(customer_id, setting=THRESHOLDS, values=current, previous=baseline)],
                decisions=0,
            )
    _known[customer_id] = text
    return appended


__all__ = [
    "FAVOURABLE_VALUES",
    "THRESHOLDS",
    "settings_changed_append",
    "settings_entry",
    "thresholds_recorded",
]
