#!/usr/bin/env bash
# Prepares a device check on a lent GPU machine that has no LLVM (the
# workplace's H100/H200 machines: the image has CUDA 13, python3 with torch
# and JAX, no OpenBLAS, Open MPI, oneDNN or LLVM): compiles the examples'
# executables here (the specs bench/peers.sh times, with the generated
# CUDA kernels, and the f64 ConvNet of test/metac/Inputs/maml_fm64.meta),
# packs them with metart-cuda-tests and their libraries (bench/gpu_bundle.sh)
# and copies the Fashion-MNIST files, all under DIR (default .dev, which
# .git/info/exclude should name), ready to travel with the command:
#   bench/gpu_prepare.sh [DIR]
# then, on the GPU machine, from the repository's root (carry DIR):
#   R=$PWD; mkdir -p /usr/share/datasets/fashion-mnist &&
#   cp DIR/fm/*.gz /usr/share/datasets/fashion-mnist/ && cd /tmp &&
#   tar xJf $R/DIR/gb.tar.xz && cd $R &&
#   bash bench/gpu_fusion.sh /tmp/gb /tmp/fo | tee $OUT/fusion.log
# (about 60 s of device time; bench/peers.sh cuda with PEERS_PYTHON=python3
# and METAC_*_EXE=/tmp/gb/bin/... adds the peers). The whole of DIR is about
# 55 MiB of the 64 MiB a call may carry.
set -euo pipefail
source "$(dirname "$0")/metac-binary.sh"
dir=${1:-$root/.dev}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/bench/peers.sh" specs "$work" >/dev/null
cp "$root/test/metac/Inputs/maml_fm64.meta" "$work/maml64.meta"
for example in sinusoid maml protonet maml64; do
  "$metac" "$work/$example.meta" --device-kernels=on -o "$work/$example"
done
# Two ranks for the NCCL watchdog's check (gpu_fusion.sh, nccl_hang.sh).
"$metac" "$root/test/metac/distributed/Inputs/sine8.meta" --mesh task=2 \
  -o "$work/sine2"
"$root/scripts/build.sh" metart-cuda-tests >/dev/null
mkdir -p "$dir/fm"
"$root/bench/gpu_bundle.sh" "$work/gb" "$build/bin/metart-cuda-tests" \
  "$work/sinusoid" "$work/maml" "$work/protonet" "$work/maml64" \
  "$work/sine2" >/dev/null
mv "$work/gb.tar.xz" "$dir/gb.tar.xz"
cp /usr/share/datasets/fashion-mnist/*.gz "$dir/fm/"
du -sh "$dir"
