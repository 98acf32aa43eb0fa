"""Two organizations with a row in EVERY tenant table, built from the models themselves.

Rows are filled from each model's fields, so a table another app adds tomorrow gets data
here without an edit: foreign keys point at the same organization's row of the target
model (built on demand, one per model and organization, so relations agree — the
version's agent is the organization's agent); every free text field carries a marker
(``zqxA…``/``zqxB…``) that must never show up in the other organization's responses.
A model the generic filler cannot satisfy gets an entry in ``OVERRIDES``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from accounts import rls
from accounts.models import Membership, Organization

ROLES = ("viewer", "agent", "manager", "admin")
_seq = itertools.count(1)


def marker(tag: str) -> str:
    """The prefix of every text this organization's rows carry."""
    return f"zqx{tag}"


# Values the generic filler cannot guess, by model label: called with (data, tag).
OVERRIDES: dict[str, Callable[[TenantData, str], dict[str, Any]]] = {
    # Simulator channels: the simulator pages list only those.
    "conversation.ChannelSession": lambda data, tag: {"provider": "simulator"},
}

# Filled after every row exists (pointers that would make a cycle while building).
FIXUPS: dict[str, Callable[[TenantData, str, Any], None]] = {
    "conversation.Agent": lambda data, tag, agent: _publish(data, tag, agent),
}


def _publish(data: TenantData, tag: str, agent: Any) -> None:
    version = data.row(tag, "conversation.AgentVersion")
    type(agent).objects.filter(pk=agent.pk).update(published_version=version)
    agent.published_version = version


@dataclass
class TenantData:
    orgs: dict[str, Organization] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> role -> user
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> label -> instance

    def org(self, tag: str) -> Organization:
        return self.orgs[tag]

    def user(self, tag: str, role: str = "admin") -> Any:
        return self.users[tag][role]

    def row(self, tag: str, label: str | type[models.Model]) -> Any:
        model = label if not isinstance(label, str) else _model(label)
        key = model._meta.label
        if key not in self.rows[tag]:
            self.rows[tag][key] = build_row(self, tag, model)
        return self.rows[tag][key]


def _model(label: str) -> type[models.Model]:
    from django.apps import apps

    return apps.get_model(label)


def build_world(tags: tuple[str, ...] = ("A", "B")) -> TenantData:
    """Organizations ``tags`` with a user per role and a row in every tenant table."""
    data = TenantData()
    User = get_user_model()
    for tag in tags:
        n = next(_seq)
        org = Organization.objects.create(name=f"{marker(tag)} Org {n}", slug=f"sec-{tag}-{n}")
        data.orgs[tag], data.rows[tag], data.users[tag] = org, {}, {}
        for role in ROLES:
            # No password (no hashing cost): tests log in with force_login.
            user = User.objects.create_user(username=f"sec-{tag.lower()}-{role}-{n}")
            membership = Membership.objects.create(organization=org, user=user, role=role)
            data.users[tag][role] = user
            data.rows[tag][Membership._meta.label] = membership  # the admin's, last
    for tag in tags:
        for model in rls.tenant_models():
            data.row(tag, model)
        _link_optional(data, tag)
        for label, fixup in FIXUPS.items():
            fixup(data, tag, data.row(tag, label))
    return data


def _link_optional(data: TenantData, tag: str) -> None:
    """Optional links between tenant rows point at the same organization's rows too
    (a conversation's active agent, a message's turn...): the data is as full as it gets."""
    for label, row in list(data.rows[tag].items()):
        model = type(row)
        changes = {}
        for f in model._meta.concrete_fields:
            remote = f.related_model if f.is_relation else None
            if (
                remote is None
                or isinstance(remote, str)
                or remote is model
                or not f.null
                or not rls.is_tenant_model(remote)
                or getattr(row, f.attname) is not None
            ):
                continue
            changes[f.name] = data.row(tag, remote)
        if changes:
            model._base_manager.filter(pk=row.pk).update(**changes)
            for name, value in changes.items():
                setattr(row, name, value)
        data.rows[tag][label] = row


def build_row(data: TenantData, tag: str, model: type[models.Model]) -> Any:
    """One row of ``model`` in organization ``tag`` (foreign keys built on demand)."""
    values: dict[str, Any] = {}
    for f in model._meta.concrete_fields:
        if (
            f.primary_key
            or getattr(f, "generated", False)
            or getattr(f, "auto_now", False)
            or getattr(f, "auto_now_add", False)
        ):
            continue
        value = _value(data, tag, model, f)
        if value is not _DEFAULT:
            values[f.name] = value
    override = OVERRIDES.get(model._meta.label)
    if override is not None:
        values.update(override(data, tag))
    # The default manager may refuse writes (append-only querysets): use a plain one.
    manager = models.Manager()
    manager.model = model
    return manager.create(**values)


_DEFAULT = object()


def _value(data: TenantData, tag: str, model: type[models.Model], f: models.Field) -> Any:
    if f.is_relation:
        remote = f.related_model
        assert remote is not None and not isinstance(remote, str)
        if remote is Organization:
            return data.org(tag)
        if remote is get_user_model():
            return None if f.null else data.user(tag)
        if f.null:
            return None
        if remote is model:
            raise TypeError(f"{model._meta.label}.{f.name}: add an OVERRIDES entry")
        return data.row(tag, remote)
    if f.has_default():
        return _DEFAULT
    if f.choices:
        return next(iter(v for v, _ in f.flatchoices if v != ""), "")
    if f.null:
        return None
    return _fill(tag, model, f)


def _fill(tag: str, model: type[models.Model], f: models.Field) -> Any:
    text = f"{marker(tag)}{next(_seq)}-{model._meta.model_name}"
    if isinstance(f, models.EmailField):
        return f"{text[:40]}@example.com"
    if isinstance(f, models.URLField):
        return f"https://{text[:40]}.example"
    if isinstance(f, models.SlugField):
        return text.lower()[: f.max_length]
    if isinstance(f, models.CharField | models.TextField):
        return text[: f.max_length] if f.max_length else text
    if isinstance(f, models.BooleanField):
        return False
    if isinstance(f, models.IntegerField):
        return 1
    if isinstance(f, models.DecimalField):
        return decimal.Decimal("0.5")
    if isinstance(f, models.FloatField):
        return 0.5
    if isinstance(f, models.DateTimeField):
        return timezone.now()
    if isinstance(f, models.DateField):
        return timezone.localdate()
    if isinstance(f, models.DurationField):
        return dt.timedelta(minutes=5)
    if isinstance(f, models.JSONField):
        return {}
    if isinstance(f, models.UUIDField):
        return uuid.uuid4()
    try:
        from django.contrib.postgres.fields import ArrayField

        if isinstance(f, ArrayField):
            return []
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"{model._meta.label}.{f.name} ({type(f).__name__}): add an OVERRIDES entry")
