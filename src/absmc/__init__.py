"""absmc — a model checker that makes state spaces small by abstraction.

Layers (imports point down only): ``cli`` → ``report`` → ``engines`` → ``lang`` → ``logic`` →
``ir``. See ``docs/ARCHITECTURE.md``.
"""

__version__ = "0.1.0"
