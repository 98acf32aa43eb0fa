"""The router's stamp: ``Router.updated_at``, which the turn's loader keys its cache of
members and phrases on (``routers.loaders``). Services that change what teaches the local
stage move it inside their own transaction (and audit the change themselves)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from routers.models import Router


def touch_router(router_id: Any) -> None:
    Router.objects.filter(pk=router_id).update(updated_at=timezone.now())
