"""CONFLICTS ("DRAGged into Conflicts", google-research-datasets/rag_conflicts):
the loader, citation parsing, the prompts of its two tasks and the Task 1
read-out. The rules that run it are not written yet."""
