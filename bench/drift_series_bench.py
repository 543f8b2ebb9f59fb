"""GET /drift-monitors/{id}/series at `limit` 5,000 (docs/reference/drift.md, The API: a page
of 5,000 points within 500 ms at any history length), in-process through Django's test client,
on a monitor whose chart has --points stored points (written straight to the table, as the
charts would have), at the first page, a middle page (`page`) and the last, and from a middle
index (`from_index`). Beside each, in the same round, the plain read: one SELECT of the same
5,000 rows by the (monitor, baseline, index) index and json.dumps of them, on the same
connection. Rounds alternate the two; medians of wall time.

Run:  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python bench/drift_series_bench.py \\
          [--points 1000000] [--rounds 5]
(without DATABASE_URL: SQLite in TRUSTCAL_DATA_DIR). Prints one JSON line last."""

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import time

from benchenv import api_client, checkout_root, in_process_service

ROOT = checkout_root()
LIMIT = 5000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", help="the checkout to measure (default: this one)")
    args = parser.parse_args()

    in_process_service()
    from django.db import connection

    from drift.models import DriftMonitor

    client = api_client(f"series-{time.time_ns()}")
    body = {"chart": "ai_calibration_up", "scope": "organization", "h": 4}
    mid = client.post("/v1/drift-monitors", body, format="json").json()["monitor_id"]

    began = time.perf_counter()
    _points_written(mid, args.points)
    monitor = DriftMonitor.objects.get(pk=mid)
    monitor.chart_points, monitor.chart_restart = args.points, False
    monitor.save(update_fields=["chart_points", "chart_restart"])
    with connection.cursor() as cursor:  # what autovacuum would do to the fresh rows
        cursor.execute("VACUUM ANALYZE drift_driftpoint" if connection.vendor == "postgresql" else "ANALYZE")
    print(f"{args.points:,} points written in {time.perf_counter() - began:.0f} s", file=sys.stderr)

    pages = -(-args.points // LIMIT)
    cases = {
        "first page": {"limit": LIMIT},
        "middle page": {"limit": LIMIT, "page": max(1, pages // 2)},
        "last page": {"limit": LIMIT, "page": pages},
        "from a middle index": {"limit": LIMIT, "from_index": args.points // 2},
    }
    load = [os.getloadavg()[0]]
    got: dict[str, dict[str, list[float]]] = {name: {"service": [], "plain": []} for name in cases}
    for r in range(args.rounds):
        for name, params in cases.items():
            low = params.get("from_index", 1) + (params.get("page", 1) - 1) * LIMIT
            order = ("service", "plain") if r % 2 == 0 else ("plain", "service")
            for side in order:
                start = time.perf_counter()
                if side == "service":
                    answer = client.get(f"/v1/drift-monitors/{mid}/series", params)
                    assert answer.status_code == 200, answer.content
                    count = len(answer.json()["data"])
                else:
                    count = _plain(connection, mid, low)
                got[name][side].append((time.perf_counter() - start) * 1000)
                assert count == min(LIMIT, args.points - low + 1), (name, side, count)
    load.append(os.getloadavg()[0])
    out: dict = {
        "backend": connection.vendor,
        "points": args.points,
        "rounds": args.rounds,
        "load_average": load,
    }
    for name, sides in got.items():
        service, plain = statistics.median(sides["service"]), statistics.median(sides["plain"])
        out[name] = {
            "service_ms": round(service, 1),
            "plain_ms": round(plain, 1),
            "ratio": round(service / plain, 2),
        }
        print(
            f"{name:22} service {service:7.1f} ms  plain {plain:7.1f} ms  ratio {service / plain:.2f}",
            file=sys.stderr,
        )
    print(json.dumps(out))


def _points_written(mid: str, count: int) -> None:
    """`count` chart points of the monitor, index 1..count, as the charts store them."""
    from django.db import connection, transaction

    from drift.carried import POINT_COLUMNS, points_insert

    assert POINT_COLUMNS[0] == "monitor_id"
    rnd = random.Random(1)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    chunk = 50_000 if connection.vendor == "postgresql" else 20_000
    for first in range(1, count + 1, chunk):
        rows = []
        for i in range(first, min(count, first + chunk - 1) + 1):
            c = round(rnd.random(), 3)
            rows.append((mid, False, i, i + 1, f"d-{i}", f"user-{i % 200}", t0 + dt.timedelta(seconds=i), c,
                         int(rnd.random() < 1 - c), 1 - c, 0.1, 0.5, None, None, False, False, None, None))  # fmt: skip
        with transaction.atomic():
            points_insert(rows)


def _plain(connection, mid: str, low: int) -> int:
    """The same page by one SELECT on the index and json.dumps: the least a series page costs."""
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT "index", sequence, decision_id, user_id, timestamp, ai_confidence, event, p, w, x, restart, '
            'signal, alarm_id FROM drift_driftpoint WHERE monitor_id = %s AND baseline = %s AND "index" >= %s '
            'ORDER BY "index" LIMIT %s',
            [mid, False, low, LIMIT],
        )
        rows = cursor.fetchall()
    json.dumps([[*row[:4], str(row[4]), *row[5:]] for row in rows])
    return len(rows)


if __name__ == "__main__":
    main()
