"""The erasures of a report's period as its PDF prints them (templates/compliance/_erasures.html;
docs/reference/erasure.md): a sentence with the counts, and one row per erasure, its legal basis
named as the law names it. No erased value is in the data, so none can be printed."""

from typing import Any

from audit.selectors import LEGAL_BASIS_NAMES
from compliance import printing

TARGETS = {"subject_id": "a data subject", "user_id": "a reviewer", "retention": "the retention policy"}


def basis(code: str) -> str:
    return LEGAL_BASIS_NAMES.get(code, code)


def erasures(data: dict[str, Any]) -> dict[str, Any]:
    total = data.get("count", 0)
    if not total:
        sentence = "No erasure of personal data was completed in the period."
    else:
        bases = "; ".join(f"{basis(code)}: {printing.count(n)}" for code, n in data["by_legal_basis"].items())
        sentence = (
            f"{printing.count(total)} erasure(s) completed in the period deleted the personal fields of "
            f"{printing.count(data.get('entries', 0))} audit entries (by legal basis: {bases})."
        )
    items = data.get("items") or []
    rows = [
        [
            item["erasure_id"],
            printing.when(item["completed_at"]),
            basis(item["legal_basis"]),
            TARGETS.get(item["target"], item["target"]),
            printing.count(item["entries"]),
            printing.figure("entry_sequence", item.get("entry_sequence")),
        ]
        for item in items
    ]
    note = (
        f"The first {printing.count(len(items))} of {printing.count(total)} erasures are listed; "
        "GET /v1/erasures lists all of them."
        if len(items) < total
        else ""
    )
    return {"sentence": sentence, "rows": rows, "note": note}
