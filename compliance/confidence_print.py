"""The confidence check of the AI as a printed report shows it (docs/reference/calibration.md,
"Confidence check"): the fit's figures under labels that say what calibrated means for each, the
verdict in words with its reason, and an absent figure explained by the verdict rather than by a
generic "no data"."""

from calibration.confidence import CONFIDENCE_CHECK_MIN
from compliance import printing
from compliance.pdf_tables import label
from config.jsondoc import JSONObject

LABELS = {
    "decisions": "Decisions with an AI confidence and an outcome",
    "intercept": "Calibration intercept a (0 when calibrated)",
    "intercept_ci": "Calibration intercept, 95% interval",
    "slope": "Calibration slope b (1 when calibrated)",
    "slope_ci": "Calibration slope, 95% interval",
    "brier_score": "Brier score",
    "lr_statistic": "Likelihood-ratio statistic of (a, b) = (0, 1)",
    "lr_p_value": "Likelihood-ratio test p-value",
    "verdict": "Verdict",
    "limit": "Most recent decisions read at most",
}


def verdict(check: JSONObject) -> str:
    """The verdict in words, with the reason it was not checked."""
    code = check.get("verdict")
    if code == "miscalibrated":
        return (
            "miscalibrated: reliance was judged against the recalibrated confidence "
            "p' = expit(a + b · logit c) with the fit above, not against the confidence the AI stated"
        )
    if code != "not_checked":
        return printing.figure("verdict", code)
    decisions = check.get("decisions") or 0
    if decisions < CONFIDENCE_CHECK_MIN:
        return (
            f"not checked: {printing.count(decisions)} decision(s) carry both an AI confidence and an outcome, "
            f"under the {printing.count(CONFIDENCE_CHECK_MIN)} the fit needs"
        )
    return "not checked: the fit has no finite solution (the outcomes are all alike, or the confidence separates them)"


def facts(check: JSONObject) -> list[tuple[str, str]]:
    rows = []
    unfitted = check.get("verdict") == "not_checked"
    for key, value in check.items():
        if isinstance(value, dict):
            continue
        if key == "verdict":
            text = verdict(check)
        elif value is None and unfitted:
            text = f"{printing.NOT_MEASURED} (the check was not run: see the verdict)"
        else:
            text = printing.figure(key, value)
        rows.append((LABELS.get(key) or label(key), text))
    return rows
