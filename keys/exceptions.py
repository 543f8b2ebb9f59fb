from config.exceptions import Conflict, NotFound


class ApiKeyNotFound(NotFound):
    pass


class ApiKeyNotActive(Conflict):
    code = "API_KEY_NOT_ACTIVE"
    title = "API key not active"
