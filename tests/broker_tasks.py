"""A task for the embedded-broker stress test: appends its argument as one line to the file
named by TRUSTCAL_TEST_RECEIPTS (one small O_APPEND write, atomic on a local filesystem)."""

import os

from celery import shared_task


@shared_task(name="tests.broker_tasks.record", ignore_result=True)
def record(message_id: str) -> None:
    with open(os.environ["TRUSTCAL_TEST_RECEIPTS"], "a") as f:
        f.write(message_id + "\n")


@shared_task(name="tests.broker_tasks.flaky_database", ignore_result=True)
def flaky_database(message_id: str, failures: int) -> None:
    """Raises the database's OperationalError `failures` times (counted in the receipts file),
    then records `message_id`: a task whose database was briefly unreachable."""
    from django.db import OperationalError

    path = os.environ["TRUSTCAL_TEST_RECEIPTS"]
    with open(path, "a+") as f:
        f.seek(0)
        seen = f.read().count(f"fail {message_id}\n")
        if seen < failures:
            f.write(f"fail {message_id}\n")
            raise OperationalError("connection failed: FATAL: sorry, too many clients already")
        f.write(message_id + "\n")
