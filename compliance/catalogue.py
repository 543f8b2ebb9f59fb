"""The report templates (docs/reference/reports.md): ids, titles and sections in the order the reports reference gives."""

from __future__ import annotations

from typing import Literal, get_args

from config.jsondoc import JSONObject

Format = Literal["pdf", "csv", "json"]
FORMATS = list(get_args(Format))

TEMPLATES: list[JSONObject] = [
    {
        "id": "eu_ai_act",
        "name": "EU AI Act Article 14 human oversight report",
        "regulation": "Regulation (EU) 2024/1689, Article 14",
        "description": (
            "Evidence of effective human oversight: automation-bias incidents, override rates, "
            "trust calibration, bias alerts, the tamper-evident decision log and recommendations."
        ),
        "formats": FORMATS,
        "sections": [
            {"id": "executive_summary", "title": "Executive summary"},
            {"id": "trust_calibration_analysis", "title": "Trust calibration analysis"},
            {"id": "bias_detection_summary", "title": "Bias detection summary"},
            {"id": "audit_trail", "title": "Audit trail"},
            {"id": "recommendations", "title": "Recommendations"},
        ],
    },
    {
        "id": "texas_traiga",
        "name": "Texas Responsible AI Governance Act report",
        "regulation": "Texas HB 149, Bus. & Com. Code ch. 552 (in force 2026-01-01)",
        "description": (
            "The same evidence organised for TRAIGA: system and purpose, disclosure and human "
            "review, discrimination screening, NIST AI RMF alignment, incidents and cure actions."
        ),
        "formats": FORMATS,
        "sections": [
            {"id": "system_and_purpose", "title": "System, purpose and deployment context"},
            {"id": "disclosure_and_human_review", "title": "Disclosure and human-review evidence"},
            {"id": "discrimination_screening", "title": "Discrimination screening"},
            {"id": "performance_and_limitations", "title": "Performance metrics and known limitations"},
            {"id": "monitoring_and_safeguards", "title": "Post-deployment monitoring and safeguards"},
            {"id": "nist_ai_rmf_alignment", "title": "NIST AI RMF alignment"},
            {"id": "incidents_and_cure_actions", "title": "Incidents and cure actions"},
            {"id": "recommendations", "title": "Recommendations"},
        ],
    },
]

TEMPLATE_IDS = [t["id"] for t in TEMPLATES]


def template_info(template_id: str) -> JSONObject:
    return next(t for t in TEMPLATES if t["id"] == template_id)
