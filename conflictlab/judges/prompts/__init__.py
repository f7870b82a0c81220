"""The judge prompts of generic metrics, one module per judge family (a
benchmark's own judge prompts live in its package: CONFLICTS' in
:mod:`conflictlab.conflicts.judge_prompts`).

A template's name carries its version (``..._v1``): the judge cache is keyed
by it, so editing a template must bump the version, and only the replies of
the edited template are asked again.
"""
