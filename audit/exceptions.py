from config.exceptions import Conflict, NotFound


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
