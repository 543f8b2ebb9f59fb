"""Every legal citation the reports print, in one table (docs/reference/reports.md, "Citations"):
key -> the text printed, the law it belongs to and its official source. A template cites only
its own law; where the Texas report borrows a figure or a point of the EU AI Act it says so
("under the EU AI Act"), and it applies no EU numeric limit as its own."""

from dataclasses import dataclass

EU_AI_ACT = "eu_ai_act"
TEXAS_TRAIGA = "texas_traiga"
GDPR = "gdpr"

EU_AI_ACT_SOURCE = (
    "Regulation (EU) 2024/1689, OJ L 2024/1689, 12.7.2024, ELI http://data.europa.eu/eli/reg/2024/1689/oj"
)
GDPR_SOURCE = "Regulation (EU) 2016/679, OJ L 119, 4.5.2016, ELI http://data.europa.eu/eli/reg/2016/679/oj"
TRAIGA_SOURCE = "Texas HB 149 (89th Legislature), Business and Commerce Code chapter 552, in force 2026-01-01"


@dataclass(frozen=True)
class Citation:
    text: str
    law: str
    source: str


CITATIONS: dict[str, Citation] = {
    "eu.art12": Citation("Art. 12", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 12 (record-keeping)"),
    "eu.art14": Citation("Article 14", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14 (human oversight)"),
    "eu.art14_4_a": Citation("Art. 14(4)(a)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14(4), point (a)"),
    "eu.art14_4_b": Citation("Art. 14(4)(b)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14(4), point (b)"),
    "eu.art14_4_c": Citation("Art. 14(4)(c)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14(4), point (c)"),
    "eu.art14_4_d": Citation("Art. 14(4)(d)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14(4), point (d)"),
    "eu.art14_4_e": Citation("Art. 14(4)(e)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 14(4), point (e)"),
    "eu.art19_1": Citation(
        "Art. 19(1)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 19(1) (automatically generated logs)"
    ),
    "eu.art26_2": Citation(
        "Art. 26(2)",
        EU_AI_ACT,
        EU_AI_ACT_SOURCE + ", Article 26(2) (human oversight assigned to competent persons)",
    ),
    "eu.art26_5": Citation(
        "Art. 26(5)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 26(5) (monitoring the operation of the system)"
    ),
    "eu.art26_7": Citation("Art. 26(7)", EU_AI_ACT, EU_AI_ACT_SOURCE + ", Article 26(7) (informing workers)"),
    "eu.annex_iv_1_a": Citation(
        "Annex IV, point 1(a)",
        EU_AI_ACT,
        EU_AI_ACT_SOURCE + ", Annex IV, point 1(a) (intended purpose, provider and version of the system)",
    ),
    "gdpr.art5_1_e": Citation("Art. 5(1)(e)", GDPR, GDPR_SOURCE + ", Article 5(1)(e) (storage limitation)"),
    "gdpr.art17": Citation("Art. 17", GDPR, GDPR_SOURCE + ", Article 17 (right to erasure)"),
    "tx.552_056": Citation("§552.056", TEXAS_TRAIGA, TRAIGA_SOURCE + ", section 552.056"),
    "tx.552_105_e": Citation("§552.105(e)", TEXAS_TRAIGA, TRAIGA_SOURCE + ", section 552.105(e)"),
}
# The law each report template states (GDPR figures beside the EU AI Act in the EU report).
TEMPLATE_LAWS = {EU_AI_ACT: {EU_AI_ACT, GDPR}, TEXAS_TRAIGA: {TEXAS_TRAIGA}}


def cite(key: str) -> str:
    return CITATIONS[key].text


# What each oversight figure evidences, and the point of law it evidences it for, per template.
POINTS = {
    "review_effort": (
        ("eu.art14_4_b",),
        "the people overseeing the system remain aware of automation bias, the tendency to rely on "
        "its output without examining it. Quick agreement with the AI (a review shorter than half the "
        "model's median review time, at least 3 s) measures that tendency.",
    ),
    "vigilance": (
        ("eu.art14_4_d",),
        "the people overseeing the system are able to disregard, override or reverse its output. Probes "
        "whose AI recommendation is known to be wrong measure whether they do when it matters.",
    ),
    "drift_monitoring": (
        ("eu.art14_4_b", "eu.art26_5"),
        "the people overseeing the system remain aware of automation bias, and the deployer monitors "
        "the system in operation and acts on risk. Sequential alarms say when a reviewer, or the "
        "organisation, relies on the AI more or less than their own baseline did at the same AI "
        "confidence, when the AI's confidence stops matching its outcomes, and when a reviewer misses "
        "too many vigilance probes.",
    ),
    "checkpoint": (
        ("eu.art12", "eu.art14_4_a"),
        "record-keeping and the ability to monitor the system's operation: a signed commitment to the "
        "audit trail that the operator cannot take back.",
    ),
    "system_description": (
        ("eu.annex_iv_1_a", "eu.art26_2"),
        "the system described by its intended purpose, its provider and its version, and the natural "
        "persons meant to oversee it. Each model the period's decisions name is described as its deployer "
        "recorded it.",
    ),
    "erasures": (
        ("gdpr.art17", "gdpr.art5_1_e", "eu.art12", "eu.art19_1"),
        "personal data erased on request or at the retention maximum, while the logs stay complete "
        "and verifiable.",
    ),
}


def point(key: str, template: str) -> str:
    """The sentence saying what a figure evidences: with its own law's articles in the EU report;
    in the Texas report, which has no such point, as a point borrowed "under the EU AI Act"."""
    keys, sentence = POINTS[key]
    if template == EU_AI_ACT:
        eu = [cite(k) for k in keys if CITATIONS[k].law == EU_AI_ACT]
        gdpr = [cite(k) for k in keys if CITATIONS[k].law == GDPR]
        named = (f"GDPR {' and '.join(gdpr)} beside " if gdpr else "") + f"EU AI Act {' and '.join(eu)}"
        return f"{named}: {sentence}"
    if key == "checkpoint":
        return (
            f"Post-deployment monitoring and safeguards (the NIST AI RMF, a framework {cite('tx.552_105_e')} "
            f"recognises): {sentence}"
        )
    if key == "drift_monitoring":
        return (
            "Continuous monitoring of the system in production (the NIST AI RMF, MEASURE 2.4 and MANAGE "
            f"4.1, a framework {cite('tx.552_105_e')} recognises): sequential alarms say when reviewers "
            "rely on the AI more or less than their own baseline did at the same AI confidence, when the "
            "AI's confidence stops matching its outcomes, and when a reviewer misses too many vigilance "
            "probes."
        )
    if key == "system_description":
        return (
            "The system's context as the NIST AI RMF (MAP 1.1), a framework "
            f"{cite('tx.552_105_e')} recognises, asks a deployer to document it: its intended purpose, "
            "deployment setting and users. Each model the period's decisions name is described as its "
            "deployer recorded it."
        )
    if key == "erasures":
        return sentence[:1].upper() + sentence[1:]
    return f"What this evidences under the EU AI Act, which the Texas Act does not require: {sentence}"


def withheld(template: str) -> str:
    """The note that stands for the rows per reviewer a report withholds (docs/reference/
    oversight.md, "Who sees what"), with the point of law in the report's own law only."""
    note = (
        "Withheld: this report was requested in the staff console by someone who may see the team's "
        "oversight figures but not each reviewer's"
    )
    if template == EU_AI_ACT:
        return f"{note} (worker monitoring, EU AI Act {cite('eu.art26_7')})."
    return f"{note} (each reviewer's figures are the monitoring of a worker)."
