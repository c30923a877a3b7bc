"""addon/routes/routing.py: option values -> routes, and which requests are intercepted (pure, no
mitmproxy)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from addon.routes.route_file import from_toml
from addon.routes.routing import (
    DEFAULT_MATCH,
    Route,
    RouteError,
    Router,
    from_options,
    model_name_problem,
    parse_models,
    serving,
    stated,
)
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities
from translators.dialect import Settings


def _router(model: str, upstream: str = "anthropic") -> Router:
    return Router(routes=tuple(from_options(upstream, "", model, "")))


def test_one_model_name_routes_every_client_model_to_it() -> None:
    router = _router("claude-sonnet-4-6")
    assert router.route("gpt-5.5").model == "claude-sonnet-4-6"
    assert router.route("anything").model == "claude-sonnet-4-6"


def test_empty_model_keeps_the_client_model() -> None:
    assert _router("").route("gpt-5.5").model is None


def test_model_patterns_first_match_wins() -> None:
    router = _router("gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5")
    assert router.route("gpt-5.5").model == "claude-sonnet-4-6"
    assert router.route("gpt-5-codex").model == "claude-sonnet-4-6"
    assert router.route("o3").model == "claude-haiku-4-5"


def test_model_patterns_tolerate_spaces() -> None:
    assert parse_models(" gpt-5* = claude-sonnet-4-6 , * = claude-haiku-4-5 ") == [
        ("gpt-5*", "claude-sonnet-4-6"), ("*", "claude-haiku-4-5")]


def test_a_model_no_pattern_matches_has_no_route() -> None:
    assert _router("gpt-5*=claude-sonnet-4-6").route("o3") is None


@pytest.mark.parametrize("spec", ["claude-a,gpt-5*=claude-b", "gpt-5*=", "=claude-b", "gpt-5*=a,,*=b"])
def test_bad_pattern_model_pair_says_how_to_write_it(spec: str) -> None:
    with pytest.raises(RouteError, match=r"pattern=model.*gpt-5\*=claude-sonnet-4-6,\*=claude-haiku-4-5"):
        parse_models(spec)


def test_unknown_dialect_lists_the_known_ones() -> None:
    with pytest.raises(RouteError, match=r"unknown upstream 'claude'.*"
                                         r"responses, anthropic, chat, gemini, bedrock"):
        from_options("claude", "", "", "")


@pytest.mark.parametrize("url", ["api.anthropic.com", "ftp://api.anthropic.com", "https://",
                                 "localhost:8080"])
def test_bad_base_url_shows_a_good_one(url: str) -> None:
    with pytest.raises(RouteError, match=r"not an http\(s\) URL: write e\.g\. https://"):
        from_options("anthropic", url, "", "")


@pytest.mark.parametrize(("dialect", "base_url", "key_env"), [
    ("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    ("chat", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    ("gemini", "https://generativelanguage.googleapis.com", "GEMINI_API_KEY"),
    ("bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com", "AWS_BEARER_TOKEN_BEDROCK"),
    ("responses", "https://api.openai.com/v1", None),  # to OpenAI: the client's own credentials
])
def test_each_dialect_has_a_default_base_url_and_key_variable(dialect: str, base_url: str,
                                                              key_env: str | None) -> None:
    (route,) = from_options(dialect, "", "", "")
    assert (route.dialect.name, route.base_url, route.key_env) == (dialect, base_url, key_env)


def test_a_route_holds_its_dialect_resolved_once_and_compares_it_by_name() -> None:
    """Every use asks the route's `Dialect` itself, never the registry again; a route compares,
    hashes and prints its dialect by the name the catalog, the console and the store write."""
    (route,) = from_options("chat", "", "deepseek-chat", "")
    assert route.dialect is dialects.get("chat")
    same_name = replace(route, dialect=replace(route.dialect, environ=("ANOTHER",)))
    assert same_name == route and hash(same_name) == hash(route)
    assert replace(route, dialect=dialects.get("gemini")) != route
    assert repr(route).startswith("Route(pattern='*', dialect='chat', base_url='https://api.deepseek.com'")


@pytest.mark.parametrize(("dialect", "base_url"), [
    ("chat", "http://127.0.0.1:8000/v1"),  # a local vLLM
    ("chat", "https://openrouter.ai/api/v1"),
    ("anthropic", "https://anthropic-proxy.example"),
    ("anthropic", "https://api.anthropic.com:8443"),
    ("gemini", "http://localhost:8080"),
    ("bedrock", "http://127.0.0.1:9000"),
    ("responses", "https://api.openai.com/v1"),
])
def test_a_route_that_names_no_key_sends_none_to_any_host_but_the_dialects_own(dialect: str,
                                                                              base_url: str) -> None:
    (route,) = from_options(dialect, base_url, "", "")
    assert route.key_env is None


def test_a_dialects_key_goes_to_any_of_its_bedrock_hosts() -> None:
    (route,) = from_options("bedrock", "https://bedrock-runtime.eu-west-3.amazonaws.com", "", "")
    assert route.key_env == "AWS_BEARER_TOKEN_BEDROCK"


@pytest.mark.parametrize("url", ["https://user:s3cret-pass@api.example/v1", "https://s3cret-pass@api.example",
                                 "http://:s3cret-pass@127.0.0.1:8000"])
def test_a_base_url_with_a_password_is_refused_without_repeating_it(url: str) -> None:
    with pytest.raises(RouteError, match="user:password@") as caught:
        from_options("chat", url, "", "")
    assert "s3cret-pass" not in str(caught.value)


@pytest.mark.parametrize("url", ["http://api.example/v1", "http://10.0.0.5:8000/v1"])
def test_a_named_key_over_plain_http_to_a_remote_host_is_refused(url: str) -> None:
    with pytest.raises(RouteError, match=r"plain http .* \$MY_KEY would cross the network in clear"):
        from_options("chat", url, "", "MY_KEY")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "http://localhost:8000", "http://[::1]:8000",
                                 "http://127.0.0.2:8000"])
def test_a_named_key_may_go_over_plain_http_to_loopback(url: str) -> None:
    (route,) = from_options("chat", url, "", "MY_KEY")
    assert route.key_env == "MY_KEY"


def test_a_toml_route_with_a_key_over_plain_http_is_refused_naming_the_route(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"route #2: base URL 'http://gpu-box:8000/v1' is plain http"):
        from_toml(_toml(tmp_path, """
