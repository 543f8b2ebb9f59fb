"""The auditor's offline verifier: no database, no Django, no access to the service.

    python3 -m audit.offline_verify --key KEY --checkpoint NOTE [--checkpoint NOTE ...] EXPORT.ndjson
    python3 -m audit.offline_verify --key KEY --checkpoint NOTE --entry ENTRY.json --proof PROOF.json
    python3 -m audit.offline_verify --report REPORT.json EXPORT.ndjson     (audit/offline_report.py)
    python3 -m audit.offline_verify --drift EXPORT.ndjson [SERIES.json ...]  (audit/offline_drift.py)
    python3 -m audit.offline_verify --key KEY --consistency OLD NEW --proof PROOF.json  (audit/offline_consistency.py)

KEY is the verifier key (`name+keyid+base64`, from GET /audit-trail/checkpoint-key), given
as the text itself or as a file holding it or that endpoint's JSON, or a report PDF (which
embeds it as verifier-key.txt). NOTE is a file holding a checkpoint: the signed note
(GET /audit-trail/checkpoints/latest with Accept: text/plain, or the `note` of an
`audit.checkpoint` event), or a checkpoint's JSON, or a page of GET /audit-trail/checkpoints,
or a report PDF (which embeds its checkpoint as checkpoint-note.txt). A file holding `null`
(what a page of no checkpoint gives) is "no checkpoint at that date". EXPORT is
GET /audit-trail/export from the first entry.

With an export it recomputes every entry's hash and link from line 1, rebuilds the Merkle
tree, and checks each checkpoint's signature and its root at its size. With one entry and
an inclusion proof (GET /audit-trail/proofs/inclusion) it checks that entry alone. It says
in plain words what it proved or where the trail broke; exit status 0 when everything
checked out, 1 when something did not, 2 when the input could not be read.
Needs Python 3.12+, its standard library and, to check signatures, the `cryptography` package
(where it is missing it says what to install; docs/reference/checkpoints.md).
"""

import argparse
import base64
import json
import multiprocessing
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from audit import merkle, note
from audit.hashing import DuplicateKey, entry_hash_matches, format2_problem, strict_loads
from audit.jsondoc import JSONObject, JSONValue
from audit.offline_erasures import ErasureLedger, erasure_listed
from audit.offline_erasures import report as erasures_report
from audit.offline_inputs import Signed, Unreadable, read_checkpoints, read_key, short

GENESIS = "0" * 64


BATCH = 2000


# A line's result: (line number, sequence, previous_hash, hash, None when the content matches
# its hash else what is wrong, what an intact `erasure` entry lists: its id and ranges).
# an export line's members as found (any JSON), judged by the caller
Hashed = tuple[int, JSONValue, JSONValue, JSONValue, str | None, tuple[str, list[tuple[int, int]]] | None]


def _hashed(lines: list[tuple[int, bytes | str]]) -> list[Hashed]:
    """Parse and hash a batch of lines (in a worker process when there are several)."""
    out: list[Hashed] = []
    for number, line in lines:
        try:
            doc = strict_loads(line.decode("utf-8") if isinstance(line, bytes) else line)
        except UnicodeDecodeError as exc:
            out.append((number, None, None, None, f"not UTF-8 ({exc.reason} at byte {exc.start})", None))
            continue
        except DuplicateKey as exc:
            out.append((number, None, None, None, f"twice: {exc}", None))
            continue
        except json.JSONDecodeError as exc:
            out.append((number, None, None, None, f"not JSON ({exc.msg})", None))
            continue
        except RecursionError:
            out.append((number, None, None, None, "nested too deeply to read", None))
            continue
        except ValueError as exc:  # an integer of more digits than Python converts
            out.append((number, None, None, None, f"not readable JSON ({short(exc)})", None))
            continue
        if not isinstance(doc, dict):
            out.append((number, None, None, None, "not a JSON object", None))
            continue
        problem = _content_problem(doc)
        listed = erasure_listed(doc) if problem is None else None
        out.append((number, doc.get("sequence"), doc.get("previous_hash"), doc.get("hash"), problem, listed))
    return out


# a JSON document by name (an entry, a report), whose members are read as found
def _content_problem(doc: JSONObject) -> str | None:
    """None when the entry's content matches its hash (format 1: its fields; format 2: its
    canonical text, the fields it shows and the commitment to its personal fields); "erased"
    for an intact format-2 entry whose personal part was erased; else "content: <why>"."""
    try:
        if doc.get("format") == 2:
            problem = format2_problem(doc)
            return None if problem is None else problem if problem == "erased" else f"content: {problem}"
        return None if entry_hash_matches(doc) else "content: it was edited"
    except DuplicateKey as exc:
        return f"twice: {exc}"
    except (KeyError, TypeError, ValueError, RecursionError, AttributeError) as exc:
        return f"content: it cannot be read as an entry ({short(exc)})"


