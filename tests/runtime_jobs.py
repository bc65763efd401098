"""Job functions for tests/test_runtime_sandbox.py (imported inside the sandbox)."""


def run_code(payload):
    """Execute payload["code"]; return what it left in the variable `result`."""
    scope = {"__name__": "__job__"}
    exec(payload["code"], scope)
    return scope.get("result")