[[route]]
model = "a*"
upstream = "anthropic"

[[route]]
upstream = "chat"
base_url = "http://gpu-box:8000/v1"
key_env = "GPU_KEY"
"""))


def test_a_compaction_base_url_elsewhere_does_not_get_the_routes_named_key(tmp_path: Path) -> None:
    (route,) = from_toml(_toml(tmp_path, """
[[route]]
upstream = "chat"
base_url = "https://llm.example/v1"
key_env = "LLM_KEY"
compaction_model = "small"
compaction_base_url = "https://summaries.example/v1"
"""))
    assert route.key_env == "LLM_KEY"
    assert route.summarizer is not None and route.summarizer.key_env is None


def test_base_url_and_key_variable_options_win_over_defaults() -> None:
    (route,) = from_options("chat", "http://127.0.0.1:8000/", "", "MY_KEY")
    assert (route.base_url, route.key_env) == ("http://127.0.0.1:8000", "MY_KEY")


def _toml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "routes.toml"
    path.write_text(text)
    return str(path)


def test_toml_routes_mix_providers_in_file_order(tmp_path: Path) -> None:
    routes = from_toml(_toml(tmp_path, """
[[route]]
model = "gpt-5*"
upstream = "anthropic"
target_model = "claude-sonnet-4-6"

[[route]]
model = "o*"
upstream = "chat"
base_url = "http://127.0.0.1:9/v1"
target_model = "deepseek-chat"
key_env = "LOCAL_KEY"

