from config.exceptions import Conflict


class ApiKeyNotActive(Conflict):
    code = "API_KEY_NOT_ACTIVE"
    title = "API key not active"
