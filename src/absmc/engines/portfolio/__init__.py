"""``--method auto``: a portfolio of the registered engines run in parallel processes.

* :mod:`.members` — which engines take part for which properties (from their
  :class:`~absmc.engines.engine.Capabilities` and :meth:`Engine.for_portfolio
  <absmc.engines.engine.Engine.for_portfolio>`), and each one's share of the limits;
* :mod:`.workers` — the child processes (one per engine), stopped as soon as every property
  has a conclusive answer, on Ctrl-C and at ``--timeout``;
* :mod:`.decide` — the soundness rule: ``holds`` only from an engine that proves,
  ``violated`` only with a trace replayed again here on the concrete semantics, and a
  disagreement between two accepted answers is a :class:`Disagreement` (an internal error,
  never a vote).

The portfolio does not name engines: an engine that joins the registry takes part by its
capabilities. It is not an engine package of its own kind — it imports none; the registry
hands it the candidate engines (:func:`portfolio_engine`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from absmc.engines.engine import lazy_exports
from absmc.engines.portfolio.engine import Disagreement, PortfolioOptions, portfolio_engine

if TYPE_CHECKING:
    from absmc.engines.portfolio.check import check_portfolio

__all__ = ["Disagreement", "PortfolioOptions", "check_portfolio", "portfolio_engine"]

__getattr__ = lazy_exports(__name__, {"check_portfolio": "absmc.engines.portfolio.check"})
