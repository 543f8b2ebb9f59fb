"""What oversight keeps that names a reviewer, re-keyed when the reviewer is erased
(docs/reference/erasure.md). Review-effort and probe figures are read from the decision rows,
which the erasure re-keys itself."""

from audit.registry import Erased, register_eraser
from oversight.models import RubberStampState


@register_eraser
def rekey_erased_user(erased: Erased) -> int:
    if erased.user_id is None:
        return 0
    return RubberStampState.objects.filter(customer_id=erased.customer_id, user_id=erased.user_id).update(
        user_id=erased.pseudonym
    )
