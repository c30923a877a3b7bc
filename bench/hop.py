"""What one loopback TCP hop costs an asyncio process per paced message: paced 300-byte writes over
one connection to a reader task in the same loop (woken per message), against the same paced loop
without the writes. The upstream leg makes this hop once per upstream read of a stream
(docs/benchmarks.md "The stream path through the leg").

`python -m bench.hop [--messages 2000] [--pace-ms 0.5]`: CPU µs per message, with and without the
hop, twice each, alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

MESSAGE = b"x" * 300


async def _measure(messages: int, pace_s: float) -> list[tuple[bool, float]]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    _, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
    out = []
    try:
        for hop in (False, True, False, True):
            start = time.thread_time()
            for _ in range(messages):
                if hop:
                    writer.write(MESSAGE)
                await asyncio.sleep(pace_s)
            out.append((hop, (time.thread_time() - start) / messages * 1e6))
    finally:
        writer.close()
        server.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hop", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--pace-ms", type=float, default=0.5)
    args = parser.parse_args(argv)
    for hop, us in asyncio.run(_measure(args.messages, args.pace_ms / 1e3)):
        print(f"{'hop' if hop else 'no hop':7} {us:6.1f} µs CPU per paced message")
    return 0


if __name__ == "__main__":
    sys.exit(main())
