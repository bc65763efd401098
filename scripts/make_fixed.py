"""Write `<fixture>.fixed` for fix fixtures: what `--fix --unsafe-fixes` (with only the
folder's rule selected) makes of each given `bad_*.py`.  Read the result before you
commit it: the test compares against it, so it must be what the fix *should* produce.

    python scripts/make_fixed.py fixtures/TL203-data-index-scalar/bad_reductions.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main(paths: list[str]) -> None:
    for name in paths:
        source = Path(name)
        code = source.parent.name.split("-")[0]
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / source.name
            shutil.copyfile(source, target)
            subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--select", code,
                            "--fix", "--unsafe-fixes", "--quiet", str(target)], cwd=folder,
                           stdout=subprocess.DEVNULL, check=False)
            shutil.copyfile(target, source.with_suffix(".fixed"))
        print(f"{source.with_suffix('.fixed')}")


if __name__ == "__main__":
    main(sys.argv[1:])
