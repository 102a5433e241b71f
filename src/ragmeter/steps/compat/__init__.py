"""Drop-in replacements for graphrag-eval's entry points (change one import)."""
