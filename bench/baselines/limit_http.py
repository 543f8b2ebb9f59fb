"""Raw HTTP loop limit for webhook delivery (docs/reference/webhooks.md).

Default: starts the receiver below in a child process on 127.0.0.1 and has C threads,
each with its own keep-alive httpx.Client, POST ~1 KiB signed event envelopes
(Standard Webhooks headers, HMAC computed per request) for S seconds.
--receiver-only --port P: just run the receiver (for the service's webhook bench);
it answers 200 to any request with a Content-Length body and, on SIGINT/SIGTERM,
prints {"received": n}.
--url URL: client only, against a receiver that is already running.
"""

import argparse
import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time

from _common import emit, latency_summary, run_workers

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
SECRET = os.urandom(32)


async def serve(port):
    received = 0

    async def handle(reader, writer):
        nonlocal received
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                if length:
                    await reader.readexactly(length)
                received += 1
                writer.write(RESPONSE)
                await writer.drain()
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            asyncio.CancelledError,
        ):  # cancelled: an idle keep-alive connection at shutdown
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()  # retrieves a reset, else asyncio logs it

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    print(json.dumps({"listening": server.sockets[0].getsockname()[1]}), flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await stop.wait()
    print(json.dumps({"received": received}), flush=True)
    server.close()  # open keep-alive connections are cancelled with the loop, not awaited


def envelope(event_id):
    """A webhook event envelope of about 1 KiB, shaped like a webhook delivery with a decision inside."""
    return json.dumps(
        {
            "id": event_id,
            "type": "trust.miscalibrated",
            "created_at": "2026-11-21T10:15:30.123Z",
            "api_version": "1.0.0",
            "idempotency_key": event_id,
            "customer_id": "cus_01jd3v8w5k",
            "data": {
                "decision_id": "dec_01jd3v8w5kq2m7x9r4t6y8z0ab",
                "user_id": "user_4711",
                "model_id": "credit-risk-v3",
                "model_version": "2026.11.2",
                "ai_recommendation": "approve",
                "ai_confidence": 0.42,
                "user_decision": "approve",
                "followed_ai": True,
                "calibration_category": "OVERTRUSTING",
                "subgroups": {"gender": "female", "age_group": "26-40"},
                "context": "Applicant requested a credit line of 12,000 EUR; " + "x" * 430,
            },
        },
        separators=(",", ":"),
    ).encode()


def client(_idx, url, t_measure, t_stop, latencies, errors):
    import httpx  # imported here so the receiver-only process stays light

    with httpx.Client(timeout=30) as http:
        while (t0 := time.perf_counter()) < t_stop:
            event_id = f"evt_{time.time_ns():x}{os.urandom(4).hex()}"
            body, ts = envelope(event_id), str(int(time.time()))
            mac = hmac.new(SECRET, f"{event_id}.{ts}.".encode() + body, hashlib.sha256).digest()
            try:
                r = http.post(
                    url,
                    content=body,
                    headers={
                        "content-type": "application/json",
                        "webhook-id": event_id,
                        "webhook-timestamp": ts,
                        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
                    },
                )
                ok = r.status_code == 200
            except httpx.HTTPError:
                ok = False
            t1 = time.perf_counter()
            if not ok:
                errors.append(1)
            elif t0 >= t_measure and t1 <= t_stop:
                latencies.append(t1 - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, default=4, help="client threads in all")
    ap.add_argument("--processes", type=int, default=1, help="spread the threads over this many processes")
    ap.add_argument("--receiver-only", action="store_true")
    ap.add_argument("--port", type=int, default=0, help="receiver port (0: any free one)")
    ap.add_argument("--url", help="POST to this receiver instead of starting one")
    args = ap.parse_args()
    if args.receiver_only:
        asyncio.run(serve(args.port))
        return

    receiver = None
    url = args.url
    if not url:
        receiver = subprocess.Popen(
            [sys.executable, __file__, "--receiver-only", "--port", str(args.port)],
            stdout=subprocess.PIPE,
            text=True,
        )
        url = f"http://127.0.0.1:{json.loads(receiver.stdout.readline())['listening']}/hook"

    t_measure = time.perf_counter() + args.warmup
    t_stop = t_measure + args.seconds
    latencies, errors = run_workers(client, args.concurrency, args.processes, url, t_measure, t_stop)

    result = {
        "bench": "limit_http",
        "concurrency": args.concurrency,
        "processes": args.processes,
        "seconds": args.seconds,
        "body_bytes": len(envelope("evt_" + "0" * 26)),
        "requests": len(latencies),
        "req_per_s": round(len(latencies) / args.seconds, 1),
        **latency_summary(latencies),
        "errors": errors,
    }
    if receiver:
        receiver.send_signal(signal.SIGTERM)
        out, _ = receiver.communicate(timeout=10)
        result["receiver_received"] = json.loads(out.strip().splitlines()[-1])["received"]
    emit(result)


if __name__ == "__main__":
    main()
