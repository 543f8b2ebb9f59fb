"""Another customer's latency while anonymous clients trickle: 40 connections sending a header
line a second from 127.0.0.2, and trickled console sign-in forms (10 each) from 127.0.0.3 and
127.0.0.4, against the embedded default's web server (gunicorn, 1 process, 32 threads, SQLite
in a fresh data folder). The victim (127.0.0.1, its own API key) sends `--requests` sequential
GET /v1/webhooks per round; rounds alternate quiet and under attack (`--pairs` pairs), and the
attackers reopen every connection the server closes, so the attack lasts the whole round.

No plain-tool limit of shared/perf bounds this (it is a fairness figure, not a throughput): the
figure is the ratio of the victim's p99 under attack to its p99 in the quiet rounds of the same
run (docs/reference/limits.md, "Slow request lines and headers" and "Web threads").

Run:  .venv/bin/python bench/slow_clients_bench.py [--pairs 5] [--requests 200] [--root DIR]"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = (
    Path(sys.argv[sys.argv.index("--root") + 1])
    if "--root" in sys.argv
    else Path(__file__).resolve().parents[1]
)
BIN = Path(sys.executable).parent
FORM = (
    b"POST /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: csrftoken=" + b"c" * 32 + b"\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nu"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Attack:
    """Keeps `count` trickling connections open from `source`, reopening closed ones."""

    def __init__(self, port: int, source: str, count: int, first: bytes, piece: bytes) -> None:
        self.port, self.source, self.first, self.piece = port, source, first, piece
        self.socks: list[socket.socket | None] = [None] * count
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> socket.socket | None:
        try:
            sock = socket.create_connection(
                ("127.0.0.1", self.port), timeout=2, source_address=(self.source, 0)
            )
            sock.sendall(self.first)
            sock.setblocking(False)
            return sock
        except OSError:
            return None

    def _run(self) -> None:
        while not self.stop.is_set():
            for i, sock in enumerate(self.socks):
                if sock is not None:
                    try:
                        sock.send(self.piece)
                        if sock.recv(1, socket.MSG_PEEK) == b"":
                            raise OSError
                        continue  # an answer came: close and reopen below
                    except BlockingIOError:
                        continue  # no answer yet: still held
                    except OSError:
                        pass
                    sock.close()
                self.socks[i] = self._open()
            self.stop.wait(1.0)
        for sock in self.socks:
            if sock is not None:
                sock.close()

    def start(self) -> None:
        self.stop.clear()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def end(self) -> None:
        self.stop.set()
        self.thread.join(10)


STALLED_MS = 30_000.0  # a victim request not answered in 30 s ends its round (counted as 30 s)


def victim_round(base: str, key: str, requests: int) -> list[float]:
    timings = []
    for _ in range(requests):
        started = time.perf_counter()
        request = urllib.request.Request(base + "/v1/webhooks", headers={"Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(request, timeout=STALLED_MS / 1000) as answer:
                answer.read()
                assert answer.status == 200
        except OSError:
            timings.append(STALLED_MS)
            break
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--root", default=str(ROOT))
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="tc_harden_slow_")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"TRUSTCAL_DATA_DIR": data, "DJANGO_SETTINGS_MODULE": "config.settings.local"})
    py = str(BIN / "python")
    subprocess.run([py, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    make = "from keys.services import api_key_create; print(api_key_create(customer_id='victim', tier='enterprise').value)"
    key = (
        subprocess.run(
            [py, "manage.py", "shell", "-c", make],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    port = free_port()
    server = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--threads",
            "32",
            "--worker-class",
            "gthread",
            "--log-level",
            "error",
        ],
        cwd=ROOT,
        env={**env, "TRUSTCAL_RATE_LIMITS_ENABLED": "false"},
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/v1/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        victim_round(base, key, 20)  # warm
        attacks = [
            Attack(port, "127.0.0.2", 40, b"GET /v1/health HTTP/1.1\r\n", b"X-Slow: 1\r\n"),
            Attack(port, "127.0.0.3", 10, FORM, b" "),
            Attack(port, "127.0.0.4", 10, FORM, b" "),
        ]
        quiet, loud = [], []
        for _ in range(args.pairs):
            quiet.append(victim_round(base, key, args.requests))
            for attack in attacks:
                attack.start()
            time.sleep(2)
            loud.append(victim_round(base, key, args.requests))
            for attack in attacks:
                attack.end()
    finally:
        server.kill()
        server.wait(20)
    rows = [
        {
            "quiet_p50_ms": round(p(q, 0.5), 2),
            "quiet_p99_ms": round(p(q, 0.99), 2),
            "attack_p50_ms": round(p(a, 0.5), 2),
            "attack_p99_ms": round(p(a, 0.99), 2),
            "attack_max_ms": round(max(a), 1),
        }
        for q, a in zip(quiet, loud, strict=True)
    ]
    for row in rows:
        print(json.dumps(row))
    ratio = statistics.median(r["attack_p99_ms"] / r["quiet_p99_ms"] for r in rows)
    print(
        json.dumps(
            {
                "pairs": args.pairs,
                "requests": args.requests,
                "p99_ratio_median": round(ratio, 2),
                "p99_ratios": [round(r["attack_p99_ms"] / r["quiet_p99_ms"], 2) for r in rows],
            }
        )
    )


if __name__ == "__main__":
    main()
