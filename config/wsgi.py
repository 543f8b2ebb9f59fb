import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()

from django.urls import get_resolver  # noqa: E402  (needs the settings)

from config.checks import startup_check  # noqa: E402  (needs the apps loaded)

# A misconfigured host never serves: gunicorn's worker fails to boot with the reason.
startup_check()

# What a web process has loaded by now (the apps, and through the URL patterns every view,
# serializer and schema they import: about 150,000 objects) lives as long as the process. A full
# collection would walk all of it while holding the GIL, stopping every thread of the worker for
# 100-350 ms on this machine's image, once every few thousand requests; frozen, it walks only
# what requests leave behind (docs/deploy.md, Web processes).
get_resolver().url_patterns  # noqa: B018  (loaded now rather than by the first request)

# And what the first request would import otherwise, each worker alike, while the first requests
# after a start queue behind it (bench/README.md, The /calibrate tail): the aggregates' modules
# the decision pipeline finds on its first write (audit.registry), the session and message
# storage of the middleware, and the canonical JSON of the audit hash (audit.hashing).
from django.conf import settings  # noqa: E402
from django.utils.module_loading import autodiscover_modules, import_string  # noqa: E402

autodiscover_modules("contributions")
import_string(settings.MESSAGE_STORAGE)
import_string(settings.SESSION_SERIALIZER)
import rfc8785  # noqa: E402, F401

gc.freeze()
