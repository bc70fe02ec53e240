"""Shared helpers for the conformance-case generators (Python 3 standard library only).

Numerics are computed independently of the implementation:
- round_to(x, dtype): IEEE round-to-nearest-even of a Python float (or Fraction) to
  float16 / bfloat16 / float32 / float64, with overflow to infinity and subnormals kept
  (written from the IEEE rules; checked against struct.pack('<e') / ('<f') in self_test()).
- wrap(v, dtype): two's-complement wrapping of integers.
- json_value(x, dtype): the conformance/FORMAT.md spelling of one value ("nan", "inf", "-0.0",
  or the shortest decimal that converts back to the same value of that dtype).
- Suite: collects cases and writes one suite file with a stable layout.
"""

import json
import math
import os
import struct
from fractions import Fraction

INT_DTYPES = {
    'bool': (1, False),
    'int8': (8, True), 'int16': (16, True), 'int32': (32, True), 'int64': (64, True),
    'uint8': (8, False), 'uint16': (16, False), 'uint32': (32, False), 'uint64': (64, False),
}
FLOAT_DTYPES = ('float16', 'bfloat16', 'float32', 'float64')

# (significand bits including the implicit one, minimum normal exponent, maximum exponent)
FLOAT_FORMATS = {
    'float16': (11, -14, 15),
    'bfloat16': (8, -126, 127),
    'float32': (24, -126, 127),
    'float64': (53, -1022, 1023),
}

# Triton-C spelling of each dtype (pointee / element type in kernel sources).
C_TYPE = {
    'bool': 'bool', 'int8': 'char', 'int16': 'short', 'int32': 'int', 'int64': 'long',
    'uint8': 'uint8', 'uint16': 'uint16', 'uint32': 'uint32', 'uint64': 'uint64',
    'float16': 'half', 'bfloat16': 'bf16', 'float32': 'float', 'float64': 'double',
}

# Short tags used in case names.
SHORT = {
    'bool': 'bool', 'int8': 'i8', 'int16': 'i16', 'int32': 'i32', 'int64': 'i64',
    'uint8': 'u8', 'uint16': 'u16', 'uint32': 'u32', 'uint64': 'u64',
    'float16': 'f16', 'bfloat16': 'bf16', 'float32': 'f32', 'float64': 'f64',
}


def is_float(dtype):
    return dtype in FLOAT_DTYPES


def is_signed(dtype):
    return is_float(dtype) or INT_DTYPES[dtype][1]


def int_range(dtype):
    bits, signed = INT_DTYPES[dtype]
    if dtype == 'bool':
        return 0, 1
    if signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def wrap(v, dtype):
    """Two's-complement wrap of an int to an integer dtype (bool: != 0)."""
    if dtype == 'bool':
        return 1 if v != 0 else 0
    bits, signed = INT_DTYPES[dtype]
    v &= (1 << bits) - 1
    if signed and v >= (1 << (bits - 1)):
        v -= 1 << bits
    return v


def _round_half_even(q):
    """Round a non-negative Fraction to the nearest integer, ties to even."""
    n = q.numerator // q.denominator
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return n


def round_to(x, dtype):
    """Round x (float or Fraction) to dtype with IEEE round-to-nearest-even; returns a float."""
    if dtype == 'float64' and isinstance(x, float):
        return x
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return x
        if x == 0.0:
            return x
        fx = Fraction(x)
        neg = x < 0
    else:
        fx = Fraction(x)
        if fx == 0:
            return 0.0
        neg = fx < 0
    p, emin, emax = FLOAT_FORMATS[dtype]
    a = abs(fx)
    # exponent of the leading bit: 2^e <= a < 2^(e+1)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    q = max(e, emin) - (p - 1)          # exponent of one unit in the last place
    n = _round_half_even(a / (Fraction(2) ** q))
    maxfinite = ((1 << p) - 1) * (Fraction(2) ** (emax - p + 1))
    v = n * (Fraction(2) ** q)
    if v > maxfinite:
        r = math.inf
    else:
        r = float(v)   # exact: v has at most p <= 53 significant bits
    return -r if neg else r


def f32(x):
    return round_to(x, 'float32')


def f16(x):
    return round_to(x, 'float16')


