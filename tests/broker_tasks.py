"""A task for the embedded-broker stress test: appends its argument as one line to the file
named by TRUSTCAL_TEST_RECEIPTS (one small O_APPEND write, atomic on a local filesystem)."""

import os

from celery import shared_task


@shared_task(name="tests.broker_tasks.record", ignore_result=True)
def record(message_id: str) -> None:
    with open(os.environ["TRUSTCAL_TEST_RECEIPTS"], "a") as f:
        f.write(message_id + "\n")
