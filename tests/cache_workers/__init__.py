"""Helper scripts run as separate processes by ``tests/test_cache.py``."""
