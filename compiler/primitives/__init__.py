"""The primitive families, one module each.

First-order families (elementwise, shape_ops, reductions, products, windows,
convolution, fft, linalg, indexing, sorting) import only the IR and each other;
compiler/ops.py builds on them and compiler/autodiff.py on ops. The higher-order
families (control_flow, custom_ad) differentiate their bodies with autodiff, so they
sit above it. compiler/registry.py collects them all. This package imports none of
them, so importing one family never drags in the others.
"""
