"""fixture: a vLLM tree shaped like the real one (names only)."""
