"""MemoTrap (Liu and Liu, Inverse Scaling Prize 2023): prompts whose instruction asks for an ending other than the
one a model has memorised, read as accuracy by the log-likelihood of two candidate continuations, with and without
the contrastive decoding methods (CAD, AdaCAD) that treat the instruction as the context.

* :mod:`conflictlab.memotrap.dataset`: the released CSV files -> one table, each prompt split into its instruction
  (the context) and the rest (the input);
* :mod:`conflictlab.memotrap.scoring`: the classes' log-likelihoods under greedy reading, CAD and AdaCAD;
* :mod:`conflictlab.memotrap.tables`: accuracy per file with its interval, each method against greedy reading;
* `conflictlab/papers/memotrap.yaml`: what the CAD and AdaCAD papers report on MemoTrap;
  :mod:`conflictlab.memotrap.claims` checks their sentences.
"""
