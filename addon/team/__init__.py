"""A shared gateway: client keys, usage and budgets."""
