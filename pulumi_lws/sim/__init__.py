"""See module docstrings."""
