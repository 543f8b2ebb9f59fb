"""The files a report PDF embeds (PDF/A-3 associated files), read with the standard library
alone, so that the offline verifier takes the checkpoint note and the verifier key from the
report itself (docs/reference/reports.md, "How to verify a report").

It reads PDFs as the service writes them (WeasyPrint: each embedded file a top-level stream,
its file specification in the document or in a compressed object stream). It proves nothing by
itself: what it finds is then checked like any other input (the note's signature with the key).
No Django here: the offline verifier imports this module.
"""

import re
import zlib

CHECKPOINT_NOTE = "checkpoint-note.txt"
VERIFIER_KEY = "verifier-key.txt"

_OBJECT = re.compile(rb"(\d+)\s+\d+\s+obj\b")
_LENGTH = re.compile(rb"/Length\s+(\d+)(?!\s+\d+\s+R)")
_FILESPEC_NAME = re.compile(rb"/F\s*\(((?:[^()\\]|\\.)*)\)")
_FILESPEC_STREAM = re.compile(rb"/EF\s*<<\s*/F\s+(\d+)\s+\d+\s+R")


class NotAPdf(ValueError):
    """Bytes that are not a PDF whose objects can be read."""


def is_pdf(data: bytes) -> bool:
    return data[:1024].lstrip().startswith(b"%PDF-")


def _objects(data: bytes) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """(each top-level object's dictionary text, each top-level stream's decoded content)."""
    dictionaries: dict[int, bytes] = {}
    streams: dict[int, bytes] = {}
    for match in _OBJECT.finditer(data):
        number, start = int(match.group(1)), match.end()
        end = data.find(b"endobj", start)
        end = len(data) if end < 0 else end
        body = data[start:end]
        keyword = re.search(rb">>\s*stream\r?\n", body)
        if keyword is None:
            dictionaries[number] = body
            continue
        header = body[: keyword.start() + 2]
        dictionaries[number] = header
        content_start = start + keyword.end()
        length = _LENGTH.search(header)
        if length is not None:
            raw = data[content_start : content_start + int(length.group(1))]
        else:
            raw = data[content_start : data.find(b"endstream", content_start)].rstrip(b"\r\n")
        if b"/FlateDecode" in header:
            try:
                raw = zlib.decompress(raw)
            except zlib.error:
                continue
        elif b"/Filter" in header:
            continue  # a filter this reader does not decode: not one of the service's files
        streams[number] = raw
    return dictionaries, streams


def _in_object_streams(dictionaries: dict[int, bytes], streams: dict[int, bytes]) -> list[bytes]:
    """The objects held in compressed object streams (/Type /ObjStm), as text."""
    out: list[bytes] = []
    for number, header in dictionaries.items():
        if b"/ObjStm" not in header or number not in streams:
            continue
        first = re.search(rb"/First\s+(\d+)", header)
        count = re.search(rb"/N\s+(\d+)", header)
        if first is None or count is None:
            continue
        content = streams[number]
        pairs = content[: int(first.group(1))].split()
        offsets = [int(pairs[i]) for i in range(1, min(len(pairs), 2 * int(count.group(1))), 2)]
        body = content[int(first.group(1)) :]
        for index, offset in enumerate(offsets):
            end = offsets[index + 1] if index + 1 < len(offsets) else len(body)
            out.append(body[offset:end])
    return out


def _name(raw: bytes) -> str:
    text = re.sub(rb"\\(.)", rb"\1", raw)
    return text.decode("latin-1")


def embedded_files(data: bytes) -> dict[str, bytes]:
    """Each embedded file of the PDF by its name."""
    if not is_pdf(data):
        raise NotAPdf("not a PDF")
    dictionaries, streams = _objects(data)
    candidates = [*dictionaries.values(), *_in_object_streams(dictionaries, streams)]
    files: dict[str, bytes] = {}
    for text in candidates:
        if not re.search(rb"/Type\s*/Filespec", text):
            continue
        name, stream = _FILESPEC_NAME.search(text), _FILESPEC_STREAM.search(text)
        if name is None or stream is None or int(stream.group(1)) not in streams:
            continue
        files[_name(name.group(1))] = streams[int(stream.group(1))]
    return files
