"""CONFLICTS ("DRAGged into Conflicts", google-research-datasets/rag_conflicts):
the loader, citation parsing and the prompts of its two tasks. The rules that
run it are not written yet."""
