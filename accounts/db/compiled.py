"""Querysets of a fixed shape, built and compiled once per thread and then only run.

The lookups every webhook and every turn make (the channel, the sender's open
conversation, the turn's claim, the channel's routing) spend most of their CPU building
the queryset and compiling it to SQL — the statement itself runs in a fraction of that
(measured: the routing lookup's 2.7 ms in-process against 0.2 ms for its SQL run raw).
``CompiledQuery`` keeps the compiled statement and swaps in each call's values; the rows
go through the compiler's own converters and ``Model.from_db``, exactly as the queryset
would have built them (select_related objects and annotations included).

How the values are found: the queryset is built from ``samples`` — one distinct value per
argument — and each parameter of the compiled SQL that equals a sample (as given, as its
``str`` or as a UUID's ``hex``, which is how backends bind them) is that argument's slot.
(An aware ``datetime`` argument is bound as the backend adapts it.) It is built a second
time from other values, and the shape must not change: a query
whose SQL depends on its values (``None`` becoming ``IS NULL``, a list's length) is
refused with ``ValueError`` when it is first compiled, never run wrong.

Per thread because a compiler holds the connection it compiled for, and Django's
connections are per thread. One database alias: the one the queryset reads from.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]
from django.db.transaction import TransactionManagementError

M = TypeVar("M", bound=Model)

# How a bound parameter derives from its argument.
_AS_IS, _UUID, _STR, _HEX, _DATETIME = "as_is", "uuid", "str", "hex", "datetime"


def _binding(param: Any, sample: Any, connection: Any) -> str | None:
    if isinstance(sample, datetime):
        # Bound as the backend adapts it (SQLite: naive text in its time zone).
        return _DATETIME if param == connection.ops.adapt_datetimefield_value(sample) else None
    if type(param) is type(sample) and param == sample:
        # A UUID argument may come as its text (a task's id): bound as the UUID it names.
        return _UUID if isinstance(sample, uuid.UUID) else _AS_IS
    if isinstance(sample, uuid.UUID) and param == sample.hex:
        return _HEX
    if isinstance(param, str) and param == str(sample):
        return _STR
    return None


def _bind(binding: str, value: Any, connection: Any) -> Any:
    if binding == _AS_IS:
        return value
    if binding == _DATETIME:
        return connection.ops.adapt_datetimefield_value(value)
    if binding == _UUID:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    if binding == _HEX:
        return uuid.UUID(str(value)).hex
    return str(value)


def _alternative(sample: Any) -> Any:
    """Another value of the sample's type, for the second build."""
    if isinstance(sample, uuid.UUID):
        return uuid.UUID(int=sample.int ^ 0xFFFF)
    if isinstance(sample, datetime):
        return sample + timedelta(days=1, seconds=7)
    if isinstance(sample, bool):
        raise ValueError("a boolean argument may change a query's shape; build it in")
    if isinstance(sample, int):
        return sample + 7919
    if isinstance(sample, str):
        return f"{sample}~"
    raise ValueError(f"unsupported argument type {type(sample).__name__}")


