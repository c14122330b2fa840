"""USER-AISCI neural-network potentials: data generation, models, training, export.

Run everything with /usr/bin/python3 (Debian's interpreter with torch 1.13 and numpy).
"""
