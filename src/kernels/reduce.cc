// Placeholder until kernels land.
