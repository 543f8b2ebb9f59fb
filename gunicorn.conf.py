"""Read by gunicorn when started from the repository root (`manage.py serve`, the README's
command, CI). The access log line carries the path without its query string and no Referer:
either may hold a secret a client put in a URL (an API key), and logs are read by more people
than keys are."""

import os
import sys

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
    if not worker.sockets:
        _listen_own(worker)


def _listen_own(worker):
    """The worker's own listening socket (SO_REUSEPORT), opened once the worker can accept: the
    kernel hands each socket its share of new connections from the moment it listens, and a
    worker still loading the app (seconds on a busy machine) would hold its share unanswered."""
    from gunicorn import sock, util

    worker.cfg.set("reuse_port", True)  # this process's copy of the settings
    worker.sockets = sock.create_sockets(worker.cfg, worker.log)
    for listener in worker.sockets:
        util.close_on_exec(listener)
    worker.wait_fds = [*worker.sockets, worker.PIPE[0]]


def on_starting(server):
    """Each web worker listens on a socket of its own (SO_REUSEPORT), so the kernel spreads new
    connections evenly over the workers. On one shared socket the worker that wakes first accepts
    a burst of connections (a front proxy's or a client's keep-alive pool opened at once): one
    process then got 1,500 of 1,500 requests, or 3,827 of 4,500, and queued them behind its
    threads while the others idled (bench/README.md, The /calibrate tail). Only when every
    address is TCP and gunicorn binds it itself: a Unix socket cannot be shared so (each worker
    would replace the last one's), and sockets handed over by systemd or a re-exec are shared
    ones. And only with several workers: one has nothing to spread, and the master's shared
    socket keeps the connections that arrive while a killed worker is replaced waiting for it
    instead of refusing them."""
    inherited = "LISTEN_FDS" in os.environ or "GUNICORN_FD" in os.environ
    tcp = all(isinstance(address, tuple) for address in server.cfg.address)
    if not inherited and tcp and server.cfg.workers > 1:
        server.cfg.set("reuse_port", True)  # the master binds nothing


def when_ready(server):
    """With own sockets, a worker opens its socket when it has loaded the app (post_worker_init),
    not when it is forked, as gunicorn would: a worker started in place of a killed one took its
    share of new connections while it loaded the app and answered none of them for as long as
    that took (6.7 s; bench/README.md, A killed web worker)."""
    if server.cfg.reuse_port:
        server.cfg.set("reuse_port", False)  # the workers forked from now on open no socket at fork
