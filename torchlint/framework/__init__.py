"""Layer 3, the rule framework: what a rule is (``rule``), what it sees of a file
(``context``: a module analysis, the findings, the helpers rules share: ``edits``,
``aliases``, ``data_attribute``, ``writes``), what it reports (``diagnostics``), how
findings are suppressed (``noqa``), what a rule says of a run (``verdicts``), and the
rule catalogue.  Rules import everything they use from ``api``."""
