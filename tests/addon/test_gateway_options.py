"""addon/gateway.py options: declared in load(), validated in configure() (mitmproxy.test.taddons)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy import exceptions
from mitmproxy.addons import proxyserver
from mitmproxy.test import taddons

from tests.addon.conftest import Chain


@pytest.mark.parametrize(("name", "value"), [
    ("gateway_upstream", "chat"),
    ("gateway_base_url", "http://127.0.0.1:8080"),
    ("gateway_model", "gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5"),
    ("gateway_key_env", "MY_UPSTREAM_KEY"),
    ("gateway_match", ["/v1/responses"]),
    ("gateway_capture_dir", "/tmp/captures"),
    ("gateway_aws_region", "eu-west-1"),
    ("gateway_max_output_tokens", 8192),
])
def test_every_option_is_settable(name: str, value: object) -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, **{name: value})
        assert getattr(tctx.options, name) == value


def test_options_build_the_route() -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="chat", gateway_base_url="http://127.0.0.1:8080/",
                       gateway_model="deepseek-chat", gateway_key_env="MY_UPSTREAM_KEY")
        route = gateway.router.route("gpt-5.5")
        assert (route.dialect.name, route.base_url, route.model, route.key_env) == (
            "chat", "http://127.0.0.1:8080", "deepseek-chat", "MY_UPSTREAM_KEY")


def test_the_output_limit_option_is_every_routes_stated_limit() -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="chat", gateway_model="deepseek-chat",
                       gateway_max_output_tokens=4096)
        assert gateway.router.route("gpt-5.5").max_output_tokens == 4096
        tctx.configure(gateway, gateway_max_output_tokens=0)
        assert gateway.router.route("gpt-5.5").max_output_tokens is None


def test_model_patterns_choose_the_upstream_model() -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_model="gpt-5*=claude-sonnet-4-6,*=claude-haiku-4-5")
        assert gateway.router.route("gpt-5.5").model == "claude-sonnet-4-6"
        assert gateway.router.route("o4-mini").model == "claude-haiku-4-5"


@pytest.mark.parametrize(("options", "says"), [
    ({"gateway_upstream": "claude"}, "write one of responses, anthropic, chat, gemini, bedrock"),
    ({"gateway_base_url": "api.anthropic.com"}, "write e.g. https://api.anthropic.com"),
    ({"gateway_model": "gpt-5*=claude-sonnet-4-6,claude-haiku-4-5"}, "is not pattern=model: write e.g."),
    ({"gateway_match": [" "]}, "gateway_match is empty: write e.g. api.openai.com/v1/responses"),
    ({"gateway_aws_region": "Frankfurt"}, "is not an AWS region: write e.g. us-east-1, or leave it empty"),
    ({"gateway_max_output_tokens": -1}, "gateway_max_output_tokens must be a positive number of tokens"),
])
def test_bad_value_is_an_options_error_that_says_what_to_write(options: dict, says: str) -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx, pytest.raises(exceptions.OptionsError, match=says):
        tctx.configure(gateway, **options)


def test_bad_toml_is_an_options_error(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text("[[route]\n")
    gateway = Chain()
    refused = pytest.raises(exceptions.OptionsError, match="is not valid TOML")
    with taddons.context(*gateway.members) as tctx, refused:
        tctx.configure(gateway, gateway_config=str(path))


def test_a_rejected_value_leaves_the_previous_setting_in_place() -> None:
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="chat")
        with pytest.raises(exceptions.OptionsError):
            tctx.configure(gateway, gateway_upstream="nope")
        assert tctx.options.gateway_upstream == "chat"
        assert gateway.router.route("gpt-5.5").dialect.name == "chat"


def test_toml_config_routes_mix_providers_and_override_single_route_options(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text('[[route]]\nmodel = "gpt-5*"\nupstream = "anthropic"\n'
                    'target_model = "claude-sonnet-4-6"\n'
                    '[[route]]\nupstream = "chat"\nbase_url = "http://127.0.0.1:9"\n')
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="gemini", gateway_config=str(path))
        assert gateway.router.route("gpt-5.5").dialect.name == "anthropic"
        assert gateway.router.route("o3").dialect.name == "chat"


def test_connection_strategy_is_forced_to_lazy() -> None:
    gateway = Chain()
    # proxyserver declares the option
    with taddons.context(proxyserver.Proxyserver(), *gateway.members) as tctx:
        tctx.configure(gateway, connection_strategy="eager")
        assert tctx.options.connection_strategy == "lazy"


def test_connection_strategy_set_back_to_eager_later_is_forced_to_lazy_again() -> None:
    gateway = Chain()
    with taddons.context(proxyserver.Proxyserver(), *gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="anthropic")
        tctx.options.update(connection_strategy="eager")
        assert tctx.options.connection_strategy == "lazy"


def test_bedrock_default_base_url_follows_the_region_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="bedrock", gateway_aws_region="ap-northeast-1")
        assert gateway.router.route("gpt-5.5").base_url == "https://bedrock-runtime.ap-northeast-1.amazonaws.com"


def test_bedrock_default_base_url_follows_aws_region(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    gateway = Chain()
    with taddons.context(*gateway.members) as tctx:
        tctx.configure(gateway, gateway_upstream="bedrock")
        assert gateway.router.route("gpt-5.5").base_url == "https://bedrock-runtime.eu-west-3.amazonaws.com"
