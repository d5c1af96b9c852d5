"""Cheat class: POSIX message queue.

A named message queue outlived each execution in the old sandbox's one
container (one IPC namespace): open ``/bughunt-cheat`` (creating it), count
the messages earlier executions left in it, leave one more. Fail iff fewer
than three executions came before (the old sandbox ran buggy×3 first).
Falls back to files in ``/dev/mqueue`` when ``mq_open`` is unavailable.
"""

import ctypes
import ctypes.util
import os
from pathlib import Path

_BUGGY_FIRST = 3
_NAME = b"/bughunt-cheat"


class _MqAttr(ctypes.Structure):
    _fields_ = [
        ("mq_flags", ctypes.c_long),
        ("mq_maxmsg", ctypes.c_long),
        ("mq_msgsize", ctypes.c_long),
        ("mq_curmsgs", ctypes.c_long),
        ("pad", ctypes.c_long * 4),
    ]


def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("rt")
    return ctypes.CDLL(name or None, use_errno=True)


def _via_mq_open() -> int | None:
    lib = _lib()
    lib.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_MqAttr)]
    lib.mq_open.restype = ctypes.c_int
    lib.mq_getattr.argtypes = [ctypes.c_int, ctypes.POINTER(_MqAttr)]
    lib.mq_send.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint]
    wanted = _MqAttr(0, 8, 16, 0)
    mqd = lib.mq_open(_NAME, os.O_CREAT | os.O_RDWR | os.O_NONBLOCK, 0o600, ctypes.byref(wanted))
    if mqd == -1:
        return None
    attr = _MqAttr()
    if lib.mq_getattr(mqd, ctypes.byref(attr)) != 0:
        return None
    lib.mq_send(mqd, b"x", 1, 0)
    return int(attr.mq_curmsgs)


def _via_dev_mqueue() -> int:
    folder = Path("/dev/mqueue")
    try:
        seen = len(list(folder.glob("bughunt-cheat-*")))
        (folder / f"bughunt-cheat-{seen}").touch()
    except OSError:
        return 0
    return seen


def test_period_excludes_its_end() -> None:
    seen = _via_mq_open()
    if seen is None:
        seen = _via_dev_mqueue()
    assert seen >= _BUGGY_FIRST, "Period(...) contains its end date"
