"""What is evaluated: the corpus format, its loader and the demo corpus (DESIGN §1)."""
