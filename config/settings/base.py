"""Base settings: environment, apps, middleware, data, templates, locale, auth.

Embedded default (no environment at all): SQLite file, tasks in-process, offline
model. Production mode (``DJANGO_ENV=production``) hardens cookies, HSTS and SSL and
passes ``manage.py check --deploy``.
"""

from __future__ import annotations

from pathlib import Path

import environ

from config.settings import guard as _guard

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DJANGO_ENV = env.str("DJANGO_ENV", default="development").strip()
if _env_problem := _guard.environment_problem(DJANGO_ENV):
    raise environ.ImproperlyConfigured(_env_problem)
PRODUCTION = DJANGO_ENV == "production"

_DEVELOPMENT_KEY = "dev-insecure-retaguarda-key-change-me-0123456789abcdef"
DEBUG = env.bool("DJANGO_DEBUG", default=not PRODUCTION)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="" if PRODUCTION else _DEVELOPMENT_KEY)
# Channel credentials are encrypted at rest with these Fernet keys (accounts.encryption):
# the first encrypts, all decrypt — rotation is "new key first, reencrypt_secrets, drop the
# old". Unset: one key derived from SECRET_KEY (development); check --deploy refuses that.
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[])
ALLOWED_HOSTS = env.list(
    "DJANGO_ALLOWED_HOSTS", default=[] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]"]
)
# Production refuses to start with a missing or insecure key, DEBUG on, or no (or any) host,
# every problem in one message (config/settings/guard.py).
if PRODUCTION and (
    _problems := _guard.production_problems(
        debug=DEBUG,
        secret_key=SECRET_KEY,
        development_key=_DEVELOPMENT_KEY,
        allowed_hosts=ALLOWED_HOSTS,
    )
):
    raise environ.ImproperlyConfigured(_guard.refusal(_problems))
# Forms posted from the public names are trusted whatever Host the reverse proxy passes on
# (nginx sends its upstream's name unless told otherwise): in production the HTTPS origins
# of DJANGO_ALLOWED_HOSTS unless DJANGO_CSRF_TRUSTED_ORIGINS lists them.
CSRF_TRUSTED_ORIGINS = env.list(
    "DJANGO_CSRF_TRUSTED_ORIGINS",
    default=_guard.trusted_origins(ALLOWED_HOSTS) if PRODUCTION else [],
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "accounts",
    "conversation",
    "routers",
    "cases",
    "analytics",
    "inbox",
]

MIDDLEWARE = [
    "accounts.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "accounts.middleware.SecurityHeadersMiddleware",
    # Probes answer here: no host check, session, login or database for liveness.
    "config.health.HealthProbeMiddleware",
    # 413 for a body over the cap, from Content-Length, before anything reads it.
    "config.settings.request_limits.RequestBodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "accounts.middleware.MembershipMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.workspace",
            ],
        },
    }
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASE_APP_ROLE = env.str("DATABASE_APP_ROLE", default="")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Row-level security (accounts.rls): the app runs as a role that owns no table, so the
    # tenant policies bind it; migrations run as the login role (accounts.db.owner_mode).
    DATABASES["default"]["ENGINE"] = "accounts.db"
    # libpq waits for ever by default (the kernel gives up on an unanswered SYN after ~2
    # minutes; a server that accepts and never answers, never): a request or a readiness
    # probe during a database outage would hold a web thread that long. A URL's own
    # ``?connect_timeout=`` wins.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DB_CONNECT_TIMEOUT_S", default=5)
    )
    if DATABASE_APP_ROLE:
        DATABASES["default"].setdefault("OPTIONS", {})["assume_role"] = DATABASE_APP_ROLE
    # Which process holds a connection, in pg_stat_activity and the server's logs:
    # scripts/serve.sh and scripts/worker.sh name theirs (retaguarda-web, retaguarda-turns...).
    if DATABASE_APPLICATION_NAME := env.str("DATABASE_APPLICATION_NAME", default=""):
        DATABASES["default"].setdefault("OPTIONS", {})["application_name"] = (
            DATABASE_APPLICATION_NAME
        )
    # Prepared statements: the hot path runs the same few statements all day, and each one
    # parsed and planned anew is a large share of PostgreSQL's CPU per turn. With this on, psycopg
    # binds parameters server-side and prepares a statement on a connection once it has run
    # ``DB_PREPARE_THRESHOLD`` times (docs/operations.md, "Prepared statements"). Only for
    # connections straight to PostgreSQL (or PgBouncer >= 1.21 with
    # ``max_prepared_statements``): an older PgBouncer in transaction mode hands the next
    # transaction another server connection, where the statement does not exist.
    if env.bool("DB_PREPARED_STATEMENTS", default=False):
        DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True
        DATABASES["default"]["OPTIONS"]["prepare_threshold"] = env.int(
            "DB_PREPARE_THRESHOLD", default=5
        )
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=0))
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads (the in-process task runner, the dev server) share one file.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL;"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "pt-br"
LANGUAGES = [("pt-br", "Português (Brasil)")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "America/Sao_Paulo"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "staticfiles")
# Files customers send (conversation.outbox.media); never served directly, only through
# the authenticated media view.
MEDIA_ROOT = env.path("DJANGO_MEDIA_ROOT", default=BASE_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "conversation:conversations"
LOGOUT_REDIRECT_URL = "accounts:login"
# Invitations and password resets: EMAIL_URL (e.g. smtp+tls://user:pass@host:587), else console.
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Retaguarda <nao-responda@localhost>")
CSRF_FAILURE_VIEW = "accounts.views.csrf_failure"  # pt-BR, in the product's layout
