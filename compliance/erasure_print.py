"""The erasures of a report's period as its PDF prints them (templates/compliance/_erasures.html;
docs/reference/erasure.md): a sentence with the counts, and one row per erasure, its legal basis
named as the law names it, one completed after the period as "erased on DATE, after the period".
No erased value is in the data, so none can be printed."""

from audit.selectors import LEGAL_BASIS_NAMES
from compliance import printing
from config.jsondoc import JSONObject

TARGETS = {"subject_id": "a data subject", "user_id": "a reviewer", "retention": "the retention policy"}


def basis(code: str) -> str:
    return LEGAL_BASIS_NAMES.get(code, code)


def _completed(item: JSONObject) -> str:
    if item.get("after_period"):
        return f"erased on {printing.when(item['completed_at'])[:10]}, after the period"
    return printing.when(item["completed_at"])


def erasures(data: JSONObject) -> JSONObject:
    total = data.get("count", 0)
    after = data.get("completed_after_period", 0)
    if not total:
        sentence = (
            "No erasure of personal data was completed in the period, and none completed since erased "
            "an entry of it."
        )
    else:
        bases = "; ".join(f"{basis(code)}: {printing.count(n)}" for code, n in data["by_legal_basis"].items())
        sentence = (
            f"{printing.count(total)} erasure(s) deleted the personal fields of "
            f"{printing.count(data.get('entries', 0))} audit entries (by legal basis: {bases})"
            + (
                f"; {printing.count(after)} of them completed after the period and erased entries of it"
                if after
                else ""
            )
            + "."
        )
    items = data.get("items") or []
    rows = [
        [
            item["erasure_id"],
            _completed(item),
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
