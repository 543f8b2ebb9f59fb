"""The embedded broker's prune of processed message files (config.tasks.broker_prune_processed)
removes what was taken long ago, never a message being taken now however long it waited."""

import os
import time

from config.tasks import broker_prune_processed

HOUR = 3600


def _folders(tmp_path, settings):
    queue, processed = tmp_path / "queue", tmp_path / "processed"
    queue.mkdir()
    processed.mkdir()
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(queue),
        "processed_folder": str(processed),
    }
    return queue, processed


def test_a_message_that_waited_over_the_age_is_not_pruned_as_a_worker_takes_it(tmp_path, settings):
    queue, processed = _folders(tmp_path, settings)
    waited = queue / "1_a.celery.msg"
    waited.write_text("{}")
    written = time.time() - 2 * HOUR
    os.utime(waited, (written, written))  # sent two hours ago, no worker running since
    os.rename(waited, processed / waited.name)  # what a consumer does first, then it reads the file
    assert broker_prune_processed(max_age_seconds=HOUR) == 0
    assert (processed / waited.name).read_text() == "{}"


def test_files_taken_longer_ago_than_the_age_are_pruned(tmp_path, settings):
    _, processed = _folders(tmp_path, settings)
    (processed / "1_a.celery.msg").write_text("{}")
    time.sleep(0.05)
    assert broker_prune_processed(max_age_seconds=0) == 1
    assert not list(processed.iterdir())
