"""framework package."""
