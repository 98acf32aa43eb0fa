"""The layers of the product code, held by its import graph (DESIGN §2).

Dependencies point one way. A module imports from its own layer or a lower one, never a
higher one; function-level and type-only imports count too (see ``imports.py``).

Layers, bottom to top (what — may import):

1. **pure core** — ``conversation/runtime/``, ``conversation/llm/``, ``conversation/channels/``,
   the text helpers (``conversation/text.py``), ``cases/guardrail/``,
   ``routers/classification/``, charts (``routers/charts.py``) — stdlib and third-party
   libraries, other pure modules.
2. **data and infrastructure** — ``accounts/`` (models, the walls ``rls`` and
   ``rls_policies``, access, audit, middleware, context processors, throttle, logging,
   checks, the database backend), ``config/`` settings, Celery app and Redis clients,
   ``conversation/models`` (module or package), ``conversation/dispatch.py`` — the pure core.
3. **conversation services** — outbox, handoff, inbound, knowledge, agents, the model-call
   ledger (``model_calls``), the orchestrator loop, the runtime's adapters
   (``runtime_adapters/``), ``services``, ``selectors``, ``forms``, ``hooks`` — the layers
   below.
4. **capabilities** — ``routers/``, ``cases/`` (not their entry points) — the layers below;
   never each other.
5. **entry points** — the turn package ``conversation/turns/``, every ``tasks.py``, views,
   api, admin, webhooks, urls, app configs (``apps.py``), management commands, template
   tags, ``config`` urls/wsgi/asgi/health/gunicorn — anything below, and each other.

Where the in-between modules go, and why:

- ``config/settings/`` and ``config/celery.py`` are infrastructure (layer 2): dispatch,
  the one module that touches Celery's registry, imports the Celery app; settings import
  nothing of the product; ``config/redis_clients.py`` (the broker transport and cache
  backend the settings name, libraries only) sits with them. ``config/urls.py``, ``wsgi``,
  ``asgi``, ``health`` and ``gunicorn.conf`` serve requests or start processes: entry points.
- ``accounts/middleware.py``, ``context_processors.py`` and ``throttle.py`` are request
  plumbing that every page shares: they read memberships and set the walls, so they sit with
  the walls in layer 2, below every app that has pages. ``accounts/logging.py`` (the request
  id and the JSON formatter) is stdlib only but lives with the audit log it stamps: layer 2.
  ``accounts/views.py``, ``urls.py``, ``admin.py`` and its commands are entry points.
- ``conversation/hooks.py`` is the extension point that lets ``cases`` react to
  conversation-level actions without ``conversation`` importing ``cases``: layer 3, and
  ``cases`` registers into it from its ``AppConfig.ready`` (an entry point).
- Every ``apps.py`` imports its app's ``tasks`` so that task names are registered in web
  processes: it is wiring, an entry point.
- Forms and serializers belong to their app's layer: ``conversation/forms.py`` to layer 3,
  ``cases/forms.py`` or ``routers/serializers.py`` to their capability.

Placement is by path pattern, first match wins (``LAYER_PATTERNS``). ``accounts/``,
``cases/`` and ``routers/`` have a catch-all (DESIGN names the whole app); ``config/`` and
``conversation/`` do not, so a new module there fails ``test_every_product_module_has_a_layer``
until it is placed here.

Producers schedule work by task name (``dispatch.enqueue("app.task_name", …)``), so beyond
the table: no module outside the entry points imports a task module or the turn package.
Also held here: no cycle between modules, no product module over 450 lines (migrations
aside), and production code imports nothing from the offline model.
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
import os
from pathlib import Path

from tests.architecture import imports as graph_of
from tests.architecture.imports import ROOT, Import, product_files

PURE, DATA, SERVICES, CAPABILITIES, ENTRY = 1, 2, 3, 4, 5
LAYER_NAMES = {
    PURE: "pure core",
    DATA: "data and infrastructure",
    SERVICES: "conversation services",
    CAPABILITIES: "capabilities",
    ENTRY: "entry points",
}

TURN_PACKAGE = ("conversation/turns.py", "conversation/turns/*")
TASK_MODULES = ("*/tasks.py", "*/tasks/*")

# First match wins: entry points first (a ``tasks.py`` inside an app is an entry point
# whatever the app's layer), then the layers bottom-up, then the app catch-alls.
LAYER_PATTERNS: tuple[tuple[str, int], ...] = (
    *((p, ENTRY) for p in TURN_PACKAGE),
    *((p, ENTRY) for p in TASK_MODULES),
    ("*/views.py", ENTRY),
    ("*/views/*", ENTRY),
    ("*/api.py", ENTRY),
    ("*/api_urls.py", ENTRY),
    ("*/urls.py", ENTRY),
    ("*/webhook_urls.py", ENTRY),
    ("*/webhooks.py", ENTRY),
    ("*/admin.py", ENTRY),
    ("*/apps.py", ENTRY),
    ("*/management/*", ENTRY),
    ("*/templatetags/*", ENTRY),
    ("config/wsgi.py", ENTRY),
    ("config/asgi.py", ENTRY),
    ("config/health.py", ENTRY),
    ("config/gunicorn.conf.py", ENTRY),
    # 1 pure core
    ("conversation/runtime/*", PURE),
    ("conversation/llm/*", PURE),
    ("conversation/channels/*", PURE),
    ("conversation/text.py", PURE),
    ("conversation/text/*", PURE),
    ("cases/guardrail/*", PURE),
    ("routers/classification/*", PURE),
    ("routers/charts.py", PURE),
    # 2 data and infrastructure
    ("config/__init__.py", DATA),
    ("config/settings/*", DATA),
    ("config/celery.py", DATA),
    ("config/redis_clients.py", DATA),
    ("conversation/__init__.py", DATA),
    ("conversation/models.py", DATA),
    ("conversation/models/*", DATA),
    ("conversation/dispatch.py", DATA),
    ("accounts/*", DATA),
    # 3 conversation services
    ("conversation/outbox.py", SERVICES),
    ("conversation/outbox/*", SERVICES),
    ("conversation/handoff.py", SERVICES),
    ("conversation/inbound.py", SERVICES),
    ("conversation/knowledge.py", SERVICES),
    ("conversation/agents.py", SERVICES),
    ("conversation/model_calls.py", SERVICES),
    ("conversation/orchestrator.py", SERVICES),
    ("conversation/orchestrator/*", SERVICES),
    ("conversation/runtime_adapters/*", SERVICES),
    ("conversation/services.py", SERVICES),
    ("conversation/services/*", SERVICES),
    ("conversation/selectors.py", SERVICES),
    ("conversation/forms.py", SERVICES),
    ("conversation/hooks.py", SERVICES),
    ("conversation/privacy.py", SERVICES),
    # the sweeper re-drives committed work through dispatch and the outbox (by task name)
    ("conversation/sweeper.py", SERVICES),
    # 4 capabilities
    ("routers/*", CAPABILITIES),
    ("cases/*", CAPABILITIES),
    # the inbox (assignment, resolution, labels, notes, canned replies, search)
    ("inbox/*", CAPABILITIES),
    # analytics reads every capability's rows (cases, handoffs, the turns' routing traces)
    # for its reports, and the turn package calls its budget gate: with the entry points
    ("analytics/*", ENTRY),
)

MAX_LINES = 450


def layer_of(rel: str) -> int | None:
    for pattern, layer in LAYER_PATTERNS:
        if fnmatch.fnmatchcase(rel, pattern):
            return layer
    return None


def app_of(rel: str) -> str:
    return rel.split("/")[0]


def is_turn_package(rel: str) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in TURN_PACKAGE)


def is_task_module(rel: str) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in TASK_MODULES)


def describe(rel: str) -> str:
    layer = layer_of(rel)
    return f"{rel} ({LAYER_NAMES[layer] if layer else 'no layer'})"


def layer_violation(imp: Import) -> str | None:
    """Why ``imp`` goes against the table, or None when it is allowed."""
    files = product_files()
    source, target = files[imp.source], files[imp.target]
    low, high = layer_of(target), layer_of(source)
    if low is None or high is None:
        return None  # reported by test_every_product_module_has_a_layer
    if low > high:
        return (
            f"{imp.where}: {describe(source)} imports {imp.target} from {describe(target)} — "
            f"{LAYER_NAMES[high]} may import only lower layers or its own"
        )
    if low == high == CAPABILITIES and app_of(source) != app_of(target):
        return (
            f"{imp.where}: {describe(source)} imports {imp.target} — the capabilities "
            f"{app_of(source)} and {app_of(target)} never import each other (the turn "
            "package joins them)"
        )
    return None


def test_every_product_module_has_a_layer() -> None:
    unplaced = sorted(rel for rel in product_files().values() if layer_of(rel) is None)
    assert unplaced == [], (
        "modules with no layer — add a pattern to LAYER_PATTERNS in "
        f"tests/architecture/test_layers.py (and say why in its prose): {unplaced}"
    )


def test_the_walk_sees_the_whole_product() -> None:
    files = product_files()
    # A walk that silently reads nothing would pass every rule below.
    assert {"accounts.rls", "conversation.dispatch", "cases.models", "routers.models"} <= set(files)
    assert not any("/migrations/" in rel for rel in files.values())
    targets = {(i.source, i.target) for i in graph_of.imports()}
    assert ("conversation.dispatch", "accounts.rls") in targets
    assert len(targets) > 200


def test_imports_form_no_cycle() -> None:
    edges = graph_of.graph()
    reports = []
    for component in graph_of.strongly_connected(edges):
        cycle = graph_of.shortest_cycle(edges, component)
        steps = [
            graph_of.first_import(a, b).where + f" imports {b}"
            for a, b in itertools.pairwise(cycle)
        ]
        reports.append(
            f"cycle of {len(component)} modules {component}; one loop:\n    " + "\n    ".join(steps)
        )
    assert reports == [], "import cycles:\n  " + "\n  ".join(reports)


def test_imports_follow_the_layer_table() -> None:
    violations = [v for imp in graph_of.imports() if (v := layer_violation(imp))]
    assert violations == [], "imports against the layer table:\n  " + "\n  ".join(violations)


def test_only_entry_points_import_task_modules_or_the_turn_package() -> None:
    files = product_files()
    offenders = []
    for imp in graph_of.imports():
        source, target = files[imp.source], files[imp.target]
        if layer_of(source) == ENTRY:
            continue
        if is_task_module(target):
            offenders.append(
                f"{imp.where}: {describe(source)} imports the task module {imp.target} — "
                'schedule by name instead: dispatch.enqueue("<app>.<task>", ...)'
            )
        elif is_turn_package(target):
            offenders.append(
                f"{imp.where}: {describe(source)} imports the turn package ({imp.target}) — "
                "only entry points run turns"
            )
    assert offenders == [], "\n  ".join(["lower modules reaching up to entry points:", *offenders])


def test_no_product_module_is_over_450_lines() -> None:
    long = {
        rel: n
        for rel in product_files().values()
        if (n := len((ROOT / rel).read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines (make them packages by topic): {long}"


def _offline_imports(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        if any(
            n == "conversation.llm.offline" or n.startswith("conversation.llm.offline.")
            for n in names
        ):
            found.append(f"{rel}:{getattr(node, 'lineno', 0)}")
    return found


def _repository_sources() -> list[Path]:
    """Every Python file of the repository but tests/ and conversation/llm/ (the seam)."""
    found = []
    for directory, subdirs, names in os.walk(ROOT):
        rel_dir = Path(directory).relative_to(ROOT).as_posix()
        # Hidden directories (.venv, .git) and vendored trees are not the product's code.
        subdirs[:] = sorted(
            d
            for d in subdirs
            if not d.startswith(".")
            and d not in {"node_modules", "__pycache__"}
            and f"{rel_dir}/{d}".removeprefix("./") not in {"tests", "conversation/llm"}
        )
        found += [Path(directory) / n for n in sorted(names) if n.endswith(".py")]
    return found


def test_production_code_imports_nothing_from_the_offline_model() -> None:
    offenders = []
    for path in _repository_sources():
        offenders += _offline_imports(path)
    # The wire contract (tool names, note markers) lives in conversation/llm/protocol.py.
    assert offenders == [], (
        f"imports of conversation.llm.offline outside the model seam: {offenders}"
    )
