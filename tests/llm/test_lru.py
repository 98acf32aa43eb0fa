"""``conversation.llm.lru.LruCache`` against a plain model of least-recently-used eviction."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from conversation.llm.lru import LruCache

operations = st.lists(
    st.tuples(st.sampled_from(["get", "put"]), st.integers(0, 6), st.integers()), max_size=60
)


@given(size=st.integers(1, 4), ops=operations)
def test_the_cache_holds_the_most_recently_used_entries_for_any_sequence(size, ops):
    cache: LruCache[int, int] = LruCache(size)
    model: list[tuple[int, int]] = []  # oldest first
    for op, key, value in ops:
        found = dict(model).get(key)
        if op == "get":
            assert cache.get(key) == found
            if found is not None:
                model = [item for item in model if item[0] != key] + [(key, found)]
        else:
            cache.put(key, value)
            model = [item for item in model if item[0] != key] + [(key, value)]
            model = model[-size:]
    assert cache.snapshot() == dict(model)
    assert len(cache) == len(model)


def test_get_or_build_builds_once_and_then_serves_the_stored_value():
    cache: LruCache[str, list[int]] = LruCache(2)
    built: list[str] = []

    def build() -> list[int]:
        built.append("x")
        return [1]

    first = cache.get_or_build("k", build)
    assert cache.get_or_build("k", build) is first
    assert built == ["x"]
