"""Structural pruning of the equivariant potential (see prune.py, docs/equivariant.md)."""
