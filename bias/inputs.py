"""The body of POST /detect-bias (docs/reference/bias.md), a request body model
(config.bodymodels). The subgroups object is the decision's own (audit.inputs.SubgroupsInput):
one rule for every door that carries subgroups."""

from typing import Annotated, Self

from pydantic import model_validator

from audit.inputs import DECISION_ID_HELP, DECISION_ID_PATTERN, ID_MAX, SubgroupsInput
from config.bodymodels import BodyModel
from config.bodyrules import problem, text


class DetectBiasInput(BodyModel):
    decision_id: Annotated[str, text(ID_MAX, pattern=DECISION_ID_PATTERN, help=DECISION_ID_HELP)]
    subgroups: SubgroupsInput

    @model_validator(mode="after")
    def _some_attribute(self) -> Self:
        if not self.attributes():
            raise problem("at least one attribute is required", at="subgroups")
        return self

    def attributes(self) -> dict[str, str]:
        """The subgroups as attribute names (`custom.region`)."""
        return self.subgroups.attributes()
