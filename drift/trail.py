"""The drift entries of the audit trail and their events (docs/reference/drift.md, The entries):
each entry is also an event of the same name, stored in the same transaction. An entry's
canonical text holds its data in clear, less `entry_sequence`, `regulation`, `user_id` and
`note`, which its personal part commits to (the monitor's reviewer, the acknowledgement's note)."""

import datetime as dt
from dataclasses import dataclass, field

from audit.services import trail_entries_append, trail_entry
from config.jsondoc import JSONObject
from keys.models import Customer
from webhooks.services import events_emit

CONFIGURED = "drift_monitor.configured"
BASELINE_COMPLETED = "drift_monitor.baseline_completed"
CALIBRATED = "drift_monitor.calibrated"
RAISED = "drift_alarm.raised"
ACKNOWLEDGED = "drift_alarm.acknowledged"
CONCLUDED = "probe_sprt.concluded"
# Each is also an AuditEntry.Type member (audit/models.py), so the API schema names it.
TYPES = (CONFIGURED, BASELINE_COMPLETED, CALIBRATED, RAISED, ACKNOWLEDGED, CONCLUDED)


@dataclass
class Record:
    """One drift entry to append: its type, the monitor (or alarm) it is about, its data (the
    event's, less entry_sequence), and the personal part."""

    type: str
    ref: str
    data: JSONObject  # JSON values
    user_id: str | None = None
    note: str | None = None
    sequence: int | None = field(default=None)


def records_append(customer: Customer, records: list[Record], *, at: dt.datetime) -> None:
    """Append the records' entries in order, then store their events (data + entry_sequence);
    each record's `sequence` is set."""
    if not records:
        return
    entries = []
    for record in records:
        clear = {k: v for k, v in record.data.items() if k not in ("user_id", "note")}
        entries.append(
            trail_entry(
                customer_id=customer.pk,
                type=record.type,
                ref=record.ref,
                at=at,
                clear=clear,
                user_id=record.user_id,
                context=record.note,
            )
        )
    trail_entries_append(customer.pk, entries)
    events = []
    for record, entry in zip(records, entries, strict=True):
        record.sequence = entry.sequence
        events.append((record.type, {**record.data, "entry_sequence": entry.sequence}))
    events_emit(customer=customer, events=events)
