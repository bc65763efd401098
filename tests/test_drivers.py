"""drivers.ProjectImports: which of a project's scripts reach which flagged files, read
from their imports (issue 19: the project's own scripts drive the code they call)."""

from __future__ import annotations

import os
import textwrap

from torchlint.runtime.drivers import ProjectImports

FILES = {
    "main.py": """
        import torch
        from trainer import Trainer
        from models.vgg import VGG

        if __name__ == "__main__":
            Trainer(VGG()).train()
    """,
    "trainer.py": """
        from utils import helpers
        import numpy as np
    """,
    "utils/__init__.py": "",
    "utils/helpers.py": """
        from .meters import AverageMeter
    """,
    "utils/meters.py": "",
    "models/__init__.py": "",
    "models/vgg.py": "",
    "plot.py": """
        import models

        if '__main__' == __name__:
            print(models)
    """,
    "library.py": """
        import trainer
    """,
    "test_trainer.py": """
        import trainer

        if __name__ == "__main__":
            pass
    """,
}


def project(tmp_path) -> ProjectImports:
    paths = []
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
        paths.append(str(path))
    return ProjectImports(paths, os.path.realpath(tmp_path))


def test_imports_resolve_to_the_projects_files(tmp_path) -> None:
    found = project(tmp_path)
    root = os.path.realpath(tmp_path)

    def named(paths) -> set[str]:
        return {os.path.relpath(path, root) for path in paths}

    assert named(found.imports(os.path.join(root, "main.py"))) == {"trainer.py", "models/__init__.py",
                                                                   "models/vgg.py"}
    assert named(found.imports(os.path.join(root, "trainer.py"))) == {"utils/__init__.py", "utils/helpers.py"}
    assert named(found.imports(os.path.join(root, "utils/helpers.py"))) == {"utils/meters.py"}
    # Scripts have a main block; tests and modules without one are not scripts.
    assert named(found.scripts) == {"main.py", "plot.py"}
    assert named(found.reached(os.path.join(root, "main.py"))) == {
        "main.py", "trainer.py", "models/__init__.py", "models/vgg.py", "utils/__init__.py", "utils/helpers.py",
        "utils/meters.py"}


def test_the_script_reaching_most_findings_drives_first(tmp_path) -> None:
    found = project(tmp_path)
    root = os.path.realpath(tmp_path)
    pending = {os.path.join(root, "utils/meters.py"): 3, os.path.join(root, "models/__init__.py"): 1,
               os.path.join(root, "library.py"): 5}
    drivers = [(os.path.relpath(script, root), sorted(os.path.relpath(f, root) for f in files))
               for script, files in found.drivers(pending)]
    # main.py reaches meters.py and models; nothing runs library.py; plot.py has nothing left.
    assert drivers == [("main.py", ["models/__init__.py", "utils/meters.py"])]
