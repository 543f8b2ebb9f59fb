"""The inputs of the offline verifier (audit/offline_verify.py): the verifier key and the
checkpoints, from a file holding the text, the service's JSON, or a report PDF that embeds them
(audit/pdf_files.py); a file of `null` is "no checkpoint at that date"; a note that is not as
signed is refused with its reason. No Django here.
"""

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from audit import note, pdf_files
from audit.hashing import strict_loads


class Unreadable(Exception):
    """An input file that is not what it should be (exit status 2)."""


@dataclass(frozen=True)
class Signed:
    source: str
    checkpoint: note.Checkpoint

    def describe(self) -> str:
        when = next(
            (ext[5:] for ext in self.checkpoint.extensions if ext.startswith("time ")), "unknown time"
        )
        return f"checkpoint of {self.checkpoint.size} entries signed at {when} ({self.source})"


class NoCheckpoint(Unreadable):
    """A checkpoint file that says there is none (the JSON `null` of an empty page)."""


def _pdf_file(path: Path, name: str) -> str | None:
    """The embedded file `name` of the report PDF at `path`, or None when the PDF has none."""
    try:
        files = pdf_files.embedded_files(path.read_bytes())
    except (OSError, pdf_files.NotAPdf) as exc:
        raise Unreadable(f"{path}: cannot read its embedded files ({short(exc)})") from exc
    content = files.get(name)
    try:
        return None if content is None else content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path}: its embedded {name} is not UTF-8") from exc


def _is_pdf(path: Path) -> bool:
    try:
        with path.open("rb") as stream:
            return pdf_files.is_pdf(stream.read(1024))
    except OSError:
        return False


def read_key(value: str) -> note.Verifier:
    """The verifier key: the text itself, a file holding it or the checkpoint-key JSON, or a
    report PDF that embeds it (verifier-key.txt)."""
    path = Path(value)
    try:
        if path.is_file() and _is_pdf(path):
            text = _pdf_file(path, pdf_files.VERIFIER_KEY)
            if text is None:
                raise Unreadable(f"{path} embeds no verifier key (it is not a Trustcal report)")
            text = text.strip()
        else:
            text = path.read_text(encoding="utf-8").strip() if path.is_file() else value.strip()
        if text.startswith("{"):
            data = strict_loads(text)
            text = data.get("verifier_key", "") if isinstance(data, dict) else ""
        if not isinstance(text, str):
            raise note.NoteError("verifier_key is not a string")
        return note.parse_verifier_key(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable(f"the verifier key file cannot be read ({exc})") from exc
    except (ValueError, RecursionError, note.NoteError) as exc:
        raise Unreadable(f"the verifier key is not valid ({short(exc)})") from exc


def short(exc: BaseException) -> str:
    """An error's message, cut to a line (a 200,000-deep document's error is not)."""
    text = str(exc) or type(exc).__name__
    if "integer string conversion" in text:  # not the interpreter's setting: the bound itself
        text = f"a number has more than {sys.get_int_max_str_digits():,} digits"
    return text if len(text) <= 200 else text[:200] + "..."


NO_CHECKPOINT = (
    "no checkpoint at that date: the file holds {what}, which is what the service answers when no "
    "checkpoint had been made at or before the date asked (take a later date, or a checkpoint kept "
    "from an audit.checkpoint event)"
)


def _notes_in(text: str, path: str) -> list[str]:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[", "null")):
        return [text]
    data = strict_loads(stripped)
    if data is None:
        raise NoCheckpoint(f"{path}: " + NO_CHECKPOINT.format(what="null"))
    if isinstance(data, dict) and "data" in data:
        data = data["data"]
        if data == []:
            raise NoCheckpoint(f"{path}: " + NO_CHECKPOINT.format(what="an empty list of checkpoints"))
    items = data if isinstance(data, list) else [data]
    return [item["note"] for item in items if isinstance(item, dict) and isinstance(item.get("note"), str)]


def _read_notes(path: str) -> list[str]:
    """The signed notes a checkpoint file holds: a note, JSON, or a report PDF's embedded note."""
    if _is_pdf(Path(path)):
        text = _pdf_file(Path(path), pdf_files.CHECKPOINT_NOTE)
        if text is None:
            raise NoCheckpoint(
                f"{path} embeds no checkpoint: none had been made of the audit trail when the report was generated"
            )
        return [text]
    try:
        return _notes_in(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Unreadable(f"{path}: cannot read a checkpoint ({short(exc)})") from exc


def read_checkpoints(paths: Iterable[str], verifier: note.Verifier) -> tuple[list[Signed], list[str]]:
    """The checkpoints whose signature verifies, and a sentence for each one that does not."""
    good: list[Signed] = []
    bad: list[str] = []
    for path in paths:
        notes = _read_notes(path)
        if not notes:
            raise Unreadable(f"{path}: holds no checkpoint note")
        for number, signed in enumerate(notes, 1):
            source = path if len(notes) == 1 else f"{path} #{number}"
            try:
                body = note.parse_checkpoint(note.open_note(signed, verifier).text)
            except note.NoteError as exc:
                bad.append(_refusal(source, verifier, exc))
                continue
            good.append(Signed(source, body))
    return good, bad


def _refusal(source: str, verifier: note.Verifier, exc: note.NoteError) -> str:
    reason = str(exc)
    if reason.startswith("malformed"):
        # Not a forgery, not a signature at all: a note that is not as the service wrote it.
        return (
            f"{source} is not a well-formed signed note, so no signature was checked ({reason}); "
            "use the note exactly as the service gave it: GET /v1/audit-trail/checkpoints/latest with "
            "Accept: text/plain, an audit.checkpoint event's note, or the report PDF itself, which embeds "
            f"it as {pdf_files.CHECKPOINT_NOTE}"
        )
    return f"{source}: NOT signed by {verifier.name}+{verifier.key_id:08x} ({reason})"
