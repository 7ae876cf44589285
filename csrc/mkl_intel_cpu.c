/* critwin's MKL AVX-512 lever (critwin_lib/mkl_lever.py): MKL chooses its AVX-512 sgemm kernels only on a CPU
   it identifies as Intel. Preloaded (LD_PRELOAD) into the processes that train, these two definitions take the
   place of MKL's CPU-identification helpers, so that on an AMD CPU with AVX-512F it uses them too. */
int mkl_serv_intel_cpu_true(void) { return 1; }
int mkl_serv_intel_cpu(void) { return 1; }
