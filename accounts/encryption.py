"""Secrets at rest: model fields whose values the database only ever holds encrypted.

Channel credentials (provider tokens, webhook secrets, verify tokens) are stored as Fernet
tokens (AES-128-CBC + HMAC-SHA256, from the ``cryptography`` package) behind the prefix
``fernet:``. The Python value stays the plain string, so code reads ``channel.api_token``
as before; a database dump, a backup or a read-only SQL session sees only ciphertext.

Keys: ``settings.FIELD_ENCRYPTION_KEYS``, a list of Fernet keys (``manage.py
generate_field_key`` prints a new one). The first key encrypts; every key decrypts
(``MultiFernet``), which is what makes rotation possible:

1. put a new key FIRST in ``FIELD_ENCRYPTION_KEYS`` and keep the old ones after it;
2. deploy, then run ``manage.py reencrypt_secrets`` (every row re-encrypted with the first key);
3. drop the old keys from the list.

Without the setting (development, tests) one key is derived from ``SECRET_KEY``;
``manage.py check --deploy`` refuses production without explicit keys (``accounts.E010``),
so that rotating ``SECRET_KEY`` can never make the stored secrets unreadable.

A value without the prefix is a row written before encryption existed (the data migration
``conversation.0008`` encrypts those): it is read as it is, and encrypted on its next save.
A value with the prefix that no key opens raises ``SecretUnreadable`` — a missing key is a
configuration error to see at once, never a secret silently read as "".
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

PREFIX = "fernet:"
_DERIVATION_INFO = b"retaguarda field encryption v1"


class SecretUnreadable(ImproperlyConfigured):
    """A stored secret that none of ``FIELD_ENCRYPTION_KEYS`` decrypts."""


def derived_key(secret_key: str) -> str:
    """The development key: HKDF-SHA256 of ``SECRET_KEY`` (never used when keys are set)."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_DERIVATION_INFO).derive(
        secret_key.encode()
    )
    return base64.urlsafe_b64encode(raw).decode()


def generate_key() -> str:
    return Fernet.generate_key().decode()


def configured_keys() -> tuple[str, ...]:
    """The keys in force: ``FIELD_ENCRYPTION_KEYS``, or the one derived from ``SECRET_KEY``."""
    keys = tuple(str(k).strip() for k in getattr(settings, "FIELD_ENCRYPTION_KEYS", ()) or ())
    keys = tuple(k for k in keys if k)
    return keys or (derived_key(settings.SECRET_KEY),)


def invalid_keys(keys: Sequence[str]) -> list[int]:
    """Positions of the keys that are not Fernet keys (32 url-safe base64 bytes)."""
    bad = []
    for i, key in enumerate(keys):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            bad.append(i)
    return bad


@functools.lru_cache(maxsize=8)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    try:
        return MultiFernet([Fernet(k) for k in keys])
    except (ValueError, TypeError) as exc:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS holds a value that is not a Fernet key "
            "(generate one with manage.py generate_field_key)"
        ) from exc


def _current() -> MultiFernet:
    return _fernet(configured_keys())


def is_encrypted(stored: str | None) -> bool:
    return bool(stored) and str(stored).startswith(PREFIX)


def encrypt(value: str) -> str:
    """The stored form of ``value`` ("" stays "": a blank secret is "not configured")."""
    if not value:
        return ""
    return PREFIX + _current().encrypt(value.encode()).decode()


def decrypt(stored: str) -> str:
    """The plain value of a stored one (a legacy plain-text value is returned as it is)."""
    if not is_encrypted(stored):
        return stored or ""
    try:
        return _current().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "a stored secret cannot be decrypted with FIELD_ENCRYPTION_KEYS "
            "(was a key removed before running manage.py reencrypt_secrets?)"
        ) from exc


class EncryptedTextField(models.TextField):
    """A text field stored encrypted (see the module docstring). Not searchable: each
    save produces a different ciphertext, so filter on other columns."""

    description = "Text encrypted at rest (Fernet)"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> str | None:
        if value is None:
            return value
        return decrypt(str(value))

    def get_prep_value(self, value: Any) -> Any:
        # Always the plain value in Python: whatever it looks like, it is encrypted here
        # (rotation is a read, decrypting with any key, then a save under the first key).
        value = super().get_prep_value(value)
        return None if value is None else encrypt(str(value))


def encrypted_fields(model: type[models.Model]) -> list[str]:
    """The names of ``model``'s encrypted fields (rotation walks them)."""
    return [f.name for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)]
