"""How a p- or q-value reads wherever Trustcal prints one, in a report or in the staff console
(docs/reference/reports.md, "How figures are printed"): three decimals, or "under 0.001"."""


def p_value_text(value: float) -> str:
    return "under 0.001" if value < 0.001 else f"{value:.3f}"
