"""The body of POST /detect-bias (docs/reference/bias.md), declared once (config.bodies). The
subgroups object is the decision's own declaration (audit.inputs.SUBGROUPS): one rule for every
door that carries subgroups."""

from typing import Any

from audit.fields import DECISION_ID_HELP, DECISION_ID_PATTERN, ID_MAX
from audit.inputs import SUBGROUPS, subgroup_attributes
from config.bodies import Body, Field, Problems


def _attributes(values: dict[str, Any], problems: Problems) -> None:
    """The subgroups as attribute names (`custom.region`); at least one is needed."""
    subgroups = values.pop("subgroups")
    if subgroups is None:
        return
    values["attributes"] = subgroup_attributes(subgroups)
    if not values["attributes"]:
        problems.add("subgroups", "at least one attribute is required")


DETECT_BIAS = Body(
    "DetectBiasInput",
    (
        Field(
            "decision_id",
            required=True,
            max_length=ID_MAX,
            pattern=DECISION_ID_PATTERN,
            pattern_help=DECISION_ID_HELP,
        ),
        Field("subgroups", "object", required=True, body=SUBGROUPS),
    ),
    checks=(_attributes,),
)