def bf16(x):
    return round_to(x, 'bfloat16')


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def json_value(x, dtype):
    """The JSON spelling of one value of dtype (x must already be representable)."""
    if not is_float(dtype):
        x = int(x)
        lo, hi = int_range(dtype)
        assert lo <= x <= hi, (x, dtype)
        return x
    x = float(x)
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    if x == 0.0:
        return '-0.0' if math.copysign(1.0, x) < 0 else 0
    assert _same(round_to(x, dtype), x), (x, dtype)
    if x == int(x) and abs(x) < 2 ** 53:
        return int(x)
    for prec in range(1, 18):
        s = '%.*g' % (prec, x)
        if _same(round_to(float(s), dtype), x):
            return float(s)
    return x


def json_values(xs, dtype):
    return [json_value(x, dtype) for x in xs]


# ---------------------------------------------------------------- case helpers

def buf(name, dtype, shape, data=None, fill=None):
    """A buffer argument; data is a flat list of Python values (already representable)."""
    if isinstance(shape, int):
        shape = [shape]
    a = {'name': name, 'dtype': dtype, 'shape': list(shape)}
    if data is not None:
        assert len(data) == prod(shape), (name, len(data), shape)
        a['data'] = json_values(data, dtype)
    else:
        a['fill'] = json_value(0 if fill is None else fill, dtype)
    return a


def scalar(name, dtype, value):
    return {'name': name, 'dtype': dtype, 'value': json_value(value, dtype)}


def out(data, dtype, compare=None):
    o = {'data': json_values(data, dtype)}
    if compare is not None:
        o['compare'] = compare
    return o


def expect_outputs(**outs):
    return {'outputs': outs}


def expect_trap(kind, message=None):
    t = {'kind': kind}
    if message is not None:
        t['message'] = message
    return {'trap': t}


def expect_compile_error(message, line=None):
    c = {'message': message}
    if line is not None:
        c['line'] = line
    return {'compile_error': c}


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def case(name, features, source=None, source_ref=None, source_file=None, kernel=None,
         defines=None, grid=(1,), args=(), expect=None, backends=None):
    c = {'name': name, 'features': list(features)}
    srcs = [s for s in (source, source_ref, source_file) if s is not None]
    assert len(srcs) == 1, name
    if source is not None:
        c['source'] = source
    if source_ref is not None:
        c['source_ref'] = source_ref
    if source_file is not None:
        c['source_file'] = source_file
    if kernel is not None:
        c['kernel'] = kernel
    if defines:
        c['defines'] = defines
    c['grid'] = list(grid)
    c['args'] = list(args)
    assert expect is not None, name
    c['expect'] = expect
    if backends is not None:
        c['backends'] = backends
    return c


class Suite:
    def __init__(self, suite, description):
        self.suite = suite
        self.description = description
        self.sources = {}
        self.cases = []
        self._names = set()

    def source(self, key, text):
        assert key not in self.sources or self.sources[key] == text, key
        self.sources[key] = text
        return key

    def add(self, c):
        assert c['name'] not in self._names, 'duplicate case name ' + c['name']
        self._names.add(c['name'])
        self.cases.append(c)

    def write(self, path):
        doc = {'format': 'triton-conformance/1', 'suite': self.suite,
               'description': self.description}
        if self.sources:
            doc['sources'] = self.sources
        doc['cases'] = self.cases
        text = dumps(doc) + '\n'
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        print('%s: %d cases, %d bytes' % (path, len(self.cases), len(text)))


def _is_flat(v):
    return isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v)


def dumps(v, indent=0):
    """JSON with nested objects indented and flat lists (data arrays) on one line."""
    pad = '  ' * indent
    if isinstance(v, dict):
        if not v:
            return '{}'
        small = all(not isinstance(x, (dict, list)) or (_is_flat(x) and len(x) <= 8)
                    for x in v.values())
        if small and len(json.dumps(v)) < 100:
            return json.dumps(v)
        items = ['%s  %s: %s' % (pad, json.dumps(k), dumps(x, indent + 1)) for k, x in v.items()]
        return '{\n' + ',\n'.join(items) + '\n' + pad + '}'
    if isinstance(v, list):
        if _is_flat(v):
            return json.dumps(v, separators=(',', ':') if len(v) > 16 else (', ', ': '))
        items = ['%s  %s' % (pad, dumps(x, indent + 1)) for x in v]
        return '[\n' + ',\n'.join(items) + '\n' + pad + ']'
    return json.dumps(v)


def out_path(name):
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, '..', 'cases', name)


