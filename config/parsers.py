import codecs
from collections.abc import Mapping
from typing import Any, Protocol

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from config.exceptions import ValidationFailed
from config.inputs import JSON_DECODER, json_error, load_json
from config.jsondoc import JSONObject
from config.jsonwalk import MAX_JSON_DEPTH, check_document

# The most items a batch body may hold (docs/reference/limits.md, "Batch bodies"). Both batch
# parsers stop reading at the item after it, so an oversized body is refused as soon as that
# is known instead of after parsing megabytes of it.
BATCH_MAX_ITEMS = 1000
# A read waits until it has this many bytes (or the body ends), so it is small enough not to
# wait for much more than the 1,001st item.
READ_CHUNK = 8 * 1024


class Body(Protocol):
    """A request body as DRF hands it to a parser (`request.stream`): read in chunks."""

    def read(self, size: int = -1, /) -> bytes: ...


def too_many_items() -> ValidationFailed:
    return ValidationFailed(
        f"The body must be an object with a `decisions` array of 1 to {BATCH_MAX_ITEMS} items.",
        errors=[{"field": "decisions", "message": f"expected an array of 1 to {BATCH_MAX_ITEMS} objects"}],
    )


class StrictJSONParser(BaseParser):
    """JSON only, through the one input layer (config.inputs.load_json): a body that is not
    valid JSON or is nested deeper than 64 levels raises ParseError (-> INVALID_JSON); a string
    holding NUL or an unpaired surrogate, or a number beyond a finite double, is a
    VALIDATION_ERROR. Request bodies are capped (1 MiB, 8 MiB on the bulk paths) by the
    middleware before this reads the stream."""

    media_type = "application/json"

    def parse(
        self,
        stream: Body | None,
        media_type: str | None = None,
        parser_context: Mapping[str, object] | None = None,
    ) -> Any:  # Any: a JSON body of any shape (the view refuses one that is not an object); DRF says Mapping
        return self.document(stream)

    def document(self, stream: Body | None) -> object:
        return load_json(stream.read() if stream is not None else b"")


class _TextReader:
    """A request body decoded as UTF-8 chunk by chunk, read only as far as the parser needs."""

    def __init__(self, stream: Body | None) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.text = ""
        self.pos = 0
        self.eof = stream is None

    def more(self) -> bool:
        """Read on (at least as much as is unread, so that retrying a value that did not fit
        costs at most twice its size); False at the end of the body."""
        if self.eof or self.stream is None:  # (no stream: eof from the start)
            return False
        if self.pos > READ_CHUNK * 128:  # drop what was consumed
            self.text, self.pos = self.text[self.pos :], 0
        raw = self.stream.read(max(READ_CHUNK, len(self.text) - self.pos))
        try:
            self.text += self.decoder.decode(raw or b"", final=not raw)
        except UnicodeDecodeError as exc:
            raise ParseError(str(exc)) from exc
        self.eof = not raw
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the body)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def expect(self, allowed: str) -> str:
        char = self.peek()
        if not char or char not in allowed:
            raise ParseError(f"Expecting one of {allowed!r} at character {self.pos}")
        self.pos += 1
        return char


class LargeJSONParser(StrictJSONParser):
    """JSON for the bulk endpoints (up to 8 MiB). An object's `decisions` array is read item
    by item and refused at its 1,001st item (the rest of the body is never read). The nesting
    is checked here; the strings and numbers are checked by the view, the envelope's at once
    and each item's with that item, so that a bad item rejects that item alone (docs/reference/decisions.md)."""

    decoder = JSON_DECODER

    def document(self, stream: Body | None) -> object:
        reader = _TextReader(stream)
        if reader.peek() != "{":  # not an envelope: parsed whole, refused by the view
            while reader.more():
                pass
            return load_json(reader.text.encode(), strings=False)
        reader.pos += 1
        body: JSONObject = {}
        if reader.peek() == "}":
            reader.pos += 1
        else:
            while True:
                key = self._value(reader)
                if not isinstance(key, str):
                    raise ParseError(f"Expecting a property name at character {reader.pos}")
                reader.expect(":")
                if key in body:
                    raise ParseError(f"duplicate key {key!r}")
                if key == "decisions" and reader.peek() == "[":
                    body[key] = self._items(reader)
                else:
                    body[key] = self._value(reader)
                if reader.expect(",}") == "}":
                    break
        if reader.peek():
            raise ParseError(f"Extra data at character {reader.pos}")
        check_document(body, strings=False)
        return body

    def _items(self, reader: _TextReader) -> list[object]:
        reader.pos += 1  # the "["
        items: list[object] = []
        if reader.peek() == "]":
            reader.pos += 1
            return items
        while True:
            if len(items) == BATCH_MAX_ITEMS:
                raise too_many_items()
            items.append(self._value(reader))
            if reader.expect(",]") == "]":
                return items

    def _value(self, reader: _TextReader) -> object:
        """The next JSON value; one that reaches the end of what was read so far is decoded
        again with more of the body (a number or a document may go on in the next chunk).

        Until the body's end has been read, the value is decoded from the unread text alone: a
        value cut at the end of a chunk fails, and json's error counts the lines of all the text
        it was given, up to a megabyte kept before the consumed text is dropped (a third of a
        1,000-item batch's parse went there). The last attempt decodes the whole text, so an
        error's message (its line, column and character) is the one it always was."""
        reader.peek()
        while True:
            try:
                if reader.eof:
                    value, end = self.decoder.raw_decode(reader.text, reader.pos)
                else:
                    value, end = self.decoder.raw_decode(reader.text[reader.pos :])
                    end += reader.pos
            except RecursionError as exc:
                raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
            except ValueError as exc:
                if reader.more():
                    continue
                raise ParseError(json_error(exc)) from exc
            if end == len(reader.text) and reader.more():
                continue
            reader.pos = end
            return value


class NDJSONParser(BaseParser):
    """`application/x-ndjson`: one JSON document per line (blank lines skipped), parsed into
    `{"decisions": [...]}`, the JSON form of a batch. The body is read line by line and refused
    at its 1,001st item (the rest is never read). A line that is not JSON is INVALID_JSON for
    the whole body; strings and numbers are checked with each item, as for LargeJSONParser."""

    media_type = "application/x-ndjson"

    def parse(
        self,
        stream: Body | None,
        media_type: str | None = None,
        parser_context: Mapping[str, object] | None = None,
    ) -> dict[str, list[object]]:
        items: list[object] = []
        pending = b""
        number = 0
        while True:
            chunk = stream.read(READ_CHUNK) if stream is not None else b""
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop() if chunk else b""
            for raw in lines:
                number += 1
                if not raw.strip():
                    continue
                if len(items) == BATCH_MAX_ITEMS:
                    raise too_many_items()
                try:
                    items.append(load_json(raw, strings=False))
                except ParseError as exc:
                    raise ParseError(f"line {number}: {exc.detail}") from exc
            if not chunk:
                return {"decisions": items}
