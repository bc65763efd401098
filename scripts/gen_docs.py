"""Regenerate the README's rule table and docs/rules/*.md from the rule modules."""

from pathlib import Path

from torchlint.output.docs import write

for path in write(Path(__file__).resolve().parent.parent):
    print(f"updated {path}")
