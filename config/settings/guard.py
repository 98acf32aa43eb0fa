"""What ``DJANGO_ENV=production`` refuses to start with, each with a sentence that says how
to fix it (read by ``config.settings.base`` at import, so every process — web server,
workers, ``manage.py`` — stops before it serves or touches anything).

- ``DJANGO_ENV`` other than ``development`` or ``production``: ``prod`` or ``staging`` used to
  run the development settings silently — DEBUG on, insecure cookies, no HSTS.
- ``DJANGO_SECRET_KEY`` missing, the development default, the ``.env.example`` placeholder,
  Django's ``django-insecure-`` keys, or shorter than 50 characters: sessions, password-reset
  links and (without ``FIELD_ENCRYPTION_KEYS``) channel secrets hang on it.
- ``DJANGO_DEBUG`` on: the error pages would show settings, code and the request to anyone.
- ``DJANGO_ALLOWED_HOSTS`` empty (every request would answer 400) or ``*`` (password-reset
  and invitation links are built from the Host header: anyone could have them point at
  their own site). The health probes answer whatever the Host (``config.health``).

Pure functions of the values, so tests check every rule without a process per case.
"""

from __future__ import annotations

ENVIRONMENTS = ("development", "production")
MIN_SECRET_KEY_LENGTH = 50
# The .env.example line an operator may uncomment as it is.
PLACEHOLDER_SECRET_KEYS = frozenset({"change-me-to-a-long-random-string"})
KEY_HINT = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"


def environment_problem(name: str) -> str | None:
    if name in ENVIRONMENTS:
        return None
    return (
        f"DJANGO_ENV={name!r} is neither 'development' nor 'production': any other value "
        "would run the development settings (DEBUG on, insecure cookies). A staging "
        "deployment is DJANGO_ENV=production (name it in SENTRY_ENVIRONMENT)."
    )


def secret_key_problem(secret_key: str, *, development_key: str) -> str | None:
    key = secret_key.strip()
    if not key:
        return f"DJANGO_SECRET_KEY is required in production ({KEY_HINT})."
    if key == development_key or key in PLACEHOLDER_SECRET_KEYS:
        return (
            "DJANGO_SECRET_KEY is the development key or the .env.example placeholder, "
            f"known to anyone who has read the code ({KEY_HINT})."
        )
    if key.startswith("django-insecure"):
        return f"DJANGO_SECRET_KEY is a 'django-insecure-' key ({KEY_HINT})."
    if len(key) < MIN_SECRET_KEY_LENGTH:
        return (
            f"DJANGO_SECRET_KEY has {len(key)} characters; production needs at least "
            f"{MIN_SECRET_KEY_LENGTH} random ones ({KEY_HINT})."
        )
    return None


def allowed_hosts_problem(hosts: list[str]) -> str | None:
    names = [h.strip() for h in hosts if h.strip()]
    if not names:
        return (
            "DJANGO_ALLOWED_HOSTS is empty: every page would answer 400. List the public "
            "host names, comma-separated (app.example.com); the health probes need no entry."
        )
    if "*" in names:
        return (
            "DJANGO_ALLOWED_HOSTS contains '*': password-reset and invitation links are "
            "built from the Host header, so anyone could make them point at another site. "
            "List the public host names instead."
        )
    return None


def production_problems(
    *, debug: bool, secret_key: str, development_key: str, allowed_hosts: list[str]
) -> list[str]:
    problems = [
        secret_key_problem(secret_key, development_key=development_key),
        (
            "DJANGO_DEBUG is on: production never runs with DEBUG (error pages would show "
            "settings, code and requests to anyone). Remove DJANGO_DEBUG or set it to false."
            if debug
            else None
        ),
        allowed_hosts_problem(allowed_hosts),
    ]
    return [p for p in problems if p]


def refusal(problems: list[str]) -> str:
    lines = "\n".join(f"  - {p}" for p in problems)
    return f"Refusing to start with DJANGO_ENV=production:\n{lines}"


def trusted_origins(allowed_hosts: list[str]) -> list[str]:
    """The HTTPS origins of the public host names: the browser's Origin on a form posted to
    one of them. Behind a proxy that passes its own upstream name as Host (nginx's default
    ``proxy_set_header Host $proxy_host``) Django would otherwise compare that Origin with
    ``https://127.0.0.1:8000`` and refuse every login (CSRF "Origin checking failed")."""
    origins = []
    for host in allowed_hosts:
        name = host.strip()
        if not name or name == "*":
            continue
        origins.append(f"https://*{name}" if name.startswith(".") else f"https://{name}")
    return origins
