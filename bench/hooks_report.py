"""The tables of bench/hooks.py: medians (min-max) over the measured turns, in ms."""

from __future__ import annotations

from statistics import median

from bench.hooks import CLIENTS, MODES, POINTS, HooksResult, TurnRecord


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def _row(name: str, cells: list[str], width: int = 46) -> str:
    return f"  {name}".ljust(width) + "".join(c.rjust(24) for c in cells)


def _keys(turns: list[TurnRecord], attr: str) -> list[str]:
    return list(dict.fromkeys(k for t in turns for k in getattr(t, attr)))


def _client(res: HooksResult, client: str) -> list[str]:
    turns = {mode: res.of(mode, client) for mode in MODES}
    firsts = {mode: res.of(mode, client, first=True) for mode in MODES}
    addon = turns["addon"]
    lines = [f"client {client}: {len(addon)} measured turns per mode",
             _row("", list(MODES)),
             _row("turn, wall", _each(turns, "total_ms")),
             _row("turn, mitmdump CPU (all threads)", _each(turns, "cpu_ms")),
             _row("first turn of a fresh mitmdump, wall", _each(firsts, "total_ms")),
             _row("first turn of a fresh mitmdump, CPU", _each(firsts, "cpu_ms")),
             f"  addon - plain, paired within rounds: wall {spread(res.paired(client, 'plain'))}, CPU "
             f"{spread(res.paired(client, 'plain', 'cpu_ms'))}; addon - plain-responses: wall "
             f"{spread(res.paired(client, 'plain-responses'))}, CPU "
             f"{spread(res.paired(client, 'plain-responses', 'cpu_ms'))}",
             _split(res, client),
             _row("moment (wall, ms after the client started)", list(MODES))]
    for name in POINTS:
        lines.append(_row(name, [spread([t.points_ms[name] for t in turns[m] if name in t.points_ms])
                                 for m in MODES]))
    lines.append(_row("hook of each addon (event-loop CPU, ms)", list(MODES)))
    every = [t for m in MODES for t in turns[m]]
    for name in _keys(every, "hooks_cpu_ms"):
        values = {m: [t.hooks_cpu_ms.get(name, 0.0) for t in turns[m]] for m in MODES}
        if max(median(v) for v in values.values() if v) >= 0.01:
            lines.append(_row(name, [spread(values[m]) for m in MODES]))
    for label, attr in (("mitmproxy's event handling, wall", "mitm_ms"),
                        ("  of which the stream callable, wall", "callable_ms"),
                        ("gc passes, wall", "gc_ms"), ("  the longest pass, wall", "gc_longest_ms"),
                        ("client read (bytes, or events)", "client_read")):
        lines.append(_row(label, _each(turns, attr)))
    for name in _keys(every, "mitm_by_event"):
        values = {m: [t.mitm_by_event.get(name, 0.0) for t in turns[m]] for m in MODES}
        if max(median(v) for v in values.values() if v) >= 0.05:
            lines.append(_row(f"  event: {name}", [spread(values[m]) for m in MODES]))
    for generation in ("0", "1", "2"):
        name = f"gc generation {generation}"
        lines.append(_row(f"  {name} passes", [spread([float(t.gc_passes.get(name, 0)) for t in turns[m]])
                                                for m in MODES]))
    lines.append(_row("gateway step (addon)", ["wall", "CPU"], 70))
    for name in _keys(addon, "steps_ms"):
        lines.append(_row(f"  {name}", [spread([t.steps_ms.get(name, 0.0) for t in addon]),
                                        spread([t.steps_cpu_ms.get(name, 0.0) for t in addon])], 70))
    calls = [t for t in addon if t.callable_calls]
    if calls:
        lines.append(_row(f"  stream callable, {calls[0].callable_calls} calls",
                          [spread([t.callable_ms for t in calls]), "-"], 70))
        lines.append(_row("  stream callable, per call (µs)",
                          [spread([t.callable_ms * 1e3 / t.callable_calls for t in calls]), "-"], 70))
    if firsts["addon"]:
        heavy = {**_heavy(firsts["addon"], "hooks_cpu_ms"), **_heavy(firsts["addon"], "steps_cpu_ms")}
        lines.append("  first addon turn, CPU of 1 ms or more: "
                     + (", ".join(f"{k} {v}" for k, v in heavy.items()) or "none"))
    return lines


def _split(res: HooksResult, client: str) -> str:
    """The addon's extra mitmdump CPU, in medians of paired differences: the hooks (every addon's),
    the stream callable (wall, it runs inside mitmproxy's event handling) and what is left."""
    cpu = res.paired(client, "plain", "cpu_ms")
    hooks = res.paired(client, "plain", "hooks_cpu_total")
    calls = [t.callable_ms for t in res.of("addon", client)]
    if not (cpu and hooks and calls):
        return "  addon - plain, CPU: -"
    rest = median(cpu) - median(hooks) - median(calls)
    return (f"  addon - plain, CPU {median(cpu):+.2f} ms: hooks {median(hooks):+.2f}, stream callable "
            f"{median(calls):+.2f}, the rest (mitmproxy outside the hooks) {rest:+.2f}")


def _each(turns: dict[str, list[TurnRecord]], attr: str) -> list[str]:
    return [spread([float(getattr(t, attr)) for t in turns[m]]) for m in MODES]


def _heavy(turns: list[TurnRecord], attr: str) -> dict[str, str]:
    names = _keys(turns, attr)
    return {n: spread([getattr(t, attr).get(n, 0.0) for t in turns]) for n in names
            if median(getattr(t, attr).get(n, 0.0) for t in turns) >= 1.0}


def render(res: HooksResult) -> str:
    clients = sorted({t.client for t in res.turns}, key=CLIENTS.index)
    parts = [f"One Codex turn, step by step (bench/hooks.py): {res.request} ({res.request_bytes / 1e3:.1f} KB"
             f"{', zstd' if res.zstd else ''}), answer {res.answer} ({res.answer_events} events, unpaced); "
             f"{res.sessions} session(s) of fresh mitmdumps; upstream "
             f"{'keep-alive' if res.keepalive else 'connection: close'}; capabilities {res.capabilities}; "
             f"{'addon without ' + ', '.join(res.ablate) + '; ' if res.ablate else ''}"
             f"load average {res.load[0]:.2f} -> {res.load[1]:.2f}. Medians (min-max), ms.",
             "upstream connections / requests: " + ", ".join(
                 f"{m} {res.upstream_connections.get(m, 0)}/{res.upstream_requests.get(m, 0)}"
                 for m in MODES)]
    for client in clients:
        parts += ["", *_client(res, client)]
    if res.alone_ms:
        parts += ["", "each client straight to the upstream, no proxy (wall): "
                  + "; ".join(f"{k} {spread(v)}" for k, v in res.alone_ms.items())]
    if res.upstream_head:
        parts += ["", "the request the addon sent upstream: " + res.upstream_head]
    return "\n".join(parts)
