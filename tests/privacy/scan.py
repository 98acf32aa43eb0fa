"""The oracle of the privacy tests: every text and JSON value an organization's rows hold."""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from accounts import rls


def tenant_text(org: Any) -> str:
    """Every text and JSON value of every tenant row of ``org`` (audit log included), to
    scan for a marker the test planted wherever the product stores text."""
    out = []
    for model in rls.tenant_models():
        fields = [
            f.name
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
        ]
        if fields:
            rows = model._base_manager.filter(organization=org).values_list(*fields)
            out.append(json.dumps(list(rows), default=str, ensure_ascii=False))
    return "\n".join(out)
