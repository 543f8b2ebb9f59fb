"""An erased reviewer's drift records (docs/reference/drift.md, Erasure): their `user`-scope
monitors and those monitors' alarms and points name the erasure's pseudonym, and the monitors
are disabled (new decisions under the old id would name the person again). The drift entries
that name them lose their personal part with the reviewer's other entries."""

from audit.registry import Erased
from audit.services import chain_lock
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from drift.services import followers_count


def drift_erase(erased: Erased) -> int:
    if erased.user_id is None or erased.pseudonym is None:
        return 0
    # The chain head before the monitors, as every writer of a monitor's state takes them.
    chain_lock(erased.customer_id)
    monitors = DriftMonitor.objects.filter(
        customer_id=erased.customer_id, scope="user", user_id=erased.user_id
    )
    ids = list(monitors.values_list("pk", flat=True))
    if not ids:
        return 0
    changed = DriftMonitor.objects.filter(pk__in=ids).update(
        user_id=erased.pseudonym, enabled=False, status=DriftMonitor.Status.PAUSED
    )
    # A default name is "<chart> <user_id>": the free-text name loses the id too.
    for monitor in DriftMonitor.objects.filter(pk__in=ids, name__contains=erased.user_id):
        monitor.name = monitor.name.replace(erased.user_id, erased.pseudonym)
        monitor.save(update_fields=["name"])
    for alarm in DriftAlarm.objects.filter(monitor_id__in=ids).order_by("pk"):
        snapshot = dict(alarm.monitor_snapshot)
        snapshot["user_id"] = erased.pseudonym
        snapshot["name"] = str(snapshot.get("name", "")).replace(erased.user_id, erased.pseudonym)
        alarm.user_id, alarm.monitor_snapshot = erased.pseudonym, snapshot
        alarm.save(update_fields=["user_id", "monitor_snapshot"])
        changed += 1
    DriftPoint.objects.filter(monitor_id__in=ids).update(user_id=erased.pseudonym)
    followers_count(erased.customer_id)
    return changed
