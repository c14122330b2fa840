"""DPA3-style line-graph model."""
