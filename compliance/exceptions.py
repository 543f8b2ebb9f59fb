from config.exceptions import Conflict, NotFound


class ExportNotFound(NotFound):
    pass


class ExportNotReady(Conflict):
    code = "EXPORT_NOT_READY"
    title = "Export not ready"