# ---------------------------------------------------------------- random data

def rand_ints(rng, dtype, n, lo=None, hi=None):
    """n random integers of dtype in [lo, hi] (default: the full range)."""
    dlo, dhi = int_range(dtype)
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    return [rng.randint(lo, hi) for _ in range(n)]


def rand_quantized(rng, n, k, quantum, dtype):
    """n floats k*quantum with integer |k| <= kmax, representable in dtype."""
    vals = []
    for _ in range(n):
        v = rng.randint(-k, k) * quantum
        assert round_to(v, dtype) == v
        vals.append(v)
    return vals


def rand_uniform(rng, n, lo, hi, dtype):
    """n uniform values rounded to dtype."""
    return [round_to(rng.uniform(lo, hi), dtype) for _ in range(n)]


SPECIALS = {
    'float16': [0.0, -0.0, math.inf, -math.inf, math.nan, 65504.0, -65504.0, 2.0 ** -24,
                -(2.0 ** -14), 1.0 / 3.0],
    'bfloat16': [0.0, -0.0, math.inf, -math.inf, math.nan, 3.3895313892515355e38,
                 2.0 ** -133, -(2.0 ** -126), 1.0 / 3.0],
    'float32': [0.0, -0.0, math.inf, -math.inf, math.nan, 3.4028234663852886e38,
                2.0 ** -149, -(2.0 ** -126), 0.1, 1e-40],
    'float64': [0.0, -0.0, math.inf, -math.inf, math.nan, 1.7976931348623157e308,
                5e-324, -2.2250738585072014e-308, 0.1],
}


def rand_floats_special(rng, dtype, n):
    """n values of dtype: mostly uniform in [-100, 100], with special values mixed in."""
    specials = [round_to(v, dtype) for v in SPECIALS[dtype]]
    vals = []
    for i in range(n):
        if i < len(specials):
            vals.append(specials[i])
        else:
            vals.append(round_to(rng.uniform(-100, 100), dtype))
    rng.shuffle(vals)
    return vals


def rand_values(rng, dtype, n):
    """n random values of any dtype (full integer range; floats with specials)."""
    if is_float(dtype):
        return rand_floats_special(rng, dtype, n)
    return rand_ints(rng, dtype, n)


# ---------------------------------------------------------------- self test

def self_test():
    import random
    rng = random.Random(1)
    for _ in range(20000):
        # random doubles across the fp16 / fp32 range, including ties
        x = rng.uniform(-70000, 70000) * 2.0 ** rng.randint(-30, 0)
        assert _same(round_to(x, 'float16'), _pack_e(x)), x
        y = rng.uniform(-1, 1) * 2.0 ** rng.randint(-150, 128)
        assert _same(round_to(y, 'float32'), _pack_f(y)), y
    # exact ties: fp16 1 + 2^-11 -> 1 (even), 1 + 3*2^-11 -> 1 + 2^-9
    assert round_to(1 + 2.0 ** -11, 'float16') == 1.0
    assert round_to(1 + 3 * 2.0 ** -11, 'float16') == 1 + 2.0 ** -9
    assert _pack_e(1 + 2.0 ** -11) == 1.0 and _pack_e(1 + 3 * 2.0 ** -11) == 1 + 2.0 ** -9
    assert round_to(65520.0, 'float16') == math.inf and round_to(65519.99, 'float16') == 65504.0
    # bf16: 1 + 2^-8 ties to 1; 1 + 3*2^-8 -> 1 + 2^-6; 2^-133 is the smallest subnormal
    assert round_to(1 + 2.0 ** -8, 'bfloat16') == 1.0
    assert round_to(1 + 3 * 2.0 ** -8, 'bfloat16') == 1 + 2.0 ** -6
    assert round_to(2.0 ** -133, 'bfloat16') == 2.0 ** -133
    assert round_to(2.0 ** -134, 'bfloat16') == 0.0
    assert round_to(3 * 2.0 ** -135, 'bfloat16') == 2.0 ** -133
    assert round_to(3.4e38, 'bfloat16') == math.inf  # bf16 max is 3.3895e38; halfway 3.3961e38
    assert round_to(3.39e38, 'bfloat16') == 3.3895313892515355e38
    print('util self test ok')


def _pack_e(x):
    try:
        return struct.unpack('<e', struct.pack('<e', x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _pack_f(x):
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


if __name__ == '__main__':
    self_test()
