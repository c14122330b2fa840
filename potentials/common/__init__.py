"""Shared pieces of the potentials: graph building, metadata, export, evaluation."""
