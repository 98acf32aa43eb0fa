"""``.env.example`` is safe to copy (issue 11 item 7: copying it to ``.env`` silently switched
the runtime off, because ``CONVERSATION_RUNTIME_ENABLED=`` reads as false)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / ".env.example"
ASSIGNMENT = re.compile(r"^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$")
PROBE = (
    "import sys, environ\n"
    "if len(sys.argv) > 1: environ.Env.read_env(sys.argv[1], overwrite=True)\n"
    "import config.settings as s\n"
    "print(s.CONVERSATION_RUNTIME_ENABLED)\n"
)


def settings_with(env: dict[str, str], env_file: Path | None = None) -> subprocess.CompletedProcess:
    """Import ``config.settings`` in a clean process with ``env`` (and ``env_file``)."""
    clean = {k: v for k, v in os.environ.items() if not re.match(r"[A-Z][A-Z0-9_]*$", k)}
    clean.update(PATH=os.environ.get("PATH", ""), HOME=os.environ.get("HOME", "/tmp"), **env)
    args = [sys.executable, "-c", PROBE, *([str(env_file)] if env_file else [])]
    return subprocess.run(args, cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60)


def assignments() -> list[tuple[bool, str, str]]:
    """(commented, name, value) for each ``NAME=value`` line of the example."""
    found = []
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        m = ASSIGNMENT.match(line.strip())
        if m:
            found.append((m.group(1) is not None, m.group(2), m.group(3)))
    return found


def test_the_example_has_no_empty_value_and_no_inline_comment():
    found = assignments()
    assert any(name == "CONVERSATION_RUNTIME_ENABLED" for _, name, _ in found)
    for _, name, value in found:
        assert value.strip(), f"{name}= is empty: an empty value is not always the default"
        assert " #" not in value, f"{name}: text after a value is part of the value"


def test_copying_the_example_keeps_the_runtime_on_in_development(tmp_path):
    copied = tmp_path / ".env"
    copied.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    done = settings_with({}, copied)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_uncommenting_every_line_of_the_example_still_starts_with_the_runtime_on(tmp_path):
    lines = [f"{name}={value}" for _, name, value in assignments()]
    uncommented = tmp_path / ".env"
    uncommented.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = settings_with({}, uncommented)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"CONVERSATION_RUNTIME_ENABLED": ""}, "True"),  # empty: the default, not "off"
        ({"CONVERSATION_RUNTIME_ENABLED": "false"}, "False"),
        ({"CONVERSATION_RUNTIME_ENABLED": "on"}, "True"),
        (
            {
                "CONVERSATION_RUNTIME_ENABLED": " ",
                "DJANGO_ENV": "production",
                "DJANGO_SECRET_KEY": "k" * 60,
                "DJANGO_ALLOWED_HOSTS": "retaguarda.example.com",
            },
            "False",  # production's default stays off until someone decides
        ),
    ],
)
def test_the_kill_switch_reads_empty_as_the_default(env, expected):
    done = settings_with(env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
