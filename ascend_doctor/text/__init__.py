"""Text safety and formatting: secrets masked, control characters made printable, bounded JSON and number parsing, units for people."""
