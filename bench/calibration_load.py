"""The load generators of calibration_bench.py: wrk (closed loop, Lua script of POST /log
bodies) and an open-loop client at a fixed arrival rate, against the gunicorn it starts."""

import asyncio
import gc
import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchenv import BIN, ROOT, sh, wait_healthy

PORT = 8843


def gunicorn_start(env: dict, *, workers: int, threads: int, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    """gunicorn gthread `workers` x `threads` on PORT, started from the repository (its
    gunicorn.conf.py, unless `extra` names another with -c), once it answers /v1/health."""
    web = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{PORT}",
         "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread",
         "--keep-alive", "30", "--log-level", "warning", *extra],
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    wait_healthy(f"http://127.0.0.1:{PORT}")
    return web


def wrk(path: str, script: Path, *, duration: int, connections: int) -> dict:
    out = sh(
        "wrk",
        "-t2",
        f"-c{connections}",
        f"-d{duration}s",
        "--latency",
        "-s",
        str(script),
        f"http://127.0.0.1:{PORT}{path}",
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(label: str) -> float:
        value, unit = re.search(rf"\s{label}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": pct("50"), "p99": pct("99"), "errors": int(non2xx.group(1)) if non2xx else 0}


def wrk_script(path: Path, keys: list[str], tag: str) -> Path:
    path.write_text(
        "local keys = {" + ",".join(f'"{k}"' for k in keys) + "}\nlocal i = 0\n"
        "request = function()\n  i = i + 1\n"
        "  local user = 'user-' .. (i % 200)\n"
        "  local followed = (i % 4 ~= 0)\n"
        '  local body = string.format(\'{"user_id":"%s","model_id":"model-%d","ai_recommendation":"approve",'
        '"user_decision":"%s","confidence":%.2f,"context":"' + tag + "\"}', user, i % 5, "
        "followed and 'approve' or 'deny', (i % 100) / 100)\n"
        "  return wrk.format('POST', nil, {['Authorization'] = 'Bearer ' .. keys[(i % #keys) + 1],"
        " ['Content-Type'] = 'application/json'}, body)\nend\n"
    )
    return path


def decision_body(i: int) -> dict:
    return {
        "user_id": f"user-{i % 200}",
        "model_id": f"model-{i % 5}",
        "ai_recommendation": "approve",
        "user_decision": "approve" if i % 4 else "deny",
        "confidence": (i % 100) / 100,
        "context": "open-loop",
    }


async def _open_loop(
    path: str,
    keys: list[str],
    *,
    rate: float,
    duration: float,
    connections: int,
    body_of: Callable[[int], dict],
    trace: list[dict] | None = None,
    first: int = 0,
) -> dict:
    total = int(rate * duration)
    queue: asyncio.Queue = asyncio.Queue()
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def connect():
        return await asyncio.open_connection("127.0.0.1", PORT)

    async def worker() -> None:
        reader, writer = await connect()
        while True:
            item = await queue.get()
            if item is None:
                writer.close()
                return
            i, scheduled, queued = item
            body = json.dumps(body_of(i)).encode()
            tag = f"X-Bench-I: {first + i}\r\n" if trace is not None else ""
            request = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{tag}Authorization: Bearer {keys[i % len(keys)]}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body
            for _attempt in range(2):
                try:
                    written = time.perf_counter()
                    writer.write(request)
                    await writer.drain()
                    status_line = await reader.readline()
                    if not status_line:
                        raise ConnectionError("closed")
                    status = int(status_line.split()[1])
                    length = 0
                    while True:
                        line = await reader.readline()
                        if line in (b"\r\n", b""):
                            break
                        name, _, value = line.decode().partition(":")
                        if name.lower() == "content-length":
                            length = int(value)
                    await reader.readexactly(length)
                    break
                except (ConnectionError, asyncio.IncompleteReadError):
                    reader, writer = await connect()
            else:
                status = 0
            read = time.perf_counter()
            latencies.append((read - scheduled) * 1000)
            if trace is not None:
                trace.append(
                    {
                        "i": first + i,
                        "scheduled": scheduled,
                        "queued": queued,
                        "written": written,
                        "read": read,
                    }
                )
            statuses[status] = statuses.get(status, 0) + 1

    workers = [asyncio.create_task(worker()) for _ in range(connections)]
    start = time.perf_counter() + 0.2
    for i in range(total):
        at = start + i / rate
        delay = at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        queue.put_nowait((i, at, time.perf_counter()))
    for _ in workers:
        queue.put_nowait(None)
    await asyncio.gather(*workers)
    elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50": latencies[len(latencies) // 2],
        "p99": latencies[int(len(latencies) * 0.99) - 1],
        "errors": sum(count for status, count in statuses.items() if status not in (200, 201)),
        "statuses": statuses,
    }


def open_loop(
    path: str,
    keys: list[str],
    *,
    rate: float,
    duration: float,
    connections: int = 64,
    body_of: Callable[[int], dict] = decision_body,
) -> dict:
    """`rate` requests a second for `duration` seconds, each body `body_of(i)`."""
    return asyncio.run(
        _open_loop(path, keys, rate=rate, duration=duration, connections=connections, body_of=body_of)
    )


def open_loop_traced(path: str, keys: list[str], *, rate: float, duration: float, first: int = 0) -> dict:
    """open_loop of POST bodies decision_body(i), each request tagged `X-Bench-I: first + i`, with
    its scheduled, written and read times (time.perf_counter) and the client's own collections."""
    trace: list[dict] = []
    pauses: list[tuple[int, float]] = []
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], (time.perf_counter() - started[0]) * 1000))

    gc.callbacks.append(timed)
    try:
        out = asyncio.run(
            _open_loop(path, keys, rate=rate, duration=duration, connections=64, body_of=decision_body,
                       trace=trace, first=first)
        )  # fmt: skip
    finally:
        gc.callbacks.remove(timed)
    trace.sort(key=lambda r: r["i"])
    out["trace"] = trace
    out["gc"] = {
        f"gen{g}": [
            sum(1 for p in pauses if p[0] == g),
            round(max((p[1] for p in pauses if p[0] == g), default=0), 1),
        ]
        for g in (0, 1, 2)
    }
    return out
