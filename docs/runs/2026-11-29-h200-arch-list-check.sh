#!/bin/bash
# The cuda variant's CUDA_ARCH_LIST for CUDA 13 through CTranslate2's CMake with patch 0005:
# configure, compile the smallest .cu file, list its fatbin.
set -u
D=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$OUT/arch-check.log") 2>&1
cd /tmp && tar xzf "$D/ct2rs-0.9.17.crate" && S=/tmp/ct2rs-0.9.17/CTranslate2
(cd $S && patch -p1 < "$D/p0005.patch")
L="7.5;8.0;8.6;8.9;9.0;10.0;12.0;12.0+PTX"
cmake -S $S -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DWITH_CUDA=ON -DWITH_CUDNN=OFF \
  -DCUDA_DYNAMIC_LOADING=ON -DWITH_MKL=OFF -DWITH_DNNL=OFF -DOPENMP_RUNTIME=COMP -DENABLE_CPU_DISPATCH=OFF -DBUILD_CLI=OFF \
  -DCUDA_NVCC_FLAGS=-Xfatbin=-compress-all "-DCUDA_ARCH_LIST=$L" > /tmp/conf.log 2>&1; echo "configure rc=$?"
grep "NVCC compilation flags" /tmp/conf.log; grep -m3 -A3 "Error" /tmp/conf.log
small=$(cd $S && ls -S src/cuda/*.cu src/ops/*.cu | tail -1); echo "smallest .cu: $small"
t=$(ninja -C /tmp/b -t targets all | grep -o "^[^:]*generated_$(basename $small).o" | head -1); echo "target: $t"
time ninja -C /tmp/b "$t" > /tmp/n.log 2>&1; echo "ninja rc=$?"; tail -2 /tmp/n.log
ls -l /tmp/b/$t; echo "## cuobjdump --list-elf --list-ptx $(basename $t)"; cuobjdump --list-elf --list-ptx /tmp/b/$t
cp /tmp/b/$t "$OUT/arch-check.o"
