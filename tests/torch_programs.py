"""Run a test's small torch program as `python PROGRAM ARGS` would, each in a process of its own.

Importing torch costs about three seconds of CPU, and the suite runs hundreds of programs that
show a bug under torch and twins that must not: paid each time, that was a third of the
suite's time.  So a server per test process imports torch (and numpy) once and forks a child
per program.  The child is set up as the interpreter sets up `python PROGRAM`: the working
folder, `sys.argv`, the program's folder first on `sys.path`, stdin from /dev/null, stdout and
stderr to files, `__name__ == "__main__"`, an uncaught exception printed with its traceback and
exit status 1, `sys.exit` codes as given.  The only difference is that torch and numpy are
already in `sys.modules`, as they would be after the program's own first line.
Without torch, or when `TORCHLINT_TESTS_FRESH_PYTHON=1`, every program gets a fresh interpreter.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

_SERVER = r'''
import json, os, sys, traceback

import torch  # paid once here, instead of once per program
try:
    import numpy  # noqa: F401
except ImportError:
    pass


def run(request):
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        for fd, name in ((1, request["stdout"]), (2, request["stderr"])):
            opened = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(os.devnull)
        os.chdir(request["cwd"])
        sys.argv = list(request["argv"])
        script = os.path.abspath(sys.argv[0])
        sys.path[0] = os.path.dirname(script)
        import builtins, io, types
        main = types.ModuleType("__main__")
        main.__file__, main.__builtins__, main.__cached__ = script, builtins, None
        sys.modules["__main__"] = main
        with io.open_code(script) as source:
            program = compile(source.read(), script, "exec")
        exec(program, main.__dict__)
        code = 0
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException as error:
        # as the interpreter prints it: from the program's frame, without this function's
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        code = 1
    finally:
        try:
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)


for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        run(request)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
'''


class _Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pending = b""  # read from the server, not yet a whole line
        atexit.register(self.close)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def _answer(self, timeout: float | None) -> dict | None:
        # Unbuffered reads: a line left in a file object's buffer would be invisible to select.
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("the program server of the tests stopped")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, argv: list[str], cwd: str, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            request = {"argv": argv, "cwd": cwd, "stdout": str(out), "stderr": str(err)}
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            pid = self._answer(30)["pid"]
            answer = self._answer(timeout)
            if answer is None:
                os.kill(pid, signal.SIGKILL)
                self._answer(30)
                raise subprocess.TimeoutExpired(argv, timeout, _read(out), _read(err))
            return subprocess.CompletedProcess([sys.executable, *argv], answer["status"], _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace") if path.exists() else ""


_server: _Server | None = None


@functools.cache
def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def run_program(program: str | Path, *args: str, cwd: str | Path | None = None,
                timeout: float = 180) -> subprocess.CompletedProcess:
    """`python PROGRAM ARGS` in ``cwd``, its output as text: a CompletedProcess."""
    global _server
    cwd = str(cwd if cwd is not None else os.getcwd())
    argv = [str(program), *args]
    if os.environ.get("TORCHLINT_TESTS_FRESH_PYTHON") == "1" or not _has_torch():
        return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if _server is None or _server.process.poll() is not None:
        _server = _Server()
    return _server.run(argv, cwd, timeout)
