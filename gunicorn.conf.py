"""Read by gunicorn when started from the repository root (`manage.py serve`, the README's
command, CI). The access log line carries the path without its query string and no Referer:
either may hold a secret a client put in a URL (an API key), and logs are read by more people
than keys are."""

access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s" %(L)s'

# What gunicorn reads before Django sees a request (docs/reference/limits.md, Request lines and
# headers; 8,190 is the most gunicorn allows). Over them gunicorn answers 414 or 431 itself, as a
# problem document naming the limit (config/gunicorn_errors.py).
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100


def worker_exit(server, worker):
    """A web process that stops cleanly writes its buffered key usage (last_used,
    request_count_30d) instead of losing up to KEY_USAGE_FLUSH_SECONDS of it."""
    from keys.services import key_usage_flush

    key_usage_flush()


def post_worker_init(worker):
    """Each web worker knows its thread count: one customer (and, before authentication, one
    client address) may hold only a share of them (config/threadshare.py). And the errors
    gunicorn answers itself are problem documents (config/gunicorn_errors.py)."""
    from config import gunicorn_errors
    from config.threadshare import web_threads_set

    web_threads_set(int(worker.cfg.threads))
    gunicorn_errors.install(worker.cfg)
