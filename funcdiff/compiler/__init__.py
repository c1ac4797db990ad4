"""jit's machinery: the cache, the lowered programs, the compiled evaluator and its code generators."""
