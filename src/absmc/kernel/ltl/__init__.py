"""Linear-time properties: Büchi automata (:mod:`~absmc.kernel.ltl.buchi`), the product with a
model (:mod:`~absmc.kernel.ltl.product`), weak fairness (:mod:`~absmc.kernel.ltl.fairness`),
one property's check (:mod:`~absmc.kernel.ltl.ltl`) and lassos of abstract Systems
(:mod:`~absmc.kernel.ltl.lasso`)."""
