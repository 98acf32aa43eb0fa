"""The import walker itself: a walk that misses a kind of import would let it through."""

from __future__ import annotations

import ast

from tests.architecture.imports import imports_in, shortest_cycle, strongly_connected

SNIPPET = """
import importlib
from typing import TYPE_CHECKING

from accounts import rls
from . import base
from .waha_ids import normalize_id
import conversation.models

if TYPE_CHECKING:
    from cases.models import Case


def later():
    from routers import services
    return importlib.import_module("cases.tasks")
"""


def test_walker_sees_every_kind_of_import_in_a_module() -> None:
    tree = ast.parse(SNIPPET)
    found = {(i.target, i.line) for i in imports_in("conversation.channels.meta", "x.py", tree)}
    assert found == {
        ("accounts.rls", 5),  # a submodule named in ``from package import``
        ("conversation.channels.base", 6),  # relative, from a module
        ("conversation.channels.waha_ids", 7),
        ("conversation.models", 8),
        ("cases.models", 11),  # type-only
        ("routers.services", 15),  # inside a function
        ("cases.tasks", 16),  # importlib with a literal
    }


def test_relative_imports_in_a_package_init_resolve_inside_the_package() -> None:
    tree = ast.parse("from . import base\nfrom .. import models\n")
    found = {i.target for i in imports_in("conversation.channels", "x/__init__.py", tree)}
    assert found == {"conversation.channels.base", "conversation.models"}


def test_names_outside_the_product_and_self_imports_are_dropped() -> None:
    tree = ast.parse("import django\nfrom celery import shared_task\nfrom accounts import rls\n")
    assert imports_in("accounts.rls", "accounts/rls.py", tree) == []


def test_cycles_are_found_and_one_loop_is_spelled_out() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    components = strongly_connected(edges)
    assert components == [["a", "b", "c"], ["e", "f"]]
    assert shortest_cycle(edges, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
