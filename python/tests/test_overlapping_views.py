"""Overlapping views passed to one interpreter launch (NumPy and PyTorch slices of one array).

The interpreter sees them as one memory, so a store through one argument and a load of the
same element through another is a race it reports, and values follow the program order.
Expected values come from NumPy.
"""
import numpy as np
import pytest
import triton_c

SHIFT = """
__global__ void shift(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + 0 ... 64;
  *(Y + off) = *(X + off) + 1;
}
"""


def test_race_between_overlapping_slices_is_reported():
    # Program 0 stores x[64:128] through Y; program 1 loads x[64:128] through X.
    k = triton_c.kernel(SHIFT)
    x = np.arange(192, dtype=np.float32)
    before = x.copy()
    with pytest.raises(triton_c.TrapError) as e:
        k(x[0:128], x[64:192], (2,))
    assert e.value.kind == "data_race"
    np.testing.assert_array_equal(x, before)  # a trap leaves the caller's memory as it was


def test_overlapping_slices_without_a_race_follow_program_order():
    # One program: the whole tile of X is loaded before the tile of Y is stored.
    k = triton_c.kernel(SHIFT)
    x = np.arange(65, dtype=np.float32)
    want = x.copy()
    want[1:65] = x[0:64] + 1
    # X and Y are one buffer, x's 65 elements, of which the kernel never stores element 0.
    with pytest.warns(triton_c.LaunchWarning, match=r"1 of 65 elements never written \(0\)"):
        k(x[0:64], x[1:65], (1,))
    np.testing.assert_array_equal(x, want)


def test_overlapping_views_of_other_dtypes_at_a_partial_element_are_refused():
    k = triton_c.kernel("""
    __global__ void f(short *X, int *Y) {
      *Y = *X;
    }""")
    raw = np.zeros(16, np.uint8)
    x = raw[1:9].view(np.int16)  # starts at byte 1
    y = raw[0:8].view(np.int32)  # starts at byte 0: byte 1 is inside Y's element 0
    with pytest.raises(ValueError, match="not a whole number of its elements"):
        k(x, y, (1,))


def test_torch_slices_race_too():
    torch = pytest.importorskip("torch")
    k = triton_c.kernel(SHIFT)
    x = torch.arange(192, dtype=torch.float32)
    with pytest.raises(triton_c.TrapError) as e:
        k(x[0:128], x[64:192], (2,))
    assert e.value.kind == "data_race"


def test_repeated_launches_see_the_overlap():
    # Launches that repeat an earlier one's options take the package's repeated-launch path:
    # overlapping views must still be one buffer there, after separate arrays made that path.
    k = triton_c.kernel(SHIFT)
    for _ in range(3):
        a, b = np.zeros(128, np.float32), np.zeros(128, np.float32)
        k(a, b, (2,))
        np.testing.assert_array_equal(b, np.ones(128, np.float32))
    for _ in range(3):
        x = np.arange(192, dtype=np.float32)
        with pytest.raises(triton_c.TrapError) as e:
            k(x[0:128], x[64:192], (2,))
        assert e.value.kind == "data_race"
