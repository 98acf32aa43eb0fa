"""Security, logging and error-tracking settings."""

from __future__ import annotations

from config.settings.base import DJANGO_ENV, PRODUCTION, env

# --- Security. Production hardens everything `check --deploy` looks at.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env.int("DJANGO_SESSION_COOKIE_AGE", default=12 * 60 * 60)
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# No CDN anywhere: every script, style and image comes from this origin (accounts.middleware).
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        # No inline script and no inline event handler: every page's behaviour is in static
        # files (js/app.js: auto-submit, confirmations).
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "camera",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "payment",
        "usb",
    )
)
# The largest request body (config/settings/request_limits.py); 0: WHATSAPP_MEDIA_MAX_BYTES
# + 1 MiB, room for the largest file a member may send and its form.
REQUEST_MAX_BODY_BYTES = env.int("REQUEST_MAX_BODY_BYTES", default=0)
# Behind a proxy that passes its upstream's name as Host and the public one in
# X-Forwarded-Host: absolute links (invitations, password resets) use the public name. Only
# with a proxy that sets the header (a client's value is still checked against
# DJANGO_ALLOWED_HOSTS); forms work without it (CSRF_TRUSTED_ORIGINS, config.settings.base).
USE_X_FORWARDED_HOST = env.bool("DJANGO_USE_X_FORWARDED_HOST", default=False)
# Login throttling counts by client address; behind N reverse proxies, the N-th address
# from the right of X-Forwarded-For is the client's (0: REMOTE_ADDR, no proxy trusted).
# Production runs behind the TLS-ending proxy it requires (SECURE_PROXY_SSL_HEADER), so one
# is trusted there by default: with 0 every client had the proxy's address, one stranger's
# wrong passwords locked the user out from everywhere, and a username spray hit the
# per-address ceiling for every office at once. Set it to the number of proxies.
TRUSTED_PROXY_COUNT = env.int("DJANGO_TRUSTED_PROXY_COUNT", default=1 if PRODUCTION else 0)
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # __Host- cookies: HTTPS only, this host only, path / (no subdomain can plant them).
    SESSION_COOKIE_NAME = "__Host-sessionid"
    CSRF_COOKIE_NAME = "__Host-csrftoken"
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    # Load balancers probe over plain HTTP inside the network: health answers, never redirects.
    SECURE_REDIRECT_EXEMPT = [r"^health/"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# One JSON object a line with the request/task ids (accounts.logging). The redacting filter
# runs first: no query string, credential or request object is written, and Django's
# 4xx/5xx lines get their request id (config/settings/log_redaction.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "redact": {"()": "config.settings.log_redaction.RedactingFilter"},
        "request_id": {"()": "accounts.logging.RequestIdFilter"},
    },
    "formatters": {"json": {"()": "accounts.logging.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["redact", "request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # httpx logs every call's full URL at INFO ("HTTP Request: GET https://…"): provider
        # media links with their signed query strings, WAHA file paths, a base URL with its
        # password. The outbox and the model ledger already record each call by id.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}

# --- Error tracking (optional): Sentry when SENTRY_DSN is set, nothing otherwise. No
# personal data leaves: no request bodies (webhooks carry the customers' words), no local
# variables (they hold message text and credentials), no user details.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    from config.settings.log_redaction import scrub_sentry_event

    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=env.str("SENTRY_ENVIRONMENT", default=DJANGO_ENV),
        integrations=[DjangoIntegration(), CeleryIntegration()],
        send_default_pii=False,
        max_request_body_size="never",
        include_local_variables=False,
        traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
        # No query string either: invitation codes, reset tokens, Meta's verify token.
        before_send=scrub_sentry_event,
    )
