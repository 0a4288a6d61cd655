"""The framing decoders' throughput, next to plain ``json.loads`` on the same lines.

    python bench/bench_framing.py [--mb 32] [--rounds 5]

The input is a stream of typical ``tools/call`` results (about 300 bytes each), fed in
64 KiB chunks, as a pipe delivers them. ``json.loads`` per line (split in advance, so it
pays for nothing but parsing) is the floor any NDJSON decoder in Python stands on.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from mcpkit.framing import ContentLengthDecoder, NdjsonDecoder, encode_content_length

MESSAGE = {"jsonrpc": "2.0", "id": 12345, "result": {
    "content": [{"type": "text", "text": "Milk, eggs, coffee. " * 8}],
    "structuredContent": {"notes": [{"id": "1", "title": "Shopping"}]},
    "resultType": "complete"}}


def rate(seconds: float, size: int) -> float:
    return size / seconds / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    line = json.dumps(MESSAGE, separators=(",", ":")).encode() + b"\n"
    count = args.mb * 1_000_000 // len(line)
    ndjson = line * count
    framed = encode_content_length(MESSAGE) * count
    chunk = 64 * 1024
    results: dict[str, list[float]] = {"json.loads per line": [], "NdjsonDecoder": [],
                                       "ContentLengthDecoder": []}
    lines = ndjson.split(b"\n")[:-1]
    for _ in range(args.rounds):
        started = time.perf_counter()
        for item in lines:
            json.loads(item)
        results["json.loads per line"].append(rate(time.perf_counter() - started, len(ndjson)))
        for name, data, decoder in (("NdjsonDecoder", ndjson, NdjsonDecoder()),
                                    ("ContentLengthDecoder", framed, ContentLengthDecoder())):
            started = time.perf_counter()
            decoded = 0
            for i in range(0, len(data), chunk):
                decoded += len(decoder.feed(data[i:i + chunk]))
            assert decoded == count, (name, decoded, count)
            results[name].append(rate(time.perf_counter() - started, len(data)))
    floor = statistics.median(results["json.loads per line"])
    print(f"{count:,} messages of {len(line)} bytes, 64 KiB chunks, medians of {args.rounds}\n")
    print("| decoder | MB/s | vs json.loads |")
    print("| --- | ---: | ---: |")
    for name, rates in results.items():
        med = statistics.median(rates)
        print(f"| {name} | {med:,.0f} ({min(rates):,.0f}-{max(rates):,.0f}) | "
              f"{med / floor:.2f} |")


if __name__ == "__main__":
    main()
