"""Ordinal identity (leader StatefulSet): upstream rollingUpdateParameters, group state, predictions, per-pod labels."""
