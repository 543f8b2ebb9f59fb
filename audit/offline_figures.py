"""The figures the offline re-derivation of a report checks (audit/offline_report.py), by where
each template prints them. No Django here."""

SUMMARY_FIGURES = [
    "total_decisions",
    "scored_decisions",
    "unscored_decisions",
    "coverage",
    "automation_bias_incidents",
    "automation_bias_rate",
    "human_override_rate",
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "overtrust_rate",
    "overtrust_rate_ci",
    "overtrust_effective_n",
    "category",
]
ORGANISATION_FIGURES = [
    "decisions",
    "scored_decisions",
    "agreement_rate",
    "override_rate",
    "mean_ai_confidence",
    "calibration_gap",
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "overtrust_rate",
    "overtrust_effective_n",
    "overtrust_rate_ci",
    "undertrust_rate",
    "undertrust_effective_n",
    "undertrust_rate_ci",
    "category",
    "risk_level",
    "ai_accuracy",
    "overreliance_rate",
    "underreliance_rate",
    "coverage",
    "outcomes_known",
    "confidence_decisions",
    "followed_ai_errors",
    "confidence_recalibrated",
    "discrimination",
    "discrimination_ci",
]
# The figures that rest on the reviewer's initial decision: re-derived only when every decision of
# the window has an entry that hashed it (docs/reference/decisions.md, "What the hash covers"); an
# entry written before holds no `initial_decision`, and its decision's is in the service's row alone.
INITIAL_DECISION_FIGURES = ["switch_rate", "rair", "rsr"]
# The Texas report's figures outside its organisation's table, with their recomputed names.
TEXAS_FIGURES = [
    ("disclosure_and_human_review.human_reviewed_decisions", "decisions"),
    ("disclosure_and_human_review.human_override_rate", "override_rate"),
    ("incidents_and_cure_actions.automation_bias_incidents", "automation_bias_incidents"),
]
# Each reviewer's figures (the report's `users` rows).
USER_FIGURES = [
    *(key for key in ORGANISATION_FIGURES),
    "automation_bias_incidents",
    "automation_bias_rate",
    "at_risk",
]
# The summary's names for the organisation's figures where they differ.
SUMMARY_SOURCE = {"total_decisions": "decisions", "human_override_rate": "override_rate"}


# Figures that group decisions by reviewer (the effective n of the weighted rates and what rests
# on their intervals): an erased entry's reviewer is not in the export, so with erased decisions in
# the window these cannot be recomputed (every other figure is a sum over decisions).
BY_REVIEWER = {
    "overtrust_effective_n",
    "overtrust_rate_ci",
    "undertrust_effective_n",
    "undertrust_rate_ci",
    "category",
    "risk_level",
    "discrimination_ci",
}
