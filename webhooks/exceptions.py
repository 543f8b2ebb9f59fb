from config.exceptions import Conflict, ValidationFailed


class WebhookInvalidUrl(ValidationFailed):
    code = "WEBHOOK_INVALID_URL"
    title = "Invalid webhook URL"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, errors=[{"field": "url", "message": detail}])


class WebhookInvalidEvent(ValidationFailed):
    code = "WEBHOOK_INVALID_EVENT"
    title = "Invalid webhook event"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, errors=[{"field": "events", "message": detail}])


class WebhookAlreadyEnabled(Conflict):
    code = "WEBHOOK_ALREADY_ENABLED"
    title = "Webhook already enabled"


class WebhookLimitReached(Conflict):
    code = "WEBHOOK_LIMIT_REACHED"
    title = "Webhook limit reached"


class WebhookDuplicateUrl(Conflict):
    code = "WEBHOOK_DUPLICATE_URL"
    title = "Webhook URL already registered"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, errors=[{"field": "url", "message": detail}])


class WebhookTestInFlight(Conflict):
    code = "WEBHOOK_TEST_IN_PROGRESS"
    title = "A test send is already in progress"
