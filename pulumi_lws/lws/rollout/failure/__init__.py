"""Failure handling: restart policies, restart budget and backoff, retention, termination policy."""
