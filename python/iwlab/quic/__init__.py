"""QUIC: what stacks start with (`profiles`: their initial-window defaults, read from their sources)."""
