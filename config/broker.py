"""The embedded default's Celery broker: kombu's filesystem transport with atomic message files.

kombu's own `_put` creates `<time>_<uuid>.<queue>.msg` and only then writes into it, while
`_get` moves and reads files without taking the lock, so a consumer can take a file that is
still empty and the worker dies on `JSONDecodeError` (kombu issue 1551, open). Here a message
is written under a name no consumer looks at (`.<name>.tmp`), then renamed into place:
`os.replace` within one folder is atomic, so a consumer sees either no file or the whole one.

A file that still cannot be decoded (a disk error, a hand-edited folder) is moved aside as
`<name>.corrupt` and logged, and the worker goes on: nothing that matters lives only in the
broker (deliveries, exports and verifications are database rows that beat claims again).

The queue folder belongs to one database: a worker takes whatever message it finds there and
runs it against its own database, so a worker of another database (another service, or another
test session, sharing the data folder) would take this one's messages and do nothing with them,
and this service's work would wait for beat to send it again. The first process to start
records its database in the folder (`.database`); a process of another database refuses to
start (config/checks.py, trustcal.E006).

Selected by the URL scheme `trustcalfs://` (registered in config/celery.py)."""

import contextlib
import logging
import os
import shutil
import tempfile
import uuid
from collections import deque
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger("trustcal.broker")

SCHEME = "trustcalfs"
RELIST_SECONDS = 0.05
OWNER_FILE = ".database"  # a dot name: no consumer lists it as a message


def folder_owner_claim(folder: str, database: str) -> str:
    """The database the queue folder belongs to: the one recorded there, or `database`, which
    is recorded if none was (linked into place, so of two first starts exactly one wins)."""
    path = os.path.join(folder, OWNER_FILE)
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as f:
        return f.read()
    temporary = os.path.join(folder, f".{uuid.uuid4()}.database.tmp")
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(database)
    try:
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    with open(path, encoding="utf-8") as f:
        return f.read()


class Channel(filesystem.Channel):
    """Also: the queue folder is listed once for many messages and all queues, not once per
    message and queue (kombu lists and sorts the whole folder for every message of every queue
    it polls, so a backlog of 20,000 drained at about 100/s)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._listed: dict[str, deque[str]] = {}
        self._listed_at = 0.0

    def _relist(self) -> None:
        """One listing of the queue folder, shared out by queue, oldest first."""
        listed: dict[str, deque[str]] = {}
        for name in sorted(os.listdir(self.data_folder_in)):
            if not name.startswith(".") and name.endswith(".msg"):
                listed.setdefault(name.partition(".")[2].removesuffix(".msg"), deque()).append(name)
        self._listed = listed
        self._listed_at = monotonic()

    def _put(self, queue, payload, **kwargs):  # type: ignore[override]  # kombu's own signature
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        temporary = os.path.join(self.data_folder_out, f".{name}.tmp")
        try:
            with open(temporary, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to the queue folder") from exc

    def _get(self, queue, timeout=None):
        folder = self.processed_folder if self.store_processed else tempfile.gettempdir()
        names = self._listed.get(queue)
        if not names:
            if monotonic() - self._listed_at < RELIST_SECONDS:
                raise Empty()  # listed a moment ago (the worker polls several queues in turn)
            self._relist()
            names = self._listed.get(queue)
            if not names:
                raise Empty()
        while names:
            filename = names.popleft()
            try:
                shutil.move(os.path.join(self.data_folder_in, filename), folder)
            except OSError:
                continue  # another consumer took it
            path = os.path.join(folder, filename)
            try:
                with open(path, "rb") as f:
                    payload = f.read()
                if not self.store_processed:
                    os.remove(path)
            except OSError as exc:
                raise ChannelError(f"Cannot read file {filename!r} from the queue") from exc
            try:
                return loads(bytes_to_str(payload))
            except ValueError:
                logger.error("broker message %s could not be decoded; moved aside", filename)
                with contextlib.suppress(OSError):
                    os.replace(path, path + ".corrupt")
        raise Empty()


class Transport(filesystem.Transport):
    Channel = Channel
    driver_name = SCHEME