[[route]]
upstream = "gemini"
"""))
    router = Router(routes=tuple(routes))
    first, second, third = router.route("gpt-5.5"), router.route("o3"), router.route("mistral")
    assert (first.dialect.name, first.model, first.base_url) == ("anthropic", "claude-sonnet-4-6",
                                                           "https://api.anthropic.com")
    assert (second.dialect.name, second.model, second.base_url, second.key_env) == (
        "chat", "deepseek-chat", "http://127.0.0.1:9/v1", "LOCAL_KEY")
    assert (third.dialect.name, third.model, third.key_env) == ("gemini", None, "GEMINI_API_KEY")


def test_toml_syntax_error_is_reported_with_the_file(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[[route]\nupstream = anthropic\n")
    with pytest.raises(RouteError, match=f"gateway_config '{path}' is not valid TOML"):
        from_toml(path)


def test_toml_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match="cannot be read"):
        from_toml(str(tmp_path / "nope.toml"))


def test_toml_route_without_upstream_says_what_to_add(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match='route #1 needs `upstream = "anthropic"`'):
        from_toml(_toml(tmp_path, '[[route]]\nmodel = "gpt-5*"\n'))


def test_toml_without_routes_says_so(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"has no \[\[route\]\] table"):
        from_toml(_toml(tmp_path, 'upstream = "anthropic"\n'))


def test_toml_single_bracket_route_table_asks_for_double_brackets(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"write \[\[route\]\]"):
        from_toml(_toml(tmp_path, '[route]\nupstream = "anthropic"\n'))


def test_toml_misspelled_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"route #1 has an unknown key 'base-url'.*base_url"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "anthropic"\nbase-url = "http://127.0.0.1:1"\n'))


def test_toml_non_string_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match="route #1: target_model must be a string"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "anthropic"\ntarget_model = 5\n'))


def test_toml_context_window_is_the_route_window_in_tokens(tmp_path: Path) -> None:
    routes = from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\ncontext_window = 32768\n'
                                       '[[route]]\nupstream = "gemini"\n'))
    assert [r.context_window for r in routes] == [32768, None]


@pytest.mark.parametrize("value", ['"200k"', "0", "-5", "true", "2.5e5"])
def test_toml_context_window_must_be_a_positive_integer(tmp_path: Path, value: str) -> None:
    with pytest.raises(RouteError, match="route #1: context_window must be a positive number of tokens"):
        from_toml(_toml(tmp_path, f'[[route]]\nupstream = "anthropic"\ncontext_window = {value}\n'))


def test_toml_max_output_tokens_is_the_route_models_output_limit(tmp_path: Path) -> None:
    routes = from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\nmax_output_tokens = 8192\n'
                                       '[[route]]\nupstream = "gemini"\n'))
    assert [r.max_output_tokens for r in routes] == [8192, None]


@pytest.mark.parametrize("value", ['"8k"', "0", "-5", "true", "8192.0"])
def test_toml_max_output_tokens_must_be_a_positive_integer(tmp_path: Path, value: str) -> None:
    with pytest.raises(RouteError, match=r"route #1: max_output_tokens must be a positive number of tokens, "
                                         r"e\.g\. max_output_tokens = 8192"):
        from_toml(_toml(tmp_path, f'[[route]]\nupstream = "chat"\nmax_output_tokens = {value}\n'))


def test_gateway_max_output_tokens_applies_to_every_single_option_route() -> None:
    routes = from_options("chat", "", "gpt-5*=deepseek-chat,*=deepseek-reasoner", "", max_output_tokens=4096)
    assert [r.max_output_tokens for r in routes] == [4096, 4096]
    assert from_options("chat", "", "", "")[0].max_output_tokens is None
    with pytest.raises(RouteError, match="gateway_max_output_tokens must be a positive number"):
        from_options("chat", "", "", "", max_output_tokens=-1)


def test_the_routes_stated_window_and_output_limit_reach_the_encoder_over_the_models() -> None:
    (route,) = from_options("chat", "http://127.0.0.1:8000/v1", "", "", context_window=32768,
                            max_output_tokens=4096)
    model = ModelCapabilities(model="deepseek-chat", context_window=128_000, max_output_tokens=8192)
    caps = stated(model, route)
    assert (caps.context_window, caps.max_output_tokens) == (32768, 4096)
    (bare,) = from_options("chat", "http://127.0.0.1:8000/v1", "", "")
    kept = stated(model, bare)
    assert (kept.context_window, kept.max_output_tokens) == (128_000, 8192)


def test_gateway_context_window_applies_to_every_single_option_route() -> None:
    routes = from_options("anthropic", "", "gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5", "",
                          context_window=64000)
    assert [r.context_window for r in routes] == [64000, 64000]
    assert from_options("anthropic", "", "", "")[0].context_window is None
    with pytest.raises(RouteError, match="gateway_context_window must be a positive number"):
        from_options("anthropic", "", "", "", context_window=-1)


def test_toml_bad_dialect_and_url_are_checked_like_options(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match="unknown upstream 'claude'"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "claude"\n'))
    with pytest.raises(RouteError, match="not an http"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\nbase_url = "localhost"\n'))


@pytest.mark.parametrize(("host", "path"), [
    ("api.openai.com", "/v1/responses"),
    ("api.openai.com", "/v1/responses?api-version=1"),
    ("chatgpt.com", "/backend-api/codex/responses"),
])
def test_default_match_takes_the_responses_endpoints(host: str, path: str) -> None:
    assert Router(routes=(), match=DEFAULT_MATCH).matches(host, path)


@pytest.mark.parametrize(("host", "path"), [
    ("example.com", "/v1/responses"),
    ("api.openai.com", "/v1/chat/completions"),
    ("api.openai.com", "/v1/responses/resp_123"),
    ("api.openai.com", "/v1/responses/compact"),
    ("chatgpt.com", "/backend-api/wham/accounts/check"),
    ("chatgpt.com", "/backend-api/codex/models"),
    ("chatgpt.com", "/backend-api/wham/settings/user"),
])
def test_default_match_leaves_other_endpoints(host: str, path: str) -> None:
    assert not Router(routes=(), match=DEFAULT_MATCH).matches(host, path)


def test_match_pattern_starting_with_slash_takes_any_host() -> None:
    router = Router(routes=(), match=("/v1/responses",))
    assert router.matches("127.0.0.1", "/v1/responses")
    assert not router.matches("127.0.0.1", "/v2/responses")


def test_bedrock_default_base_url_is_us_east_1_without_a_region() -> None:
    (route,) = from_options("bedrock", "", "", "")
    assert (route.base_url, route.key_env) == ("https://bedrock-runtime.us-east-1.amazonaws.com",
                                               "AWS_BEARER_TOKEN_BEDROCK")


IN_EU_CENTRAL_1 = {"bedrock": Settings(options={"gateway_aws_region": "eu-central-1"})}


def test_bedrock_default_base_url_is_in_the_configured_region(tmp_path: Path) -> None:
    (route,) = from_options("bedrock", "", "", "", settings=IN_EU_CENTRAL_1)
    (toml_route,) = from_toml(_toml(tmp_path, '[[route]]\nupstream = "bedrock"\n'), settings=IN_EU_CENTRAL_1)
    assert route.base_url == toml_route.base_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"


def test_a_bedrock_base_url_given_is_kept_whatever_the_region() -> None:
    (route,) = from_options("bedrock", "http://127.0.0.1:8080", "", "", settings=IN_EU_CENTRAL_1)
    assert route.base_url == "http://127.0.0.1:8080"


# -- the summarizer of compaction requests --------------------------------------------------------

COMPACTION_REQUEST = True  # `serving`'s `compacting`: the request ends in `compaction_trigger`
TURN_REQUEST = False


def test_compaction_model_option_serves_compaction_requests_from_the_same_upstream() -> None:
    (route,) = from_options("anthropic", "http://127.0.0.1:9", "claude-opus-4-7", "MY_KEY",
                           compaction_model="claude-haiku-4-5")
    summarizer = serving(route, COMPACTION_REQUEST)
    assert (summarizer.dialect.name, summarizer.base_url, summarizer.model, summarizer.key_env) == (
        "anthropic", "http://127.0.0.1:9", "claude-haiku-4-5", "MY_KEY")
    assert serving(route, TURN_REQUEST) is route


def test_without_a_compaction_setting_the_route_summarizes_itself() -> None:
    (route,) = from_options("chat", "", "deepseek-chat", "")
    assert serving(route, COMPACTION_REQUEST) is route


def test_toml_compaction_upstream_takes_that_dialects_url_and_key_by_default(tmp_path: Path) -> None:
    routes = from_toml(_toml(tmp_path, """
