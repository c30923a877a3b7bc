"""addon/upstream/pool.py: which deployment serves an attempt, by a driven clock (no waiting)."""

from __future__ import annotations

from collections import Counter

import pytest

from addon.routes.routing import Route
from addon.upstream.pool import CAP, Balancer, Choice, Deployment, Pools
from translators import dialect as dialects


def deployment(name: str, weight: float = 1.0, window: int | None = None) -> Deployment:
    route = Route("*", dialects.get("anthropic"), f"https://{name}.example", None, None,
                  context_window=window)
    return Deployment(name, route, weight)


A, B, C = deployment("a"), deployment("b"), deployment("c")
FALLBACK, FALLBACK2 = deployment("fb"), deployment("fb2")


def pool(*deployments: Deployment, fallbacks: tuple[Deployment, ...] = (), **options: float) -> Balancer:
    return Balancer(tuple(deployments), fallbacks, **options)  # type: ignore[arg-type]


def served(balancer: Balancer, now: float = 0.0, **asked: object) -> Choice:
    choice = balancer.pick(now, **asked)  # type: ignore[arg-type]
    assert choice is not None
    return choice


def fail(balancer: Balancer, choice: Choice, now: float, retry_after: float | None = None) -> None:
    balancer.done(choice, now, "failed", retry_after)


# -- spreading --------------------------------------------------------------------------------
def test_sequential_new_conversations_are_spread_by_weight() -> None:
    balancer = pool(deployment("heavy", weight=3), deployment("light", weight=1))
    picks = Counter()
    for _ in range(40):
        choice = served(balancer)
        picks[choice.name] += 1
        balancer.done(choice, 0, "ok")
    assert picks == {"heavy": 30, "light": 10}


def test_concurrent_attempts_go_to_the_least_busy_per_weight() -> None:
    balancer = pool(deployment("heavy", weight=2), deployment("light", weight=1))
    picks = Counter(served(balancer).name for _ in range(30))  # none ends: all in flight
    assert picks == {"heavy": 20, "light": 10}


def test_a_busy_deployment_is_passed_over_for_an_idle_one() -> None:
    balancer = pool(A, B)
    first = served(balancer)
    assert served(balancer).name != first.name
    balancer.done(first, 0, "ok")
    assert served(balancer).name == first.name  # the other one is still busy


# -- sticky ------------------------------------------------------------------------------------
def test_a_conversation_stays_on_its_deployment_while_it_is_healthy() -> None:
    balancer = pool(A, B, C)
    first = served(balancer, affinity=("pck:abc",))
    balancer.done(first, 0, "ok")
    balancer.remember(["pck:abc"], first.name)
    for turn in range(20):
        choice = served(balancer, float(turn), affinity=("pck:abc",))
        assert (choice.name, choice.why) == (first.name, "sticky")
        balancer.done(choice, float(turn), "ok")


def test_a_conversation_moves_once_when_its_deployment_fails_and_stays_where_it_moved() -> None:
    balancer = pool(A, B)
    balancer.remember(["session:s1"], "a")
    choice = served(balancer, 0, affinity=("session:s1",))
    assert choice.name == "a"
    fail(balancer, choice, 0)
    moved = served(balancer, 0.1, affinity=("session:s1",), failed={"a"})
    assert (moved.name, moved.why) == ("b", "spread")
    balancer.done(moved, 0.2, "ok")
    balancer.remember(["session:s1"], moved.name)
    later = served(balancer, 100, affinity=("session:s1",))  # a is back by now
    assert (later.name, later.why) == ("b", "sticky")


def test_the_first_remembered_key_that_names_a_usable_deployment_wins() -> None:
    balancer = pool(A, B)
    balancer.remember(["resp:r1"], "a")
    balancer.remember(["ws:w1"], "b")
    assert served(balancer, affinity=("nothing", "ws:w1", "resp:r1")).name == "b"


def test_the_affinity_table_is_bounded_and_forgets_the_oldest() -> None:
    balancer = pool(A, B, affinity_size=3)
    for n in range(5):
        balancer.remember([f"k{n}"], "a")
    assert [balancer.remembered(f"k{n}") for n in range(5)] == [None, None, "a", "a", "a"]


def test_a_lookup_keeps_a_conversation_fresh_in_the_table() -> None:
    balancer = pool(A, B, affinity_size=2)
    balancer.remember(["old"], "a")
    balancer.remember(["new"], "b")
    balancer.done(served(balancer, affinity=("old",)), 0, "ok")
    balancer.remember(["newest"], "b")
    assert balancer.remembered("old") == "a" and balancer.remembered("new") is None


