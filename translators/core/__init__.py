"""What every dialect shares besides the IR (`translators/ir/`): the report of what a translation
could not carry, the one error family, the result of translating a request, a model's
capabilities, and the id factories (docs/architecture.md "Where things are")."""
