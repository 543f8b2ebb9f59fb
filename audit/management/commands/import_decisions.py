"""python manage.py import_decisions FILE.csv|FILE.jsonl --customer-id ID

Back-fills history through the POST /log/batch service (the same validation and effects as
POST /log), in batches, with a progress bar and a summary. Rejected rows go to a side file,
one JSON line each with the row's line number, the row and its error; a row that cannot be
read at all (not UTF-8, not JSON, `NaN` or `Infinity`, nested too deeply to parse) is one of
them, and the import goes on (docs/reference/limits.md, "Imports")."""

import csv
import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.exceptions import ParseError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from audit import services
from config.inputs import json_loads
from config.jsondoc import JSONObject, JSONValue
from config.jsonwalk import MAX_JSON_DEPTH, check_document
from keys.models import Customer

JSON_CELLS = ("subgroups", "metadata")
NUMBER_CELLS = ("ai_confidence", "confidence")
# The file is read with errors="surrogateescape": a byte that is not UTF-8 becomes one of these
# (valid UTF-8 never decodes to a lone surrogate), so a bad line is found without failing the file.
NOT_UTF8 = re.compile("[\udc80-\udcff]")
INFINITE_WORDS = ("inf", "infinity", "nan")


def not_utf8(text: str) -> str | None:
    """Why text read with surrogateescape is not UTF-8 (its first bad byte), or None."""
    bad = NOT_UTF8.search(text)
    if bad is None:
        return None
    return f"not valid UTF-8: byte 0x{ord(bad.group()) - 0xDC00:02x} at character {bad.start() + 1}"


def readable(text: str) -> str:
    """Text with its undecodable bytes shown as U+FFFD, to write back in the rejects file."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# a JSON value of any shape
def json_value(text: str) -> JSONValue:
    """JSON as the API reads it: no NaN or Infinity, no duplicate key, no negative zero, nested at most as deep as a request body
    may be; anything else is a ValueError."""
    try:
        value = json_loads(text)
        check_document(value, strings=False)
    except (RecursionError, ParseError) as exc:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from exc
    return value


def csv_body(row: dict[str, str]) -> dict[str, object]:
    """A CSV row as a POST /log body: empty cells are absent, confidence cells are numbers
    and subgroups/metadata cells hold JSON. A cell that does not convert is passed on as
    text, so that POST /log's validation names the field."""
    body: dict[str, object] = {}  # a request body as the API reads it, before validation
    for name, cell in row.items():
        if name is None or cell is None or cell == "":
            continue
        value: object = cell
        try:
            if name in NUMBER_CELLS:
                number = value = (
                    float(cell) + 0.0
                )  # -0.0 is 0.0, as in a JSON body (config.inputs.number_value)
                # The words nan and inf stay text ("must be a number"); a number written out that
                # is beyond a double (1e400) stays infinite, so that the validation says so.
                if not math.isfinite(number) and cell.strip().lstrip("+-").lower() in INFINITE_WORDS:
                    value = cell
            elif name in JSON_CELLS:
                value = json_value(cell)
        except ValueError:
            value = cell
        body[name] = value
    return body


# a problem document by name, written as JSON
def _problem(code: str, detail: str, errors: list[dict[str, str]] | None = None) -> JSONObject:
    return {"code": code, "detail": detail, "errors": errors or []}


# a line's value as read (any JSON) and its problem document
def _csv_rows(path: Path) -> Iterator[tuple[int, JSONValue, JSONObject | None]]:
    with path.open(newline="", encoding="utf-8", errors="surrogateescape") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            bad = []
            for name, cell in row.items():
                reason = not_utf8(str(name)) or not_utf8(str(cell))
                if reason is not None:
                    bad.append({"field": readable(str(name)), "message": reason})
            if not bad:
                yield reader.line_num, csv_body(row), None
                continue
            shown = {readable(str(k)): readable(str(v)) for k, v in row.items()}
            detail = "; ".join(f"{e['field']}: {e['message']}" for e in bad)
            yield reader.line_num, shown, _problem("VALIDATION_ERROR", detail, bad)


# a line's value as read (any JSON) and its problem document
def read_rows(path: Path) -> Iterator[tuple[int, JSONValue, JSONObject | None]]:
    """(line number, body, error) per row of a .csv (header line first) or .jsonl file; the
    error (code, detail, errors) of a row that cannot be read, else None."""
    if path.suffix.lower() == ".csv":
        yield from _csv_rows(path)
        return
    with path.open(encoding="utf-8", errors="surrogateescape") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            reason = not_utf8(line)
            if reason is not None:
                yield number, readable(line.rstrip("\n")), _problem("INVALID_JSON", reason)
                continue
            try:
                yield number, json_value(line), None
            except ValueError as exc:
                yield number, line.rstrip("\n"), _problem("INVALID_JSON", f"not valid JSON: {exc}")


def count_rows(path: Path) -> int:
    with path.open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    return max(0, lines - 1) if path.suffix.lower() == ".csv" else lines


# a JSON value of any shape
def _finite(value: JSONValue) -> JSONValue:
    """The row with each number beyond a double (`1e400`, read as infinity) written as the text
    "Infinity" or "-Infinity", which JSON can hold. Rows are at most MAX_JSON_DEPTH deep."""
    if isinstance(value, float) and not math.isfinite(value):
        return "-Infinity" if value < 0 else "Infinity"
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


# a line's value as read (any JSON) and its problem document
def _reject_line(line: int, row: JSONValue, error: JSONObject) -> str:
    """One line of the rejects file; a row that cannot be written back as JSON (too deep) is
    replaced by a note."""
    try:
        return json.dumps({"line": line, "row": _finite(row), "error": error}, default=str) + "\n"
    except RecursionError:
        return json.dumps({"line": line, "row": "(too deeply nested to write back)", "error": error}) + "\n"


class Command(BaseCommand):
    help = "Import decisions from a CSV (header row of POST /log field names) or JSON Lines file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--customer-id", required=True)
        parser.add_argument("--batch-size", type=int, default=services.BATCH_MAX)
        parser.add_argument("--rejects", type=Path, help="side file for rejected rows (FILE.rejected.jsonl)")
        parser.add_argument("--no-progress", action="store_true")

    # Any: Django's BaseCommand.handle signature
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
            batch: list[tuple[int, dict[str, object]]] = []

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

            for line, body, unreadable in read_rows(path):
                if unreadable is not None:
                    rejects.write(_reject_line(line, body, unreadable))
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
