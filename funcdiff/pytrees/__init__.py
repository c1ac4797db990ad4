"""Pytrees: the registry of container types and the tree structure (PyTreeDef)."""
