"""Work settings: Celery and its queues, thread pools, turns, outbox, models, webhooks, API."""

from __future__ import annotations

import sys

import environ

from config.settings.base import DATABASES, PRODUCTION, env

# --- Work: Celery. No broker → tasks run in-process through the same code path.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
TASKS_IN_PROCESS = not CELERY_BROKER_URL
CELERY_TASK_ALWAYS_EAGER = TASKS_IN_PROCESS
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="retaguarda")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# kombu's Redis transport with one client per connection pool instead of one per publish
# and per ack (config.redis_clients: ~0.1 ms of CPU each). Other brokers: kombu's own.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "config.redis_clients:BrokerTransport"
# Queues by task name (one worker kind each: scripts/worker.sh), so a slow model or provider
# never delays other work behind it; unnamed tasks go to the default queue (bulk workers).
CELERY_TURNS_QUEUE = env.str("CELERY_TURNS_QUEUE", default="turns")
CELERY_OUTBOX_QUEUE = env.str("CELERY_OUTBOX_QUEUE", default="outbox")
CELERY_BULK_QUEUE = env.str("CELERY_BULK_QUEUE", default="bulk")
TASK_QUEUE_KINDS = {
    "conversation.run_inbound_turn": "turns",
    "cases.run_case_reply_turn": "turns",
    "cases.run_follow_up_turn": "turns",
    "conversation.deliver_outbox": "outbox",
    "cases.deliver_case_notice": "outbox",
    "analytics.send_budget_notice": "outbox",  # a staff e-mail: a delivery, never a turn's
    "routers.run_quality_run": "bulk",
    # The sweeper re-drives lost work: on the always-running outbox threads, never behind a
    # ten-minute quality run in the prefork bulk pool. It only reads and schedules (seconds).
    "conversation.sweep_due_work": "outbox",
    "cases.fire_due_follow_ups": "bulk",
    "cases.watch_stale_cases": "bulk",
    "conversation.apply_retention": "bulk",
    "analytics.roll_up": "bulk",
}
# TASK_QUEUE_KINDS → CELERY_<KIND>_QUEUE, read at publish time (harnesses override them).
CELERY_TASK_ROUTES = ["config.celery.route_task"]
# Time limits (prefork enforces them; in thread pools the network timeouts below bound a
# task). A turn's hard limit < TURN_LEASE_S, a delivery's < OUTBOX_DELIVERY_LEASE_S: a live
# task is never presumed dead.
CELERY_TASK_SOFT_TIME_LIMIT = 300
CELERY_TASK_TIME_LIMIT = 360
_TIME_LIMITS = {"turns": (75, 85), "outbox": (40, 50)}
CELERY_TASK_ANNOTATIONS = {
    name: {"soft_time_limit": limits[0], "time_limit": limits[1]}
    for name, kind in TASK_QUEUE_KINDS.items()
    if (limits := _TIME_LIMITS.get(kind))
} | {
    "routers.run_quality_run": {"soft_time_limit": 600, "time_limit": 660},
    "conversation.sweep_due_work": {"soft_time_limit": 60, "time_limit": 90},
}
# Redis redelivers an unacknowledged message (late acks) after the visibility timeout;
# kombu's default hour left a killed worker's turns unanswered for an hour. Deliberately
# longer than any task runs (660 s) and any countdown (OUTBOX_BACKOFF_MAX_S, 600 s), so a
# live or ETA-waiting task never goes to a second worker. Recovery does not wait for it: the
# sweeper re-drives committed work within about a minute; a late redelivery is a no-op.
#
# A stalled Redis (it accepts connections and answers nothing) must not hold a web thread or
# a worker for good: every socket operation gives up after REDIS_SOCKET_TIMEOUT_S and a
# publish is retried twice at most. The webhook's row is committed first, so a publish that
# gives up costs nothing but time: the sweeper re-drives it (conversation.dispatch). Longer
# than kombu's 1 s BRPOP poll, so an idle worker's wait is never cut short.
REDIS_SOCKET_TIMEOUT_S = env.float("REDIS_SOCKET_TIMEOUT_S", default=2.0)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT_S", default=900),
    "socket_timeout": REDIS_SOCKET_TIMEOUT_S,
    "socket_connect_timeout": REDIS_SOCKET_TIMEOUT_S,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {}
