"""NQ-Swap: entity-substitution knowledge conflicts (Longpre et al. 2021, the set released as ``pminervini/NQ-Swap``).

Modules: :mod:`~conflictlab.nq_swap.dataset` (the released records, validated, into one table),
:mod:`~conflictlab.nq_swap.prompts` (closed-book, with-context and context-faithful prompts),
:mod:`~conflictlab.nq_swap.metrics` (SQuAD exact match against both answers, the memorisation ratio),
:mod:`~conflictlab.nq_swap.steering` (cross-fitted context-aware steering directions),
:mod:`~conflictlab.nq_swap.generation` (one model's answers under every setting and method),
:mod:`~conflictlab.nq_swap.report` (the table and figure) and
`conflictlab/papers/nq_swap.yaml` (the CAD and AdaCAD papers' NQ-Swap rows).
"""
