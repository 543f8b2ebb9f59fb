"""gunicorn started from the repository (gunicorn.conf.py) gives each web worker a listening
socket of its own, so a burst of keep-alive connections is spread over the workers instead of
landing on whichever woke first (bench/README.md, The /calibrate tail)."""

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.processes import BIN, ROOT, free_port, process_env, stop

WORKERS = 2
CONNECTIONS = 40
APP_EXTENSIONS = ("_pydantic_core", "orjson", "_psycopg", "_sqlite3", "_yaml")


def _sockets(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _tcp(port: int) -> dict[str, str]:
    """Socket inode -> state ("0A" listening, "01" established) of the local port `port`."""
    states = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                states[fields[9]] = fields[3]
    return states


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(child) for task in tasks.iterdir() for child in (task / "children").read_text().split()]


def _listening(port: int, workers: list[int]) -> bool:
    states = _tcp(port)
    return all(any(states.get(i) == "0A" for i in _sockets(w)) for w in workers)


def _loading(pid: int) -> bool:
    """Whether process `pid` has begun importing the app (the master imports none of it)."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any(name in maps for name in APP_EXTENSIONS)


def _start(*bind: str, threads: int = 2) -> subprocess.Popen:
    args = [str(BIN / "gunicorn"), "config.wsgi:application", "--workers", str(WORKERS), "--threads", str(threads),
            "--worker-class", "gthread", "--log-level", "warning"]  # fmt: skip
    for address in bind:
        args += ["--bind", address]
    return subprocess.Popen(args, cwd=ROOT, env=process_env(), start_new_session=True)


def _wait_workers(proc: subprocess.Popen, ready, seconds: float = 60) -> list[int]:
    deadline = time.time() + seconds
    while time.time() < deadline:
        workers = _children(proc.pid)
        if len(workers) == WORKERS and ready(workers):
            return workers
        time.sleep(0.2)
    raise RuntimeError("gunicorn's workers did not start")


def _health_answered(client: socket.socket) -> bool:
    """Whether `client` gets an HTTP answer to GET /v1/health."""
    client.sendall(b"GET /v1/health HTTP/1.0\r\nHost: localhost\r\n\r\n")
    return client.recv(64).startswith(b"HTTP/1.")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the sockets from /proc (Linux)")
def test_each_web_worker_listens_on_its_own_socket_and_connections_spread_over_them():
    port = free_port()
    proc = _start(f"127.0.0.1:{port}")
    clients: list[socket.socket] = []
    try:
        workers = _wait_workers(proc, lambda workers: _listening(port, workers))
        states = _tcp(port)
        listeners = {w: {i for i in _sockets(w) if states.get(i) == "0A"} for w in workers}
        assert all(len(mine) == 1 for mine in listeners.values())
        assert len(set().union(*listeners.values())) == WORKERS  # not one socket shared by both
        assert not {i for i in _sockets(proc.pid) if states.get(i) == "0A"}  # the master listens on none

        # A burst of connections opened at once, as a keep-alive pool opens them. The kernel picks
        # a worker's socket for each as it connects; this waits for every connection to be
        # accepted; the deadline is only a safety net.
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNECTIONS)]
        deadline = time.time() + 120
        while time.time() < deadline:
            states = _tcp(port)
            held = {w: sum(1 for i in _sockets(w) if states.get(i) == "01") for w in workers}
            if sum(held.values()) == CONNECTIONS:
                break
            time.sleep(0.1)
        assert sum(held.values()) == CONNECTIONS, held
        # The kernel spreads them by their addresses: each worker holds a fair part (for 40
        # connections over 2 workers, fewer than 8 on one happens about once in 24,000 runs).
        assert min(held.values()) >= 8, held
    finally:
        for client in clients:
            client.close()
        stop(proc, group=True)


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the sockets from /proc (Linux)")
def test_a_worker_started_in_place_of_a_killed_one_takes_no_connection_before_it_has_loaded_the_app():
    port = free_port()
    proc = _start(f"127.0.0.1:{port}")
    replacement = 0
    clients: list[socket.socket] = []
    try:
        workers = _wait_workers(proc, lambda workers: _listening(port, workers))
        os.kill(workers[0], signal.SIGKILL)
        # The master forks the replacement at once. It is stopped while it loads the app, as a
        # replacement is for seconds on a busy machine: once it listens, or once it has loaded
        # one of the app's C extensions, whichever comes first.
        deadline = time.time() + 30
        while not replacement and time.time() < deadline:
            replacement = next((w for w in _children(proc.pid) if w not in workers), 0)
            time.sleep(0.002)
        assert replacement
        while time.time() < deadline and not (_listening(port, [replacement]) or _loading(replacement)):
            time.sleep(0.002)
        os.kill(replacement, signal.SIGSTOP)
        # Connections opened now go to the listening sockets: one held by the loading worker
        # would never be answered while it loads.
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNECTIONS)]
        for client in clients:
            client.sendall(b"GET /v1/health HTTP/1.0\r\nHost: localhost\r\n\r\n")
        deadline = time.time() + 30
        answered = 0
        for client in clients:
            client.settimeout(max(0.1, deadline - time.time()))
            with contextlib.suppress(TimeoutError):
                answered += client.recv(64).startswith(b"HTTP/1.")
        assert answered == CONNECTIONS
    finally:
        if replacement:
            os.kill(replacement, signal.SIGCONT)
        for client in clients:
            client.close()
        stop(proc, group=True)


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the sockets from /proc (Linux)")
def test_the_workers_of_a_reload_listen_on_sockets_of_their_own():
    # A reload (SIGHUP) reads the settings again without on_starting: its workers inherit no socket
    # from the master and must still open their own.
    port = free_port()
    proc = _start(f"127.0.0.1:{port}")
    try:
        first = _wait_workers(proc, lambda workers: _listening(port, workers))
        proc.send_signal(signal.SIGHUP)
        workers = _wait_workers(
            proc, lambda workers: not set(first) & set(workers) and _listening(port, workers), seconds=120
        )
        assert not set(first) & set(workers)
        assert _listening(port, workers)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            assert _health_answered(client)
    finally:
        stop(proc, group=True)


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the sockets from /proc (Linux)")
def test_a_unix_socket_stays_one_socket_shared_by_the_workers(tmp_path: Path):
    path = tmp_path / "web.sock"
    proc = _start(f"unix:{path}")
    try:
        _wait_workers(proc, lambda workers: path.exists())
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(path))
            assert _health_answered(client)
        # Every worker and the master hold the same listening socket, inherited from the master.
        shared = _sockets(proc.pid)
        assert all(shared & _sockets(w) for w in _children(proc.pid))
    finally:
        stop(proc, group=True)
