"""Pure rules of docs/reference/bias.md: value normalisation, subgroup attributes, severities (the tests are
`bias.significance`)."""

from dataclasses import dataclass
from fractions import Fraction

from bias.models import CUSTOM_KEY_MAX, SEVERITY_RANK
from config.jsondoc import JSONObject
from config.jsonwalk import is_clean_text

DEFAULT_FAVORABLE_VALUES = (
    "approve",
    "approved",
    "accept",
    "accepted",
    "yes",
    "hire",
    "hired",
    "grant",
    "granted",
    "pass",
    "positive",
    "true",
    "1",
)
STANDARD_ATTRIBUTES = ("gender", "age_group", "ethnicity")
MIN_GROUP_SIZE = 30
SIGNIFICANCE = 0.05
REGULATION = "EU AI Act Art. 10"
DETECTION_WINDOW_DAYS = 30

# Severity thresholds (docs/reference/bias.md), as exact fractions so that a boundary (0.30, 0.80) is never
# missed by floating-point noise.
_DIFFERENCE_STEPS = [
    (Fraction(5, 100), "none"),
    (Fraction(10, 100), "low"),
    (Fraction(20, 100), "medium"),
    (Fraction(30, 100), "high"),
]
_RATIO_STEPS = [
    (Fraction(90, 100), "none"),
    (Fraction(80, 100), "low"),
    (Fraction(65, 100), "medium"),
    (Fraction(50, 100), "high"),
]


def normalize_value(value: object) -> str:
    """Decision values compare trimmed and case-folded (docs/reference/bias.md, Favourable values)."""
    return "" if value is None else str(value).strip().casefold()


# the subgroups object of the API, nested JSON
def subgroups_object(attributes: dict[str, str]) -> JSONObject:
    """Attribute names and groups as the subgroups object of the API ({"gender": ..., "custom":
    {key: ...}}), keys in order: what a subgroups_attached audit entry records."""
    out: JSONObject = {}
    custom: dict[str, str] = {}
    for name in sorted(attributes):
        if name.startswith("custom."):
            custom[name[len("custom.") :]] = attributes[name]
        else:
            out[name] = attributes[name]
    if custom:
        out["custom"] = custom
    return out


def is_valid_attribute_name(name: str) -> bool:
    if name in STANDARD_ATTRIBUTES:
        return True
    if not is_clean_text(name):
        return False
    if name.startswith("custom."):
        key = name[len("custom.") :]
        return 0 < len(key) <= CUSTOM_KEY_MAX and key.strip() == key
    return False


def subgroups_lenient(raw: object) -> dict[str, str]:
    """A stored subgroups object (validated when it was logged, by audit.inputs.SUBGROUPS) as
    attribute names, values trimmed: decisions logged before values were trimmed on the way
    in still count in the group of their trimmed value. Not a validator: anything that is
    not a non-empty string is left out."""
    out: dict[str, str] = {}
    if not isinstance(raw, dict):
        return out
    for key, value in raw.items():
        if key == "custom" and isinstance(value, dict):
            for custom_key, custom_value in value.items():
                name = str(custom_key).strip()
                if name and isinstance(custom_value, str) and custom_value.strip():
                    out[f"custom.{name}"] = custom_value.strip()
        elif key in STANDARD_ATTRIBUTES and isinstance(value, str) and value.strip():
            out[key] = value.strip()
    return out


@dataclass(frozen=True)
class Rate:
    group: str
    x: int  # numerator
    n: int  # denominator

    @property
    def value(self) -> Fraction:
        return Fraction(self.x, self.n)


def reference_rate(rates: list[Rate], *, higher_is_better: bool) -> Rate:
    """The advantaged group: the best rate among the groups with at least 30 decisions (in the
    metric's denominator), or among all groups when none is that large, so that a tiny group's
    lucky rate never becomes everyone's yardstick. Ties: the larger group, then the name. For
    the favourable rate this is the highest-rate group of the four-fifths rule."""
    eligible = [r for r in rates if r.n >= MIN_GROUP_SIZE] or rates
    sign = 1 if higher_is_better else -1
    return max(eligible, key=lambda r: (sign * r.value, r.n, r.group))


def difference_severity(difference: Fraction) -> str:
    for bound, label in _DIFFERENCE_STEPS:
        if difference < bound:
            return label
    return "critical"


def ratio_severity(ratio: Fraction) -> str:
    for bound, label in _RATIO_STEPS:
        if ratio >= bound:
            return label
    return "critical"


def worst(severities: list[str]) -> str:
    return max(severities, key=lambda s: SEVERITY_RANK[s], default="none")
