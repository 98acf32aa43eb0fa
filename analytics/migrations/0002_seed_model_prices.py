"""Seed the price table with Anthropic's list prices (US$ per million tokens).

Taken on 2026-12-01 from Anthropic's pricing page (platform.claude.com/docs/en/about-claude/
pricing, "Model pricing"; the cache-write column is the default 5-minute write). Admins
edit them on the prices page or in the Django admin; a new effective date keeps history.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.db import migrations

SOURCE = "platform.claude.com/docs/en/about-claude/pricing"
SOURCE_DATE = dt.date(2026, 12, 1)
EFFECTIVE = dt.date(2025, 1, 1)
# model, input, output, 5-minute cache write, cache read
PRICES = [
    ("claude-opus-5", "5", "25", "6.25", "0.50"),
    ("claude-opus-4-6", "5", "25", "6.25", "0.50"),
    ("claude-opus-4-5", "5", "25", "6.25", "0.50"),
    ("claude-opus-4-1", "15", "75", "18.75", "1.50"),
    ("claude-opus-4-0", "15", "75", "18.75", "1.50"),
    ("claude-opus-4", "15", "75", "18.75", "1.50"),
    ("claude-sonnet-4-6", "3", "15", "3.75", "0.30"),
    ("claude-sonnet-4-5", "3", "15", "3.75", "0.30"),
    ("claude-sonnet-4-0", "3", "15", "3.75", "0.30"),
    ("claude-sonnet-4", "3", "15", "3.75", "0.30"),
    ("claude-3-7-sonnet", "3", "15", "3.75", "0.30"),
    ("claude-haiku-4-5", "1", "5", "1.25", "0.10"),
    ("claude-3-5-haiku", "0.80", "4", "1", "0.08"),
    ("claude-3-haiku", "0.25", "1.25", "0.30", "0.03"),
]


def seed(apps, schema_editor):
    ModelPrice = apps.get_model("analytics", "ModelPrice")
    for model, inp, out, write, read in PRICES:
        ModelPrice.objects.update_or_create(
            model=model,
            effective_date=EFFECTIVE,
            defaults={
                "input_per_mtok": Decimal(inp),
                "output_per_mtok": Decimal(out),
                "cache_write_per_mtok": Decimal(write),
                "cache_read_per_mtok": Decimal(read),
                "source_date": SOURCE_DATE,
                "source": SOURCE,
            },
        )


def unseed(apps, schema_editor):
    ModelPrice = apps.get_model("analytics", "ModelPrice")
    ModelPrice.objects.filter(source=SOURCE, source_date=SOURCE_DATE).delete()


class Migration(migrations.Migration):
    dependencies = [("analytics", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
