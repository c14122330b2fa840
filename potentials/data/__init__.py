"""Training data for the water potentials: box generator and q-TIP4P/F data set."""
