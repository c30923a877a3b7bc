"""Responses state: stored turns and conversations, their endpoints, the store backends."""
