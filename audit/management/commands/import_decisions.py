"""python manage.py import_decisions FILE.csv|FILE.jsonl --customer-id ID

Back-fills history through the POST /log/batch service (the same validation and effects as
POST /log), in batches, with a progress bar and a summary. Rejected rows go to a side file,
one JSON line each with the row's line number, the row and its error; a row that cannot be
read at all (not JSON, `NaN` or `Infinity`, nested too deeply to parse) is one of them, and
the import goes on (docs/reference/limits.md, "Imports")."""

import csv
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from rest_framework.exceptions import ParseError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from audit import services
from config.inputs import MAX_JSON_DEPTH, check_document, json_loads
from keys.models import Customer

JSON_CELLS = ("subgroups", "metadata")
NUMBER_CELLS = ("ai_confidence", "confidence")


def json_value(text: str) -> Any:
    """JSON as the API reads it: no NaN or Infinity, no duplicate key, no negative zero, nested at most as deep as a request body
    may be; anything else is a ValueError."""
    try:
        value = json_loads(text)
        check_document(value, strings=False)
    except (RecursionError, ParseError) as exc:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from exc
    return value


def csv_body(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row as a POST /log body: empty cells are absent, confidence cells are numbers
    and subgroups/metadata cells hold JSON. A cell that does not convert is passed on as
    text, so that POST /log's validation names the field."""
    body: dict[str, Any] = {}
    for name, cell in row.items():
        if name is None or cell is None or cell == "":
            continue
        value: Any = cell
        try:
            if name in NUMBER_CELLS:
                value = float(cell)
                if not math.isfinite(value):  # nan, inf: left as text for the validation
                    value = cell
            elif name in JSON_CELLS:
                value = json_value(cell)
        except ValueError:
            value = cell
        body[name] = value
    return body


def read_rows(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, body, parse error) per row of a .csv (header line first) or .jsonl file."""
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                yield reader.line_num, csv_body(row), None
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json_value(line), None
            except ValueError as exc:
                yield number, line.rstrip("\n"), f"not valid JSON: {exc}"


def count_rows(path: Path) -> int:
    with path.open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return max(0, lines - 1) if path.suffix.lower() == ".csv" else lines


def _reject_line(line: int, row: Any, error: dict[str, Any]) -> str:
    """One line of the rejects file; a row that cannot be written back as JSON (too deep) is
    written as its text."""
    try:
        return json.dumps({"line": line, "row": row, "error": error}, default=str, allow_nan=False) + "\n"
    except (ValueError, RecursionError):
        return json.dumps({"line": line, "row": "(too deeply nested to write back)", "error": error}) + "\n"


class Command(BaseCommand):
    help = "Import decisions from a CSV (header row of POST /log field names) or JSON Lines file."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--customer-id", required=True)
        parser.add_argument("--batch-size", type=int, default=services.BATCH_MAX)
        parser.add_argument("--rejects", type=Path, help="side file for rejected rows (FILE.rejected.jsonl)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file")
        if path.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
            raise CommandError("FILE must end in .csv, .jsonl or .ndjson")
        size = options["batch_size"]
        if not 1 <= size <= services.BATCH_MAX:
            raise CommandError(f"--batch-size must be 1..{services.BATCH_MAX}")
        customer = Customer.objects.filter(pk=options["customer_id"]).first()
        if customer is None:
            raise CommandError(f"no customer '{options['customer_id']}'")
        rejects_path = options["rejects"] or path.with_name(path.name + ".rejected.jsonl")
        totals = {"accepted": 0, "replayed": 0, "rejected": 0}
        started = time.monotonic()
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
        with (
            rejects_path.open("w", encoding="utf-8") as rejects,
            Progress(*columns, disable=options["no_progress"]) as progress,
        ):
            task = progress.add_task("importing", total=count_rows(path))
            batch: list[tuple[int, Any]] = []

            def flush() -> None:
                result = services.decisions_log_batch(customer=customer, items=[body for _, body in batch])
                for (line, body), item in zip(batch, result.items, strict=True):
                    if item.error is not None:
                        error = {
                            "code": item.error.code,
                            "detail": item.error.detail,
                            "errors": item.error.errors,
                        }
                        rejects.write(_reject_line(line, body, error))
                totals["accepted"] += result.accepted
                totals["replayed"] += result.replayed
                totals["rejected"] += result.rejected
                progress.advance(task, len(batch))
                batch.clear()

            for line, body, parse_error in read_rows(path):
                if parse_error is not None:
                    error = {"code": "INVALID_JSON", "detail": parse_error, "errors": []}
                    rejects.write(_reject_line(line, body, error))
                    totals["rejected"] += 1
                    progress.advance(task, 1)
                    continue
                batch.append((line, body))
                if len(batch) >= size:
                    flush()
            if batch:
                flush()
        elapsed = time.monotonic() - started
        self.stdout.write(
            f"accepted {totals['accepted']}, replayed {totals['replayed']}, rejected {totals['rejected']} "
            f"in {elapsed:.1f} s"
            + (f"; rejected rows with their errors: {rejects_path}" if totals["rejected"] else "")
        )
        if not totals["rejected"]:
            rejects_path.unlink(missing_ok=True)
