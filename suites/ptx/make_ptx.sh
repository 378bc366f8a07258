#!/usr/bin/env bash
# Writes relu_vec4.ptx from relu_vec4.cu with nvcc, for compute_80 (the driver JIT-compiles it
# for sm_80 and every later GPU). The committed file was made this way on an H200 machine with
# CUDA 13.0 (nvcc V13.0.88). Without nvcc, make_ptx.py writes the same kind of PTX with NVRTC.
# Run from the repository root: suites/ptx/make_ptx.sh
set -euo pipefail
cd "$(dirname "$0")"
nvcc -ptx -arch=compute_80 relu_vec4.cu -o relu_vec4.ptx
echo "wrote $(pwd)/relu_vec4.ptx"
