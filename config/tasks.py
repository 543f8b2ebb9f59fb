import time
from pathlib import Path

from celery import shared_task
from django.conf import settings


@shared_task(name="config.tasks.broker_prune_processed", ignore_result=True)
def broker_prune_processed(max_age_seconds: int = 3600) -> int:
    """The embedded filesystem broker keeps processed message files; prune old ones."""
    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("processed_folder")
    if not folder:
        return 0
    cutoff = time.time() - max_age_seconds
    removed = 0
    for path in Path(folder).glob("*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
