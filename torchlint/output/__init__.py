"""Layer 6, output: reports in every format (``report``, ``formats``) and the rule
documentation (``docs``)."""
