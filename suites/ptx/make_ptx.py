#!/usr/bin/env python3
"""Writes relu_vec4.ptx from relu_vec4.cu with NVRTC, for compute_80 (so the driver
JIT-compiles it for sm_80 and every later GPU).

nvcc and Triton are not on the machine this example was made on; NVRTC's PTX is what
`nvcc -ptx -arch=compute_80 relu_vec4.cu` writes, and the suite treats it as it would PTX
from Triton (`kernel.asm["ptx"]`) or Numba: loaded by the driver, no NVRTC at run time.

Run from the repository root, with NVRTC from `ci/test.sh` on the library path:
    LD_LIBRARY_PATH=target/nvrtc/nvidia/cu13/lib python3 suites/ptx/make_ptx.py
"""
import ctypes
import pathlib

HERE = pathlib.Path(__file__).parent
ARCH = b"--gpu-architecture=compute_80"


def main():
    nvrtc = ctypes.CDLL("libnvrtc.so.13")
    src = (HERE / "relu_vec4.cu").read_bytes()
    prog = ctypes.c_void_p()
    check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"relu_vec4.cu", 0, None, None))
    options = (ctypes.c_char_p * 2)(ARCH, b"--std=c++17")
    status = nvrtc.nvrtcCompileProgram(prog, 2, options)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if status != 0:
        raise SystemExit(f"NVRTC failed:\n{log.value.decode()}")
    check(nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size)))
    ptx = ctypes.create_string_buffer(size.value)
    check(nvrtc.nvrtcGetPTX(prog, ptx))
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    out = HERE / "relu_vec4.ptx"
    out.write_bytes(ptx.value)
    print(f"wrote {out} ({len(ptx.value)} bytes)")


def check(result):
    if result != 0:
        raise SystemExit(f"NVRTC call failed with code {result}")


if __name__ == "__main__":
    main()
