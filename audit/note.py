"""Signed notes (C2SP signed-note) with Ed25519 signatures, and the C2SP tlog-checkpoint
text they carry. Written to the byte against those specifications and checked against
the published vectors of Go's golang.org/x/mod/sumdb/note (tests/audit/test_note.py).

A note is its text (ending in a newline), a blank line, then signature lines
"— <key name> <base64(4-byte key id || signature)>". The key id is the first four bytes of
SHA-256(key name || 0x0A || 0x01 || 32-byte public key); a verifier key is
"<name>+<8 hex digits of key id>+<base64(0x01 || public key)>".

No Django here: the offline verifier (audit/offline_verify.py) imports this module.
"""

import base64
import hashlib
import re
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG_ED25519 = b"\x01"
SIG_PREFIX = "\u2014 "  # em dash, space
MAX_SIGNATURES = 100


class NoteError(ValueError):
    """A note that is malformed, or carries no valid signature of the expected key."""


def _valid_name(name: str) -> bool:
    return bool(name) and "+" not in name and not any(ch.isspace() for ch in name)


def key_id(name: str, public_key: bytes) -> int:
    digest = hashlib.sha256(name.encode() + b"\n" + ALG_ED25519 + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
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


def sign(text: str, name: str, private_key: Ed25519PrivateKey) -> str:
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


def open_note(note: str | bytes, verifier: Verifier) -> Opened:
    """The note's text once a signature of `verifier` checks out. Signatures of other keys
    are ignored (as the format requires); a bad signature of the known key, a malformed
    note, or no signature of the known key raise NoteError."""
    if isinstance(note, bytes):
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NoteError("malformed note") from exc
    if any(ord(ch) < 0x20 and ch != "\n" for ch in note):
        raise NoteError("malformed note")
    split = note.rfind("\n\n")
    if split < 0:
        raise NoteError("malformed note")
    text, sigs = note[: split + 1], note[split + 2 :]
    if not sigs.endswith("\n"):
        raise NoteError("malformed note")
    lines = sigs[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteError("malformed note")
    opened = Opened(text=text)
    for line in lines:
        if not line.startswith(SIG_PREFIX):
            raise NoteError("malformed note")
        name, space, encoded = line[len(SIG_PREFIX) :].partition(" ")
        if not space or not _valid_name(name):
            raise NoteError("malformed note")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except ValueError as exc:
            raise NoteError("malformed note") from exc
        if len(raw) < 5 or base64.b64encode(raw).decode() != encoded:
            raise NoteError("malformed note")
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
