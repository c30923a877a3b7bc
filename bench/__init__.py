"""Benchmarks for dialect-gateway: `python -m bench [--quick] [--out PATH]`.

Every figure is a ratio measured in the same run: our translation against the cost of parsing and
writing the same JSON (the floor), against litellm's Responses bridge (the peer), and mitmdump with
the addon against plain mitmdump passing the same bytes through.
"""
