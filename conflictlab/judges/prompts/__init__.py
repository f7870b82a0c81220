"""Every judge prompt, one module per judge family.

A template's name carries its version (``..._v1``): the judge cache is keyed
by it, so editing a template must bump the version, and only the replies of
the edited template are asked again.
"""
