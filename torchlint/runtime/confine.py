"""What a job may not do even inside its namespaces: a seccomp filter, and Landlock where
the machine gives no mount namespace.

The filter (installed in the job just before user code runs, after ``no_new_privs``):

- ``socket()`` only for ``AF_UNIX``, ``AF_NETLINK`` with ``NETLINK_ROUTE`` (what the C
  library asks about interfaces) and, inside a network namespace of its own, ``AF_INET`` and
  ``AF_INET6``.  Every other family is refused: ``AF_VSOCK`` reaches a virtual machine's
  host, ``AF_PACKET``, ``AF_BLUETOOTH``, ``AF_ALG`` and the other netlink protocols reach the
  kernel, and none is scoped by a network namespace.
- with ``strict_unix`` (when the job's view of the filesystem could not be cut down to
  what it needs, or it shares the machine's network namespace and so its abstract socket
  names): no ``AF_UNIX`` socket of its own either; ``socketpair(AF_UNIX, SOCK_STREAM)``
  stays, which cannot be pointed at an address, for ``multiprocessing`` pipes.
- no ``io_uring`` (its operations open and connect sockets where this filter cannot see),
  no ``ptrace``, ``process_vm_readv``/``writev`` or ``pidfd_getfd`` (other processes'
  memory and files), no kernel keyrings (``keyctl``: the user's stored secrets), no
  ``bpf``, ``perf_event_open`` or ``userfaultfd``, no new namespaces (``unshare``, ``setns``,
  ``clone`` with a namespace flag; ``clone3`` answers ENOSYS so that the C library falls
  back to ``clone``), no ``mount`` of any kind, and none of the administration calls.
- a system call of another architecture (32-bit calls on x86-64) is refused.

Everything refused fails with ``EPERM`` ("Operation not permitted"), so user code sees an
ordinary ``PermissionError``.  Only x86-64 and AArch64 are known; elsewhere nothing is
installed and ``install_filter`` says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
import struct
from typing import Iterable, Iterator, Optional

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE, SOCK_STREAM, SOCK_TYPE_MASK = 0, 1, 0xF
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

# name -> (x86-64 number, AArch64 number)
_CALLS = {
    "socket": (41, 198), "socketpair": (53, 199), "clone": (56, 220), "clone3": (435, 435),
}
_REFUSED = {
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "unshare": (272, 97), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "acct": (163, 89), "swapon": (167, 224),
    "swapoff": (168, 225), "reboot": (169, 142), "sethostname": (170, 161), "setdomainname": (171, 162),
    "quotactl": (179, 60),
    # A user's inotify and fanotify instances are counted across user namespaces: a job would take
    # them from the user's editor and file watchers.  (AArch64 has inotify_init1 only: 26 twice.)
    "inotify_init": (253, 26), "inotify_init1": (294, 26), "fanotify_init": (300, 262),
}
_ARCHES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1), "arm64": (0xC00000B7, 1)}

# Classic BPF
_LD_W_ABS, _JEQ, _JGE, _JSET, _AND, _RET = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_NR, _ARCH = 0, 4


def _arg(index: int) -> int:
    """Offset of the low 32 bits of argument ``index`` in ``struct seccomp_data`` (little-endian)."""
    return 16 + 8 * index


class _Program:
    """A classic BPF program with jumps to labels, resolved when it is assembled."""

    def __init__(self):
        self.code: list[tuple] = []  # (opcode, true label or None, false label or None, k)
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, None, None, offset))

    def mask(self, bits: int) -> None:
        self.code.append((_AND, None, None, bits))

    def jump(self, opcode: int, k: int, true: Optional[str] = None, false: Optional[str] = None) -> None:
        """Go to ``true`` or ``false`` (None: the next instruction)."""
        self.code.append((opcode, true, false, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET, None, None, value))

    def assemble(self) -> bytes:
        out = []
        for position, (opcode, true, false, k) in enumerate(self.code):
            offsets = [0 if target is None else self.labels[target] - position - 1 for target in (true, false)]
            if any(not 0 <= offset <= 255 for offset in offsets):
                raise ValueError("seccomp program: jump out of range")
            out.append(struct.pack("<HBBI", opcode, offsets[0], offsets[1], k & 0xFFFFFFFF))
        return b"".join(out)


def filter_program(machine: str, network_isolated: bool, strict_unix: bool) -> bytes:
    """The filter for ``machine`` (``platform.machine()``), as BPF bytes."""
    audit_arch, column = _ARCHES[machine]
    number = lambda name: (_CALLS.get(name) or _REFUSED[name])[column]
    refuse, allow = _ERRNO | errno.EPERM, _ALLOW
    p = _Program()
    p.load(_ARCH)
    p.jump(_JEQ, audit_arch, false="refuse")
    p.load(_NR)
    if column == 0:
        p.jump(_JGE, 0x40000000, true="refuse")  # the x32 ABI
    p.jump(_JEQ, number("socket"), true="socket")
    p.jump(_JEQ, number("socketpair"), true="socketpair")
    p.jump(_JEQ, number("clone"), true="clone")
    p.jump(_JEQ, number("clone3"), true="nosys")
    for name in _REFUSED:
        p.jump(_JEQ, number(name), true="refuse")
    p.ret(allow)

    p.label("socket")
    p.load(_arg(0))
    p.jump(_JEQ, AF_UNIX, true="refuse" if strict_unix else "allow")
    for family in (AF_INET, AF_INET6):
        p.jump(_JEQ, family, true="allow" if network_isolated else "refuse")
    p.jump(_JEQ, AF_NETLINK, false="refuse")
    p.load(_arg(2))
    p.jump(_JEQ, NETLINK_ROUTE, true="allow", false="refuse")

    p.label("socketpair")
    p.load(_arg(0))
    p.jump(_JEQ, AF_UNIX, false="refuse")
    if strict_unix:
        p.load(_arg(1))
        p.mask(SOCK_TYPE_MASK)
        p.jump(_JEQ, SOCK_STREAM, false="refuse")
    p.ret(allow)

    p.label("clone")
    p.load(_arg(0))
    p.jump(_JSET, CLONE_NAMESPACE_FLAGS, true="refuse")
    p.ret(allow)

    p.label("allow")
    p.ret(allow)
    p.label("nosys")
    p.ret(_ERRNO | errno.ENOSYS)
    p.label("refuse")
    p.ret(refuse)
    return p.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install_filter(network_isolated: bool, strict_unix: bool) -> Optional[str]:
    """Install the filter on this thread (and what it starts); None, or why it could not be."""
    machine = platform.machine().lower()
    if machine not in _ARCHES:
        return f"no system call filter on this architecture ({machine})"
    program = filter_program(machine, network_isolated, strict_unix)
    fprog = _SockFprog(len(program) // 8, program)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no system call filter (no_new_privs: {os.strerror(ctypes.get_errno())})"
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"no system call filter (seccomp: {os.strerror(ctypes.get_errno())})"
    return None


# ----------------------------------------------------------------------------------------------
# Landlock: limits on the filesystem (and TCP) that need no privilege, for machines where the
# job cannot have a mount namespace of its own.

_SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "arm64": (444, 445, 446)}
_FS_READ = (1 << 0) | (1 << 2) | (1 << 3)  # execute, read file, read directory
_READ_DIR = 1 << 3
_FS_ALL_V1 = (1 << 13) - 1
_FS_BY_ABI = {1: _FS_ALL_V1, 2: _FS_ALL_V1 | 1 << 13, 3: _FS_ALL_V1 | 3 << 13}  # + refer, + truncate
_NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals outside the domain (ABI 6)
_RULE_PATH_BENEATH = 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers (0: none)."""
    calls = _SYS_LANDLOCK.get(platform.machine().lower())
    if calls is None:
        return 0
    version = _libc.syscall(calls[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # ..._VERSION
    return max(version, 0)


def restrict_filesystem(readable: Iterable[str], writable: Iterable[str],
                        hidden: Iterable[str] = ()) -> Optional[str]:
    """Allow this process (and what it starts) to read only ``readable`` but ``hidden``, and
    to change only ``writable``; refuse TCP and, where the kernel can, signals and abstract
    sockets outside.  None, or why it could not be done."""
    abi = landlock_abi()
    if abi < 1:
        return "no Landlock in this kernel"
    create, add_rule, restrict = _SYS_LANDLOCK[platform.machine().lower()]
    handled = _FS_BY_ABI.get(abi, _FS_BY_ABI[3] | (1 << 15 if abi >= 5 else 0))
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    attr = _RulesetAttr(handled, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    ruleset = _libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"no Landlock ruleset ({os.strerror(ctypes.get_errno())})"
    hidden = sorted(set(hidden))
    rules = [rule for path in readable for rule in _without(path, hidden)]
    rules += [(path, handled) for path in writable]
    try:
        for path, access in rules:
            try:
                # A rule is never put on what a link points to: a project's `home -> ~` would
                # open the home folder to the job.
                descriptor = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
                if kind == stat.S_IFLNK:
                    continue
                allowed = access if kind == stat.S_IFDIR else access & _FILE_ACCESS
                rule = _PathBeneathAttr(allowed & handled, descriptor)
                if _libc.syscall(add_rule, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                    return f"Landlock rule for {path} refused ({os.strerror(ctypes.get_errno())})"
            finally:
                os.close(descriptor)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or _libc.syscall(restrict, ruleset, 0) != 0:
            return f"Landlock not applied ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return None


def _without(tree: str, hidden: list[str]) -> Iterator[tuple[str, int]]:
    """Rules to read ``tree`` but the ``hidden`` paths below it: Landlock only allows, so the
    folders on the way to a hidden path may only be listed, and their other entries are
    allowed one by one."""
    below = [path for path in hidden if path.startswith(tree.rstrip(os.sep) + os.sep)]
    if tree in hidden:
        return
    if not below:
        yield tree, _FS_READ
        return
    yield tree, _READ_DIR
    try:
        with os.scandir(tree) as entries:
            children = [entry.path for entry in entries]
    except OSError:
        return
    for child in children:
        yield from _without(child, below)


# What a rule on a file (not a folder) may grant: execute, write, read, truncate, ioctl.
_FILE_ACCESS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)


# What of /proc describes the machine rather than a process: the C library, Python and torch
# read the CPUs (cpuinfo, stat), the memory (meminfo) and kernel settings (sys: overcommit_memory).
_PROC_MACHINE = ("cpuinfo", "meminfo", "stat", "sys", "filesystems", "version", "uptime", "loadavg")


def own_proc() -> list[str]:
    """What of /proc a job confined by Landlock may read: its own process's folder (and its
    threads') and what describes the machine, never another process's folder (a command line
    can carry a token).  The folder is kept open, across exec too: a rule holds the folder as
    it is now, and /proc makes a new one, which no rule names, once an unused one has been
    dropped from the kernel's cache."""
    own = os.path.join("/proc", os.readlink("/proc/self"))  # as /proc numbers it, whatever our pid namespace
    os.set_inheritable(os.open(own, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW), True)
    return [own, *(os.path.join("/proc", name) for name in _PROC_MACHINE)]