# -- cooldown --------------------------------------------------------------------------------
def test_a_failure_cools_the_deployment_for_a_growing_backoff_reset_by_success() -> None:
    balancer = pool(A)
    cooldowns = []
    now = 0.0
    for _ in range(8):
        choice = served(balancer, now)
        fail(balancer, choice, now)
        cooldowns.append(balancer.health("a").cool_until - now)
        assert balancer.pick(now + cooldowns[-1] - 0.001) is None
        now += cooldowns[-1]
    assert cooldowns == [1, 2, 4, 8, 16, 32, 60, 60]
    choice = served(balancer, now)
    balancer.done(choice, now, "ok")
    fail(balancer, served(balancer, now), now)
    assert balancer.health("a").cool_until - now == 1


def test_a_retry_after_sets_the_cooldown_within_the_cap() -> None:
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0, retry_after=7)
    assert balancer.health("a").cool_until == 7
    fail(balancer, served(balancer, 7), 7, retry_after=3600)
    assert balancer.health("a").cool_until == 7 + CAP


def test_failures_of_attempts_already_in_flight_do_not_lengthen_the_cooldown() -> None:
    balancer = pool(A)
    flying = [served(balancer, 0) for _ in range(50)]  # all sent before the first failure came back
    for at, choice in enumerate(flying):
        fail(balancer, choice, 0.01 * at)
    health = balancer.health("a")
    assert (health.failures, health.cool_until, health.in_flight) == (1, 1.0, 0)


def test_the_client_s_fault_says_nothing_against_the_deployment() -> None:
    balancer = pool(A)
    balancer.done(served(balancer, 0), 0, "answered")
    balancer.done(served(balancer, 0), 0, "dropped")
    assert balancer.health("a").failures == 0


# -- one probe per cooldown ---------------------------------------------------------------
def test_a_dead_deployment_is_tried_once_per_cooldown_under_200_concurrent_turns() -> None:
    balancer = pool(A, B)
    now, tries_of_a = 0.0, []
    dead = served(balancer, now)
    if dead.name != "a":
        balancer.done(dead, now, "ok")
        dead = served(balancer, now)
    fail(balancer, dead, now)  # a is down: cooling until 1.0
    for step in range(200):  # 200 turns, each starting at its own moment over 20 s
        now = step * 0.1
        choice = served(balancer, now, failed=())
        if choice.name == "a":
            tries_of_a.append(now)
            fail(balancer, choice, now)  # a is still dead
        else:
            pass  # b serves it and stays in flight: concurrent turns
    # cooldowns 2, 4, 8 ... after the first: a was probed at 1.0, 3.0, 7.0, 15.0
    assert tries_of_a == pytest.approx([1.0, 3.0, 7.0, 15.0])


def test_while_a_probe_is_out_no_other_attempt_goes_to_that_deployment() -> None:
    balancer = pool(A, B)
    first, second = served(balancer, 0), served(balancer, 0)
    dead = first if first.name == "a" else second
    fail(balancer, dead, 0)  # b stays in flight: a is the least busy once its cooldown ends
    probe = served(balancer, 5)
    assert (probe.name, probe.probe) == ("a", True)
    assert [served(balancer, 5).name for _ in range(10)] == ["b"] * 10
    balancer.done(probe, 6, "ok")
    assert balancer.health("a").failures == 0 and not balancer.health("a").probing


def test_a_probe_answered_with_a_success_head_frees_the_deployment_before_its_answer_ends() -> None:
    seen = []
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0)
    probe = served(balancer, 1)
    assert balancer.pick(1) is None
    balancer.on_change = lambda: seen.append("changed")
    balancer.alive(probe)
    assert seen == ["changed"]
    other = served(balancer, 1)  # while the probe's stream still runs
    assert (other.name, other.probe) == ("a", False)
    balancer.done(probe, 2, "failed")  # failed after its head: a new outage, from the start
    assert balancer.health("a").cool_until == 3


def test_a_probe_that_fails_starts_the_next_longer_cooldown() -> None:
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0)
    probe = served(balancer, 1)
    assert probe.probe
    fail(balancer, probe, 1)
    assert balancer.health("a").cool_until == 3


def test_a_probe_answered_with_the_client_s_fault_shows_the_deployment_is_back() -> None:
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0)
    balancer.done(served(balancer, 1), 1, "answered")
    assert balancer.health("a").failures == 0


# -- when nothing is usable --------------------------------------------------------------------
def test_nothing_usable_says_when_the_soonest_deployment_is_ready() -> None:
    balancer = pool(A, B)
    fail(balancer, served(balancer, 0), 0, retry_after=5)
    fail(balancer, served(balancer, 0), 0, retry_after=2)
    assert balancer.pick(1) is None
    assert balancer.ready_at(1) == 2
    again = served(balancer, 2)
    assert again.probe and balancer.ready_at(2) == 5
    assert balancer.ready_at(2, excluded={"a", "b"}) is None


