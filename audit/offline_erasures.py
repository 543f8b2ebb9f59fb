"""The offline verifier's check of erased entries (docs/reference/erasure.md, "Verification
after an erasure"): an entry that reads erased is accepted only when an `erasure` entry of the
same export lists its sequence, and the verifier says which. Without that check, whoever hands
over an export could rewrite any entry as erased (its personal fields and salt removed: its
hash does not cover them) and hide a person. Standard library only."""

import heapq
from dataclasses import dataclass, field

from audit.jsondoc import JSONObject


# an entry's members as found (any JSON)
def erasure_listed(doc: JSONObject) -> tuple[str, list[tuple[int, int]]] | None:
    """An intact `erasure` entry's id and the sequence ranges it lists, else None."""
    if doc.get("type") != "erasure" or doc.get("format") != 2:
        return None
    ranges = doc.get("sequences")
    erasure_id = doc.get("erasure_id")
    if not isinstance(ranges, list) or not isinstance(erasure_id, str):
        return None
    out = []
    for item in ranges:
        if (
            isinstance(item, list)
            and len(item) == 2
            and all(type(bound) is int for bound in item)
            and item[0] <= item[1]
        ):
            out.append((item[0], item[1]))
    return erasure_id, out


@dataclass
class ErasureLedger:
    """Erased entries and the erasure entries of one export, matched once it is read."""

    erased: list[tuple[int, int]] = field(default_factory=list)  # (line, sequence)
    listed: list[tuple[int, int, str, int]] = field(
        default_factory=list
    )  # (first, last, erasure id, its sequence)

    def add_erased(self, line: int, sequence: int) -> None:
        self.erased.append((line, sequence))

    def add_erasure(self, sequence: int, erasure_id: str, ranges: list[tuple[int, int]]) -> None:
        self.listed.extend((first, last, erasure_id, sequence) for first, last in ranges)

    def check(self) -> tuple[list[tuple[int, int]], dict[tuple[str, int], int]]:
        """(the erased entries no erasure entry lists: line and sequence; how many erased
        entries each erasure entry, by erasure id and its own sequence, accounts for). One sweep
        over both, sorted: the spans that started at or before a sequence and have not ended."""
        spans = sorted(self.listed)
        open_spans: list[tuple[int, str, int]] = []  # a heap: (last, erasure id, its sequence)
        unlisted: list[tuple[int, int]] = []
        by_erasure: dict[tuple[str, int], int] = {}
        index = 0
        for line, sequence in sorted(self.erased, key=lambda item: item[1]):
            while index < len(spans) and spans[index][0] <= sequence:
                _, last, erasure_id, entry = spans[index]
                heapq.heappush(open_spans, (last, erasure_id, entry))
                index += 1
            while open_spans and open_spans[0][0] < sequence:
                heapq.heappop(open_spans)
            if not open_spans:
                unlisted.append((line, sequence))
                continue
            _, erasure_id, entry = open_spans[0]
            by_erasure[(erasure_id, entry)] = by_erasure.get((erasure_id, entry), 0) + 1
        unlisted.sort()
        return unlisted, by_erasure


def report(ledger: ErasureLedger) -> tuple[bool, list[str]]:
    """(whether every erased entry is listed by an erasure entry, the lines to print)."""
    unlisted, by_erasure = ledger.check()
    if unlisted:
        line, sequence = unlisted[0]
        more = (
            f" ({len(unlisted) - 1} more erased entries are listed by none either)"
            if len(unlisted) > 1
            else ""
        )
        return False, [
            f"FAILED at line {line} (sequence {sequence}): the entry reads erased, but no `erasure` "
            "entry of this export lists its sequence: its personal fields were removed outside an "
            f"erasure, and the export cannot show who it named{more}.\n"
        ]
    lines = []
    for (erasure_id, entry), count in sorted(by_erasure.items(), key=lambda item: item[0][1]):
        lines.append(
            f"OK: {count} erased entries are listed by erasure {erasure_id} (its entry, sequence {entry}).\n"
        )
    return True, lines
