"""A lease on a database row, renewed from a thread while long work holds the row (a report
render, a drift monitor's calibration): the work keeps its row however long it runs, and a killed
worker (thread and all) stops renewing, so the lease runs out and beat's recovery task gives the
row to another worker."""

import logging
import threading
from collections.abc import Callable

from django.db import connection

logger = logging.getLogger("trustcal.leases")


class LeaseRenewal:
    """`with LeaseRenewal(name, every, renew):` calls `renew()` (an UPDATE of the lease's end,
    on the thread's own connection) every `every` seconds until the block ends."""

    def __init__(self, name: str, every: float, renew: Callable[[], object]) -> None:
        self.name = name
        self.every = every
        self.renew = renew
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> "LeaseRenewal":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every):
                self.renew()
        except Exception:
            logger.exception("%s: lease renewal failed", self.name)
        finally:
            connection.close()
