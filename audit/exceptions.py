from config.exceptions import Conflict, DomainError, NotFound


class DecisionConflict(Conflict):
    code = "DECISION_CONFLICT"
    title = "Decision conflict"


class DecisionNotFound(NotFound):
    pass


class VerifyJobNotFound(NotFound):
    pass


class TreeNotExtension(Conflict):
    """The stored tree no longer has the newest checkpoint's root at its size: nothing is
    signed (docs/reference/checkpoints.md, "Signed notes and checkpoints")."""

    code = "TREE_NOT_EXTENSION"
    title = "The audit tree does not extend the last checkpoint"


class CheckpointKeyError(DomainError):
    """The checkpoint signing key cannot be read or must not be generated (the message never
    holds key material): checkpoints are paused, logging goes on
    (docs/reference/checkpoints.md, "The signing key")."""

    code = "SERVICE_UNAVAILABLE"
    status = 503
    title = "Checkpoints paused"


class ErasureNotFound(NotFound):
    pass


class ErasureLegalHold(Conflict):
    """The customer's retention policy holds the trail: nothing is erased; the refusal is
    recorded as an erasure with status `refused` (docs/reference/erasure.md)."""

    code = "ERASURE_LEGAL_HOLD"
    title = "The audit trail is under legal hold"

    def __init__(self, detail: str, *, erasure_id: str) -> None:
        super().__init__(detail)
        self.erasure_id = erasure_id


class GroupUnavailable(DomainError):
    """A grouped write that cannot answer with its result (docs/reference/decisions.md, Group
    commit): the request waited for its group past TRUSTCAL_DECISION_GROUP_WAIT_SECONDS, or the
    group's database connection was lost. The detail says whether anything may be stored."""

    code = "SERVICE_UNAVAILABLE"
    status = 503
    title = "Service unavailable"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, headers={"Retry-After": "1"})
