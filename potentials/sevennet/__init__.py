"""SevenNet-0 (PyPI ``sevenn``) loading, structural pruning, fine-tuning and export
(issue 18). Run with the sevenn virtual environment's Python
(``$AISCI_PEERS/sevenn/bin/python``); derived models go to the cache folder
(``cache_dir()``), never into the repository (SevenNet licence)."""