[[route]]
model = "gpt-5*"
upstream = "responses"
compaction_upstream = "anthropic"
compaction_model = "claude-haiku-4-5"

[[route]]
upstream = "chat"
base_url = "http://127.0.0.1:8000/v1"
target_model = "qwen3"
compaction_model = "qwen3-small"
compaction_key_env = "SUMMARY_KEY"

[[route]]
upstream = "gemini"
compaction_upstream = "chat"
compaction_model = "local"
compaction_base_url = "http://127.0.0.1:11434/v1"
"""))
    summarizers = [serving(r, COMPACTION_REQUEST) for r in routes]
    assert [(s.dialect.name, s.base_url, s.model, s.key_env) for s in summarizers] == [
        ("anthropic", "https://api.anthropic.com", "claude-haiku-4-5", "ANTHROPIC_API_KEY"),
        ("chat", "http://127.0.0.1:8000/v1", "qwen3-small", "SUMMARY_KEY"),
        ("chat", "http://127.0.0.1:11434/v1", "local", None),  # not DeepSeek's host: no key
    ]
    assert [serving(r, TURN_REQUEST) for r in routes] == routes


def test_toml_compaction_upstream_of_another_dialect_needs_a_model(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"#1: compaction_upstream 'anthropic' needs a compaction_model"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\ncompaction_upstream = "anthropic"\n'))


# -- what a route states about its server (a dialect's route options, Option.route_key) ----------

def _server(route: Route) -> dict[str, str]:
    """The two Chat route options of issue 24 (the dialect has others)."""
    return {k: v for k, v in route.server if k in ("structured_output", "message_parts")}


def test_a_chat_route_states_the_chat_defaults_unless_told() -> None:
    (route,) = from_options("chat", "http://127.0.0.1:8000/v1", "", "")
    assert _server(route) == {"structured_output": "auto", "message_parts": "join"}


def test_the_chat_options_are_every_chat_routes_default() -> None:
    settings = {"chat": Settings(options={"gateway_chat_structured_output": "json_object",
                                          "gateway_chat_message_parts": "list"})}
    (route,) = from_options("chat", "http://127.0.0.1:8000/v1", "", "", settings=settings)
    assert _server(route) == {"structured_output": "json_object", "message_parts": "list"}


def test_a_toml_route_states_its_own_server_over_the_options(tmp_path: Path) -> None:
    settings = {"chat": Settings(options={"gateway_chat_structured_output": "prompt"})}
    routes = from_toml(_toml(tmp_path, '[[route]]\nmodel = "local*"\nupstream = "chat"\n'
                                       'base_url = "http://127.0.0.1:8000/v1"\n'
                                       'structured_output = "json_object"\n'
                                       '[[route]]\nupstream = "chat"\n'), settings=settings)
    assert [_server(r)["structured_output"] for r in routes] == ["json_object", "prompt"]


def test_a_toml_route_option_value_that_does_not_exist_names_route_and_choices(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match=r"route #1: structured_output 'xml': write one of auto, json_s"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\nstructured_output = "xml"\n'))


def test_a_route_option_of_another_dialect_is_an_unknown_key(tmp_path: Path) -> None:
    with pytest.raises(RouteError, match="route #1 has an unknown key 'structured_output'"):
        from_toml(_toml(tmp_path, '[[route]]\nupstream = "anthropic"\nstructured_output = "json_object"\n'))


def test_the_summarizer_on_the_same_upstream_states_the_same_server(tmp_path: Path) -> None:
    (route,) = from_toml(_toml(tmp_path, '[[route]]\nupstream = "chat"\nbase_url = "http://127.0.0.1:8000/v1"\n'
                                         'structured_output = "json_object"\ncompaction_model = "small"\n'))
    assert route.summarizer is not None and route.summarizer.server == route.server


def test_what_a_route_states_reaches_the_encoder_in_the_capabilities() -> None:
    settings = {"chat": Settings(options={"gateway_chat_structured_output": "json_object"})}
    (route,) = from_options("chat", "http://127.0.0.1:8000/v1", "", "", settings=settings)
    caps = stated(ModelCapabilities(model="m", extra={"scheme": "kept"}), route)
    assert caps.extra == {"scheme": "kept", **dict(route.server)}
    assert caps.extra["structured_output"] == "json_object"


@pytest.mark.parametrize("name", [".", "..", "models/..", "a/./b", "x\ny"])
def test_a_model_name_that_would_change_the_upstream_url_is_named(name: str) -> None:
    assert model_name_problem(name) is not None


@pytest.mark.parametrize("name", ["claude-sonnet-4-6", "models/gemini-2.5-pro", "us.anthropic.claude-v1:0",
                                  "..."])
def test_ordinary_model_names_pass(name: str) -> None:
    assert model_name_problem(name) is None


def test_a_route_to_a_dot_segment_model_is_refused_at_configuration() -> None:
    with pytest.raises(RouteError, match="dot segment"):
        from_options("anthropic", "", "gpt-5*=..", "")
