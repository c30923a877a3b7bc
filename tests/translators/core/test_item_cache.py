"""The client's cache of decoded items: bounded in entries, bytes and runs, least recently used
first (translators/core/item_cache.py)."""

from __future__ import annotations

import threading

from translators.core.item_cache import ENTRY_OVERHEAD, ItemCache


def test_an_entry_comes_back_and_counts_as_a_hit() -> None:
    cache = ItemCache()
    assert cache.get("a") is None
    cache.put("a", 1, 10)
    assert cache.get("a") == 1
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    assert cache.bytes == 2 * 10 + ENTRY_OVERHEAD


def test_past_its_entries_the_least_recently_used_goes() -> None:
    cache = ItemCache(max_entries=2)
    cache.put("a", 1, 1)
    cache.put("b", 2, 1)
    cache.get("a")  # now b is the oldest
    cache.put("c", 3, 1)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_past_its_bytes_old_entries_go_and_the_count_stays_true() -> None:
    size = 2 * 100 + ENTRY_OVERHEAD
    cache = ItemCache(max_bytes=3 * size)
    for key in "abcde":
        cache.put(key, key, 100)
    assert len(cache) == 3 and cache.bytes == 3 * size
    assert cache.get("a") is None and cache.get("e") == "e"
    cache.put("e", "again", 100)  # replacing an entry counts it once
    assert cache.bytes == 3 * size


def test_an_entry_larger_than_the_cache_is_not_kept() -> None:
    cache = ItemCache(max_bytes=1000)
    cache.put("small", 1, 10)
    cache.put("huge", 2, 10_000)
    assert cache.get("huge") is None and cache.get("small") == 1


def test_runs_most_recent_first_bounded_and_replaced() -> None:
    cache = ItemCache(max_runs=2)
    cache.add_run("r1", 10, lambda old: False)
    cache.add_run("r2", 10, lambda old: False)
    cache.add_run("r3", 10, lambda old: False)
    assert cache.runs() == ["r3", "r2"] and cache.bytes == 20
    cache.add_run("r4", 30, lambda old: old == "r3")  # r4 continues r3
    assert cache.runs() == ["r4", "r2"] and cache.bytes == 40


def test_runs_give_way_to_the_byte_bound_but_the_newest_stays() -> None:
    cache = ItemCache(max_bytes=100)
    cache.add_run("r1", 60, lambda old: False)
    cache.add_run("r2", 60, lambda old: False)
    assert cache.runs() == ["r2"] and cache.bytes == 60
    cache.add_run("too big", 101, lambda old: True)
    assert cache.runs() == ["r2"]


def test_clear_forgets_everything() -> None:
    cache = ItemCache()
    cache.put("a", 1, 1)
    cache.add_run("r", 5, lambda old: False)
    cache.clear()
    assert (len(cache), cache.runs(), cache.bytes) == (0, [], 0)


def test_two_threads_keep_the_bounds() -> None:
    cache = ItemCache(max_entries=50)

    def work(offset: int) -> None:
        for i in range(2000):
            cache.put(offset + i % 120, i, 8)
            cache.get(offset + (i * 7) % 120)

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50 and cache.bytes == 50 * (2 * 8 + ENTRY_OVERHEAD)
