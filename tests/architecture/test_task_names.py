"""Celery task names are a wire contract: messages already queued and the beat schedule
name them, so a task may move between modules but its ``name=`` never changes. Producers
schedule by name (``dispatch.enqueue("app.task", …)``); every name they write must be a
registered task, so a typo fails here rather than on commit in production."""

from __future__ import annotations

import ast

from django.conf import settings

from config.celery import app as celery_app
from tests.architecture.imports import parsed, product_files

# The project's tasks, exactly (.notes/ROUND2.md: "Task names never change").
TASK_NAMES = {
    "conversation.run_inbound_turn",
    "conversation.deliver_outbox",
    "cases.run_case_reply_turn",
    "cases.run_follow_up_turn",
    "cases.fire_due_follow_ups",
    "cases.watch_stale_cases",
    "cases.deliver_case_notice",
    "routers.run_quality_run",
    "conversation.apply_retention",
    "conversation.sweep_due_work",
    "analytics.roll_up",
    "analytics.send_budget_notice",
}

DISPATCH = "conversation/dispatch.py"  # defines enqueue; its docstring names an example


def registered() -> dict[str, str]:
    """Registered project task name → the module defining its function (a test may
    register a throwaway task of its own; those are not part of the contract)."""
    return {
        name: task.__module__
        for name, task in celery_app.tasks.items()
        if not name.startswith("celery.") and not task.__module__.startswith("tests.")
    }


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "literal"`` assignments (a task name kept in a constant)."""
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def enqueue_calls() -> list[tuple[str, str | None]]:
    """(``path:line``, task name or None when it is not a string) for every ``enqueue``
    call of the product code — ``enqueue(...)`` and ``dispatch.enqueue(...)`` alike."""
    calls: list[tuple[str, str | None]] = []
    for rel in product_files().values():
        if rel == DISPATCH:
            continue
        tree = parsed(rel)
        constants = _string_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called != "enqueue":
                continue
            first = node.args[0]
            name: str | None = None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                name = first.value
            elif isinstance(first, ast.Name) and first.id in constants:
                name = constants[first.id]
            calls.append((f"{rel}:{node.lineno}", name))
    return sorted(calls)


def test_the_registered_task_names_are_exactly_the_contract() -> None:
    names = set(registered())
    assert names == TASK_NAMES, (
        f"renamed or new tasks: missing {sorted(TASK_NAMES - names)}, "
        f"unexpected {sorted(names - TASK_NAMES)} — a queued message names its task; "
        "keep the name= string when a task moves"
    )


def test_every_task_lives_in_a_product_tasks_module() -> None:
    misplaced = {
        name: module
        for name, module in registered().items()
        if module.split(".")[-1] != "tasks"
        or module.split(".")[0] not in {"conversation", "cases", "routers", "analytics"}
    }
    assert misplaced == {}, f"tasks are thin wrappers in an app's tasks.py: {misplaced}"


def test_every_enqueued_name_is_a_registered_task() -> None:
    calls = enqueue_calls()
    unnamed = [where for where, name in calls if name is None]
    unknown = [f"{where}: {name!r}" for where, name in calls if name and name not in TASK_NAMES]
    assert unnamed == [], (
        "enqueue must name its task with a string literal (or a module constant) so this "
        f"test can check it: {unnamed}"
    )
    assert unknown == [], f"enqueue of a name no task registers: {unknown}"
    assert len(calls) >= 5  # the walk found the producers (outbox, inbound, cases, routers)


def test_the_beat_schedule_names_registered_tasks() -> None:
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled == {
        "cases.fire_due_follow_ups",
        "cases.watch_stale_cases",
        "conversation.sweep_due_work",
        "conversation.apply_retention",
        "analytics.roll_up",
    }
    assert scheduled <= set(registered())
