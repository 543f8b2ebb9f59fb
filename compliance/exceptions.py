from config.exceptions import Conflict, NotFound


class ExportNotFound(NotFound):
    pass


class ExportNotReady(Conflict):
    code = "EXPORT_NOT_READY"
    title = "Export not ready"


class SystemProfileLimitReached(Conflict):
    code = "SYSTEM_PROFILE_LIMIT_REACHED"
    title = "System profile limit reached"
