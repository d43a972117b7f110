"""The model's context: in-memory history, token budget, compaction, repair for the wire."""
