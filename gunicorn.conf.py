"""Read by gunicorn when started from the repository root (`manage.py serve`, the README's
command, CI). The access log line carries the path without its query string and no Referer:
either may hold a secret a client put in a URL (an API key), and logs are read by more people
than keys are."""

import sys

access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s" %(L)s'

# What gunicorn reads before Django sees a request (docs/reference/limits.md, Request lines and
# headers; 8,190 is the most gunicorn allows). Over them gunicorn answers 414 or 431 itself, as a
# problem document naming the limit (config/gunicorn_errors.py).
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100

# An idle kept-alive connection stays open 75 s, longer than the front proxy keeps one to a web
# host (docs/deploy.md's nginx block: keepalive_timeout 60s), so the proxy closes it, never
# gunicorn: a POST the proxy sends on a connection gunicorn is closing cannot be sent again, and
# nginx answers it 502 (with gunicorn's default of 2 s, one in a burst of 380 did). An idle
# connection waits in the worker's poller, not in a thread.
keepalive = 75


def worker_exit(server, worker):
    """A web process that stops cleanly writes its buffered key usage (last_used,
    request_count_30d) instead of losing up to KEY_USAGE_FLUSH_SECONDS of it."""
    from keys.services import key_usage_flush

    key_usage_flush()


def post_worker_init(worker):
    """A web host whose connections would exceed what PostgreSQL allows does not start
    (config/connections.py). Each web worker knows its thread count: one customer (and, before
    authentication, one client address) may hold only a share of them (config/threadshare.py),
    and a request line and its headers have a deadline (config/headerread.py). The errors
    gunicorn answers itself are problem documents (config/gunicorn_errors.py)."""
    from config import gunicorn_errors, headerread
    from config.connections import budget_problem, web_process_connections
    from config.threadshare import web_threads_set

    problem = budget_problem("web", int(worker.cfg.workers), web_process_connections(int(worker.cfg.threads)))
    if problem is not None:
        worker.log.error(problem)
        sys.exit(3)  # gunicorn's "worker failed to boot": the master stops, saying why
    web_threads_set(int(worker.cfg.threads))
    gunicorn_errors.install(worker.cfg)
    pool = getattr(worker, "tpool", None)  # gthread's request threads
    if pool is not None:
        headerread.install(worker)  # request lines and headers: a deadline, an address's bound
