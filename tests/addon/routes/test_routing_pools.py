"""A `[[route]]`'s pool (docs/pools.md "Writing a pool"): `deployments` and `fallbacks` in the
routes TOML, the retry keys, and the messages that say what to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from addon.routes.route_file import from_toml
from addon.routes.routing import Route, RouteError, from_options, pool_of

HEAD = '[[route]]\nmodel = "gpt-5*"\nupstream = "anthropic"\ntarget_model = "claude-sonnet-4-6"\n'


def routes(tmp_path: Path, text: str) -> list[Route]:
    config = tmp_path / "routes.toml"
    config.write_text(text)
    return from_toml(str(config))


def refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RouteError, match=message):
        routes(tmp_path, text)


def test_a_route_without_deployments_is_a_pool_of_one_itself(tmp_path: Path) -> None:
    [route] = routes(tmp_path, HEAD)
    deployments, fallbacks = pool_of(route)
    assert [(d.name, d.route, d.weight) for d in deployments] == [("#1", route, 1.0)]
    assert fallbacks == ()
    assert (route.retries, route.retry_seconds, route.idle_timeout) == (None, None, None)


def test_deployments_take_what_they_leave_out_from_their_table(tmp_path: Path) -> None:
    [route] = routes(tmp_path, HEAD + 'base_url = "https://proxy.example/anthropic"\n'
                     'context_window = 200000\n'
                     'deployments = [{ key_env = "KEY_A" }, { key_env = "KEY_B", weight = 2, name = "b" },\n'
                     '  { target_model = "claude-haiku-4-5", base_url = "https://other.example" }]\n')
    a, b, c = route.deployments
    assert (a.name, a.weight, b.name, b.weight, c.name) == ("#1", 1.0, "b", 2.0, "#3")
    for member in (a, b):
        assert (member.route.base_url, member.route.model, member.route.context_window) == (
            "https://proxy.example/anthropic", "claude-sonnet-4-6", 200000)
        assert member.route.pattern == "gpt-5*" and member.route.dialect.name == "anthropic"
    assert (a.route.key_env, b.route.key_env) == ("KEY_A", "KEY_B")
    assert (c.route.model, c.route.base_url, c.route.key_env) == ("claude-haiku-4-5", "https://other.example",
                                                                  None)
    assert pool_of(route) == (route.deployments, ())


def test_a_deployment_of_another_upstream_takes_nothing_of_the_tables_upstream(tmp_path: Path) -> None:
    [route] = routes(tmp_path, HEAD + 'key_env = "ANTHROPIC_KEY"\ncontext_window = 200000\n'
                     'fallbacks = [{ upstream = "chat", base_url = "http://127.0.0.1:8000/v1" }]\n')
    [fallback] = route.fallbacks
    assert fallback.name == "fallback #1"
    assert (fallback.route.dialect.name, fallback.route.model, fallback.route.key_env,
            fallback.route.context_window) == ("chat", None, None, None)


def test_a_deployment_gets_its_dialects_own_settings_from_the_table(tmp_path: Path) -> None:
    [route] = routes(tmp_path, '[[route]]\nupstream = "chat"\nbase_url = "http://127.0.0.1:8000/v1"\n'
                     'file_parts = "openai"\n'
                     'deployments = [{}, { base_url = "http://127.0.0.1:8001/v1", file_parts = "drop" }]\n')
    first, second = route.deployments
    assert dict(first.route.server)["file_parts"] == "openai"
    assert dict(second.route.server)["file_parts"] == "drop"


def test_the_retry_keys_are_the_routes_own(tmp_path: Path) -> None:
    [route] = routes(tmp_path, HEAD + "retries = 0\nretry_seconds = 12.5\nidle_timeout = 300\n")
    assert (route.retries, route.retry_seconds, route.idle_timeout) == (0, 12.5, 300.0)


def test_routes_from_options_keep_the_options_retry_settings() -> None:
    [route] = from_options("anthropic", "", "claude-sonnet-4-6", "")
    assert (route.retries, route.retry_seconds, route.idle_timeout) == (None, None, None)
    assert route.deployments == ()


@pytest.mark.parametrize(("extra", "message"), [
    ('deployments = { key_env = "A" }\n',
     r"deployments must be a list of inline tables, e\.g\. deployments = \[\{ key_env = \"KEY_A\" \}"),
    ("deployments = []\n", "deployments must be a list of inline tables"),
    ('deployments = ["a"]\n', "deployments must be a list of inline tables"),
    ('deployments = [{ model = "x" }]\n', r"route #1 deployment #1 has an unknown key 'model': write one of "
                                           r"name, upstream, base_url"),
    ('deployments = [{ compaction_model = "x" }]\n', "unknown key 'compaction_model'"),
    ('deployments = [{ weight = 0 }]\n',
     r"deployment #1: weight must be a positive number, e\.g\. weight = 2"),
    ('deployments = [{ weight = "2" }]\n', "weight must be a positive number"),
    ('deployments = [{ upstream = "nope" }]\n', "unknown upstream 'nope': write one of"),
    ('deployments = [{ key_env = 5 }]\n', r"deployment #1: key_env must be a string, e\.g\. key_env = "),
    ('fallbacks = [{ weight = 2 }]\n', "fallback #1: a fallback has no weight: fallbacks are tried in order"),
    ('deployments = [{ name = "x" }, { name = "x" }]\n',
     r"two deployments or fallbacks share a name \(x, x\)"),
    ('deployments = [{}, { name = "#1" }]\n', "share a name"),
    ('deployments = [{ base_url = "http://10.0.0.5:8000", key_env = "K" }]\n',
     r"deployment #1: base URL 'http://10\.0\.0\.5:8000' is plain http to a host that is not loopback"),
    ('deployments = [{ base_url = "ftp://x" }]\n', "is not an http"),
    ('deployments = [{ context_window = -1 }]\n', "context_window must be a positive number of tokens"),
    ("retries = -1\n", r"route #1: retries must be a whole number of at least 0, e\.g\. retries = 3"),
    ("retries = 1.5\n", "retries must be a whole number"),
    ('retry_seconds = "30"\n',
     r"retry_seconds must be a number of seconds of at least 0, e\.g\. retry_seconds = 30"),
    ("idle_timeout = 0\n", r"idle_timeout must be a number of seconds above 0, e\.g\. idle_timeout = 120"),
    ("idle_timeout = true\n", "idle_timeout must be a number of seconds above 0"),
])
def test_a_pool_that_cannot_work_is_refused_saying_what_to_write(tmp_path: Path, extra: str,
                                                                 message: str) -> None:
    refused(tmp_path, HEAD + extra, message)


def test_the_unknown_key_message_of_a_route_names_the_pool_keys(tmp_path: Path) -> None:
    refused(tmp_path, HEAD + 'deployment = [{ key_env = "A" }]\n', r"unknown key 'deployment': write one of "
                                                                    r".*deployments, fallbacks, retries")


def test_a_route_with_fallbacks_but_no_deployments_is_itself_the_one_deployment(tmp_path: Path) -> None:
    [route] = routes(tmp_path, HEAD + 'fallbacks = [{ target_model = "claude-haiku-4-5" }]\n')
    deployments, fallbacks = pool_of(route)
    assert [d.route for d in deployments] == [route]
    assert [(f.name, f.route.model) for f in fallbacks] == [("fallback #1", "claude-haiku-4-5")]
