import time
from pathlib import Path

from celery import shared_task
from django.conf import settings


@shared_task(name="config.tasks.broker_prune_processed", ignore_result=True)
def broker_prune_processed(max_age_seconds: int = 3600) -> int:
    """The embedded filesystem broker keeps processed message files; prune old ones.

    Old by the time a file came into the processed folder (its ctime, which the consumer's
    rename sets), not by when it was written (its mtime, which the rename keeps): a message that
    waited in the queue for longer than `max_age_seconds` was otherwise removed between the
    consumer's move and its read, and lost."""
    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("processed_folder")
    if not folder:
        return 0
    cutoff = time.time() - max_age_seconds
    removed = 0
    for path in Path(folder).glob("*"):
        try:
            stat = path.stat()
            if max(stat.st_mtime, stat.st_ctime) < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
