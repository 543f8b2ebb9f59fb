"""Tables of the PDF (docs/reference/reports.md, "The PDF"): labels for data keys, the columns
printed for wide tables, and column widths that fit the content so nothing is cut."""

from compliance import printing
from config.jsondoc import JSONObject

NOWRAP_CELL = 16  # a table cell this short never wraps (identifiers, figures, enumerations)
# How many characters of table text fit across the page (DejaVu Sans digits are 0.64 em wide; the
# widest text is assumed): portrait tables at 7.3 pt, the landscape decision log at 6.3 pt.
TABLE_CHARS = 108
LOG_CHARS = 185
TABLE_ROWS_MAX = 200
# Columns printed for the tables that have more than fit a page (the json holds all).
TABLE_COLUMNS = {
    "users": [
        "user_id",
        "decisions",
        "scored_decisions",
        "trust_score",
        "reliance_gap",
        "category",
        "agreement_rate",
        "overtrust_rate",
        "undertrust_rate",
        "rair",
        "rsr",
    ],
    "risk_users": [
        "user_id",
        "scored_decisions",
        "trust_score",
        "reliance_gap",
        "category",
        "overtrust_rate",
        "undertrust_rate",
    ],
    "groups": [
        "group",
        "decisions",
        "ai_favorable_rate",
        "favorable_rate",
        "override_rate",
        "accuracy",
        "disparity.favorable_rate_difference",
        "impact_ratio",
        "disparity.disparate_impact_ratio",
        "disparity.override_rate_difference",
    ],
    "oversight_measures": ["point", "obligation", "measured"],
    "points": [
        "period_start",
        "decisions",
        "scored_decisions",
        "trust_score",
        "reliance_gap",
        "agreement_rate",
        "overtrust_count",
        "undertrust_count",
    ],
}

LABELS = {
    "ai_favorable_rate": "AI favourable rate",
    "favorable_rate": "Human favourable rate",
    "favorable_rate_difference": "Favourable rate difference",
    "disparate_impact_ratio": "Disparate impact ratio",
    "impact_ratio": "Impact ratio (four-fifths)",
    "override_rate_difference": "Override rate difference",
    "period_start": "Period start",
    "overtrust_rate": "Over-trust rate",
    "overtrust_rate_ci": "Over-trust rate, 95% interval",
    "undertrust_rate_ci": "Under-trust rate, 95% interval",
    "discrimination_ci": "Discrimination, 95% interval",
    "overtrust_effective_n": "Over-trust effective n",
    "undertrust_effective_n": "Under-trust effective n",
    "intercept_ci": "Intercept, 95% interval",
    "slope_ci": "Slope, 95% interval",
    "undertrust_rate": "Under-trust rate",
    "overtrust_count": "Over-trust",
    "undertrust_count": "Under-trust",
    "overreliance_rate": "Over-reliance",
    "underreliance_rate": "Under-reliance",
    "rair": "RAIR",
    "rsr": "RSR",
    "user_id": "Reviewer",
    "mean_ai_confidence": "Mean AI confidence",
    "ai_accuracy": "AI accuracy",
    "entries_checked": "Entries checked",
    "head_hash": "Head hash",
    "nist_ai_rmf_alignment": "NIST AI RMF alignment",
    "points": "Trust score per period",
    "slope": "Slope per period",
    "by_status": "Alerts by status",
    "by_severity": "Alerts by severity",
    "alerts_by_status": "Amplification alerts by status",
    "unresolved_high_or_critical": "Unresolved high or critical alerts",
    "in_period": "Created or changed in the period",
    "chain_verification": "Audit chain verification",
    "first_invalid_sequence": "First invalid entry",
}
# Keys printed elsewhere in the document (the log in its appendix, the summary in sentences).


def label(key: str) -> str:
    if key in LABELS:
        return LABELS[key]
    text = key.replace("_", " ")
    for short in ("ai", "id", "nist", "rmf", "eu"):
        text = " ".join(w.upper() if w == short else w for w in text.split(" "))
    return text[:1].upper() + text[1:]


def cell_value(row: JSONObject, column: str) -> object:
    value: object = row
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def table(key: str, rows: list[JSONObject], title: str) -> JSONObject:
    scalar = [k for k, v in rows[0].items() if not isinstance(v, dict | list)]
    columns = TABLE_COLUMNS.get(key) or scalar[:8]
    shown = rows[:TABLE_ROWS_MAX]
    absent: dict[str, str] = {}  # a column's "not measured" cells, explained once under the table
    cells = []
    for row in shown:
        printed = []
        for column in columns:
            name = column.split(".")[-1]
            value = cell_value(row, column)
            if value is None and name not in printing.ABSENT_WORDS:
                absent[label(name)] = (
                    printing.not_measured(name).removeprefix(printing.NOT_MEASURED).strip(" ()")
                )
                printed.append(printing.NOT_MEASURED)
            else:
                printed.append(printing.figure(name, value))
        cells.append(printed)
    notes = [f"{label} not measured where shown: {reason}." for label, reason in absent.items()]
    if len(rows) > len(shown):
        notes.append(
            f"The first {printing.count(len(shown))} of {printing.count(len(rows))} rows; the json "
            "export holds all of them."
        )
    labels = [label(c.split(".")[-1]) for c in columns]
    return {
        "kind": "table",
        "title": title,
        "columns": labels,
        "rows": cells,
        "widths": widths(labels, cells),
        "note": " ".join(notes),
    }


def is_scalar_list(value: object) -> bool:
    return isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)


def is_counts(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, int) for v in value.values())


def widths(
    columns: list[str], rows: list[list[str]], nowrap: list[bool] | None = None, capacity: int = TABLE_CHARS
) -> list[float] | None:
    """Column widths (percent) that fit the content, so the table can use the fixed layout (a
    single pass; the automatic one measures every cell twice): each column at least its longest
    unbreakable piece (the whole cell when it does not wrap), the rest shared by typical length.
    None when the longest pieces alone would not fit: the automatic layout decides then."""
    floors, wants = [], []
    for i, header in enumerate(columns):
        cells = [row[i] for row in rows]
        pieces = [
            len(cell)
            if (nowrap and nowrap[i]) or len(cell) <= NOWRAP_CELL
            else max(map(len, cell.split()), default=0)
            for cell in cells
        ]
        floor = max([*pieces, *map(len, header.split())], default=1) + 2
        typical = sorted(len(cell) for cell in cells)[len(cells) // 2] if cells else 0
        floors.append(floor)
        wants.append(max(floor, min(typical, 60)))
    if sum(floors) > capacity:
        return None
    spare = capacity - sum(floors)
    extra = [w - f for w, f in zip(wants, floors, strict=True)]
    share = [spare * e / sum(extra) if sum(extra) else spare / len(floors) for e in extra]
    total = sum(floors) + sum(share)
    return [round(100 * (f + x) / total, 2) for f, x in zip(floors, share, strict=True)]
