// Two translation units, so the library's .nv_fatbin holds two fatbins (as CTranslate2's does).
extern "C" __global__ void tiny_scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
extern "C" void tiny_scale_launch(float *x, float a, int n) {
  tiny_scale<<<(n + 255) / 256, 256>>>(x, a, n);
}