# Human cases: due follow-ups with the customer, and the stale-case watcher.
CELERY_BEAT_SCHEDULE["cases-follow-ups"] = {"task": "cases.fire_due_follow_ups", "schedule": 60.0}
CELERY_BEAT_SCHEDULE["case-stale-watcher"] = {"task": "cases.watch_stale_cases", "schedule": 300.0}
# The sweeper (conversation.sweeper; without a broker the in-process runner runs it).
SWEEP_INTERVAL_S = env.float("SWEEP_INTERVAL_S", default=15.0)
CELERY_BEAT_SCHEDULE["sweep-due-work"] = {
    "task": "conversation.sweep_due_work",
    "schedule": SWEEP_INTERVAL_S,
}
# Analytics: finished days into the daily rollups (analytics.rollups: why beat, not on write).
CELERY_BEAT_SCHEDULE["analytics-roll-up"] = {"task": "analytics.roll_up", "schedule": 300.0}
# LGPD retention (conversation.privacy): organizations with message_retention_days set.
CELERY_BEAT_SCHEDULE["lgpd-retention"] = {
    "task": "conversation.apply_retention",
    "schedule": env.float("RETENTION_INTERVAL_S", default=6 * 3600.0),
}

# --- Work: thread pools and their database connections (scripts/worker.sh, README "Capacity").
# The turns and outbox workers run ``-P threads``: a turn waits on the model for seconds, so
# one process keeps many in flight. Django opens one connection per thread, and Celery's
# Django fixup *closes* it before and after every task (``CONN_MAX_AGE`` does not apply to
# workers) — about 25 ms of connect, auth and ``SET ROLE`` per task on a loaded 2-core box.
# ``DB_POOL_MAX_SIZE`` > 0 turns on Django's psycopg pool for this process instead: that
# close returns the connection to a per-process pool and the next task, on any thread,
# takes it warm. Size it to the process's threads (a turn keeps its thread's connection
# until the task ends). Tenant context stays correct: ``accounts.rls`` only ever sets it
# transaction-locally and the pool takes a connection back idle (rolled back otherwise);
# ``SET ROLE`` is the same for every connection of the process. Off by default (prefork
# workers close the pool after every task; ``migrate`` must not take app-role connections).
DB_POOL_MAX_SIZE = env.int("DB_POOL_MAX_SIZE", default=0)
_SCHEMA_COMMANDS = {"migrate", "flush", "makemigrations", "sqlflush", "createcachetable"}
if (
    DB_POOL_MAX_SIZE > 0
    and DATABASES["default"]["ENGINE"] == "accounts.db"
    and not (len(sys.argv) > 1 and sys.argv[1] in _SCHEMA_COMMANDS)  # owner_mode: no pool
):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections instead
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(env.int("DB_POOL_MIN_SIZE", default=2), DB_POOL_MAX_SIZE),
        "max_size": DB_POOL_MAX_SIZE,
        # A task waits this long for a free connection before failing (and retrying).
        "timeout": env.float("DB_POOL_TIMEOUT_S", default=10.0),
        "max_idle": 300.0,
        "max_lifetime": 1800.0,
    }
