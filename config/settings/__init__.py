"""Settings for Retaguarda, read from the environment through django-environ.

Embedded default (no environment at all): SQLite file, tasks in-process, offline
model. Production mode (``DJANGO_ENV=production``) hardens cookies, HSTS and SSL and
passes ``manage.py check --deploy``.

Split by concern so each part stays readable: ``base`` (environment, apps, data,
templates, auth), ``work`` (Celery, pools, turns, outbox, models, webhooks, API) and
``security`` (headers, cookies, CSP, logging, Sentry). Later parts read earlier ones.
"""

from config.settings.base import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.work import *  # noqa: F403
