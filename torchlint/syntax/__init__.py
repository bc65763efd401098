"""Layer 1, syntax: source text (reading, decoding, lines), the syntax tree torchlint's
rules walk (``cst``: libcst's node classes built from ``ast``; ``libcst_tree``: the same
from libcst's own parser), which parser builds it (``parsing``), and the walk.
Imports nothing else of torchlint."""
