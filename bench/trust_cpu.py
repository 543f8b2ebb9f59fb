"""CPU time of the organisation's POST /v1/trust-score in-process (PostgreSQL + Redis), on a
database seeded by calibration_bench.py (customer `bench`): N requests through Django's test
client on one thread after a warm-up; per request the CPU of this process (time.process_time,
so waiting on PostgreSQL does not count), the CPU of its PostgreSQL backend (from
/proc/<pid>/schedstat: run it on the database's host) and the wall time; then the same for the
request's parts (the reviewer grouping's read, the organisation's window with its Python, the
confidence check, the risk-state refresh). The web process remembers each reviewer's risk
figures by its sums (calibration.selectors), so the repeated requests here judge nobody again;
the parts "every reviewer judged again" forget them before each call (the first request of a
process, or of a day); `--writes N` writes N decisions through POST /v1/calibrate (untimed, as
calibration_bench.py's load: 200 reviewers, no outcome) before each timed call, as the other
requests of the benchmark would between two of one process's. `--no-parallel` turns
PostgreSQL's parallel query off for the session, so that the backend's figure is all the
statements' CPU (a parallel worker's CPU is not the backend's).

Run:  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:6379/<n> \\
      .venv/bin/python bench/trust_cpu.py --calls 20 [--no-parallel] [--writes N] [--root OTHER_CHECKOUT]
      [--request-only]
(`--root DIR` measures another checkout of the service, such as an earlier commit, with this
venv: alternate the two in the same minutes; `--request-only` times the request alone, a run in
a fraction of the time, for alternating pairs. The script makes its own key for `bench`.)"""

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from benchenv import checkout_root
from calibration_load import decision_body

ROOT = checkout_root()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--no-parallel", action="store_true")
    parser.add_argument("--root", default=str(ROOT))
    parser.add_argument(
        "--writes", type=int, default=0, help="decisions written (untimed) before each timed call"
    )
    parser.add_argument(
        "--request-only", action="store_true", help="the organisation's request alone, not its parts"
    )
    args = parser.parse_args()
    if args.no_parallel:
        os.environ["PGOPTIONS"] = "-c max_parallel_workers_per_gather=0"
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from rest_framework.test import APIClient

    from calibration import reporting, selectors, services
    from calibration.windows import day_bounds as _day_bounds
    from calibration.windows import decisions_of as _decisions
    from keys.models import Customer
    from keys.services import api_key_create

    settings.RATE_LIMITS_ENABLED = False
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION="Bearer " + api_key_create(customer_id="bench", tier="enterprise").value
    )
    customer = Customer.objects.get(pk="bench")
    days = selectors.DayRange.last_days(90)
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid

    def backend_ms() -> float:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e6

    written = 0

    def write(n: int) -> None:
        """n decisions through POST /v1/calibrate as calibration_bench.py's load sends them (one of
        200 reviewers each, a confidence, no outcome), untimed."""
        nonlocal written
        for _ in range(n):
            written += 1
            body = {**decision_body(written), "context": "trust_cpu"}
            assert client.post("/v1/calibrate", body, format="json").status_code == 200

    def measure(call: Callable[[], object], n: int) -> dict:
        for _ in range(3):
            call()
        cpu, wall, backend = [], [], 0.0
        for _ in range(n):
            write(args.writes)
            b, c, w = backend_ms(), time.process_time(), time.perf_counter()
            call()
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
            backend += backend_ms() - b
        return {
            "client_cpu_p50": statistics.median(cpu),
            "client_cpu_mean": statistics.mean(cpu),
            "backend_cpu_mean": backend / n,
            "wall_p50": statistics.median(wall),
            "wall_max": max(wall),
        }

    window = selectors.organization_window(customer, days=days)
    judged: dict = getattr(selectors, "_risk_judged", {})  # the risk figures a process remembers

    def forgetting(call: Callable[[], object]) -> Callable[[], object]:
        def forgot() -> object:
            judged.clear()
            return call()

        return forgot

    def request() -> object:
        return client.post("/v1/trust-score", {}, format="json")

    parts: dict[str, Callable[[], object]] = {
        "POST /v1/trust-score (organisation)": request,
        "  the request, every reviewer judged again": forgetting(request),
        "  the organisation's window (grouping and Python)": lambda: selectors.organization_window(
            customer, days=days
        ),
        "  the window, every reviewer judged again": forgetting(
            lambda: selectors.organization_window(customer, days=days)
        ),
        "  the confidence check": lambda: reporting.decisions_confidence_check(
            _decisions(customer, _day_bounds(days), user_id=None, model_id=None)
        ),
        "  the risk-state refresh": lambda: services.risk_users_refresh(
            customer=customer, at_risk=window.risk_users
        ),
    }
    print(
        f"root {args.root}, load average {os.getloadavg()[0]:.1f}, "
        f"parallel query {'off' if args.no_parallel else 'on'}, {args.writes} writes before each call"
    )
    for name, call in list(parts.items())[: 1 if args.request_only else None]:
        r = measure(call, args.calls)
        print(f"{name:<52} " + json.dumps({k: round(v, 1) for k, v in r.items()}))


if __name__ == "__main__":
    main()