# Embedded mode (SQLite, tasks on in-process threads): in WAL mode ``synchronous=NORMAL``
# never corrupts the file and makes a commit ~0.1 ms instead of an fsync (~4 ms here; a
# turn commits 2-3 times, a webhook once). The price: a power loss (not a crash of the
# process) may drop the last commits. ``SQLITE_SYNCHRONOUS=FULL`` restores the fsync.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _sync = env.str("SQLITE_SYNCHRONOUS", default="NORMAL").upper()
    if _sync not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
        raise environ.ImproperlyConfigured("SQLITE_SYNCHRONOUS: OFF, NORMAL, FULL or EXTRA")
    DATABASES["default"]["OPTIONS"]["init_command"] += f"PRAGMA synchronous={_sync};"

# --- Turns
# Lines a customer types within this many seconds are answered by one turn.
TURN_BURST_WINDOW_S = env.float("TURN_BURST_WINDOW_S", default=2.0)
# ... and never later than this after the first line of the burst (conversation.turns.burst).
TURN_BURST_MAX_S = env.float("TURN_BURST_MAX_S", default=10.0)
# Past its lease a claimed turn's attempt is presumed dead (> the turn's hard time limit).
# A live turn renews it after each model call (turns.pipeline), so it only has to outlast one
# call with the SDK's retries: a killed worker's turn is re-run about 1.5 min later (was 2.5).
TURN_LEASE_S = env.float("TURN_LEASE_S", default=90.0)
# After this many attempts (workers that died mid-turn, model retries) the turn hands off.
TURN_MAX_ATTEMPTS = env.int("TURN_MAX_ATTEMPTS", default=4)
# Another turn of the conversation is running: try again this much later.
TURN_BUSY_RETRY_S = env.float("TURN_BUSY_RETRY_S", default=2.0)
# Agents that retry when the model is down wait this long (doubling per attempt).
TURN_LLM_RETRY_DELAY_S = env.float("TURN_LLM_RETRY_DELAY_S", default=60.0)
# The sweeper re-drives a line no turn took this long after its window (up to the max age).
TURN_SWEEP_GRACE_S = env.float("TURN_SWEEP_GRACE_S", default=30.0)
TURN_SWEEP_MAX_AGE_S = env.float("TURN_SWEEP_MAX_AGE_S", default=24 * 3600.0)
# --- Outbox (conversation.outbox): one ordered delivery chain per conversation.
# Retryable provider failures back off exponentially (with jitter) from the base up to the
# cap, and give up after the horizon (the message ends ``failed``/``retry_horizon``; it is
# re-sent automatically, in order, once the channel answers again, if younger than the
# resend age). The per-channel circuit breaker opens after that many consecutive failures
# and probes the provider again after the cool-down.
OUTBOX_RETRY_HORIZON_S = env.float("OUTBOX_RETRY_HORIZON_S", default=6 * 3600.0)
OUTBOX_BACKOFF_BASE_S = env.float("OUTBOX_BACKOFF_BASE_S", default=2.0)
OUTBOX_BACKOFF_MAX_S = env.float("OUTBOX_BACKOFF_MAX_S", default=600.0)
OUTBOX_BREAKER_THRESHOLD = env.int("OUTBOX_BREAKER_THRESHOLD", default=5)
OUTBOX_BREAKER_COOLDOWN_S = env.float("OUTBOX_BREAKER_COOLDOWN_S", default=30.0)
OUTBOX_AUTO_RESEND_MAX_AGE_S = env.float("OUTBOX_AUTO_RESEND_MAX_AGE_S", default=24 * 3600.0)
# Provider HTTP timeout (read/write; connect is at most 5 s): a hanging provider holds a
# delivery worker for seconds. The delivery lease must outlast one provider call.
OUTBOX_PROVIDER_TIMEOUT_S = env.float("OUTBOX_PROVIDER_TIMEOUT_S", default=10.0)
OUTBOX_DELIVERY_LEASE_S = env.float("OUTBOX_DELIVERY_LEASE_S", default=60.0)
# The sweeper re-drives a queued message whose delivery is this late (its task was lost).
OUTBOX_SWEEP_GRACE_S = env.float("OUTBOX_SWEEP_GRACE_S", default=30.0)
# Kill switch: blank (a line copied from .env.example) is the default, never a silent "off".
_rt = (env.str("CONVERSATION_RUNTIME_ENABLED", default="").strip() or str(not PRODUCTION)).lower()
CONVERSATION_RUNTIME_ENABLED = _rt in environ.Env.BOOLEAN_TRUE_STRINGS
if not CONVERSATION_RUNTIME_ENABLED and _rt not in ("false", "off", "no", "n", "0"):
    # "ligado" or a typo must not silently switch the runtime off.
    raise environ.ImproperlyConfigured("CONVERSATION_RUNTIME_ENABLED must be true or false")

