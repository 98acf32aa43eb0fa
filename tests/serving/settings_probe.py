"""Read settings as a fresh process sees them: ``config.settings`` imported in a subprocess
with the environment a test gives it (the settings modules read the environment once, at
import, so the test process itself cannot show another environment's settings)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def settings_lines(
    expressions: list[str], *, drop_prefixes: tuple[str, ...], **env: str
) -> list[str]:
    """``print(<expression>)`` for each of ``expressions`` after ``django.setup()``, in a
    process whose environment is this one without ``drop_prefixes`` variables plus ``env``."""
    code = "import json, django; django.setup(); from django.conf import settings; " + "; ".join(
        f"print({expression})" for expression in expressions
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(drop_prefixes)}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "LOG_LEVEL": "WARNING", **env},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-len(expressions) :]
