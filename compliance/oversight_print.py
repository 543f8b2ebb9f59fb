"""Review effort and vigilance as a printed report shows them (templates/compliance/
_review_effort.html and _vigilance.html): rates as percentages with one decimal, counts with
thousands separators, an absent figure as "not measured" with its reason."""

from config.jsondoc import JSONObject

ROWS_MAX = 200  # reviewers printed per table; the json export holds all


NBSP = "\u00a0"  # a figure and its unit never part at a line end


def percent(value: float | None, reason: str) -> str:
    return f"not measured ({reason})" if value is None else f"{value * 100:.1f}%"


def interval(values: list[float] | None, reason: str) -> str:
    if values is None:
        return f"not measured ({reason})"
    return f"{values[0] * 100:.1f}% to {values[1] * 100:.1f}%"


def count(value: int) -> str:
    return f"{value:,}"


def seconds(value: float | None, reason: str) -> str:
    return f"not measured ({reason})" if value is None else f"{value:,.1f}{NBSP}s"


def _note(data: JSONObject) -> str:
    if "reviewers_withheld" in data:
        return str(data["reviewers_withheld"])
    rows = data["reviewers"]
    if len(rows) <= ROWS_MAX:
        return ""
    return f"The first {ROWS_MAX:,} of {len(rows):,} reviewers are printed; the json export holds all."


NOT_MEASURED = "not measured"
# The per-reviewer columns whose cells may be absent, by their printed header.
EFFORT_COLUMNS = {
    "median": "Median time",
    "rate": "Rate",
    "interval": "95% interval",
    "overreliance_quick": "Over-reliance when quick",
    "overreliance_considered": "Over-reliance when considered",
}
VIGILANCE_COLUMNS = {"catch_rate": "Catch rate", "catch_interval": "95% interval", "d_prime": "d'"}


def absent_once(rows: list[JSONObject], columns: dict[str, str]) -> str:
    """A table's absent cells print "not measured" alone; each column's reasons are said once,
    in the note under the table (the sentence returned)."""
    reasons: dict[str, list[str]] = {}
    for row in rows:
        for key, header in columns.items():
            cell = row.get(key)
            if isinstance(cell, str) and cell.startswith(f"{NOT_MEASURED} ("):
                reason = cell[len(NOT_MEASURED) + 2 : -1]
                if reason not in reasons.setdefault(header, []):
                    reasons[header].append(reason)
                row[key] = NOT_MEASURED
    return " ".join(
        f"{header} not measured where shown: {'; or '.join(found)}." for header, found in reasons.items()
    )


def review_effort(data: JSONObject) -> JSONObject:
    team = data["team"]
    no_timed = "no timed decision"
    out = {
        "evidences": data["evidences"],
        "facts": [
            ("Reviewers", count(team["reviewers"])),
            ("Flagged reviewers", count(team["flagged_reviewers"])),
            ("Decisions (probes excluded)", count(team["decisions"])),
            ("Timed decisions", count(team["timed_decisions"])),
            ("Share timed", percent(team["timed_share"], "no decision")),
            ("Quick agreements", count(team["quick_agreements"])),
            ("Quick-agreement rate", percent(team["quick_agreement_rate"], no_timed)),
            ("95% interval (Wilson)", interval(team["quick_agreement_rate_ci"], no_timed)),
        ],
        "models": [
            {
                "model_id": m["model_id"] or "(no model)",
                "timed": count(m["timed_decisions"]),
                "median": seconds(m["median_review_seconds"], no_timed),
                "threshold": seconds(m["threshold_seconds"], no_timed),
                "basis": "half the median" if m["timed_decisions"] >= 20 else "the floor (under 20 timed)",
            }
            for m in data["models"]
        ],
        "reviewers": [
            {
                "user_id": r["user_id"],
                "timed": count(r["timed_decisions"]),
                "median": seconds(r["median_review_seconds"], no_timed),
                "quick_agreements": count(r["quick_agreements"]),
                "rate": percent(r["quick_agreement_rate"], no_timed),
                "interval": interval(r["quick_agreement_rate_ci"], no_timed),
                "overreliance_quick": percent(r["overreliance_when_quick"], "no known AI error"),
                "overreliance_considered": percent(r["overreliance_when_considered"], "no known AI error"),
                "flagged": "yes" if r["flagged"] else "no",
            }
            for r in data.get("reviewers", [])[:ROWS_MAX]
        ],
        "note": _note(data),
    }
    out["absent"] = absent_once(out["reviewers"], EFFORT_COLUMNS)
    return out


def _probe_row(figures: JSONObject) -> JSONObject:
    return {
        "probes": count(figures["probes"]),
        "known_wrong": count(figures["known_wrong"]),
        "caught": count(figures["caught"]),
        "corrected": count(figures["corrected"]),
        "catch_rate": percent(figures["catch_rate"], "no known_wrong probe"),
        "catch_interval": interval(figures["catch_rate_ci"], "no known_wrong probe"),
        "known_right": count(figures["known_right"]),
        "false_overrides": count(figures["false_overrides"]),
        "false_override_rate": percent(figures["false_override_rate"], "no known_right probe"),
        "d_prime": _d_prime(figures),
        "evidence": figures["evidence"],
    }


def _d_prime(figures: JSONObject) -> str:
    if figures["d_prime"] is not None:
        return f"{figures['d_prime']:.2f}"
    missing = "known_wrong" if figures["known_wrong"] == 0 else "known_right"
    return f"not measured (no {missing} probe)"


def vigilance(data: JSONObject) -> JSONObject:
    reviewers = [{"user_id": r["user_id"], **_probe_row(r)} for r in data.get("reviewers", [])[:ROWS_MAX]]
    return {
        "evidences": data["evidences"],
        "totals": _probe_row(data["totals"]),
        "reviewers": reviewers,
        "absent": absent_once(reviewers, VIGILANCE_COLUMNS),
        "note": _note(data),
    }
