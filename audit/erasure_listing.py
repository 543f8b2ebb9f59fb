"""The erasures a report lists (docs/reference/erasure.md, In reports and exports): those completed in
its period, and those completed after it that erased personal fields of its entries (a report
generated later for an earlier period says which of its entries were erased, and when).
Never an erased value: the kind of person an erasure named, not who."""

import datetime as dt

from django.db.models import Q

from audit.models import AuditEntry
from audit.models_erasure import Erasure
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from keys.models import Customer

ERASURE_ITEMS_MAX = 200  # erasures listed one by one in a report; the counts cover all of them


def _touches(erasure: Erasure, *, since: dt.datetime, until: dt.datetime) -> bool:
    """Whether the erasure erased an entry of a decision timestamped in [since, until)."""
    ranges = [r for r in erasure.sequences or [] if isinstance(r, list | tuple) and len(r) == 2]
    if not ranges:
        return False
    within = Q()
    for first, last in ranges:
        within |= Q(sequence__gte=first, sequence__lte=last)
    return (
        AuditEntry.objects.filter(customer_id=erasure.customer_id, timestamp__gte=since, timestamp__lt=until)
        .filter(within)
        .exists()
    )


def _listed(customer: Customer, *, since: dt.datetime, until: dt.datetime) -> list[Erasure]:
    completed = Erasure.objects.filter(customer=customer, status=Erasure.Status.COMPLETED)
    columns = (
        "id",
        "customer_id",
        "completed_at",
        "legal_basis",
        "target",
        "entries",
        "entry_sequence",
        "sequences",
    )
    during = list(completed.filter(completed_at__gte=since, completed_at__lt=until).only(*columns))
    later = [
        erasure
        for erasure in completed.filter(completed_at__gte=until).only(*columns)
        if _touches(erasure, since=since, until=until)
    ]
    return sorted([*during, *later], key=lambda e: (e.completed_at, e.pk))


# the erasures' figures by name, rendered as JSON
def erasures_of_period(customer: Customer, *, since: dt.datetime, until: dt.datetime) -> JSONObject:
    """How many erasures, how many entries they erased, the count per legal basis, how many were
    completed after the period, and each one (`after_period` true for those)."""
    by_basis: dict[str, int] = {}
    entries = 0
    after = 0
    items: list[dict[str, object]] = []
    for erasure in _listed(customer, since=since, until=until):
        by_basis[erasure.legal_basis] = by_basis.get(erasure.legal_basis, 0) + 1
        entries += erasure.entries
        late = erasure.completed_at is not None and erasure.completed_at >= until
        after += late
        if len(items) < ERASURE_ITEMS_MAX:
            items.append(
                {
                    "erasure_id": erasure.pk,
                    "completed_at": isoformat(erasure.completed_at),
                    "after_period": late,
                    "legal_basis": erasure.legal_basis,
                    "target": erasure.target,
                    "entries": erasure.entries,
                    "entry_sequence": erasure.entry_sequence,
                }
            )
    return {
        "count": sum(by_basis.values()),
        "entries": entries,
        "completed_after_period": after,
        "by_legal_basis": dict(sorted(by_basis.items())),
        "items": items,
    }
