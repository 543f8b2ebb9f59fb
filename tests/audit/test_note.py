"""The signed-note and checkpoint formats, to the byte: the published vectors of Go's
golang.org/x/mod/sumdb/note (note_test.go: TestNewVerifier, TestSign, TestOpen), a round
trip, and the service's own checkpoints checked by an Ed25519 verification done here."""

import base64
import hashlib

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from audit import note

# golang.org/x/mod/sumdb/note, note_test.go
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
PETER_SIG = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
ENOCH_SIG = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n"


def _peter_key() -> Ed25519PrivateKey:
    seed = base64.b64decode(PETER_SKEY.split("+", 4)[4])
    assert seed[0] == 1
    return Ed25519PrivateKey.from_private_bytes(seed[1:])


def test_signing_the_go_vector_text_gives_the_go_vector_note_byte_for_byte():
    assert note.sign(TEXT, "PeterNeumann", _peter_key()) == TEXT + "\n" + PETER_SIG


def test_the_verifier_key_of_the_go_signing_key_is_the_go_verifier_key():
    assert note.verifier_key("PeterNeumann", note.public_bytes(_peter_key())) == PETER_VKEY
    parsed = note.parse_verifier_key(PETER_VKEY)
    assert (parsed.name, parsed.key_id) == ("PeterNeumann", 0xC74F20A3)


def test_mangled_verifier_keys_are_refused_as_go_refuses_them():
    for bad in [
        PETER_VKEY[:-1],
        PETER_VKEY[1:],
        PETER_VKEY.replace("c74f20a3", "c74f20a4"),
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ]:
        with pytest.raises(note.NoteError):
            note.parse_verifier_key(bad)


def test_open_verifies_the_known_key_and_ignores_unknown_ones():
    opened = note.open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, note.parse_verifier_key(PETER_VKEY))
    assert opened.text == TEXT and opened.signatures == [("PeterNeumann", 0xC74F20A3)]
    enoch = note.open_note(TEXT + "\n" + PETER_SIG + ENOCH_SIG, note.parse_verifier_key(ENOCH_VKEY))
    assert enoch.signatures == [("EnochRoot", 0xAF0CFE78)]
    with pytest.raises(note.NoteError, match="no verifiable signatures"):
        note.open_note(TEXT + "\n" + ENOCH_SIG, note.parse_verifier_key(PETER_VKEY))


def test_the_go_vectors_of_malformed_and_forged_notes_are_refused():
    peter = note.parse_verifier_key(PETER_VKEY)
    bad = [
        TEXT,
        TEXT + "\n",
        TEXT + "\n" + PETER_SIG[:-1],
        "\x01" + TEXT + "\n" + PETER_SIG,
        b"\xff" + (TEXT + "\n" + PETER_SIG).encode(),
        TEXT
        + "\n"
        + "— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
        TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
        TEXT + "\n" + PETER_SIG * 101,
    ]
    for message in bad:
        with pytest.raises(note.NoteError, match="malformed note"):
            note.open_note(message, peter)
    with pytest.raises(note.NoteError, match="invalid signature for key PeterNeumann\\+c74f20a3"):
        note.open_note(TEXT + "\n" + PETER_SIG[:60] + "ABCD" + PETER_SIG[60:], peter)


def test_a_checkpoint_round_trips_and_verifies_with_a_plain_ed25519_check():
    key = Ed25519PrivateKey.generate()
    body = note.Checkpoint(
        "log.example/acme", 20852163, hashlib.sha256(b"r").digest(), ("time 2026-11-21T10:00:00Z",)
    )
    text = note.checkpoint_text(body)
    signed = note.sign(text, "log.example", key)
    vkey = note.parse_verifier_key(note.verifier_key("log.example", note.public_bytes(key)))
    assert note.parse_checkpoint(note.open_note(signed, vkey).text) == body
    assert (
        text
        == f"log.example/acme\n20852163\n{base64.b64encode(body.root).decode()}\ntime 2026-11-21T10:00:00Z\n"
    )
    # Independently: the signature line's bytes after the key id are an Ed25519 signature of the text.
    name, encoded = signed.split("\n\n")[1].removeprefix("— ").rstrip("\n").split(" ")
    raw = base64.b64decode(encoded)
    expected_id = hashlib.sha256(b"log.example\n\x01" + note.public_bytes(key)).digest()[:4]
    assert name == "log.example" and raw[:4] == expected_id
    Ed25519PublicKey.from_public_bytes(note.public_bytes(key)).verify(raw[4:], text.encode())
    with pytest.raises(InvalidSignature):
        Ed25519PublicKey.from_public_bytes(note.public_bytes(key)).verify(
            raw[4:], text.replace("2085", "2086").encode()
        )


@pytest.mark.parametrize(
    "text",
    [
        "o\n01\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",  # leading zero
        "o\n1\nAAAA\n",  # root not 32 bytes
        "o\n1\n\n",
        "o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n",  # an empty extension line
        "o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",  # no final newline
    ],
)
def test_malformed_checkpoint_bodies_are_refused(text):
    with pytest.raises(note.NoteError):
        note.parse_checkpoint(text)
