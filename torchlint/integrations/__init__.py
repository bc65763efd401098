"""Layer 8, integrations: the command line (``cli``), the language server (``lsp``) and
the flake8 plugin.  The top: nothing imports them (``python -m torchlint`` runs ``cli``)."""
