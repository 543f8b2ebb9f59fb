"""Alternating pairs of two checkouts on one PDF report's CPU (docs/architecture.md, "Performance
code earns its place"): the demo organisation's report for one month, built, drawn as HTML (the
charts with it), laid out and written by WeasyPrint, each side in a fresh process on SQLite, the
order swapped every pair (A B, B A, ...); per pair the ratio B/A of the CPU seconds of each step
and of their sum, then their median and spread.

Run:  .venv/bin/python bench/render_pairs.py --a DIR_WITH --b DIR_WITHOUT --pairs 10 \\
          --data-dir DIR [--template eu_ai_act] [--month older]
(DIR_WITH/DIR_WITHOUT: checkouts, e.g. `git archive <commit> | tar -x -C DIR`, run with this
venv; --data-dir: a folder seeded once with `manage.py seed_demo --no-users` when empty, shared by
both sides.) A ratio above 1 means B spends more."""

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

STEPS = ("build", "html", "render", "write_pdf")


def child(root: str, template: str, month: str) -> None:
    sys.path.insert(0, root)
    os.chdir(root)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from weasyprint import HTML

    from compliance.evidence import Scope
    from compliance.pdf import report_html
    from compliance.report import report_build
    from console import demo_data
    from keys.models import Customer

    customer = Customer.objects.get(pk=demo_data.CUSTOMER)
    older, recent = demo_data.months(dt.datetime.now(dt.UTC))
    first, last = older if month == "older" else recent
    start = dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    scope = Scope(customer=customer, start=start, end=end, time_period={"from": str(first), "to": str(last)})
    cpu = {}
    c0 = time.process_time()
    data = report_build(scope=scope, template=template)
    cpu["build"] = time.process_time() - c0
    c0 = time.process_time()
    html = report_html(data)
    cpu["html"] = time.process_time() - c0
    c0 = time.process_time()
    document = HTML(string=html).render()
    cpu["render"] = time.process_time() - c0
    c0 = time.process_time()
    pdf = document.write_pdf()
    cpu["write_pdf"] = time.process_time() - c0
    print(
        json.dumps({"cpu": cpu, "pages": len(document.pages), "html_chars": len(html), "pdf_bytes": len(pdf)})
    )


def run(root: str, args: argparse.Namespace, env: dict[str, str]) -> dict:
    """One side in a fresh process: its JSON line."""
    command = [sys.executable, __file__, "--child", root, "--template", args.template, "--month", args.month]
    return json.loads(subprocess.check_output(command, text=True, env=env).strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", help="the checkout with the change")
    parser.add_argument("--b", help="the checkout without it")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--data-dir", help="SQLite data folder, seeded when empty")
    parser.add_argument("--template", default="eu_ai_act")
    parser.add_argument("--month", default="older", choices=("older", "recent"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.template, args.month)
        return
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["TRUSTCAL_DATA_DIR"] = str(Path(args.data_dir).resolve())
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    if not any(Path(args.data_dir).iterdir()):
        for command in (["migrate"], ["seed_demo", "--no-users"]):
            subprocess.run(
                [sys.executable, "manage.py", *command], cwd=args.a, env=env, check=True, capture_output=True
            )
    ratios: dict[str, list[float]] = {step: [] for step in (*STEPS, "total")}
    for at in range(args.pairs):
        order = ("a", "b") if at % 2 == 0 else ("b", "a")
        got = {side: run(getattr(args, side), args, env) for side in order}
        for side in got:
            got[side]["cpu"]["total"] = sum(got[side]["cpu"].values())
        for step in ratios:
            ratios[step].append(got["b"]["cpu"][step] / got["a"]["cpu"][step])
        print(
            f"pair {at + 1} ({'-'.join(order)}): "
            + "; ".join(
                f"{step} A {got['a']['cpu'][step]:.2f} B {got['b']['cpu'][step]:.2f} ({ratios[step][-1]:.3f})"
                for step in ratios
            )
            + f"; pages A {got['a']['pages']} B {got['b']['pages']}; html A {got['a']['html_chars']} B"
            f" {got['b']['html_chars']}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    for step, values in ratios.items():
        above = sum(r > 1 for r in values)
        print(
            f"{step} cpu B/A: median {statistics.median(values):.3f} "
            f"({min(values):.3f}-{max(values):.3f}), {above}/{len(values)} above 1"
        )


if __name__ == "__main__":
    main()