# --- Models. No key → the offline model (deterministic, no network).
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="") or None
ANTHROPIC_DEFAULT_MODEL = env.str("ANTHROPIC_DEFAULT_MODEL", default="claude-haiku-4-5")
# Per attempt (the SDK retries 429/5xx/529): a hanging model holds a turn ≤ 3 × 15 s, then
# the turn falls back (conversation.turns.unavailable), inside the turn's time limit.
ANTHROPIC_TIMEOUT_S = env.float("ANTHROPIC_TIMEOUT_S", default=15.0)
ANTHROPIC_MAX_RETRIES = env.int("ANTHROPIC_MAX_RETRIES", default=2)
# The router's classifier waits at most (1 + retries) × its 8 s timeout before falling back.
ROUTER_LLM_MAX_RETRIES = env.int("ROUTER_LLM_MAX_RETRIES", default=1)
# The promise gate's model check: Haiku-class, one attempt; a failure counts as a promise.
PROMISE_CHECK_MODEL = env.str("PROMISE_CHECK_MODEL", default="claude-haiku-4-5")
PROMISE_CHECK_TIMEOUT_S = env.float("PROMISE_CHECK_TIMEOUT_S", default=4.0)

# --- Billing backend of the invoice-support runtime. No URL → the demo backend
# (invoices loaded per contact with ``manage.py load_invoices``).
BILLING_API_URL = env.str("BILLING_API_URL", default="")
BILLING_API_TOKEN = env.str("BILLING_API_TOKEN", default="")
BILLING_API_TIMEOUT_S = env.float("BILLING_API_TIMEOUT_S", default=10.0)

# --- Webhooks
# Media the customers send: fetched from the provider on first view, at most this size,
# kept in the default storage (MEDIA_ROOT; an S3 backend goes in STORAGES["default"]).
WHATSAPP_MEDIA_MAX_BYTES = env.int("WHATSAPP_MEDIA_MAX_BYTES", default=16 * 1024 * 1024)
# Mark-read and typing while a turn runs (best effort, never blocks a turn).
WHATSAPP_PRESENCE_ENABLED = env.bool("WHATSAPP_PRESENCE_ENABLED", default=True)
WEBHOOK_MAX_BODY_BYTES = env.int("WEBHOOK_MAX_BODY_BYTES", default=256 * 1024)
WEBHOOK_RATE_LIMIT_PER_MINUTE = env.int("WEBHOOK_RATE_LIMIT_PER_MINUTE", default=600)
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

CACHES = {
    "default": (
        {
            "BACKEND": "config.redis_clients.RedisCache",
            "LOCATION": env.str("REDIS_URL"),
            # Passed to the connection pool: a stalled Redis fails a rate-limit count (which
            # then lets the webhook through, accounts.throttle.hit) instead of hanging it.
            "OPTIONS": {
                "socket_timeout": REDIS_SOCKET_TIMEOUT_S,
                "socket_connect_timeout": REDIS_SOCKET_TIMEOUT_S,
            },
        }
        if env.str("REDIS_URL", default="")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "accounts.api_errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # The API speaks JSON only: no form or multipart parsing surface (415 otherwise).
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Retaguarda API",
    "DESCRIPTION": "Back office for WhatsApp AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The back office's API shape is for its logged-in users, not for the internet.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}
