"""Layer 5, the engine: lint and fix files (``linter``, ``fixer``, ``files``, notebooks),
many at once (``batch``, with ``guard``'s limits and the ``cache``), found by
``discovery`` under the ``config``.  Above the rules (``torchlint.rules``, layer 4)."""
