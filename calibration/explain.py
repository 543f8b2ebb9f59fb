"""The one-sentence explanation of a record's category and the concrete recommendations
of POST /calibrate, from the record and the user's profile."""

from collections.abc import Mapping
from typing import TYPE_CHECKING

from calibration import rules
from config.jsondoc import JSONValue

if TYPE_CHECKING:
    from audit.models import Decision


def _c(value: float) -> str:
    return f"{value:.2f}"


def explanation(*, decision: "Decision") -> str:
    """Why the record got its category (docs/reference/calibration.md, Category of a decision)."""
    category = decision.calibration_category
    verb = "followed" if decision.followed_ai else "overrode"
    rec = decision.ai_recommendation
    c = decision.ai_confidence
    if category == rules.UNSCORED:
        return (
            f"The user {verb} the AI's recommendation '{rec}'; with neither a confidence nor an outcome the record "
            "is unscored: it enters no score or rate until an outcome is logged."
        )
    if c is not None:
        if category == rules.OVERTRUSTING:
            return (
                f"The user followed the AI's recommendation '{rec}' although the AI's confidence was only {_c(c)}, "
                "below 0.50 (the AI itself rated it more likely wrong), a sign of automation bias."
            )
        if category == rules.UNDERTRUSTING:
            return (
                f"The user overrode the AI's recommendation '{rec}' although the AI's confidence was {_c(c)}, above "
                "0.50 (the AI rated it more likely right), a sign of algorithm aversion."
            )
        return f"The user {verb} the AI's recommendation '{rec}' at confidence {_c(c)}, which is consistent with that confidence."
    ai_right = rules.same(decision.outcome, rec)
    if category == rules.OVERTRUSTING:
        return (
            f"The user followed the AI's recommendation '{rec}' but the outcome '{decision.outcome}' shows the AI "
            "was wrong, a sign of automation bias."
        )
    if category == rules.UNDERTRUSTING:
        return (
            f"The user overrode the AI's recommendation '{rec}', which the outcome '{decision.outcome}' shows was "
            "right, a sign of algorithm aversion."
        )
    return (
        f"The user {verb} the AI's recommendation '{rec}' and the outcome '{decision.outcome}' shows the AI was "
        f"{'right' if ai_right else 'wrong'}, so the reliance was appropriate."
    )


# figures by name (counts, rates, intervals, labels), rendered as JSON
def recommendations(*, decision: "Decision", profile: Mapping[str, JSONValue]) -> list[str]:
    out: list[str] = []
    category = decision.calibration_category
    if category == rules.OVERTRUSTING:
        if decision.ai_confidence is not None:
            out.append(
                "Require a written justification before accepting AI recommendations below 0.50 confidence."
            )
        else:
            out.append(
                "Review this decision with the user: the AI was wrong and the recommendation was accepted unchanged."
            )
    elif category == rules.UNDERTRUSTING:
        if decision.ai_confidence is not None:
            out.append(
                "Ask the user to record a reason whenever they override a recommendation above 0.50 confidence."
            )
        else:
            out.append("Review this override with the user: the AI's recommendation turned out to be right.")

    user_category = profile.get("category")
    scored = int(profile.get("scored_decisions") or 0)
    if user_category == rules.INSUFFICIENT_DATA:
        missing = max(0, rules.min_decisions() - scored)
        out.append(
            f"Keep logging this user's decisions with a confidence or an outcome: {missing} more are needed before their calibration can be assessed."
            if missing
            else "Keep logging this user's decisions: the evidence so far does not yet decide whether their reliance is calibrated."
        )
    elif user_category == rules.OVERTRUSTING:
        out.append(
            "Show the AI's confidence and known failure modes next to every recommendation this user sees."
        )
        out.append(
            "Route a sample of this user's AI-concordant decisions to a second reviewer (EU AI Act Art. 14(4)(b) human oversight)."
        )
        out.append("Schedule automation-bias training for this user.")
    elif user_category == rules.NON_DISCRIMINATING:
        out.append(
            "This user follows and overrides the AI regardless of its confidence: review with them when the AI's advice "
            "deserves reliance, and show the confidence next to every recommendation."
        )
    elif user_category == rules.UNDERTRUSTING:
        out.append(
            "Share the model's validated accuracy in high-confidence bands with this user and review their overrides against outcomes."
        )
        out.append(
            "Ask the user to record the reason for each override so recurring disagreements can be fed back to the model team."
        )

    enough = scored >= rules.min_decisions()
    overreliance = profile.get("overreliance_rate")
    if enough and overreliance is not None and overreliance > 0.5:
        out.append(
            f"Over-reliance is {_c(overreliance)}: require the user to record their own decision before seeing the AI's recommendation."
        )
    if profile.get("risk_level") == "high":
        out.append(
            f"Flag this user for supervisor review: their trust score {_c(profile['trust_score'])} is "
            f"{_c(profile['reliance_gap'])} below what following the AI's confidence would have attained."
        )
    if not profile.get("outcomes_known") and int(profile.get("decisions") or 0) > 0:
        out.append(
            'Log ground-truth outcomes with POST /log {"decision_id", "outcome"} so calibration is judged on outcomes, '
            "not on the AI's confidence alone."
        )
    if not out:
        out.append(
            "No change needed: keep monitoring this user's calibration with the weekly trust-score trend."
        )
    return out
