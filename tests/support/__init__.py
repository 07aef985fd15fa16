"""What the tests share: comparisons (compare, mlir_check), ways of running a function
(runners), dtype groups, jax's promotion table and equivalents of our primitives, the
vmap cases and the primitive table (one PrimSpec per primitive, with its cases)."""
