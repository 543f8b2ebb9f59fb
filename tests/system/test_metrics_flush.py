"""Request figures a process folds into Redis: a read of /metrics (or /engines/status, which
shows the same figures) counts every request of its process that finished before it began, also
one whose figures another thread is writing to Redis at that moment (docs/reference/system.md)."""

import threading
from typing import Any

import pytest

from config import metrics
from config.redis import get_redis

pytestmark = pytest.mark.redis


class _HeldWrites:
    """The real Redis client, whose pipelines wait for `release` before they are sent: a thread
    that flushes is held after it took the pending figures and before Redis has them."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.holding = threading.Event()
        self.release = threading.Event()

    def pipeline(self, **kwargs: Any) -> Any:
        pipe = self._client.pipeline(**kwargs)
        send = pipe.execute

        def held(*args: Any, **kw: Any) -> Any:
            self.holding.set()
            self.release.wait(timeout=30)
            return send(*args, **kw)

        pipe.execute = held
        return pipe

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_read_counts_a_finished_request_whose_figures_are_being_written(monkeypatch):
    held = _HeldWrites(get_redis())
    monkeypatch.setattr(metrics, "get_redis", lambda: held)
    monkeypatch.setattr(metrics, "FLUSH_SECONDS", 0.0)  # the request's own thread flushes
    writer = threading.Thread(target=metrics.record_request, args=("/v1/log", 201, 3.0))
    writer.start()
    assert held.holding.wait(timeout=30)  # the request has finished; its figures are on their way
    seen: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: seen.append(metrics.snapshot()))
    reader.start()
    reader.join(timeout=2.0)  # a read that does not wait for the write answers here, without it
    held.release.set()
    reader.join(timeout=30)
    writer.join(timeout=30)
    assert len(seen) == 1
    assert seen[0]["total"] == 1
    assert seen[0]["latency_ms"]["/v1/log"]["count"] == 1
