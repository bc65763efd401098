"""The runtime check (``torchlint check --runtime``): run flagged code under real torch.

``check`` plans and runs the jobs and turns their results into verdicts; ``monitor``
is the code that runs inside each sandboxed job (it imports torch); ``sandbox`` is
the fork server and its isolation.  Nothing here is imported by the linter itself.
"""
