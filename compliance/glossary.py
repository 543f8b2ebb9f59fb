"""The glossary both PDF reports end with: every measure they print, its definition and where
the definition comes from (docs/reference/reports.md, "Glossary")."""

from typing import TypedDict


class Term(TypedDict):
    term: str
    definition: str
    source: str


SERVICE = "Trustcal's definition (docs/reference/reports.md)"
SCHEMMER = "Schemmer et al., Appropriate Reliance on AI Advice, IUI 2023"

GLOSSARY: list[Term] = [
    {
        "term": "Followed the AI",
        "definition": "The reviewer's final decision equals the AI's recommendation after trimming and "
        "case-folding both.",
        "source": SERVICE,
    },
    {
        "term": "Scored and unscored decisions, coverage",
        "definition": "A decision is scored when it carries the AI's confidence or a known outcome; the "
        "others are UNSCORED and enter no score, rate or interval. Coverage is scored decisions divided "
        "by all decisions.",
        "source": SERVICE,
    },
    {
        "term": "Automation-bias incident (over-trust)",
        "definition": "A decision with an AI confidence where the reviewer followed a confidence under 0.5 "
        "(the AI itself rated its advice more likely wrong; the recalibrated confidence when the confidence "
        "check rejected it), whatever the outcome. A decision without a confidence is never an incident: "
        "followed where the known outcome shows the AI wrong, it is counted apart as a followed AI error.",
        "source": SERVICE,
    },
    {
        "term": "Algorithm-aversion incident (under-trust)",
        "definition": "A decision with an AI confidence where the reviewer overrode a confidence over 0.5 "
        "(the recalibrated confidence when the confidence check rejected it). A decision without a "
        "confidence is never an incident.",
        "source": SERVICE,
    },
    {
        "term": "Automation-bias rate",
        "definition": "Automation-bias incidents divided by the scored decisions.",
        "source": SERVICE,
    },
    {
        "term": "Override rate",
        "definition": "The share of all decisions whose final decision differs from the AI's recommendation.",
        "source": SERVICE,
    },
    {
        "term": "Agreement rate",
        "definition": "The share of all decisions that followed the AI (1 minus the override rate).",
        "source": SERVICE,
    },
    {
        "term": "Calibration gap",
        "definition": "The mean of (followed - expected reliance) over the scored decisions, where expected "
        "reliance is 1 when the AI was right, 0 when it was wrong and the AI's confidence when the outcome "
        "is unknown. A description only: categories come from the over- and under-trust rates.",
        "source": SERVICE,
    },
    {
        "term": "Trust score",
        "definition": "From 0 to 1, the mean over scored decisions of appropriate reliance q: 1 when the "
        "reviewer followed exactly when the AI proved right (known outcome), else the chance the act was "
        "right by the AI's confidence p (followed: p; overrode: 1 - p). Every window's score is a "
        "decision-weighted mean of its days'.",
        "source": "Schemmer et al., IUI 2023 (appropriate reliance); Lee & See 2004",
    },
    {
        "term": "Attainable score, reliance gap, reliance skill",
        "definition": "Attainable score: the mean of max(p, 1 - p), what following exactly when the AI is "
        "more likely right would score (for outcome-only decisions max(pi, 1 - pi), pi the AI's accuracy). "
        "Reliance gap: attainable minus trust score. Reliance skill: (T - T_rand) / (A - T_rand), where "
        "T_rand is the score of following at the same rate at random; 1 is perfect discrimination, 0 is "
        "random following.",
        "source": "Murphy 1973 (resolution); Lee & See 2004",
    },
    {
        "term": "Over-trust and under-trust rates",
        "definition": "Over-trust: the stake-weighted share of decisions followed where the AI was more "
        "likely wrong, with weight max(0, 1 - 2p); under-trust: the share overridden where it was more "
        "likely right, weight max(0, 2p - 1). Each has a 95% Wilson interval at its effective number of "
        "decisions (Kish; for an organisation at most what its reviewers as clusters support).",
        "source": "Kish 1965 (effective n); Wilson 1927 (score interval)",
    },
    {
        "term": "Calibration category",
        "definition": "With at least 10 scored decisions: OVERTRUSTING when the over-trust interval lies "
        "wholly above 0.50, UNDERTRUSTING when the under-trust interval lies wholly above 0.25, both: "
        "NON_DISCRIMINATING (relies regardless of the AI's confidence); CALIBRATED when both intervals lie "
        "wholly below their thresholds; otherwise INSUFFICIENT_DATA (the evidence does not decide).",
        "source": SERVICE,
    },
    {
        "term": "Risk level",
        "definition": "Under 30 scored decisions insufficient_data; a reliance gap of 0.10 or more high; of "
        "0.05 or more, or a category of OVERTRUSTING, UNDERTRUSTING or NON_DISCRIMINATING, medium; else low.",
        "source": SERVICE,
    },
    {
        "term": "Risk user",
        "definition": "A reviewer with at least 30 scored decisions whose risk level is high or whose "
        "category is OVERTRUSTING, UNDERTRUSTING or NON_DISCRIMINATING.",
        "source": SERVICE,
    },
    {
        "term": "Confidence check",
        "definition": "Whether the AI's confidence is itself calibrated, over at least 100 decisions with "
        "a confidence and an outcome: the calibration intercept a and slope b of logit P(right) = a + b "
        "logit(confidence) with 95% intervals, and the Brier score; consistent when a's interval holds 0 "
        "and b's holds 1. Every confidence-based figure assumes a calibrated confidence.",
        "source": "Cox 1958 (calibration intercept and slope); Brier 1950",
    },
    {
        "term": "Over-reliance",
        "definition": "P(followed | AI wrong), over the decisions with a known outcome.",
        "source": SCHEMMER,
    },
    {
        "term": "Under-reliance",
        "definition": "P(overrode | AI right), over the decisions with a known outcome.",
        "source": SCHEMMER,
    },
    {
        "term": "Switch rate",
        "definition": "P(final = AI | initial decision differs from the AI), where the reviewer's initial "
        "decision was recorded.",
        "source": SCHEMMER,
    },
    {
        "term": "RAIR (relative AI reliance)",
        "definition": "Of the decisions whose initial decision was wrong and the AI right, the share that "
        "ended on the AI's answer.",
        "source": SCHEMMER,
    },
    {
        "term": "RSR (relative self-reliance)",
        "definition": "Of the decisions whose initial decision was right and the AI wrong, the share that "
        "kept the initial decision.",
        "source": SCHEMMER,
    },
    {
        "term": "Favourable rate",
        "definition": "The share of a group's decisions whose value is favourable (the model's configured "
        "favourable values, else approve, accept, yes, hire, grant, pass, positive, true, 1 and their "
        "variants).",
        "source": SERVICE,
    },
    {
        "term": "Disparate impact ratio (four-fifths rule)",
        "definition": "A group's favourable rate divided by the highest group's rate (the highest among "
        "groups of at least 30 decisions). Under 0.80 is the four-fifths rule's sign of adverse impact; "
        "severity: 0.90 or more none, 0.80 low, 0.65 medium, 0.50 high, below critical.",
        "source": "US EEOC Uniform Guidelines on Employee Selection Procedures, 29 CFR 1607.4(D)",
    },
    {
        "term": "Rate difference severity",
        "definition": "For differences of favourable, override, recommendation or error rates: under 5 "
        "points none, under 10 low, under 20 medium, under 30 high, else critical. A group under 30 "
        "decisions never exceeds low; medium and above also need a q-value under 0.05.",
        "source": SERVICE,
    },
    {
        "term": "p-value of a bias finding",
        "definition": "Two-sided. Fisher's exact test when either group has fewer than 30 decisions or an "
        "expected cell count is under 5, else the pooled two-proportion z-test. A group under 5 decisions "
        "is not tested (no p-value; at most low).",
        "source": "Fisher 1922; scipy.stats.fisher_exact's two-sided definition",
    },
    {
        "term": "q-value",
        "definition": "The p-value adjusted by Benjamini-Hochberg over every comparison of one analysis, "
        "counting every pair of testable groups of each rate: the smallest false-discovery rate at which the "
        "finding counts as a discovery.",
        "source": "Benjamini & Hochberg 1995",
    },
    {
        "term": "Amplification score",
        "definition": "How much the human decisions widen the model's disparity between a privileged and "
        "an unprivileged group: A / (1 - D_ai) clamped to 0..1, where D_ai is the model's disparity (half "
        "the summed absolute differences of its per-value rates) and A half the sum of sign(a_v) x (h_v - "
        "a_v). Risk: none under 0.10, low, medium from 0.25, high from 0.50, critical from 0.75.",
        "source": SERVICE,
    },
    {
        "term": "Compliance status (EU AI Act report only)",
        "definition": "NON_COMPLIANT with an open critical alert or when the organisation's over-trust "
        "interval lies wholly above 0.50; else NEEDS_REVIEW with an open high alert, a reviewer who is "
        "OVERTRUSTING or NON_DISCRIMINATING, or a reviewer flagged for rubber-stamping; else "
        "INSUFFICIENT_EVIDENCE with fewer than 100 scored decisions, a coverage under 80%, an over-trust "
        "effective n under 10 or an over-trust interval reaching 0.50; else COMPLIANT. The report states "
        "the reason.",
        "source": SERVICE,
    },
    {
        "term": "Audit chain",
        "definition": "Every decision's audit entry holds the SHA-256 hash of its content and of the entry "
        "before it; the head hash therefore commits to every entry, and changing any stored decision "
        "breaks verification from that entry on.",
        "source": SERVICE,
    },
    {
        "term": "Erased",
        "definition": "A personal field (the reviewer, the subject, the context, the subgroups) deleted by "
        "an erasure under the GDPR. The audit entry keeps its hash, which covers a salted commitment to "
        "those fields instead of the fields, so the chain still verifies; the decision log prints "
        '"erased" in their place, and an erased reviewer\'s figures are kept under a pseudonym.',
        "source": "Trustcal's definition (docs/reference/erasure.md)",
    },
    {
        "term": "Review effort",
        "definition": "How long the reviewer looked at a case. A timed decision is quick when its review "
        "time is under max(3 s, half the model's median review time); a quick agreement is a quick "
        "decision that followed the AI.",
        "source": SERVICE,
    },
    {
        "term": "Vigilance probe",
        "definition": "A case whose right answer is known, shown with a deliberately wrong (or right) AI "
        "recommendation. Catch rate: the share of known-wrong probes the reviewer did not follow; "
        "false-override rate: the share of known-right probes the reviewer overrode.",
        "source": SERVICE,
    },
]
