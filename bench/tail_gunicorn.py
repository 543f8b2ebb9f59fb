"""gunicorn settings of bench/tail_probe.py: the repository's gunicorn.conf.py, plus the times of
every request (by the client's X-Bench-I header) and every collection, per web process, in
$TAIL_PROBE_DIR/times-<pid>.log. Clock: time.perf_counter (CLOCK_MONOTONIC, the client's too)."""

import gc
import os
import threading
import time
from pathlib import Path

_conf = Path(__file__).resolve().parent.parent / "gunicorn.conf.py"
exec(compile(_conf.read_text(), str(_conf), "exec"))  # noqa: S102  (the repository's own settings)

_repo_post_worker_init = post_worker_init  # type: ignore[name-defined]  # noqa: F821
_local = threading.local()
_lines: list[str] = []


def _flush() -> None:
    while True:
        time.sleep(0.2)
        if _lines:
            batch = _lines[:]
            del _lines[: len(batch)]
            with open(Path(os.environ["TAIL_PROBE_DIR"]) / f"times-{os.getpid()}.log", "a") as out:
                out.write("".join(batch))


def post_worker_init(worker):
    _repo_post_worker_init(worker)
    started = [0.0]

    def timed(phase, info):
        now = time.perf_counter()
        if phase == "start":
            started[0] = now
        else:
            _lines.append(f"G {info['generation']} {started[0]:.6f} {(now - started[0]) * 1000:.3f}\n")

    gc.callbacks.append(timed)
    threading.Thread(target=_flush, daemon=True).start()


def pre_request(worker, req):
    _local.i = next((v for k, v in req.headers if k == "X-BENCH-I"), "-")
    _local.start = time.perf_counter()


def post_request(worker, req, environ, resp):
    from django.db import connection

    raw = connection.connection  # this thread's; None once closed (CONN_MAX_AGE) at the request's end
    backend = raw.info.backend_pid if raw is not None and not raw.closed else 0
    _lines.append(
        f"R {_local.i} {_local.start:.6f} {time.perf_counter():.6f} {threading.get_ident()} {backend}\n"
    )
