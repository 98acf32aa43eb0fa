"""Channel secrets are encrypted at rest, readable as plain strings, and rotatable."""

from __future__ import annotations

import importlib
import io

import pytest
from cryptography.fernet import Fernet
from django.apps import apps
from django.core.checks import run_checks
from django.core.management import call_command
from django.db import connection
from hypothesis import given
from hypothesis import strategies as st

from accounts import encryption
from accounts.models import AuditLog
from conversation.models import ChannelSession
from tests import factories

SECRETS = ("api_token", "webhook_secret", "webhook_verify_token")


def _stored(channel: ChannelSession) -> dict[str, str]:
    """What the database really holds, read around the field."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT api_token, webhook_secret, webhook_verify_token "
            "FROM conversation_channelsession WHERE id = %s",
            [channel.pk.hex if connection.vendor == "sqlite" else channel.pk],
        )
        row = cursor.fetchone()
    return dict(zip(SECRETS, row, strict=True))


def _write_raw(channel: ChannelSession, **values: str) -> None:
    sets = ", ".join(f"{k} = %s" for k in values)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE conversation_channelsession SET {sets} WHERE id = %s",
            [*values.values(), channel.pk.hex if connection.vendor == "sqlite" else channel.pk],
        )


@given(st.text(min_size=1, max_size=300))
def test_encrypt_then_decrypt_gives_back_any_text(value):
    stored = encryption.encrypt(value)
    assert stored.startswith(encryption.PREFIX)
    assert encryption.decrypt(stored) == value


def test_a_blank_secret_stays_blank_so_not_configured_is_still_visible():
    assert encryption.encrypt("") == ""
    assert encryption.decrypt("") == ""


def test_the_database_holds_ciphertext_and_the_model_the_plain_value(db):
    org = factories.make_org()
    channel = factories.make_channel(
        org, api_token="tok-123", webhook_secret="whs-456", webhook_verify_token="vt-789"
    )
    stored = _stored(channel)
    assert all(v.startswith("fernet:") for v in stored.values())
    assert not any(p in "".join(stored.values()) for p in ("tok-123", "whs-456", "vt-789"))
    fresh = ChannelSession.objects.get(pk=channel.pk)
    assert (fresh.api_token, fresh.webhook_secret, fresh.webhook_verify_token) == (
        "tok-123",
        "whs-456",
        "vt-789",
    )
    assert ChannelSession.objects.filter(pk=channel.pk).values_list("api_token", flat=True)[0] == (
        "tok-123"
    )


def test_a_value_that_looks_encrypted_is_still_encrypted_on_save(db):
    channel = factories.make_channel(factories.make_org(), webhook_secret="fernet:abc")
    assert ChannelSession.objects.get(pk=channel.pk).webhook_secret == "fernet:abc"


def test_rotation_new_key_first_then_reencrypt_then_the_old_key_can_go(db, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old]
    org = factories.make_org()
    channel = factories.make_channel(org, api_token="tok-rotate")
    before = _stored(channel)["api_token"]

    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    assert ChannelSession.objects.get(pk=channel.pk).api_token == "tok-rotate"  # old still reads
    call_command("reencrypt_secrets", stdout=io.StringIO())
    after = _stored(channel)["api_token"]
    assert after != before
    assert AuditLog.objects.filter(organization=org, action="secrets.reencrypt").exists()

    settings.FIELD_ENCRYPTION_KEYS = [new]
    assert ChannelSession.objects.get(pk=channel.pk).api_token == "tok-rotate"


def test_a_secret_no_key_opens_is_an_error_not_an_empty_string(db, settings):
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    channel = factories.make_channel(factories.make_org(), api_token="tok-lost")
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(encryption.SecretUnreadable):
        ChannelSession.objects.get(pk=channel.pk)


def test_the_data_migration_encrypts_rows_written_in_plain_text(db):
    channel = factories.make_channel(factories.make_org(), api_token="x")
    _write_raw(channel, api_token="legacy-token", webhook_secret="legacy-secret")
    assert ChannelSession.objects.get(pk=channel.pk).api_token == "legacy-token"  # still reads

    migration = importlib.import_module("conversation.migrations.0008_channel_secrets_encrypted")

    class _Editor:
        connection = connection

    migration.encrypt_existing(apps, _Editor())
    stored = _stored(channel)
    assert stored["api_token"].startswith("fernet:") and "legacy" not in stored["api_token"]
    fresh = ChannelSession.objects.get(pk=channel.pk)
    assert (fresh.api_token, fresh.webhook_secret) == ("legacy-token", "legacy-secret")

    migration.decrypt_existing(apps, _Editor())  # and back, for a rollback
    assert _stored(channel)["api_token"] == "legacy-token"


def test_a_malformed_key_fails_the_system_checks(settings):
    settings.FIELD_ENCRYPTION_KEYS = ["not-a-key"]
    assert "accounts.E011" in {m.id for m in run_checks()}


def test_production_without_keys_fails_check_deploy(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    assert "accounts.E010" in {m.id for m in run_checks(include_deployment_checks=True)}
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    assert "accounts.E010" not in {m.id for m in run_checks(include_deployment_checks=True)}


def test_the_development_key_derives_from_the_secret_key(settings):
    settings.FIELD_ENCRYPTION_KEYS = []
    settings.SECRET_KEY = "one-secret-key-for-this-test-0123456789abcdef"
    stored = encryption.encrypt("v")
    settings.SECRET_KEY = "another-secret-key-for-this-test-0123456789ab"
    with pytest.raises(encryption.SecretUnreadable):
        encryption.decrypt(stored)
