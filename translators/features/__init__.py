"""Features that cross dialects: compaction, hosted web search, freeform tools, the JSON-schema
tool list and its wire names, call/result pairing, and provider state carried through the client
(docs/architecture.md "Where things are")."""
