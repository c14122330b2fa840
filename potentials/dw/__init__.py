"""DPLR deep-Wannier (DW) model: per-atom Wannier-centroid displacements."""
