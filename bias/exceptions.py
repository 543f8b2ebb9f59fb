from config.exceptions import ValidationFailed


class InvalidBiasQuery(ValidationFailed):
    """A query parameter of /bias/feed or /bias/subgroups out of its domain."""
