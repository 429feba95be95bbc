"""The seed studies as functions returning data (no printing, no files)."""
