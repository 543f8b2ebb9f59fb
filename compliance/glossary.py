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
        "term": "Automation-bias incident (over-trust)",
        "definition": "A decision classified OVERTRUSTING: with a known outcome, the reviewer followed the "
        "AI and the AI was wrong; without one, the reviewer followed an AI confidence under 50 %.",
        "source": SERVICE,
    },
    {
        "term": "Algorithm-aversion incident (under-trust)",
        "definition": "A decision classified UNDERTRUSTING: with a known outcome, the reviewer overrode the "
        "AI and the AI was right; without one, the reviewer overrode an AI confidence of 80 % or more.",
        "source": SERVICE,
    },
    {
        "term": "Automation-bias rate",
        "definition": "Automation-bias incidents divided by the decisions analysed.",
        "source": SERVICE,
    },
    {
        "term": "Override rate",
        "definition": "The share of decisions whose final decision differs from the AI's recommendation.",
        "source": SERVICE,
    },
    {
        "term": "Agreement rate",
        "definition": "The share of decisions that followed the AI (1 minus the override rate).",
        "source": SERVICE,
    },
    {
        "term": "Calibration gap",
        "definition": "The mean of (followed - expected reliance) over decisions with an outcome or a "
        "confidence, where expected reliance is 1 when the AI was right, 0 when it was wrong and the "
        "AI's confidence when the outcome is unknown. Over +15 points a reviewer is OVERTRUSTING, "
        "under -15 points UNDERTRUSTING (with at least 10 decisions).",
        "source": SERVICE,
    },
    {
        "term": "Trust score",
        "definition": "From 0 to 1, higher is better: (|O| x AR + |C| x (1 - RCE)) / (|O| + |C|), where O "
        "are the decisions with a known outcome and AR the share of them where following the AI matched "
        "the AI being right, C the others with a confidence and RCE their reliance calibration error "
        "(over five confidence bands, the decision-weighted gap between how often reviewers followed "
        "and the AI's mean confidence). An organisation's trust score is its reviewers' scores weighted "
        "by their scored decisions.",
        "source": SERVICE,
    },
    {
        "term": "Risk level",
        "definition": "From the trust score: high under 0.60, medium under 0.80, else low. It grades how "
        "well reliance matches the AI's record; the calibration category says in which direction it "
        "misses (a CALIBRATED gap with a high risk level means reviewers err both ways and the errors "
        "cancel in the gap).",
        "source": SERVICE,
    },
    {
        "term": "Risk user",
        "definition": "A reviewer with at least 20 decisions and a trust score under 0.60.",
        "source": SERVICE,
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
        "definition": "COMPLIANT when automation-bias incidents are under 5 % of decisions and no high or "
        "critical alert is open; NON_COMPLIANT at 15 % or more, or with an open critical alert; else "
        "NEEDS_REVIEW (also when the period holds no decision).",
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
