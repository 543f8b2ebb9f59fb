"""Signed notes (C2SP signed-note) with Ed25519 signatures, and the C2SP tlog-checkpoint
text they carry. Written to the byte against those specifications and checked against
the published vectors of Go's golang.org/x/mod/sumdb/note (tests/audit/test_note.py).

A note is its text (ending in a newline), a blank line, then signature lines
"— <key name> <base64(4-byte key id || signature)>". The key id is the first four bytes of
SHA-256(key name || 0x0A || 0x01 || 32-byte public key); a verifier key is
"<name>+<8 hex digits of key id>+<base64(0x01 || public key)>".

No Django here: the offline verifier (audit/offline_verify.py) imports this module; it
imports `cryptography` only to sign or check a signature, so that the verifier can say what to
install where it is missing (check_cryptography).
"""

import base64
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

CRYPTOGRAPHY_MISSING = (
    "checking a signature needs the Python package `cryptography`, which is not installed for {python}: "
    "install it with `{python} -m pip install cryptography` (or, on Debian, `apt-get install "
    "python3-cryptography`), then run the command again"
)

ALG_ED25519 = b"\x01"
SIG_PREFIX = "\u2014 "  # em dash, space
MAX_SIGNATURES = 100


class NoteError(ValueError):
    """A note that is malformed, or carries no valid signature of the expected key."""


def check_cryptography() -> str | None:
    """None when `cryptography` can be imported, else the sentence that says what to install."""
    try:
        import cryptography.hazmat.primitives.asymmetric.ed25519  # noqa: F401
    except ImportError:
        return CRYPTOGRAPHY_MISSING.format(python=Path(sys.executable).name or "python3")
    return None


def _valid_name(name: str) -> bool:
    return bool(name) and "+" not in name and not any(ch.isspace() for ch in name)


def key_id(name: str, public_key: bytes) -> int:
    digest = hashlib.sha256(name.encode() + b"\n" + ALG_ED25519 + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def public_bytes(private_key: "Ed25519PrivateKey") -> bytes:
    return private_key.public_key().public_bytes_raw()


def verifier_key(name: str, public_key: bytes) -> str:
    if not _valid_name(name) or len(public_key) != 32:
        raise NoteError("invalid key name or public key")
    encoded = base64.b64encode(ALG_ED25519 + public_key).decode()
    return f"{name}+{key_id(name, public_key):08x}+{encoded}"


@dataclass(frozen=True)
class Verifier:
    name: str
    key_id: int
    public_key: bytes


def parse_verifier_key(vkey: str) -> Verifier:
    """`name+hexid+base64(0x01 || key)`, exactly as Go's note.NewVerifier accepts it."""
    name, sep1, rest = vkey.partition("+")
    hex_id, sep2, encoded = rest.partition("+")
    if not (sep1 and sep2) or not _valid_name(name) or not re.fullmatch(r"[0-9a-f]{8}", hex_id):
        raise NoteError("malformed verifier key")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except ValueError as exc:
        raise NoteError("malformed verifier key") from exc
    if len(raw) != 33 or raw[:1] != ALG_ED25519 or base64.b64encode(raw).decode() != encoded:
        raise NoteError("malformed verifier key")
    if key_id(name, raw[1:]) != int(hex_id, 16):
        raise NoteError("malformed verifier key")
    return Verifier(name=name, key_id=int(hex_id, 16), public_key=raw[1:])


def _check_text(text: str) -> None:
    if not text.endswith("\n") or any(ord(ch) < 0x20 and ch != "\n" for ch in text):
        raise NoteError("malformed note")


def sign(text: str, name: str, private_key: "Ed25519PrivateKey") -> str:
    """The signed note of `text` with one Ed25519 signature by `name`."""
    _check_text(text)
    if not _valid_name(name):
        raise NoteError("invalid key name")
    kid = key_id(name, public_bytes(private_key)).to_bytes(4, "big")
    signature = private_key.sign(text.encode("utf-8"))
    return f"{text}\n{SIG_PREFIX}{name} {base64.b64encode(kid + signature).decode()}\n"


@dataclass
class Opened:
    text: str
    signatures: list[tuple[str, int]] = field(default_factory=list)  # (name, key id) verified


def _malformed(reason: str) -> NoteError:
    return NoteError(f"malformed note: {reason}")


def _signature_lines(note: str) -> tuple[str, list[str]]:
    """The note's text and its signature lines; NoteError naming what makes it malformed."""
    if any(ord(ch) < 0x20 and ch != "\n" for ch in note):
        raise _malformed("it holds a control character other than a line feed (a carriage return?)")
    split = note.rfind("\n\n")
    if split < 0:
        raise _malformed(
            "no blank line between the text and the signature lines (a copy of the printed note drops it)"
        )
    text, sigs = note[: split + 1], note[split + 2 :]
    if not sigs.endswith("\n"):
        raise _malformed("the last signature line does not end with a line feed")
    lines = sigs[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise _malformed(f"more than {MAX_SIGNATURES} signature lines")
    return text, lines


def open_note(note: str | bytes, verifier: Verifier) -> Opened:
    """The note's text once a signature of `verifier` checks out. Signatures of other keys
    are ignored (as the format requires); a bad signature of the known key, a malformed
    note (NoteError "malformed note: <why>"), or no signature of the known key raise NoteError."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if isinstance(note, bytes):
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _malformed("not UTF-8") from exc
    text, lines = _signature_lines(note)
    opened = Opened(text=text)
    for number, line in enumerate(lines, 1):
        if not line.startswith(SIG_PREFIX):
            raise _malformed(
                f"signature line {number} does not start with an em dash and a space (indented, or not a signature)"
            )
        name, space, encoded = line[len(SIG_PREFIX) :].partition(" ")
        if not space or not _valid_name(name):
            raise _malformed(f"signature line {number} names no valid key")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except ValueError as exc:
            raise _malformed(f"signature line {number} is not base64") from exc
        if len(raw) < 5 or base64.b64encode(raw).decode() != encoded:
            raise _malformed(f"signature line {number} is not a signature")
        kid = int.from_bytes(raw[:4], "big")
        if name != verifier.name or kid != verifier.key_id:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(verifier.public_key).verify(raw[4:], text.encode("utf-8"))
        except InvalidSignature as exc:
            raise NoteError(f"invalid signature for key {name}+{kid:08x}") from exc
        opened.signatures.append((name, kid))
    if not opened.signatures:
        raise NoteError("note has no verifiable signatures")
    return opened


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()


def checkpoint_text(checkpoint: Checkpoint) -> str:
    """The tlog-checkpoint body: origin, decimal size, base64 root, extension lines."""
    lines = [checkpoint.origin, str(checkpoint.size), base64.b64encode(checkpoint.root).decode()]
    return "\n".join([*lines, *checkpoint.extensions]) + "\n"


def parse_checkpoint(text: str) -> Checkpoint:
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "" or any(line == "" for line in lines[:-1]):
        raise NoteError("malformed checkpoint")
    origin, size, root = lines[0], lines[1], lines[2]
    if not re.fullmatch(r"0|[1-9][0-9]*", size):
        raise NoteError("malformed checkpoint")
    try:
        raw_root = base64.b64decode(root, validate=True)
    except ValueError as exc:
        raise NoteError("malformed checkpoint") from exc
    if len(raw_root) != 32 or base64.b64encode(raw_root).decode() != root:
        raise NoteError("malformed checkpoint")
    return Checkpoint(origin=origin, size=int(size), root=raw_root, extensions=tuple(lines[3:-1]))
