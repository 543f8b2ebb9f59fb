"""Offline proof that an audit trail was not rewritten between two checkpoints: no database, no
Django, no export, no access to the service (docs/reference/checkpoints.md, "Verification by an
auditor, offline").

    python3 -m audit.offline_verify --key KEY --consistency OLD NEW --proof PROOF.json

OLD and NEW are files holding a checkpoint each (a signed note, a checkpoint's JSON, or a page
of GET /audit-trail/checkpoints whose first item is taken); PROOF is the answer of
GET /audit-trail/proofs/consistency?first=<OLD's size>&second=<NEW's size>. Both signatures
must check with the verifier key, both checkpoints must name the same log, and the proof must
show that NEW's tree extends OLD's (RFC 9162, section 2.1.4.2): the entries OLD signed are
the first entries of NEW's tree, unchanged. Exit status 0 when it holds, 1 when it does not,
2 when an input cannot be read.
"""

import argparse
import base64
from pathlib import Path
from typing import Any, TextIO

from audit import merkle, note
from audit.hashing import strict_loads
from audit.offline_inputs import Signed, Unreadable, read_checkpoints, read_key, short


def verify_consistency(
    first: int, second: int, path: list[bytes], first_root: bytes, second_root: bytes
) -> bool:
    """RFC 9162 section 2.1.4.2: does `path` prove that the tree of `second` leaves whose hash is
    `second_root` extends the tree of `first` leaves whose hash is `first_root`?"""
    if first < 1 or first > second:
        return False
    if first == second:
        return not path and first_root == second_root
    if not path:
        return False
    if first & (first - 1) == 0:  # a power of two: the first tree is a complete subtree
        path = [first_root, *path]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = merkle.node_hash(c, fr)
            sr = merkle.node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = merkle.node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


def _proof(path: str) -> tuple[int, int, list[bytes]]:
    try:
        # Any: the proof's JSON, read by name (a wrong shape raises, refused below)
        data: Any = strict_loads(Path(path).read_text(encoding="utf-8"))
        hashes = [base64.b64decode(value, validate=True) for value in data["hashes"]]
        return int(data["first"]), int(data["second"]), hashes
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise Unreadable(f"{path}: not a consistency proof ({short(exc)})") from exc


def _one(path: str, verifier: note.Verifier, out: TextIO) -> Signed | None:
    good, bad = read_checkpoints([path], verifier)
    for sentence in bad:
        out.write(f"FAILED: {sentence}\n")
    if bad or not good:
        return None
    return good[0]


def check(old: Signed, new: Signed, proof: tuple[int, int, list[bytes]], out: TextIO) -> bool:
    first, second, hashes = proof
    a, b = old.checkpoint, new.checkpoint
    if a.origin != b.origin:
        out.write(f"FAILED: the checkpoints are of two logs ({a.origin} and {b.origin}).\n")
        return False
    if a.size > b.size:
        out.write(f"FAILED: the old checkpoint ({a.size} entries) is larger than the new one ({b.size}).\n")
        return False
    if (first, second) != (a.size, b.size):
        out.write(
            f"FAILED: the proof is from {first} to {second} entries; the checkpoints are of {a.size} and "
            f"{b.size}: ask GET /audit-trail/proofs/consistency?first={a.size}&second={b.size}.\n"
        )
        return False
    if not verify_consistency(a.size, b.size, hashes, a.root, b.root):
        out.write(
            f"FAILED: the {new.describe()} does NOT extend the {old.describe()}: the first {a.size} "
            "entries were changed, or the proof is not for these checkpoints.\n"
        )
        return False
    out.write(
        f"OK: both signatures check, and the {new.describe()} extends the {old.describe()}: its first "
        f"{a.size} entries are exactly those the old checkpoint signed (nothing was rewritten between "
        "them).\n"
    )
    return True


def main(argv: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m audit.offline_verify --consistency",
        description="Check that a later checkpoint's tree extends an earlier one's.",
    )
    parser.add_argument("--key", required=True, help="verifier key, or a file holding it")
    parser.add_argument(
        "--consistency", nargs=2, required=True, metavar=("OLD", "NEW"), help="two checkpoint files"
    )
    parser.add_argument("--proof", required=True, help="GET /audit-trail/proofs/consistency's answer")
    args = parser.parse_args(argv)
    missing = note.check_cryptography()
    if missing:
        out.write(f"CANNOT VERIFY: {missing}.\n")
        return 2
    try:
        verifier = read_key(args.key)
        old, new = (_one(path, verifier, out) for path in args.consistency)
        if old is None or new is None:
            return 1
        return 0 if check(old, new, _proof(args.proof), out) else 1
    except (Unreadable, OSError) as exc:
        out.write(f"CANNOT VERIFY: {exc}\n")
        return 2
