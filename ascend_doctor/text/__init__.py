"""Text safety and formatting: secrets masked, control characters made printable, bounded JSON, number and version
parsing, units for people."""
