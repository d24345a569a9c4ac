"""Our FlyDSL kernels, compiled compile-only (no ROCm GPU here): K1 ``kda_pre``
(:mod:`kda_kernel.flydsl.k1`), the probes ``kda-sim isa`` is tested on
(:mod:`kda_kernel.flydsl.probes`), the toolchain check (:mod:`kda_kernel.flydsl.toolchain`,
installed by ``scripts/flydsl_env.sh``). Importing this package does not import FlyDSL."""
