"""The project's ground floor. Importing it starts nothing: the Celery app (config.celery) is
made when Django starts (config.apps.CoreConfig.ready) or when Celery loads it (`celery -A
config`), so a module of this package can be used without Django or Celery."""
