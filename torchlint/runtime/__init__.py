"""Layer 7, the runtime check (``torchlint check --runtime``): run flagged code under
real torch.

``check`` runs the jobs and turns their results into verdicts, ``plan`` reads what to
watch in each file, ``monitor`` is the code that runs inside each sandboxed job (it
imports torch), and ``sandbox``/``server`` are the fork server and its isolation.
Nothing here is imported by the linter itself.
"""