class _Compiled:
    def __init__(self, queryset: QuerySet[Any], samples: Sequence[Any], check: QuerySet[Any]):
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        if compiler.has_extra_select:
            raise ValueError("extra() selects are not supported")
        slots: list[tuple[int, str] | None] = []
        for param in params:
            found = [
                (index, binding)
                for index, sample in enumerate(samples)
                if (binding := _binding(param, sample, compiler.connection)) is not None
            ]
            if len(found) > 1:
                raise ValueError("a parameter matches two samples: make the samples distinct")
            slots.append(found[0] if found else None)
        if {s[0] for s in slots if s is not None} != set(range(len(samples))):
            raise ValueError("every sample must appear in the compiled query")
        check_sql, _ = check.query.get_compiler(using=check.db).as_sql()
        if check_sql != sql:
            raise ValueError("the query's SQL depends on its values: it cannot be compiled once")
        self.db = queryset.db
        self.for_update = bool(queryset.query.select_for_update)
        self.sql = sql
        self.params = tuple(params)
        self.slots = tuple(slots)
        self.compiler = compiler
        klass_info = compiler.klass_info
        self.model: type[Model] = klass_info["model"]
        fields = klass_info["select_fields"]
        self.start, self.end = fields[0], fields[-1] + 1
        self.init_list = [f[0].target.attname for f in compiler.select[self.start : self.end]]
        self.populators = get_related_populators(klass_info, compiler.select, self.db)
        self.annotations = dict(compiler.annotation_col_map or {})
        # What ``results_iter`` works out on every call, worked out once: the converters of
        # the selected columns (about a fifth of a compiled lookup's CPU in the turn workers'
        # profile, bench/load.py --profile) and whether any column is a composite.
        columns = [column[0] for column in compiler.select[0 : compiler.col_count]]
        self.columns = columns
        self.converters = compiler.get_converters(columns)
        self.composite = compiler.has_composite_fields(columns)

    def params_for(self, args: Sequence[Any]) -> list[Any]:
        connection = self.compiler.connection
        return [
            constant if slot is None else _bind(slot[1], args[slot[0]], connection)
            for constant, slot in zip(self.params, self.slots, strict=True)
        ]

    def rows(self, args: Sequence[Any], limit: int | None) -> list[Any]:
        connection = connections[self.db]
        if self.for_update and connection.get_autocommit():
            # What the compiler checks at compile time, checked on every run.
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        with connection.cursor() as cursor:
            cursor.execute(self.sql, self.params_for(args))
            raw = cursor.fetchall() if limit is None else cursor.fetchmany(limit)
        # ``compiler.results_iter([raw])``, with the converters it would compute again.
        rows: Any = raw
        if self.converters:
            rows = self.compiler.apply_converters(rows, self.converters)
        if self.composite:
            rows = self.compiler.composite_fields_to_tuples(rows, self.columns)
        return list(rows)

    def instance(self, row: Sequence[Any]) -> Model:
        obj = self.model.from_db(self.db, self.init_list, row[self.start : self.end])
        for populator in self.populators:
            populator.populate(row, obj)
        for name, position in self.annotations.items():
            setattr(obj, name, row[position])
        return obj


class CompiledQuery(Generic[M]):
    """``build(*args)`` → a queryset of one shape whatever its arguments; ``first(*args)``
    answers what ``build(*args).first()`` would (``build`` must slice itself: ``[:1]``),
    ``all(*args)`` what ``list(build(*args))`` would.

    ``samples``: one value per argument, of the type callers pass, all distinct."""

    def __init__(self, build: Callable[..., QuerySet[M]], samples: Sequence[Any]) -> None:
        self._build = build
        self._samples = tuple(samples)
        self._local = threading.local()

    def _compiled(self) -> _Compiled:
        compiled: _Compiled | None = getattr(self._local, "compiled", None)
        # A thread keeps its connection object for life; a new one (tests that swap
        # databases, a closed-and-reopened wrapper) gets a fresh compile.
        if compiled is None or compiled.compiler.connection is not connections[compiled.db]:
            queryset = self._build(*self._samples)
            check = self._build(*(_alternative(s) for s in self._samples))
            compiled = self._local.compiled = _Compiled(queryset, self._samples, check)
        return compiled

    def first(self, *args: Any) -> M | None:
        compiled = self._compiled()
        rows = compiled.rows(args, limit=1)
        return compiled.instance(rows[0]) if rows else None  # type: ignore[return-value]

    def all(self, *args: Any) -> list[M]:
        """What ``list(build(*args))`` would answer (``build`` bounds it with a slice)."""
        compiled = self._compiled()
        return [compiled.instance(row) for row in compiled.rows(args, limit=None)]  # type: ignore[misc]
