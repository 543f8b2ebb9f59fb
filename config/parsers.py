from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from config.inputs import load_json


class StrictJSONParser(BaseParser):
    """JSON only, through the one input layer (config.inputs.load_json): a body that is not
    valid JSON or is nested deeper than 64 levels raises ParseError (-> INVALID_JSON); a string
    holding NUL or an unpaired surrogate is a VALIDATION_ERROR. Request bodies are capped
    (1 MiB, 8 MiB on the bulk paths) by the middleware before this reads the stream."""

    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return load_json(stream.read() if stream is not None else b"")


class LargeJSONParser(StrictJSONParser):
    """JSON for the bulk endpoints (up to 8 MiB). The nesting is checked here; the strings are
    checked by the view, the envelope's at once and each item's with that item, so that a NUL
    or an unpaired surrogate in one item rejects that item alone (C15)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return load_json(stream.read() if stream is not None else b"", strings=False)


class NDJSONParser(BaseParser):
    """`application/x-ndjson`: one JSON document per line (blank lines skipped), parsed into
    `{"decisions": [...]}`, the JSON form of a batch. A line that is not JSON is INVALID_JSON
    for the whole body; strings are checked with each item, as for LargeJSONParser."""

    media_type = "application/x-ndjson"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        items = []
        for number, raw in enumerate(stream.read().split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                items.append(load_json(raw, strings=False))
            except ParseError as exc:
                raise ParseError(f"line {number}: {exc.detail}") from exc
        return {"decisions": items}
