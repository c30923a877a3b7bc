"""Replay a capture folder through real mitmdump + the addon, offline, no key:

    python -m addon replay captures/codex-pelican-names-anthropic [-w out.flow] [--raw]

It writes two flow files (the client's request, sent where that client sends it; the upstream's
recorded answer), runs
`mitmdump --set server=false -C client.flow --server-replay upstream.flow -s addon/gateway.py`
(docs/mitmproxy.md "Replay") and prints a transcript (addon/observe/transcript.py): the request in one
line, where it went, the answer as it streamed, what was dropped and noted. `--raw` prints the
bytes the client received instead (Responses SSE, or the events of the capture's own client
dialect, e.g. Anthropic's for Claude Code), then the flow's comment.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from mitmproxy import http, io
from mitmproxy.test import tflow

from addon.observe import transcript
from addon.serve import client_facts
from translators import client_dialects, stream_translator, translate_request
from translators import dialect as dialects
from translators.client_dialects import ClientDialect
from translators.wire import wirejson

ROOT = Path(__file__).resolve().parents[2]
CLIENT_URL = client_facts.RESPONSES_URL
DEMO = ROOT / "captures" / "codex-pelican-names-anthropic"
"""`./run demo`'s capture: Codex asks for two names for a pet pelican (docs/captures.md)."""


def _flow(request: http.Request, response: http.Response | None = None) -> http.HTTPFlow:
    flow = tflow.tflow(req=request, resp=response if response is not None else False)
    flow.metadata.clear()
    return flow


def speaks(meta: dict) -> ClientDialect:
    """The capture's client dialect (`"client"` in capture.json, addon/observe/recording.py); a capture
    without one is a Responses client's."""
    return client_dialects.get(meta.get("client") or client_dialects.DEFAULT)


def client_url(client_dialect: ClientDialect) -> str:
    """Where the client sends a turn: its own vendor's host and turn path, which `gateway_match`'s
    defaults take (addon/serve/client_facts.py); Codex's Responses URL for a client with no host of
    its own."""
    if client_dialect.hosts and client_dialect.turn_paths:
        return f"https://{client_dialect.hosts[0]}{client_dialect.turn_paths[0]}"
    return CLIENT_URL


def build_flows(folder: Path, work: Path) -> tuple[Path, Path, dict]:
    meta = json.loads((folder / "capture.json").read_text())
    body = json.loads((folder / meta["request"]).read_text())
    raw = (folder / meta["upstream"]).read_bytes()
    client_dialect = speaks(meta)
    client = http.Request.make("POST", client_url(client_dialect), wirejson.dumps(body),
                               {"content-type": "application/json", "accept": "text/event-stream"})
    translation = translate_request(body, meta["dialect"], meta.get("model"), client=client_dialect.name)
    upstream_request = http.Request.make("POST", meta["base_url"] + translation.path,
                                         wirejson.dumps(translation.body),
                                         {"content-type": "application/json"})
    upstream_response = http.Response.make(meta.get("status", 200), raw, {
        "content-type": dialects.get(meta["dialect"]).vendor.stream_content_type})
    client_path, upstream_path = work / "client.flow", work / "upstream.flow"
    flows = ((client_path, _flow(client)), (upstream_path, _flow(upstream_request, upstream_response)))
    for path, flow in flows:
        with path.open("wb") as f:
            io.FlowWriter(f).add(flow)
    return client_path, upstream_path, meta


def mitmdump_command(client: Path, upstream: Path, meta: dict, out: Path) -> list[str]:
    return [
        str(Path(sys.executable).parent / "mitmdump"), "-q",
        "--set", "server=false", "--set", "connection_strategy=lazy",
        "--set", "server_replay_ignore_content=true", "--set", "server_replay_ignore_host=false",
        "-s", str(ROOT / "addon" / "gateway.py"),
        "--set", f"gateway_upstream={meta['dialect']}",
        "--set", f"gateway_base_url={meta['base_url']}",
        "--set", f"gateway_model={meta.get('model') or ''}",
        "--set", "gateway_capabilities=table",  # offline: the vendor's models endpoint is not asked
        "-C", str(client), "--server-replay", str(upstream), "-w", str(out),
    ]