def test_a_pool_waiting_only_on_a_probe_is_ready_at_no_time_but_probing() -> None:
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0)
    served(balancer, 1)  # the probe, still out
    assert balancer.pick(1.5) is None
    assert (balancer.ready_at(1.5), balancer.probing()) == (None, True)


def test_a_deployment_that_failed_this_turn_is_tried_again_after_its_cooldown() -> None:
    balancer = pool(A)
    fail(balancer, served(balancer, 0), 0, retry_after=2)
    assert balancer.pick(1, failed={"a"}) is None
    again = served(balancer, 2, failed={"a"})
    assert (again.name, again.why) == ("a", "again")


# -- fallbacks -----------------------------------------------------------------------------------
def test_fallbacks_serve_in_order_once_every_deployment_failed_this_turn() -> None:
    balancer = pool(A, B, fallbacks=(FALLBACK, FALLBACK2))
    failed: set[str] = set()
    names = []
    for _ in range(4):
        choice = served(balancer, 0, failed=failed)
        names.append((choice.name, choice.fallback))
        fail(balancer, choice, 0)
        failed.add(choice.name)
    assert names[2:] == [("fb", True), ("fb2", True)]
    assert {n for n, _ in names[:2]} == {"a", "b"}
    assert balancer.pick(0.5, failed=failed) is None


def test_fallbacks_serve_while_every_deployment_is_cooling() -> None:
    balancer = pool(A, fallbacks=(FALLBACK,))
    fail(balancer, served(balancer, 0), 0, retry_after=30)
    choice = served(balancer, 1)  # a new turn: nothing failed in it yet
    assert (choice.name, choice.why) == ("fb", "fallback")


def test_a_cooling_fallback_is_skipped_for_the_next() -> None:
    balancer = pool(A, fallbacks=(FALLBACK, FALLBACK2))
    fail(balancer, served(balancer, 0), 0, retry_after=30)
    fail(balancer, served(balancer, 0), 0, retry_after=30)  # fb
    assert served(balancer, 1).name == "fb2"


def test_a_request_too_large_for_a_deployment_s_window_goes_where_it_fits() -> None:
    small, large = deployment("small", window=32_000), deployment("large", window=200_000)
    balancer = pool(small, deployment("unknown"), fallbacks=(large,))
    assert served(balancer, needs=100_000).name == "unknown"  # no window stated: may fit
    tight = pool(small, fallbacks=(large,))
    choice = served(tight, needs=100_000)
    assert (choice.name, choice.fallback) == ("large", True)
    assert served(tight, needs=10_000).name == "small"


def test_a_request_that_fits_nowhere_is_tried_anyway() -> None:
    balancer = pool(deployment("small", window=8_000), fallbacks=(deployment("also", window=16_000),))
    assert served(balancer, needs=1_000_000).name == "small"


def test_a_context_overflow_asks_for_more_than_the_deployment_had() -> None:
    small, large = deployment("small", window=32_000), deployment("large", window=200_000)
    balancer = pool(small, fallbacks=(large,))
    first = served(balancer, needs=20_000)
    balancer.done(first, 0, "answered")  # it said: context_length_exceeded
    assert served(balancer, needs=32_001, excluded={"small"}).name == "large"


def test_an_excluded_deployment_is_never_picked_this_turn_even_after_its_cooldown() -> None:
    balancer = pool(A, fallbacks=(FALLBACK,))
    fail(balancer, served(balancer, 0), 0)
    assert served(balancer, 100, excluded={"a"}).name == "fb"
    assert balancer.pick(100, excluded={"a", "fb"}) is None


def test_when_nothing_left_fits_the_window_the_upstreams_say() -> None:
    small = deployment("small", window=8_000)
    balancer = pool(small, fallbacks=(deployment("large", window=100_000),))
    assert served(balancer, needs=500_000, excluded={"large"}).name == "small"


# -- the table of pools --------------------------------------------------------------------------
def test_a_pool_keeps_its_balancer_across_a_reload_while_its_deployments_are_the_same() -> None:
    pools = Pools()
    first = pools.balancer([A, B], [FALLBACK])
    assert pools.balancer([deployment("a"), deployment("b")], [deployment("fb")]) is first
    assert pools.balancer([A], [FALLBACK]) is not first
    pools.keep_only([([A], [FALLBACK])])
    assert pools.balancer([A, B], [FALLBACK]) is not first


def test_a_pool_refuses_no_deployments_and_twice_the_same_name() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Balancer((), ())
    with pytest.raises(ValueError, match="must differ"):
        Balancer((A, deployment("a")), ())


def test_every_ended_attempt_tells_the_waiters() -> None:
    seen = []
    balancer = pool(A)
    balancer.on_change = lambda: seen.append(balancer.health("a").failures)
    fail(balancer, served(balancer, 0), 0)
    balancer.done(served(balancer, 1), 1, "ok")
    assert seen == [1, 0]
