"""The apps' figures for /engines/status and /metrics (docs/reference/system.md). Each app may have an
`engine.py` with `engines() -> list[dict]`, `metrics() -> dict` and their customer-scoped forms; they are
found through Django's app registry (`autodiscover_modules`, as the admin finds `admin.py`), so an app
never edits config to appear here and config imports no app by name."""

import datetime as dt
import logging
import sys
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

from django.apps import apps
from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from config import metrics as request_metrics
from config.health import broker_depth
from config.jsondoc import JSONObject
from config.redis import redis_status
from config.timeutils import isoformat

logger = logging.getLogger("trustcal.system")


@lru_cache(maxsize=1)
def engine_modules() -> tuple[ModuleType, ...]:
    """Every installed app's `engine` module, in INSTALLED_APPS order."""
    autodiscover_modules("engine")
    names = (f"{app.name}.engine" for app in apps.get_app_configs())
    return tuple(sys.modules[name] for name in names if name in sys.modules)


def app_hooks(name: str) -> list[Callable[..., Any]]:  # Any: each hook's signature is its name's
    return [hook for module in engine_modules() if (hook := getattr(module, name, None)) is not None]


# Engine fields any key may see: the service's own state, nothing built from customers' data.
PUBLIC_ENGINE_FIELDS = {"name", "status", "version", "workers_online", "settings"}


def engines_snapshot(*, customer: object = None) -> list[JSONObject]:
    """Every engine; with `customer` (a non-admin caller) only the public fields, the last
    activity withheld (it moves when any customer acts), plus that customer's own figures."""
    engines: list[JSONObject] = []
    for hook in app_hooks("engines"):
        try:
            engines.extend(hook())
        except Exception:
            logger.exception("engine status failed: %s", hook.__module__)
            engines.append(
                {
                    "name": hook.__module__.split(".")[0],
                    "status": "down",
                    "version": settings.SERVICE_VERSION,
                    "last_activity_at": None,
                }
            )
    if customer is None:
        return engines
    own: dict[str, JSONObject] = {}
    for hook in app_hooks("customer_engines"):
        for name, figures in hook(customer).items():
            own.setdefault(name, {}).update(figures)
    scoped = []
    for engine in engines:
        public = {k: v for k, v in engine.items() if k in PUBLIC_ENGINE_FIELDS}
        public["last_activity_at"] = None
        public.update(own.get(engine["name"], {}))
        scoped.append(public)
    return scoped


def redis_figures() -> JSONObject:
    """The answering process's view of Redis (docs/deploy.md, "When Redis is down")."""
    status = redis_status()
    since = status["down_since"]
    return {
        "configured": status["configured"],
        "reachable": status["reachable"],
        "down_since": None if since is None else isoformat(dt.datetime.fromtimestamp(since, dt.UTC)),
        "outages": status["outages"],
    }


def metrics_snapshot(*, customer: object = None) -> JSONObject:
    """The figures of docs/reference/system.md, Metrics. An admin key (customer None) sees the platform's;
    any other key sees the service's own figures (requests, latency, queue depths, internal errors) and,
    under the same keys, its own customer's decisions, signals and deliveries (`scope: "customer"`)."""
    body: JSONObject = {"scope": "platform" if customer is None else "customer"}
    body["requests"] = request_metrics.snapshot()
    body["tasks"] = body["requests"].pop("tasks")
    body.update({"decisions_logged": 0, "signals_ingested": 0, "deliveries": {}, "queues": {}})
    if customer is None:
        hooks = [hook() for hook in app_hooks("metrics")]
    else:
        hooks = [hook() for hook in app_hooks("platform_metrics")]
        hooks += [hook(customer) for hook in app_hooks("customer_metrics")]
    for figures in hooks:
        for key, value in figures.items():
            if isinstance(value, dict) and isinstance(body.get(key), dict):
                body[key].update(value)
            else:
                body[key] = value
    body["queues"].setdefault("broker", broker_depth())
    body["redis"] = redis_figures()
    body["timestamp"] = isoformat(timezone.now())
    return body
