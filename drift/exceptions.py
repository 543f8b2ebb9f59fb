from config.exceptions import Conflict


class DriftMonitorLimitReached(Conflict):
    code = "DRIFT_MONITOR_LIMIT_REACHED"


class DriftBaselineTooShort(Conflict):
    code = "DRIFT_BASELINE_TOO_SHORT"


class DriftBaselineIncomplete(Conflict):
    code = "DRIFT_BASELINE_INCOMPLETE"


class DriftNotCalibratable(Conflict):
    code = "DRIFT_NOT_CALIBRATABLE"


class DriftAlarmAlreadyAcknowledged(Conflict):
    code = "DRIFT_ALARM_ALREADY_ACKNOWLEDGED"