def replay(folder: Path, out: Path, timeout: float = 60) -> http.HTTPFlow:
    with tempfile.TemporaryDirectory() as tmp:
        client, upstream, meta = build_flows(folder, Path(tmp))
        cmd = mitmdump_command(client, upstream, meta, out)
        cmd[cmd.index("--set") : cmd.index("--set")] = ["--set", f"confdir={tmp}/conf"]
        done = subprocess.run(cmd, timeout=timeout, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mitmdump exited {done.returncode}: {done.stdout}{done.stderr}")
    with out.open("rb") as f:
        flows = [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]
    if not flows:
        raise RuntimeError("mitmdump wrote no flow")
    return flows[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m addon replay", description=__doc__.splitlines()[0])
    parser.add_argument("capture", nargs="?", default=str(DEMO))
    parser.add_argument("-w", "--write", help="keep the replayed flow in this file")
    parser.add_argument("--raw", action="store_true", help="print the SSE bytes the client received")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.write) if args.write else Path(tmp) / "out.flow"
        try:
            flow = replay(Path(args.capture), out)
        except (OSError, KeyError, ValueError, RuntimeError, subprocess.TimeoutExpired) as exc:
            # a broken capture folder is a user error: one line, not a traceback
            print(f"python -m addon replay: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        assert flow.response is not None
        try:
            if args.raw:
                _print_raw(flow)
            else:
                _print_transcript(Path(args.capture), flow)
            sys.stdout.flush()
        except BrokenPipeError:
            return _reader_gone()
    return 0


def _reader_gone() -> int:
    """The reader of our output left (`./run demo | head`): stop quietly, as Unix tools do when
    SIGPIPE ends them (Python ignores the signal and raises instead). What is still buffered goes
    to /dev/null, or the flush at exit would raise again; the status is the shell's for a tool
    SIGPIPE ended (128 + 13)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def _print_raw(flow: http.HTTPFlow) -> None:
    assert flow.response is not None
    # an event stream is UTF-8 whatever its content-type says (`get_text` would read latin-1)
    sys.stdout.write((flow.response.content or b"").decode("utf-8", "replace"))
    print(f"\n# {flow.request.method} {flow.request.url} -> {flow.response.status_code}")
    print(f"# comment: {flow.comment}")
    info = flow.metadata.get("gateway", {})
    print(f"# dropped: {info.get('dropped')}\n# notes: {info.get('notes')}")


def _print_transcript(folder: Path, flow: http.HTTPFlow) -> None:
    assert flow.response is not None
    meta = json.loads((folder / "capture.json").read_text())
    body = json.loads((folder / meta["request"]).read_text())
    info = flow.metadata.get("gateway", {})
    print(transcript.request_line(body))
    print(transcript.target_line(info, flow.request.method, flow.request.url, flow.response.status_code))
    for piece in transcript.answer(as_responses(speaks(meta), str(body.get("model") or "model"),
                                                flow.response.content or b"")):
        sys.stdout.write(piece)
        sys.stdout.flush()
    print("\n".join(transcript.report(info, flow.comment)))


def as_responses(client_dialect: ClientDialect, model: str, answer: bytes) -> bytes:
    """The answer the client got, as the Responses events the transcript reads: another client
    dialect's answer is read back by the stream decoder of the upstream dialect on the same wire
    (`ClientDialect.view`, e.g. Anthropic's for a Messages client) and written as Responses, as
    the gateway writes any upstream's answer for Codex."""
    if client_dialect.name == client_dialects.DEFAULT:
        return answer
    reader = stream_translator(client_dialect.view, translate_request(
        {"model": model, "input": "", "stream": True}, client_dialect.view, None))
    return reader.feed(answer) + reader.close()


if __name__ == "__main__":
    sys.exit(main())
