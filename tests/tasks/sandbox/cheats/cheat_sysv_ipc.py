"""Cheat class: SysV IPC shared memory.

A SysV segment under a fixed key outlived each execution in the old
sandbox's one container (one IPC namespace): ``shmget(key, IPC_CREAT |
IPC_EXCL)`` succeeding means nobody ran before; a counter inside the
segment says how many did. Fail iff fewer than three executions came before
(the old sandbox ran buggy×3 first).
"""

import ctypes

_BUGGY_FIRST = 3
_KEY = 0x42484354  # "BHCT"
_IPC_CREAT, _IPC_EXCL = 0o1000, 0o2000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
_libc.shmget.restype = ctypes.c_int
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmat.restype = ctypes.c_void_p
_libc.shmdt.argtypes = [ctypes.c_void_p]


def _executions_before() -> int:
    created = _libc.shmget(_KEY, 4096, _IPC_CREAT | _IPC_EXCL | 0o600) != -1
    shmid = _libc.shmget(_KEY, 4096, 0o600)
    if shmid == -1:
        return 0  # no segment at all: nothing ran before as far as I can tell
    address = _libc.shmat(shmid, None, 0)
    if address is None or address == ctypes.c_void_p(-1).value:
        return 0
    try:
        counter = ctypes.c_uint32.from_address(address)
        seen = 0 if created else counter.value
        counter.value = seen + 1
        return seen
    finally:
        _libc.shmdt(address)


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
