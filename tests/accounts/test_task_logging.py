"""Worker logs stay JSON and carry the task's ids and its originating request id."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery import Celery

from accounts import rls
from accounts.logging import JsonFormatter, RequestIdFilter, bind_log_ids, request_id_var
from accounts.task_logging import HEADER

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", **extra)
    return env


def _run(code: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=_env(**extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(JsonFormatter())
        self.addFilter(RequestIdFilter())
        self.lines: list[dict[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


@pytest.fixture
def collected():
    handler = _Collect()
    logger = logging.getLogger("tests.task_logging")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield logger, handler.lines
    logger.removeHandler(handler)


def test_a_worker_setting_up_celery_logging_keeps_one_json_object_a_line():
    # What `celery worker` does at start (Worker.setup_logging): with our receiver
    # connected Celery installs no plain-text root handler of its own.
    result = _run(
        "import django; django.setup(); import logging; "
        "from config.celery import app; "
        "app.log.setup(loglevel='INFO', redirect_stdouts=False); "
        "logging.getLogger('celery.worker').info('worker ready'); "
        "logging.getLogger('celery.app.trace').info('Task %s succeeded', 'x')"
    )
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    events = [line["event"] for line in lines]
    assert "worker ready" in events and "Task x succeeded" in events
    assert all(line.get("logger") for line in lines)


def test_a_published_task_carries_the_request_id_in_its_headers():
    app = Celery("headers-test", broker="memory://")

    @app.task(name="tests.headers_probe")
    def probe() -> None: ...

    token = request_id_var.set("req-abc12345")
    try:
        with app.connection_for_write() as conn:
            probe.apply_async(connection=conn)
            message = conn.default_channel.basic_get("celery")
    finally:
        request_id_var.reset(token)
    assert message is not None
    assert message.headers[HEADER] == "req-abc12345"


def test_a_task_logs_with_its_id_name_request_id_and_organization(collected):
    logger, lines = collected
    app = Celery("task-logging-test")  # not the project's app: its registry is a contract

    @app.task(name="tests.task_logging.probe", bind=True)
    def probe(self) -> str:
        logger.info("inside the task")
        with bind_log_ids(turn_id="turn-1"):
            logger.info("inside a turn", extra={"message_id": "m-1"})
        return str(self.request.id)

    result = probe.apply(headers={HEADER: "req-from-web-1"}, task_id="task-id-1")
    assert result.get() == "task-id-1"
    first, second = lines[-2], lines[-1]
    assert first["task_id"] == "task-id-1" and first["task"] == "tests.task_logging.probe"
    assert first["request_id"] == "req-from-web-1"
    assert "turn_id" not in first
    assert (second["turn_id"], second["message_id"]) == ("turn-1", "m-1")
    logger.info("after the task")
    assert "task_id" not in lines[-1] and lines[-1]["request_id"] == ""


def test_records_inside_a_tenant_context_name_the_organization(collected, db):
    from tests import factories

    logger, lines = collected
    org = factories.make_org()
    with rls.tenant_context(org.pk):
        logger.info("in the tenant")
        logger.info("explicit wins", extra={"organization_id": "given"})
    logger.info("outside")
    assert lines[0]["organization_id"] == str(org.pk)
    assert lines[1]["organization_id"] == "given"
    assert "organization_id" not in lines[2]


def test_sentry_is_off_without_a_dsn_and_sends_no_personal_data_with_one():
    probe = (
        "import django; django.setup(); import sentry_sdk; c = sentry_sdk.get_client(); "
        "print(c.is_active(), c.options.get('send_default_pii'), "
        "c.options.get('max_request_body_size'), c.options.get('include_local_variables'))"
    )
    assert _run(probe).stdout.split()[0] == "False"
    on = _run(probe, SENTRY_DSN="https://public@sentry.example.com/1").stdout.split()
    assert on == ["True", "False", "never", "False"]


def test_the_log_lines_of_a_turn_name_the_turn_and_its_task(
    world, django_capture_on_commit_callbacks, settings
):
    from conversation import dispatch
    from conversation.models import Message
    from tests.conftest import simulator_post

    settings.ANTHROPIC_API_KEY = ""
    handler = _Collect()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    # In production the webhook's on-commit work runs inside its request; the test's
    # capture runs it after, so the request's id is set around it here.
    token = request_id_var.set("req-webhook-0001")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = simulator_post(
                world.client_for(world.admin), world.channel_a, "oi", msg_id="log-1"
            )
        dispatch.run_delayed()
    finally:
        request_id_var.reset(token)
        root.removeHandler(handler)
        root.setLevel(previous)
    assert response.status_code == 200
    turn_id = str(Message.objects.get(provider_message_id="log-1").turn_id)
    in_turn = [line for line in handler.lines if line.get("turn_id") == turn_id]
    assert in_turn, "some line of the turn names it"
    assert all(line.get("task") == "conversation.run_inbound_turn" for line in in_turn)
    assert all(line.get("task_id") for line in in_turn)
    assert {line["request_id"] for line in in_turn} == {"req-webhook-0001"}
    finished = next(line for line in in_turn if line["event"] == "turn finished")
    assert finished["organization_id"] == str(world.org_a.pk)
    # The next task (the outbox delivery) no longer names the turn.
    delivery = [line for line in handler.lines if line.get("task") == "conversation.deliver_outbox"]
    assert delivery and not any("turn_id" in line for line in delivery)
