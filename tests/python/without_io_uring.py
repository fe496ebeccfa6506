#!/usr/bin/python3
"""Runs a command where io_uring cannot be set up, as in a container under Docker's default
seccomp profile: a seccomp filter makes io_uring_setup fail with EPERM and lets every other system
call through. Usage: without_io_uring.py COMMAND [ARGS...]. x86-64 only (the filter checks)."""
import ctypes
import os
import struct
import sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
AUDIT_ARCH_X86_64 = 0xC000003E
NR_IO_URING_SETUP = 425
RET_ALLOW, RET_ERRNO, RET_KILL = 0x7FFF0000, 0x00050000, 0x00000000
EPERM = 1
LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K


def instruction(code, jump_true, jump_false, k):
    return struct.pack("HBBI", code, jump_true, jump_false, k)


# seccomp_data: nr at offset 0, arch at offset 4.
PROGRAM = b"".join([
    instruction(LD_W_ABS, 0, 0, 4),
    instruction(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
    instruction(RET_K, 0, 0, RET_KILL),
    instruction(LD_W_ABS, 0, 0, 0),
    instruction(JEQ_K, 0, 1, NR_IO_URING_SETUP),
    instruction(RET_K, 0, 0, RET_ERRNO | EPERM),
    instruction(RET_K, 0, 0, RET_ALLOW),
])


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: without_io_uring.py COMMAND [ARGS...]")
    libc = ctypes.CDLL(None, use_errno=True)
    program = SockFprog(len(PROGRAM) // 8, PROGRAM)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        sys.exit("without_io_uring.py: the seccomp filter was refused: " + os.strerror(ctypes.get_errno()))
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
