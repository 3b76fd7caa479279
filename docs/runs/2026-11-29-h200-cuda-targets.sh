#!/bin/bash
# Run on the GPU machine from the repository root: bash target/e55dev/device.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$OUT/device.log") 2>&1
START=$(date +%s)
el() { echo $(( $(date +%s) - START )); }
log() { echo "[$(date -u +%T) +$(el)s] $*"; }
log "checkout: $(pwd) $(git log -1 --format=%h 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader
echo "cores: $(nproc)"; nvcc --version | tail -2; cmake --version | head -1; python3 --version; gcc --version | head -1
echo "CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING-unset} CUDA_CACHE_DISABLE=${CUDA_CACHE_DISABLE-unset} CUDA_CACHE_PATH=${CUDA_CACHE_PATH-unset} CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE-unset}"
echo "## nvcc --list-gpu-arch"; nvcc --list-gpu-arch | paste -sd' '
echo "## nvcc --list-gpu-code"; nvcc --list-gpu-code | paste -sd' '

log "== 1. fixture"
mkdir -p /tmp/fx && cd /tmp/fx && cp "$D"/tiny_a.cu "$D"/tiny_b.cu .
G="-gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_120,code=[sm_120,compute_120]"
for v in plain compressed; do
  x=""; [ $v = compressed ] && x="-Xfatbin=-compress-all"
  n=libtiny-$v.so
  echo "+ nvcc -shared -Xcompiler -fPIC -O2 -cudart shared $G $x -o $n tiny_a.cu tiny_b.cu && strip $n"
  nvcc -shared -Xcompiler -fPIC -O2 -cudart shared $G $x -o $n tiny_a.cu tiny_b.cu && strip $n
  ls -l $n; readelf -SW $n | grep -i -A0 fatbin
  { echo "## cuobjdump --list-elf --list-ptx $n"; cuobjdump --list-elf --list-ptx $n; } | tee -a "$OUT/fixture-cuobjdump.txt"
  cp $n "$OUT/"
done

log "== 2. CTranslate2 4.7.1 (ct2rs 0.9.17), two builds that differ only in the CUDA targets"
cd /tmp && tar xzf "$D/ct2rs-0.9.17.crate" && S=/tmp/ct2rs-0.9.17/CTranslate2
python3 - "$S/CMakeLists.txt" <<'PY'
import sys; p = sys.argv[1]; s = open(p).read()
old = "  cuda_select_nvcc_arch_flags(ARCH_FLAGS ${CUDA_ARCH_LIST})\n"
assert s.count(old) == 1
s = s.replace(old, "  if(BENCH_ARCH_FLAGS)\n    set(ARCH_FLAGS ${BENCH_ARCH_FLAGS})\n  else()\n" + old + "  endif()\n")
open(p, "w").write(s)
PY
build() { # label, gencode
  ( t=$(date +%s)
    cmake -S $S -B /tmp/b-$1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/p-$1 -DCMAKE_INSTALL_LIBDIR=lib \
      -DWITH_CUDA=ON -DWITH_CUDNN=OFF -DCUDA_DYNAMIC_LOADING=ON -DWITH_MKL=OFF -DWITH_DNNL=OFF -DOPENMP_RUNTIME=COMP \
      -DBUILD_CLI=OFF -DENABLE_CPU_DISPATCH=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCUDA_NVCC_FLAGS=-Xfatbin=-compress-all "-DBENCH_ARCH_FLAGS=$2" > /tmp/conf-$1.log 2>&1 \
    && cmake --build /tmp/b-$1 -j 16 > /tmp/build-$1.log 2>&1 && cmake --install /tmp/b-$1 > /dev/null 2>&1
    echo "build $1 ($2): rc=$? $(( $(date +%s) - t )) s"; grep -m1 "NVCC compilation flags" /tmp/conf-$1.log; grep -m3 -A3 "Error" /tmp/conf-$1.log ) &
  PIDS="$PIDS $!"
}
PIDS=""
build ptx86 "-gencode=arch=compute_86,code=compute_86"
build sm90 "-gencode=arch=compute_90,code=sm_90"
wait $PIDS
for l in ptx86 sm90; do tail -3 /tmp/build-$l.log; ls -l /tmp/p-$l/lib/; done
{ for l in ptx86 sm90; do f=$(readlink -f /tmp/p-$l/lib/libctranslate2.so); echo "## $l: cuobjdump --list-elf --list-ptx $f"; cuobjdump --list-elf --list-ptx $f; done; } > "$OUT/ct2-cuobjdump.txt" 2>&1
grep -c . "$OUT/ct2-cuobjdump.txt"; grep -o "sm_[0-9]*\|compute_[0-9]*" "$OUT/ct2-cuobjdump.txt" | sort | uniq -c
log "== 3. python module (once; both libraries have the same API)"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$D"/*.whl
cd $S/python && CTRANSLATE2_ROOT=/tmp/p-sm90 python3 setup.py -q build_ext --inplace -j 16 > /tmp/ext.log 2>&1; echo "ext rc=$?"; tail -3 /tmp/ext.log
export PYTHONPATH=$S/python
log "== 4. tiny random Whisper"
LD_LIBRARY_PATH=/tmp/p-sm90/lib PYTHONPATH=/tmp/site:$S/python python3 "$D/numerics.py" make --out /tmp/model 2>&1 | grep -v Warning | tail -3
du -sh /tmp/model/ct2; ls /tmp/model/ct2
log "== 5. first load: cold JIT cache then warm, fresh process each"
unset CUDA_CACHE_DISABLE
cd /tmp
for i in 1 2 3; do
  for l in ptx86 sm90; do
    [ $(el) -gt ${LIMIT:-330} ] && { log "stop: time"; break 2; }
    c=/tmp/jit-$l-$i; rm -rf $c; mkdir -p $c
    for k in cold warm; do
      CUDA_CACHE_PATH=$c LD_LIBRARY_PATH=/tmp/p-$l/lib python3 "$D/bench.py" /tmp/model/ct2 $l $k 2>&1 | tee -a "$OUT/bench.jsonl"
      echo "   jit cache after $k: $(du -sb $c | cut -f1) bytes"
    done
  done
done
log done
