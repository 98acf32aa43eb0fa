"""Structural rules of the runtime package (spec: contracts and governance §6)."""

from __future__ import annotations

import ast
import dataclasses
import sys
from collections import Counter
from pathlib import Path
from typing import get_args

import conversation.runtime as package
from conversation.runtime import mutations
from conversation.runtime.intent_extractor import IntentKind
from conversation.runtime.state import ConversationState

PACKAGE_DIR = Path(package.__file__).resolve().parent
MODULES = sorted(PACKAGE_DIR.glob("*.py"))
HOOK_NAMES = {hook.__name__ for hook in mutations.HOOKS}
STATE_FIELDS = {f.name for f in dataclasses.fields(ConversationState)}
ALLOWED_THIRD_PARTY = {"yaml"}


def parsed() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text(encoding="utf-8")) for path in MODULES}


def test_package_imports_only_stdlib_yaml_and_itself() -> None:
    offenders = []
    for name, tree in parsed().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                continue  # relative: inside the package
            roots = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for root in roots:
                top = root.split(".")[0]
                if top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY:
                    continue
                if root.startswith("conversation.runtime"):
                    continue
                offenders.append(f"{name}: {root}")
    assert offenders == []


def test_expected_modules_exist() -> None:
    expected = {
        "state",
        "mutations",
        "intent_extractor",
        "invoice_resolver",
        "action_queue",
        "confirmation_manager",
        "policy_engine",
        "action_executor",
        "finalization_machine",
        "script_catalog",
        "response_composer",
        "serialization",
        "runtime",
        "item_matcher",
    }
    assert expected <= {p.stem for p in MODULES}


def test_mutations_defines_exactly_the_hook_catalogue() -> None:
    defined = {
        n.name
        for n in parsed()["mutations.py"].body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("on_")
    }
    assert defined == HOOK_NAMES
    assert len(HOOK_NAMES) == 19  # the spec's 15 + snapshot (2), active line, decision trace


def test_every_hook_is_called_from_exactly_one_place() -> None:
    calls: Counter[str] = Counter()
    for tree in parsed().values():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in HOOK_NAMES
            ):
                calls[node.func.id] += 1
    assert {hook: calls[hook] for hook in HOOK_NAMES} == dict.fromkeys(HOOK_NAMES, 1)


def test_hooks_never_call_other_hooks_nor_log() -> None:
    for node in parsed()["mutations.py"].body:
        if isinstance(node, ast.FunctionDef) and node.name in HOOK_NAMES:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    func = inner.func
                    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                    assert called not in HOOK_NAMES, f"{node.name} calls {called}"
                    assert called not in {"debug", "info", "warning", "error", "print"}


def test_status_is_written_only_in_mutations() -> None:
    for name, tree in parsed().items():
        if name == "mutations.py":
            continue
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                assert not (isinstance(target, ast.Attribute) and target.attr == "status"), name


def test_state_fields_are_never_written_outside_mutations() -> None:
    mutating_methods = {"append", "extend", "insert", "pop", "remove", "clear", "advance"}
    for name, tree in parsed().items():
        if name in {"mutations.py", "state.py"}:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and target.attr in STATE_FIELDS:
                        base = target.value
                        assert isinstance(base, ast.Name) and base.id == "self", (
                            f"{name}:{node.lineno} writes .{target.attr}"
                        )
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in mutating_methods
                and isinstance(node.func.value, ast.Attribute)
                and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id == "state"
            ):
                raise AssertionError(f"{name}:{node.lineno} mutates state.{node.func.value.attr}")


def test_policy_metrics_stay_under_the_governance_targets() -> None:
    source = (PACKAGE_DIR / "policy_engine.py").read_text(encoding="utf-8")
    assert source.count("return ConversationDecision") < 15
    assert len(source.splitlines()) < 300


def test_state_and_intent_metrics_stay_under_the_governance_targets() -> None:
    assert len(dataclasses.fields(ConversationState)) < 20
    assert len(get_args(IntentKind)) < 15


def test_policy_has_no_side_effects_in_its_source() -> None:
    tree = parsed()["policy_engine.py"]
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "mutations" not in imported and "logging" not in imported
