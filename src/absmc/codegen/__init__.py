"""Code generation from the IR: the plan both back ends follow (:mod:`absmc.codegen.plan`:
dispatch, timeouts and exclusive chains, array writes, intervals) and the generated-Python back
end (:mod:`absmc.codegen.python`: ``compile_system``). The C back end, which builds on the same
plan, is :mod:`absmc.native.cgen`. Imports ``ir`` only."""
