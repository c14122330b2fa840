"""MatRIS-style invariant model (separable three-body attention)."""
