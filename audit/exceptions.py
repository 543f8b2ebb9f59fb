from config.exceptions import Conflict, NotFound


class DecisionConflict(Conflict):
    code = "DECISION_CONFLICT"
    title = "Decision conflict"


class DecisionNotFound(NotFound):
    pass


class VerifyJobNotFound(NotFound):
    pass
