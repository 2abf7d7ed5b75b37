"""ccbench.results.arrow_values builds the same arrays as pa.array (values, nulls, type, errors) without
importing pandas."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from ccbench.results import arrow_values

CASES = [
    (pa.string(), ["cubic", None, "", "bbr", "ünïcödé €"]),
    (pa.string(), []),
    (pa.string(), [None, None]),
    (pa.int64(), [0, -1, 2**63 - 1, -(2**63), None]),
    (pa.uint64(), [0, 2**64 - 1, None, 7]),
    (pa.float64(), [0.5, None, -1e300, 3, 2**53, float("nan"), float("inf")]),
    (pa.bool_(), [True, None, False, True, True, False, True, False, True]),
    (pa.int64(), [None] * 9 + [5]),  # validity bitmap across bytes
]


@pytest.mark.parametrize("t,values", CASES)
def test_array_equals_pa_array(t, values):
    got, want = arrow_values.array(values, t), pa.array(values, type=t)
    got.validate(full=True)
    assert got.type == want.type and got.null_count == want.null_count
    assert got.to_pylist() == want.to_pylist() or all(  # NaN != NaN
        (a == b) or (a != a and b != b) for a, b in zip(got.to_pylist(), want.to_pylist())
    )
    for v in values:
        s = arrow_values.scalar(v, t)
        assert s.type == t and s.is_valid == (v is not None)


@pytest.mark.parametrize(
    "t,values",
    [
        (pa.int64(), [1.5]),
        (pa.int64(), [2**63]),
        (pa.uint64(), [-1]),
        (pa.string(), [1]),
        (pa.float64(), ["x"]),
        (pa.bool_(), [1]),
    ],
)
def test_values_of_another_type_go_to_pa_array_with_its_errors_and_conversions(t, values):
    try:
        want = pa.array(values, type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            arrow_values.array(values, t)
    else:
        assert arrow_values.array(values, t).equals(want)


def test_to_numpy_views_values_and_converts_the_rest():
    arr = pa.array([1.0, 2.5, -3.0, 4.0]).slice(1, 2)  # an offset into the buffer
    assert arrow_values.to_numpy(arr).tolist() == [2.5, -3.0]
    ints = pa.array([3, 4, 5], pa.uint32())
    got = arrow_values.to_numpy(ints)
    assert got.dtype == np.uint32 and got.tolist() == [3, 4, 5]
    assert arrow_values.to_numpy(pa.array([1.0, None])).tolist()[0] == 1.0  # nulls: converted


def test_no_pandas_import():
    code = (
        "import sys, pyarrow as pa\n"
        "from ccbench.results import arrow_values as av\n"
        "av.array(['a', None], pa.string()); av.scalar(1.5, pa.float64()); av.array([1, None], pa.int64())\n"
        "av.to_numpy(av.array([1.0, 2.0], pa.float64()))\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
