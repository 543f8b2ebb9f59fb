import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()

from config.checks import startup_check  # noqa: E402  (needs the apps loaded)

# A misconfigured host never serves: gunicorn's worker fails to boot with the reason.
startup_check()
