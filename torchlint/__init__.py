"""torchlint: a linter for PyTorch autograd and aliasing mistakes."""

__version__ = "0.1.0"

# Where each rule's documentation lives (generated from the rule modules into docs/rules/).
DOCUMENTATION_URL = "https://github.com/torchlint/torchlint/blob/main/docs/rules/{code}-{name}.md"