Export = Iterable[bytes | str]  # an export's lines, read as bytes or as text


def _batches(stream: Export) -> Iterable[list[tuple[int, bytes | str]]]:
    batch: list[tuple[int, bytes | str]] = []
    for number, line in enumerate(stream, 1):
        if line.strip():
            batch.append((number, line))
            if len(batch) >= BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def _entries(stream: Export, jobs: int) -> Iterable[Hashed]:
    """Every line's result, in order; parsing and hashing spread over `jobs` processes."""
    if jobs <= 1:
        for batch in _batches(stream):
            yield from _hashed(batch)
        return
    with multiprocessing.Pool(jobs) as pool:
        for results in pool.imap(_hashed, _batches(stream), chunksize=1):
            yield from results


def verify_export(stream: Export, checkpoints: list[Signed], out: TextIO, jobs: int = 1) -> bool:
    """Recompute the chain and the tree from line 1; check each checkpoint at its size."""
    origins = {signed.checkpoint.origin for signed in checkpoints}
    if len(origins) > 1:
        out.write(f"FAILED: the checkpoints name different logs: {', '.join(sorted(origins))}\n")
        return False
    by_size: dict[int, list[Signed]] = {}
    for signed in checkpoints:
        by_size.setdefault(signed.checkpoint.size, []).append(signed)
    edge = merkle.CompactRange()
    previous = GENESIS
    ledger = ErasureLedger()
    proved: list[str] = []
    for number, sequence, previous_hash, value, problem, listed in _entries(stream, jobs):
        failure = _link_failure(number, sequence, previous_hash, problem, size=edge.size, previous=previous)
        if failure:
            out.write(failure)
            return False
        if problem == "erased":
            ledger.add_erased(number, sequence)
        if listed is not None:
            ledger.add_erasure(sequence, *listed)
        edge.append(bytes.fromhex(value))
        previous = value
        for signed in by_size.pop(edge.size, []):
            if edge.root() != signed.checkpoint.root:
                out.write(
                    f"FAILED at line {number} (sequence {sequence}): the tree of the first {edge.size} "
                    f"entries has root {base64.b64encode(edge.root()).decode()}, but the "
                    f"{signed.describe()} says {base64.b64encode(signed.checkpoint.root).decode()}: "
                    "history was rewritten.\n"
                )
                return False
            proved.append(signed.describe())
    if by_size:
        for size, missing in sorted(by_size.items()):
            for signed in missing:
                out.write(
                    f"FAILED: the export ends after {edge.size} entries, but the {signed.describe()} covers "
                    f"{size}: signed entries are missing (deleted, or the export was cut short).\n"
                )
        return False
    every_listed, erasure_lines = erasures_report(ledger)
    if not every_listed:
        out.writelines(erasure_lines)
        return False
    _report_verified(
        out, log=next(iter(origins), ""), size=edge.size, erased=len(ledger.erased), proved=proved
    )
    out.writelines(erasure_lines)
    covered = max((signed.checkpoint.size for signed in checkpoints), default=0)
    if covered < edge.size:
        out.write(
            f"NOTE: entries {covered + 1}..{edge.size} are chained but no checkpoint given here covers "
            "them; a later checkpoint proves them.\n"
        )
    return True


# a line's members as found (any JSON), judged here
def _link_failure(
    number: int,
    sequence: JSONValue,
    previous_hash: JSONValue,
    problem: str | None,
    *,
    size: int,
    previous: str,
) -> str | None:
    """Why the entry on line `number` does not extend a chain of `size` entries ending in the
    hash `previous` (the FAILED line), or None when it does. Raises Unreadable for a line that
    is not an entry at all."""
    if problem is not None and problem.startswith("twice: "):
        return (
            f"FAILED at line {number}: an object of the entry names a key twice ({problem[7:]}), "
            "so what the entry holds is not defined.\n"
        )
    if problem is not None and not problem.startswith("content") and problem != "erased":
        raise Unreadable(f"line {number} of the export is {problem}")
    where = f"line {number} (sequence {sequence})"
    if sequence != size + 1:
        first = "the export must start at sequence 1" if size == 0 else f"expected {size + 1}"
        return f"FAILED at {where}: entries are missing or out of order ({first}).\n"
    if previous_hash != previous:
        return f"FAILED at {where}: previous_hash is not the hash of the entry before it.\n"
    if problem is not None and problem.startswith("content"):
        return f"FAILED at {where}: the entry's content does not match its hash ({problem[9:]}).\n"
    return None


