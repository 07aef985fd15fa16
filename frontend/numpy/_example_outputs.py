"""The outputs of the examples in _docstrings.py's table, as the doctests show them
(checked by tests/host/test_docstring_examples.py, eagerly, under jit and lazily)."""

OUTPUTS = {
    'snp.abs(snp.asarray([-1.5, 0.0, 2.0]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[1.5, 0. , 2. ]',
    'snp.fabs(snp.asarray([-2, 3]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[2., 3.]',
    'snp.negative(snp.asarray([1, -2]))':
        'Tensor<i64[2] xla:host:0>\n'
        '[-1,  2]',
    'snp.positive(snp.asarray([1.5, -2.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[ 1.5, -2. ]',
    'snp.sign(snp.asarray([-3.0, 0.0, 2.5]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[-1.,  0.,  1.]',
    'snp.square(snp.asarray([1, -3]))':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 9]',
    'snp.reciprocal(snp.asarray([2.0, 4.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[0.5 , 0.25]',
    'snp.floor(snp.asarray([-1.5, 0.5, 2.0]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[-2.,  0.,  2.]',
    'snp.ceil(snp.asarray([-1.5, 0.5, 2.0]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[-1.,  1.,  2.]',
    'snp.trunc(snp.asarray([-1.5, 0.5, 2.7]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[-1.,  0.,  2.]',
    'snp.exp2(snp.asarray([0.0, 3.0, -1.0]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[1. , 8. , 0.5]',
    'snp.log2(snp.asarray([1.0, 8.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[0., 3.]',
    'snp.log10(snp.asarray([1.0, 1000.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[0., 3.]',
    'snp.deg2rad(snp.asarray([0.0, 90.0, 180.0]))':
        'Tensor<f32[3] xla:host:0>\n'
        '[0.       , 1.5707964, 3.1415927]',
    'snp.rad2deg(snp.asarray([0.0, 1.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[ 0.     , 57.29578]',
    'snp.real(snp.asarray([1 + 2j, 3 - 4j]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[1., 3.]',
    'snp.imag(snp.asarray([1 + 2j, 3 - 4j]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[ 2., -4.]',
    'snp.conj(snp.asarray([1 + 2j, 3 - 4j]))':
        'Tensor<c64[2] xla:host:0>\n'
        '[1.-2.j, 3.+4.j]',
    'snp.invert(snp.asarray([0, 5], dtype=snp.uint8))':
        'Tensor<u8[2] xla:host:0>\n'
        '[255, 250]',
    'snp.logical_not(snp.asarray([0.0, 2.0]))':
        'Tensor<pred[2] xla:host:0>\n'
        '[ True, False]',
    'snp.isfinite(snp.asarray([1.0, np.inf, np.nan]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[ True, False, False]',
    'snp.isinf(snp.asarray([1.0, -np.inf, np.nan]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[False,  True, False]',
    'snp.isnan(snp.asarray([1.0, np.inf, np.nan]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[False, False,  True]',
    'snp.isposinf(snp.asarray([np.inf, -np.inf, 1.0]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[ True, False, False]',
    'snp.isneginf(snp.asarray([np.inf, -np.inf, 1.0]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[False,  True, False]',
    'snp.iscomplex(snp.asarray([1 + 0j, 1 + 1j]))':
        'Tensor<pred[2] xla:host:0>\n'
        '[False,  True]',
    'snp.isreal(snp.asarray([1 + 0j, 1 + 1j]))':
        'Tensor<pred[2] xla:host:0>\n'
        '[ True, False]',
    'snp.atleast_1d(3.0)':
        'Tensor<f32[1] xla:host:0>\n'
        '[3.]',
    'snp.atleast_2d(snp.asarray([1, 2])).shape':
        '(1, 2)',
    'snp.atleast_3d(snp.asarray([1, 2])).shape':
        '(1, 2, 1)',
    'snp.ravel(snp.asarray([[1, 2], [3, 4]]))':
        'Tensor<i64[4] xla:host:0>\n'
        '[1, 2, 3, 4]',
    'snp.matrix_transpose(snp.asarray([[1, 2, 3]])).shape':
        '(3, 1)',
    'snp.fliplr(snp.asarray([[1, 2], [3, 4]]))':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[2, 1],\n'
        ' [4, 3]]',
    'snp.flipud(snp.asarray([[1, 2], [3, 4]]))':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[3, 4],\n'
        ' [1, 2]]',
    'snp.arange(5)':
        'Tensor<i64[5] xla:host:0>\n'
        '[0, 1, 2, 3, 4]',
    'snp.arange(0.0, 1.0, 0.25)':
        'Tensor<f32[4] xla:host:0>\n'
        '[0.  , 0.25, 0.5 , 0.75]',
    'snp.zeros((2, 3), dtype=snp.int32)':
        'Tensor<i32[2,3] xla:host:0>\n'
        '[[0, 0, 0],\n'
        ' [0, 0, 0]]',
    'snp.ones(3)':
        'Tensor<f32[3] xla:host:0>\n'
        '[1., 1., 1.]',
    'snp.empty((2,)).shape':
        '(2,)',
    'snp.full((2, 2), 7)':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[7, 7],\n'
        ' [7, 7]]',
    'snp.zeros_like(snp.asarray([1.5, 2.5]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[0., 0.]',
    'snp.ones_like(snp.asarray([[1, 2]]))':
        'Tensor<i64[1,2] xla:host:0>\n'
        '[[1, 1]]',
    'snp.empty_like(snp.asarray([1, 2])).shape':
        '(2,)',
    'snp.full_like(snp.asarray([1, 2, 3]), 9)':
        'Tensor<i64[3] xla:host:0>\n'
        '[9, 9, 9]',
    'snp.eye(2, 3, k=1)':
        'Tensor<f32[2,3] xla:host:0>\n'
        '[[0., 1., 0.],\n'
        ' [0., 0., 1.]]',
    'snp.identity(2, dtype=snp.int32)':
        'Tensor<i32[2,2] xla:host:0>\n'
        '[[1, 0],\n'
        ' [0, 1]]',
    'snp.tri(3, k=-1)':
        'Tensor<f32[3,3] xla:host:0>\n'
        '[[0., 0., 0.],\n'
        ' [1., 0., 0.],\n'
        ' [1., 1., 0.]]',
    'snp.all(snp.asarray([[True, False], [True, True]]), axis=1)':
        'Tensor<pred[2] xla:host:0>\n'
        '[False,  True]',
    'snp.any(snp.asarray([[0, 0], [0, 3]]), axis=1)':
        'Tensor<pred[2] xla:host:0>\n'
        '[False,  True]',
    'snp.mean(snp.asarray([[1, 2], [3, 5]]), axis=0)':
        'Tensor<f32[2] xla:host:0>\n'
        '[2. , 3.5]',
    'snp.var(snp.asarray([1.0, 2.0, 3.0, 4.0]))':
        'Tensor<f32[] xla:host:0>\n'
        '1.25',
    'snp.std(snp.asarray([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]))':
        'Tensor<f32[] xla:host:0>\n'
        '2.',
    'snp.nanstd(snp.asarray([1.0, np.nan, 3.0]))':
        'Tensor<f32[] xla:host:0>\n'
        '1.',
    'snp.median(snp.asarray([3, 1, 4, 1]))':
        'Tensor<f32[] xla:host:0>\n'
        '2.',
    'snp.nanmedian(snp.asarray([3.0, np.nan, 1.0]))':
        'Tensor<f32[] xla:host:0>\n'
        '2.',
    'snp.nanpercentile(snp.asarray([1.0, np.nan, 3.0, 5.0]), 50)':
        'Tensor<f32[] xla:host:0>\n'
        '3.',
    'snp.count_nonzero(snp.asarray([[0, 1], [2, 3]]), axis=0)':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 2]',
    'snp.argmax(snp.asarray([[1, 5, 2], [7, 0, 7]]), axis=1)':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 0]',
    'snp.argmin(snp.asarray([4, 1, 1]))':
        'Tensor<i64[] xla:host:0>\n'
        '1',
    'snp.cumprod(snp.asarray([1, 2, 3, 4]))':
        'Tensor<i64[4] xla:host:0>\n'
        '[ 1,  2,  6, 24]',
    'snp.cummin(snp.asarray([3, 1, 2, 0]))':
        'Tensor<i64[4] xla:host:0>\n'
        '[3, 1, 1, 0]',
    'snp.cumulative_sum(snp.asarray([1, 2, 3]), include_initial=True)':
        'Tensor<i64[4] xla:host:0>\n'
        '[0, 1, 3, 6]',
    'snp.cumulative_prod(snp.asarray([1, 2, 3]))':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 6]',
    'snp.reshape(snp.arange(6), (2, -1))':
        'Tensor<i64[2,3] xla:host:0>\n'
        '[[0, 1, 2],\n'
        ' [3, 4, 5]]',
    'snp.squeeze(snp.zeros((1, 3, 1))).shape':
        '(3,)',
    'snp.expand_dims(snp.asarray([1, 2]), axis=(0, 2)).shape':
        '(1, 2, 1)',
    'snp.moveaxis(snp.zeros((2, 3, 4)), 0, -1).shape':
        '(3, 4, 2)',
    'snp.swapaxes(snp.zeros((2, 3, 4)), 0, 2).shape':
        '(4, 3, 2)',
    'snp.transpose(snp.asarray([[1, 2, 3]]))':
        'Tensor<i64[3,1] xla:host:0>\n'
        '[[1],\n'
        ' [2],\n'
        ' [3]]',
    'snp.permute_dims(snp.zeros((2, 3, 4)), (2, 0, 1)).shape':
        '(4, 2, 3)',
    'snp.flip(snp.asarray([[1, 2], [3, 4]]), axis=1)':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[2, 1],\n'
        ' [4, 3]]',
    'snp.broadcast_to(snp.asarray([1, 2]), (2, 2))':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[1, 2],\n'
        ' [1, 2]]',
    'snp.broadcast_shapes((2, 1), (3,))':
        '(2, 3)',
    'snp.concatenate([snp.asarray([1, 2]), snp.asarray([3])])':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 3]',
    'snp.stack([snp.asarray([1, 2]), snp.asarray([3, 4])], axis=1)':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[1, 3],\n'
        ' [2, 4]]',
    'snp.hstack([snp.asarray([1, 2]), snp.asarray([3])])':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 3]',
    'snp.vstack([snp.asarray([1, 2]), snp.asarray([3, 4])])':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[1, 2],\n'
        ' [3, 4]]',
    'snp.dstack([snp.asarray([1, 2]), snp.asarray([3, 4])]).shape':
        '(1, 2, 2)',
    'snp.column_stack([snp.asarray([1, 2]), snp.asarray([3, 4])])':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[1, 3],\n'
        ' [2, 4]]',
    '[t.shape for t in snp.hsplit(snp.zeros((2, 4)), 2)]':
        '[(2, 2), (2, 2)]',
    '[t.shape for t in snp.vsplit(snp.zeros((4, 2)), [1])]':
        '[(1, 2), (3, 2)]',
    '[t.shape for t in snp.dsplit(snp.zeros((1, 2, 4)), 2)]':
        '[(1, 2, 2), (1, 2, 2)]',
    'snp.diagonal(snp.asarray([[1, 2], [3, 4]]))':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 4]',
    'snp.diag_indices_from(snp.zeros((2, 2)))':
        '(Tensor<i64[2] xla:host:0>\n'
        '[0, 1], Tensor<i64[2] xla:host:0>\n'
        '[0, 1])',
    'snp.tril_indices_from(snp.zeros((2, 2)))':
        '(Tensor<i64[3] xla:host:0>\n'
        '[0, 1, 1], Tensor<i64[3] xla:host:0>\n'
        '[0, 0, 1])',
    'snp.triu_indices_from(snp.zeros((2, 2)))':
        '(Tensor<i64[3] xla:host:0>\n'
        '[0, 0, 1], Tensor<i64[3] xla:host:0>\n'
        '[0, 1, 1])',
    'snp.matmul(snp.asarray([[1, 2], [3, 4]]), snp.asarray([1, 1]))':
        'Tensor<i64[2] xla:host:0>\n'
        '[3, 7]',
    'snp.dot(snp.asarray([1, 2]), snp.asarray([3, 4]))':
        'Tensor<i64[] xla:host:0>\n'
        '11',
    'snp.inner(snp.asarray([1, 2]), snp.asarray([3, 4]))':
        'Tensor<i64[] xla:host:0>\n'
        '11',
    'snp.outer(snp.asarray([1, 2]), snp.asarray([1, 10]))':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[ 1, 10],\n'
        ' [ 2, 20]]',
    'snp.vdot(snp.asarray([1j, 2]), snp.asarray([1j, 3]))':
        'Tensor<c64[] xla:host:0>\n'
        '7.+0.j',
    'snp.tensordot(snp.ones((2, 3)), snp.ones((3, 4)), axes=1).shape':
        '(2, 4)',
    'snp.sort(snp.asarray([3, 1, 2]))':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 3]',
    'snp.sort(snp.asarray([3, 1, 2]), descending=True)':
        'Tensor<i64[3] xla:host:0>\n'
        '[3, 2, 1]',
    'snp.argsort(snp.asarray([3, 1, 2]))':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 0]',
    'snp.nonzero(snp.asarray([0, 3, 0, 4]))':
        '(Tensor<i64[2] xla:host:0>\n'
        '[1, 3],)',
    'snp.flatnonzero(snp.asarray([[0, 1], [2, 0]]))':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 2]',
    'snp.argwhere(snp.asarray([[0, 1], [2, 0]]))':
        'Tensor<i64[2,2] xla:host:0>\n'
        '[[0, 1],\n'
        ' [1, 0]]',
    'x = snp.asarray([[3, 1, 2]])':
        '',
    'snp.take_along_axis(x, snp.argsort(x, axis=1), axis=1)':
        'Tensor<i64[1,3] xla:host:0>\n'
        '[[1, 2, 3]]',
    'snp.unique_values(snp.asarray([3, 1, 3, 2]))':
        'Tensor<i64[3] xla:host:0>\n'
        '[1, 2, 3]',
    'snp.unique_counts(snp.asarray([3, 1, 3]))':
        'UniqueCountsResult(values=Tensor<i64[2] xla:host:0>\n'
        '[1, 3], counts=Tensor<i64[2] xla:host:0>\n'
        '[1, 2])',
    'snp.unique_inverse(snp.asarray([3, 1, 3]))':
        'UniqueInverseResult(values=Tensor<i64[2] xla:host:0>\n'
        '[1, 3], inverse_indices=Tensor<i64[3] xla:host:0>\n'
        '[1, 0, 1])',
    'snp.unique_all(snp.asarray([3, 1, 3])).counts':
        'Tensor<i64[2] xla:host:0>\n'
        '[1, 2]',
    'snp.logical_and(snp.asarray([1, 0, 2]), snp.asarray([1, 1, 0]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[ True, False, False]',
    'snp.logical_or(snp.asarray([1, 0, 0]), snp.asarray([0, 0, 3]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[ True, False,  True]',
    'snp.logical_xor(snp.asarray([1, 0, 1]), snp.asarray([1, 1, 0]))':
        'Tensor<pred[3] xla:host:0>\n'
        '[False,  True,  True]',
    'snp.power(snp.asarray([2, 3]), 2)':
        'Tensor<i64[2] xla:host:0>\n'
        '[4, 9]',
    'snp.power(2.0, snp.asarray([0.5, -1.0]))':
        'Tensor<f32[2] xla:host:0>\n'
        '[1.4142135, 0.5      ]',
    'snp.divmod(snp.asarray([7, -7]), 2)':
        '(Tensor<i64[2] xla:host:0>\n'
        '[ 3, -4], Tensor<i64[2] xla:host:0>\n'
        '[1, 1])',
    'snp.clip(snp.asarray([-2, 0, 5]), 0, 3)':
        'Tensor<i64[3] xla:host:0>\n'
        '[0, 0, 3]',
}
