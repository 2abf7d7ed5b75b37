"""Arrow arrays and scalars from plain Python values without importing pandas.

``pa.array`` and ``pa.scalar`` first ask pyarrow's pandas shim whether the values are pandas
objects, and the shim imports pandas to answer (0.2-0.4 s, the first time in a process).
``ccbench run`` makes no DataFrame, so the result path builds its few Python-valued columns
(the scenario's per-group values, the run's descriptor constants, the one-row ``runs`` and
``counters`` tables) here: well-typed values straight into Arrow buffers through numpy, anything
else through ``pa.array`` as before (same values, same errors).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["array", "scalar", "to_numpy"]

_INT_RANGE = {
    pa.int64(): (-(2**63), 2**63 - 1),
    pa.uint64(): (0, 2**64 - 1),
    pa.int32(): (-(2**31), 2**31 - 1),
    pa.uint32(): (0, 2**32 - 1),
}
_NUMPY = {
    pa.int64(): np.int64,
    pa.uint64(): np.uint64,
    pa.int32(): np.int32,
    pa.uint32(): np.uint32,
    pa.float64(): np.float64,
}
#: Integers a float64 column takes exactly (pa.array refuses larger ones).
_EXACT_IN_DOUBLE = 2**53


def _plain(values: Sequence[Any], t: pa.DataType) -> bool:
    """Whether every value is None or a Python value that ``pa.array(values, t)`` takes as it
    is, so the buffers built here hold exactly what it would build."""
    if t == pa.string():
        return all(v is None or type(v) is str for v in values)
    if t == pa.bool_():
        return all(v is None or type(v) is bool for v in values)
    if t == pa.float64():
        return all(
            v is None or type(v) is float or (type(v) is int and -_EXACT_IN_DOUBLE <= v <= _EXACT_IN_DOUBLE)
            for v in values
        )
    if t in _INT_RANGE:
        lo, hi = _INT_RANGE[t]
        return all(v is None or (type(v) is int and lo <= v <= hi) for v in values)
    return False


def _validity(values: Sequence[Any]) -> tuple[pa.Buffer | None, int]:
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    nulls = len(values) - int(present.sum())
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(present, bitorder="little")), nulls


def array(values: Sequence[Any], t: pa.DataType) -> pa.Array:
    """``pa.array(values, type=t)`` (None = null) without the pandas import for values of the
    column's own Python type (str, bool, int, float); others go to ``pa.array``."""
    values = list(values)
    if not _plain(values, t):
        return pa.array(values, type=t)
    n = len(values)
    if n == 0:
        return pa.nulls(0, t)
    validity, nulls = _validity(values)
    if nulls == n:
        return pa.nulls(n, t)
    if t == pa.string():
        data = [v.encode() if v is not None else b"" for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        if offsets[-1] >= 2**31:
            return pa.array(values, type=t)
        buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))]
    elif t == pa.bool_():
        bits = np.packbits(np.fromiter((bool(v) for v in values), dtype=bool, count=n), bitorder="little")
        buffers = [validity, pa.py_buffer(bits)]
    else:
        data = np.fromiter((0 if v is None else v for v in values), dtype=_NUMPY[t], count=n)
        buffers = [validity, pa.py_buffer(data)]
    return pa.Array.from_buffers(t, n, buffers, null_count=nulls)


def scalar(value: Any, t: pa.DataType) -> pa.Scalar:
    """``pa.scalar(value, type=t)`` as :func:`array` builds it."""
    return array([value], t)[0]


def to_numpy(arr: pa.Array) -> np.ndarray:
    """``arr.to_numpy(zero_copy_only=False)`` (which asks the pandas shim too): a view of the
    values buffer for an integer or float array without nulls, a conversion otherwise."""
    t = arr.type
    if arr.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        dtype = np.dtype(t.to_pandas_dtype())
        return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)
    return arr.to_numpy(zero_copy_only=False)