def _report_verified(out: TextIO, *, log: str, size: int, erased: int, proved: list[str]) -> None:
    out.write(f"OK: {size} entries of {log}; every hash and link recomputed from line 1.\n")
    if erased:
        out.write(
            f"OK: {erased} entries had their personal fields erased, each listed by an `erasure` entry of "
            "the export; their hashes and links still stand (docs/reference/erasure.md); every other "
            "entry's personal fields match their commitment.\n"
        )
    for line in proved:
        out.write(f"OK: the tree of the export matches the {line}.\n")


# a JSON document by name (an entry, a report), whose members are read as found
def verify_entry(entry: JSONObject, proof: JSONObject, signed: Signed, out: TextIO) -> bool:
    """One entry, one inclusion proof, one checkpoint."""
    checkpoint = signed.checkpoint
    sequence = entry.get("sequence")
    problem = _content_problem(entry)
    if problem == "erased":
        out.write(
            f"FAILED: entry {sequence} reads erased; an erased entry is accepted only with the export that "
            "holds the `erasure` entry listing it (run the verifier on the export).\n"
        )
        return False
    if problem is not None:
        out.write(
            f"FAILED: entry {sequence}'s content does not match its hash ({problem.split(': ', 1)[-1]}).\n"
        )
        return False
    leaf = merkle.leaf_hash(bytes.fromhex(entry["hash"]))
    try:
        path = [base64.b64decode(value, validate=True) for value in proof["hashes"]]
        index, size = int(proof["leaf_index"]), int(proof["tree_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise Unreadable(f"the inclusion proof is not readable ({exc})") from exc
    if index != (sequence or 0) - 1 or proof.get("leaf_hash") not in (None, base64.b64encode(leaf).decode()):
        out.write(f"FAILED: the proof is for another entry (leaf {index}), not entry {sequence}.\n")
        return False
    if size != checkpoint.size:
        out.write(
            f"FAILED: the proof is for a tree of {size} entries, the checkpoint for {checkpoint.size}.\n"
        )
        return False
    if not merkle.verify_inclusion(index, size, leaf, path, checkpoint.root):
        out.write(f"FAILED: entry {sequence} is NOT in the tree of the {signed.describe()}.\n")
        return False
    out.write(f"OK: entry {sequence} (hash {entry['hash']}) is in the tree of the {signed.describe()}.\n")
    return True


# a JSON document by name (an entry, a report), whose members are read as found
def _json_file(path: str) -> JSONObject:
    try:
        data = strict_loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Unreadable(f"{path}: not a JSON file ({short(exc)})") from exc
    if not isinstance(data, dict):
        raise Unreadable(f"{path}: not a JSON object")
    return data


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["--drift"]:  # every drift monitor's chart recomputed: audit/offline_drift.py
        from audit import offline_drift

        return offline_drift.main(given[1:], out)
    if given[:1] == ["--report"]:  # a report's figures re-derived from the export: audit/offline_report.py
        from audit import offline_report

        return offline_report.main(given[1:], out)
    if "--consistency" in given:  # two checkpoints and a proof, no export: audit/offline_consistency.py
        from audit import offline_consistency

        return offline_consistency.main(given, out)
    parser = argparse.ArgumentParser(
        prog="python3 -m audit.offline_verify", description=__doc__.split("\n\n")[2].strip()
    )
    parser.add_argument("--key", required=True, help="verifier key, or a file holding it")
    parser.add_argument("--checkpoint", action="append", required=True, help="a checkpoint file (repeatable)")
    parser.add_argument("--entry", help="one entry's JSON (with --proof)")
    parser.add_argument("--proof", help="the entry's inclusion proof JSON (with --entry)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes that hash lines")
    parser.add_argument("export", nargs="?", help="the NDJSON export (GET /audit-trail/export)")
    args = parser.parse_args(argv)
    if bool(args.entry) != bool(args.proof) or bool(args.export) == bool(args.entry):
        parser.error("give either an export, or --entry with --proof")
    missing = note.check_cryptography()
    if missing:
        out.write(f"CANNOT VERIFY: {missing}.\n")
        return 2
    try:
        verifier = read_key(args.key)
        checkpoints, bad = read_checkpoints(args.checkpoint, verifier)
        for sentence in bad:
            out.write(f"FAILED: {sentence}\n")
        if bad or not checkpoints:
            return 1
        if args.entry:
            if len(checkpoints) != 1:
                raise Unreadable("give exactly one checkpoint with --entry")
            ok = verify_entry(_json_file(args.entry), _json_file(args.proof), checkpoints[0], out)
        else:
            # Read as bytes, lines end at \n only (U+2028 may stand unescaped inside a JSON
            # string); each line is decoded where it is parsed, so a line that is not UTF-8 is
            # named by its number.
            with open(args.export, "rb") as stream:
                ok = verify_export(stream, checkpoints, out, jobs=max(1, args.jobs))
    except (Unreadable, OSError) as exc:
        out.write(f"CANNOT VERIFY: {exc}\n")
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
