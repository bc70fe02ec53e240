"""Generate conformance/cases/broadcast.json.

docs/semantics.md rule 3: NumPy broadcasting.
Shapes align on the right, the shorter is padded with 1s on the left, a size-1
axis stretches; initialisers, assignments and stores broadcast to the declared
(pointer) shape; pointer arithmetic broadcasts; incompatible shapes are a compile
error naming both shapes and the axis.

Expected values are computed here with plain nested loops over Python ints/floats
(all values are small integers, so float results are exact).

Run: python3 conformance/gen/broadcast.py
"""

import itertools

import common as C


def bshape(a, b):
    """NumPy broadcast of two shapes; None if incompatible."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(max(x, y))
    return out


def index_into(shape, full, idx):
    """Element index of an operand of `shape` broadcast to `full`, at full index idx."""
    pad = len(full) - len(shape)
    flat = 0
    for k, d in enumerate(shape):
        i = idx[pad + k] if d != 1 else 0
        flat = flat * d + i
    return flat


def bapply(fn, *operands):
    """Apply fn elementwise over broadcast operands given as (flat list, shape)."""
    full = []
    for _, s in operands:
        full = bshape(full, s)
        assert full is not None
    out = []
    for idx in itertools.product(*[range(d) for d in full]):
        out.append(fn(*[vals[index_into(s, full, idx)] for vals, s in operands]))
    return out, full


def case(name, src, args, outs, feats, note, **extra):
    c = {"name": name, "description": note, "features": ["broadcast"] + feats,
         "source": src}
    c.update(extra)
    c.setdefault("grid", [1])
    c["args"] = args
    c["expect"] = {"outputs": outs}
    return c


def diag_id(message):
    if "incompatible shapes" in message:
        return "diag.err_sema_incompatible_shapes"
    if "pointer shape" in message:
        return "diag.err_sema_mask_shape"
    return "diag.err_sema_cannot_broadcast_to"


def error_case(name, src, message, feats, note):
    line = None
    for k, l in enumerate(src.split("\n")):
        if "// error" in l:
            line = k + 1
    assert line, name
    return {"name": name, "description": note,
            "features": ["broadcast", "diagnostic", diag_id(message)] + feats, "source": src,
            "grid": [1],
            "args": [C.zeros("Z", "float32", 64)],
            "expect": {"compile_error": {"message": message, "line": line}}}


def valid_cases():
    cs = []
    f32, i32 = "float32", "int32"
    # 1. scalar splat in an initialiser
    cs.append(case("splat_constant_init_2d",
                   "__global__ void k(float *Z) {\n  float x[16, 8] = 3.14;\n"
                   "  int r[16] = 0 ... 16;\n  int c[8] = 0 ... 8;\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = x;\n}\n",
                   [C.zeros("Z", f32, 128)],
                   {"Z": C.out([C.fround(3.14, f32)] * 128, f32)},
                   ["broadcast.splat", "dtype.float32"], "a scalar initialiser splats"))
    cs.append(case("splat_runtime_scalar",
                   "__global__ void k(int s, int *Z) {\n  int x[8] = s;\n"
                   "  *(Z + (0 ... 8)) = x;\n}\n",
                   [{"name": "s", "dtype": i32, "value": -7}, C.zeros("Z", i32, 8)],
                   {"Z": C.out([-7] * 8, i32)}, ["broadcast.splat", "dtype.int32"],
                   "a kernel argument splats into a tile"))
    cs.append(case("splat_scalar_plus_tile",
                   "__global__ void k(int s, int *X, int *Z) {\n  int i[8] = 0 ... 8;\n"
                   "  *(Z + i) = s * 10 + *(X + i);\n}\n",
                   [{"name": "s", "dtype": i32, "value": 3}, C.buf("X", i32, list(range(8))),
                    C.zeros("Z", i32, 8)],
                   {"Z": C.out([30 + v for v in range(8)], i32)},
                   ["broadcast.splat", "dtype.int32"], "a 0-d value meets a [8] tile"))
    # 2. [N,1] x [1,M]
    a, b = [1, 2, 3, 4], [10, 20, 30, 40, 50, 60, 70, 80]
    outer, _ = bapply(lambda x, y: x * y, (a, [4, 1]), (b, [1, 8]))
    cs.append(case("outer_product_n1_x_1m",
                   "__global__ void k(int *A, int *B, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int a[4] = *(A + r);\n  int b[8] = *(B + c);\n"
                   "  int z[4, 8] = a[:, newaxis] * b[newaxis, :];\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = z;\n}\n",
                   [C.buf("A", i32, a), C.buf("B", i32, b), C.zeros("Z", i32, 32)],
                   {"Z": C.out(outer, i32)}, ["broadcast.newaxis", "dtype.int32"],
                   "[4, 1] * [1, 8] -> [4, 8]"))
    cs.append(case("declared_n1_plus_1m",
                   "__global__ void k(int *A, int *B, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int a[4, 1] = (*(A + r))[:, newaxis];\n"
                   "  int b[1, 8] = (*(B + c))[newaxis, :];\n  int z[4, 8] = a - b;\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = z;\n}\n",
                   [C.buf("A", i32, a), C.buf("B", i32, b), C.zeros("Z", i32, 32)],
                   {"Z": C.out(bapply(lambda x, y: x - y, (a, [4, 1]), (b, [1, 8]))[0], i32)},
                   ["broadcast.newaxis", "dtype.int32"],
                   "tiles declared [4, 1] and [1, 8] broadcast to [4, 8]"))
    # 3. left padding
    m = [r * 8 + c for r in range(4) for c in range(8)]
    v = [100 * (c + 1) for c in range(8)]
    src_lp = ("__global__ void k(int *M, int *V, int *Z) {{\n  int r[4] = 0 ... 4;\n"
              "  int c[8] = 0 ... 8;\n  int m[4, 8] = *(M + r[:, newaxis] * 8 + c[newaxis, :]);\n"
              "  int v[8] = *(V + c);\n  int z[4, 8] = {E};\n"
              "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = z;\n}}\n")
    for nm, e, fn, order in [("left_pad_matrix_plus_vector", "m + v", lambda x, y: x + y, 0),
                             ("left_pad_vector_minus_matrix", "v - m", lambda x, y: x - y, 1)]:
        ops = [(m, [4, 8]), (v, [8])] if order == 0 else [(v, [8]), (m, [4, 8])]
        cs.append(case(nm, src_lp.format(E=e),
                       [C.buf("M", i32, m), C.buf("V", i32, v), C.zeros("Z", i32, 32)],
                       {"Z": C.out(bapply(fn, *ops)[0], i32)}, ["broadcast.left_pad",
                                                                "dtype.int32"],
                       "[8] is padded to [1, 8] and meets [4, 8]"))
    cs.append(case("size_one_axis_1x8_plus_4x1",
                   "__global__ void k(float *A, float *B, float *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  float a[1, 8] = (*(A + c))[newaxis, :];\n"
                   "  float b[4, 1] = (*(B + r))[:, newaxis];\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = a + b;\n}\n",
                   [C.buf("A", f32, [float(x) for x in range(8)]),
                    C.buf("B", f32, [0.5, 1.5, 2.5, 3.5]), C.zeros("Z", f32, 32)],
                   {"Z": C.out(bapply(lambda x, y: x + y, ([float(x) for x in range(8)], [1, 8]),
                                      ([0.5, 1.5, 2.5, 3.5], [4, 1]))[0], f32)},
                   ["broadcast.newaxis", "dtype.float32"], "[1, 8] + [4, 1] -> [4, 8]"))
    cs.append(case("size_one_vector_plus_vector",
                   "__global__ void k(int *A, int *B, int *Z) {\n  int c[8] = 0 ... 8;\n"
                   "  int a[1] = *(A + (0 ... 1));\n  int b[8] = *(B + c);\n"
                   "  *(Z + c) = a + b;\n}\n",
                   [C.buf("A", i32, [1000]), C.buf("B", i32, list(range(8))),
                    C.zeros("Z", i32, 8)],
                   {"Z": C.out([1000 + x for x in range(8)], i32)},
                   ["broadcast.size_one", "dtype.int32"], "[1] + [8] -> [8]"))
    # 4. initialisers and assignments broadcast to the declared shape
    u = [1, 2, 3, 4]
    cs.append(case("init_broadcasts_to_declared_shape",
                   "__global__ void k(int *U, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int u[4] = *(U + r);\n"
                   "  int v[4, 8] = u[:, newaxis];\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("U", i32, u), C.zeros("Z", i32, 32)],
                   {"Z": C.out([u[r] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.init", "dtype.int32"], "int v[4, 8] = u[:, newaxis]"))
    cs.append(case("init_row_vector_broadcasts",
                   "__global__ void k(int *U, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int u[8] = *(U + c);\n  int v[4, 8] = u;\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("U", i32, b), C.zeros("Z", i32, 32)],
                   {"Z": C.out([b[c] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.init", "broadcast.left_pad", "dtype.int32"],
                   "int v[4, 8] = u (u is [8], padded to [1, 8])"))
    cs.append(case("assign_broadcasts_to_declared_shape",
                   "__global__ void k(int *U, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int v[4, 8] = 0;\n  int u[4] = *(U + r);\n"
                   "  v = u[:, newaxis] * 2;\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("U", i32, u), C.zeros("Z", i32, 32)],
                   {"Z": C.out([2 * u[r] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.assign", "dtype.int32"], "v = u[:, newaxis] * 2 with v [4, 8]"))
    cs.append(case("compound_assign_broadcasts",
                   "__global__ void k(int *U, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int v[4, 8] = 1;\n  int u[8] = *(U + c);\n"
                   "  v += u;\n  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("U", i32, b), C.zeros("Z", i32, 32)],
                   {"Z": C.out([1 + b[c] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.assign", "assignment.compound", "dtype.int32"],
                   "v += u with v [4, 8] and u [8]"))
    cs.append(case("store_value_broadcasts_to_pointer_shape",
                   "__global__ void k(int *U, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int u[4] = *(U + r);\n"
                   "  int *pz[4, 8] = Z + r[:, newaxis] * 8 + c[newaxis, :];\n"
                   "  *pz = u[:, newaxis];\n}\n",
                   [C.buf("U", i32, u), C.zeros("Z", i32, 32)],
                   {"Z": C.out([u[r] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.store", "memory.store", "dtype.int32"],
                   "a [4, 1] value stored through a [4, 8] pointer tile"))
    cs.append(case("store_scalar_through_pointer_tile",
                   "__global__ void k(float *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = 2.5;\n}\n",
                   [C.zeros("Z", f32, 32)], {"Z": C.out([2.5] * 32, f32)},
                   ["broadcast.store", "broadcast.splat", "memory.store", "dtype.float32"],
                   "a scalar stored through a [4, 8] pointer tile"))
    # 5. pointer tiles
    M_, N_, LD = 4, 8, 5
    xs = [float(k) for k in range(64)]
    want = [xs[r + c * LD] for r in range(M_) for c in range(N_)]
    cs.append(case("pointer_tile_column_major_load",
                   "__global__ void k(float *X, float *Z, int ld) {\n  int rm[4] = 0 ... 4;\n"
                   "  int rn[8] = 0 ... 8;\n"
                   "  float *px[4, 8] = X + rm[:, newaxis] + rn[newaxis, :] * ld;\n"
                   "  *(Z + rm[:, newaxis] * 8 + rn[newaxis, :]) = *px;\n}\n",
                   [C.buf("X", f32, xs), C.zeros("Z", f32, 32),
                    {"name": "ld", "dtype": i32, "value": LD}],
                   {"Z": C.out(want, f32)},
                   ["broadcast.pointer", "memory.load", "dtype.float32"],
                   "X + rm[:, newaxis] + rn[newaxis, :] * ld is a float*[4, 8]"))
    cs.append(case("pointer_tile_row_broadcast",
                   "__global__ void k(int *X, int *Z) {\n  int rm[4] = 0 ... 4;\n"
                   "  int rn[8] = 0 ... 8;\n  int *px[4, 8] = X + rn[newaxis, :];\n"
                   "  *(Z + rm[:, newaxis] * 8 + rn[newaxis, :]) = *px;\n}\n",
                   [C.buf("X", i32, b), C.zeros("Z", i32, 32)],
                   {"Z": C.out([b[c] for r in range(4) for c in range(8)], i32)},
                   ["broadcast.pointer", "memory.load", "dtype.int32"],
                   "a [1, 8] pointer offset declared [4, 8]: every row reads the same"))
    cs.append(case("pointer_scalar_plus_offsets_2d",
                   "__global__ void k(int *X, int *Z) {\n  int rm[4] = 0 ... 4;\n"
                   "  int rn[8] = 0 ... 8;\n  int *base = X + 3;\n"
                   "  int v[4, 8] = *(base + rm[:, newaxis] * 8 + rn[newaxis, :]);\n"
                   "  *(Z + rm[:, newaxis] * 8 + rn[newaxis, :]) = v;\n}\n",
                   [C.buf("X", i32, list(range(40))), C.zeros("Z", i32, 32)],
                   {"Z": C.out([3 + r * 8 + c for r in range(4) for c in range(8)], i32)},
                   ["broadcast.pointer", "memory.load", "dtype.int32"],
                   "a scalar pointer plus a [4, 8] offset tile"))
    # 6. masks broadcast to the pointer shape
    rows = [1, 0, 1, 1]
    cs.append(case("masked_store_row_mask_broadcasts",
                   "__global__ void k(bool *Mk, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  bool m[4] = *(Mk + r);\n"
                   "  int v[4, 8] = r[:, newaxis] * 10 + c[newaxis, :];\n"
                   "  *?(m[:, newaxis]) (Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("Mk", "bool", rows), C.zeros("Z", i32, 32)],
                   {"Z": C.out([(r * 10 + c) if rows[r] else 0 for r in range(4)
                                for c in range(8)], i32)},
                   ["broadcast.mask", "mask", "memory.store", "dtype.int32"],
                   "a [4, 1] mask on a [4, 8] pointer tile"))
    cols = [1, 1, 0, 1, 0, 0, 1, 1]
    cs.append(case("masked_load_column_mask_broadcasts",
                   "__global__ void k(bool *Mk, int *X, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  bool m[8] = *(Mk + c);\n"
                   "  int *px[4, 8] = X + r[:, newaxis] * 8 + c[newaxis, :];\n"
                   "  int v[4, 8] = m[newaxis, :] ? *px : -1;\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = v;\n}\n",
                   [C.buf("Mk", "bool", cols), C.buf("X", i32, list(range(100, 132))),
                    C.zeros("Z", i32, 32)],
                   {"Z": C.out([(100 + r * 8 + c) if cols[c] else -1 for r in range(4)
                                for c in range(8)], i32)},
                   ["broadcast.mask", "mask", "memory.load", "dtype.int32"],
                   "m[newaxis, :] ? *px : -1 with px [4, 8]"))
    # 7. 3-D
    A3, B3, C3 = [1, 2], [10, 20, 30, 40], [100 * k for k in range(1, 9)]
    want3, shape3 = bapply(lambda x, y, z: x + y + z, (A3, [2, 1, 1]), (B3, [1, 4, 1]),
                           (C3, [1, 1, 8]))
    assert shape3 == [2, 4, 8]
    cs.append(case("three_d_from_three_vectors",
                   "__global__ void k(int *A, int *B, int *Cv, int *Z) {\n"
                   "  int i[2] = 0 ... 2;\n  int j[4] = 0 ... 4;\n  int l[8] = 0 ... 8;\n"
                   "  int a[2] = *(A + i);\n  int b[4] = *(B + j);\n  int c[8] = *(Cv + l);\n"
                   "  int z[2, 4, 8] = a[:, newaxis, newaxis] + b[newaxis, :, newaxis] + "
                   "c[newaxis, newaxis, :];\n"
                   "  *(Z + i[:, newaxis, newaxis] * 32 + j[newaxis, :, newaxis] * 8 + "
                   "l[newaxis, newaxis, :]) = z;\n}\n",
                   [C.buf("A", i32, A3), C.buf("B", i32, B3), C.buf("Cv", i32, C3),
                    C.zeros("Z", i32, 64)],
                   {"Z": C.out(want3, i32)}, ["broadcast.3d", "broadcast.newaxis",
                                              "dtype.int32"],
                   "[2, 1, 1] + [1, 4, 1] + [1, 1, 8] -> [2, 4, 8]"))
    T = list(range(64))
    want3b, _ = bapply(lambda t, c, b: t * 1000 + c * 10 + b, (T, [2, 4, 8]), (C3, [8]),
                       (B3, [4, 1]))
    cs.append(case("three_d_left_pad_two_operands",
                   "__global__ void k(int *T, int *B, int *Cv, int *Z) {\n"
                   "  int i[2] = 0 ... 2;\n  int j[4] = 0 ... 4;\n  int l[8] = 0 ... 8;\n"
                   "  int *pt[2, 4, 8] = T + i[:, newaxis, newaxis] * 32 + "
                   "j[newaxis, :, newaxis] * 8 + l[newaxis, newaxis, :];\n"
                   "  int t[2, 4, 8] = *pt;\n  int c[8] = *(Cv + l);\n"
                   "  int b[4, 1] = (*(B + j))[:, newaxis];\n"
                   "  *(Z + i[:, newaxis, newaxis] * 32 + j[newaxis, :, newaxis] * 8 + "
                   "l[newaxis, newaxis, :]) = t * 1000 + c * 10 + b;\n}\n",
                   [C.buf("T", i32, T), C.buf("B", i32, B3), C.buf("Cv", i32, C3),
                    C.zeros("Z", i32, 64)],
                   {"Z": C.out(want3b, i32)}, ["broadcast.3d", "broadcast.left_pad",
                                               "dtype.int32"],
                   "[2, 4, 8] + [8] + [4, 1] -> [2, 4, 8]"))
    # 8. comparisons, select and reductions over broadcast values
    x4, y8 = [3, -1, 7, 0], [0, 1, 2, 3, 4, 5, 6, 7]
    cs.append(case("select_with_broadcast_condition",
                   "__global__ void k(int *X, int *Y, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int x[4] = *(X + r);\n  int y[8] = *(Y + c);\n"
                   "  int z[4, 8] = select(x[:, newaxis] < y[newaxis, :], x[:, newaxis], "
                   "y[newaxis, :]);\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = z;\n}\n",
                   [C.buf("X", i32, x4), C.buf("Y", i32, y8), C.zeros("Z", i32, 32)],
                   {"Z": C.out([min(x, y) for x in x4 for y in y8], i32)},
                   ["broadcast.newaxis", "select", "comparison", "dtype.int32"],
                   "select(x[:, newaxis] < y[newaxis, :], ...) is an outer minimum"))
    sums = [sum(x * y for x in x4) for y in y8]
    cs.append(case("reduce_after_broadcast",
                   "__global__ void k(int *X, int *Y, int *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int x[4] = *(X + r);\n  int y[8] = *(Y + c);\n"
                   "  int p[4, 8] = x[:, newaxis] * y[newaxis, :];\n"
                   "  *(Z + c) = p[+, :];\n}\n",
                   [C.buf("X", i32, x4), C.buf("Y", i32, y8), C.zeros("Z", i32, 8)],
                   {"Z": C.out(sums, i32)}, ["broadcast.newaxis", "reduction", "dtype.int32"],
                   "sum over axis 0 of an outer product"))
    cs.append(case("range_outer_index",
                   "__global__ void k(int *Z) {\n"
                   "  int idx[4, 8] = (0 ... 4)[:, newaxis] * 8 + (0 ... 8)[newaxis, :];\n"
                   "  *(Z + idx) = idx * 3;\n}\n",
                   [C.zeros("Z", i32, 32)], {"Z": C.out([3 * k for k in range(32)], i32)},
                   ["broadcast.newaxis", "range", "dtype.int32"],
                   "(0 ... 4)[:, newaxis] * 8 + (0 ... 8)[newaxis, :]"))
    cs.append(case("promotion_and_broadcast_together",
                   "__global__ void k(int8 *X, float *Y, float *Z) {\n  int r[4] = 0 ... 4;\n"
                   "  int c[8] = 0 ... 8;\n  int8 x[4] = *(X + r);\n  float y[8] = *(Y + c);\n"
                   "  *(Z + r[:, newaxis] * 8 + c[newaxis, :]) = x[:, newaxis] + y;\n}\n",
                   [C.buf("X", "int8", [-128, 127, 1, 0]),
                    C.buf("Y", f32, [0.5 * k for k in range(8)]), C.zeros("Z", f32, 32)],
                   {"Z": C.out([x + 0.5 * k for x in [-128, 127, 1, 0] for k in range(8)], f32)},
                   ["broadcast.left_pad", "promotion", "dtype.int8", "dtype.float32"],
                   "int8[4, 1] + float[8] -> float[4, 8]"))
    # 9. tile-size independence with list-valued defines and a boundary mask
    Mr, Nc, LDX = 6, 10, 10
    X2 = [float(k) for k in range(Mr * Nc)]
    want2 = [X2[r * LDX + c] * 2 + r - c for r in range(Mr) for c in range(Nc)]
    cs.append(case("blocked_2d_copy_any_tile_size",
                   "__global__ void k(float *X, float *Z, int M, int N) {\n"
                   "  int rm[TM] = get_program_id(0) * TM + 0 ... TM;\n"
                   "  int rn[TN] = get_program_id(1) * TN + 0 ... TN;\n"
                   "  bool m[TM, TN] = (rm < M)[:, newaxis] && (rn < N)[newaxis, :];\n"
                   "  float *px[TM, TN] = X + rm[:, newaxis] * N + rn[newaxis, :];\n"
                   "  float x[TM, TN] = m ? *px : 0;\n"
                   "  *?(m) (Z + rm[:, newaxis] * N + rn[newaxis, :]) = x * 2 + rm[:, newaxis] - "
                   "rn[newaxis, :];\n}\n",
                   [C.buf("X", f32, X2), C.zeros("Z", f32, Mr * Nc),
                    {"name": "M", "dtype": i32, "value": Mr},
                    {"name": "N", "dtype": i32, "value": Nc}],
                   {"Z": C.out(want2, f32)},
                   ["broadcast.pointer", "broadcast.mask", "mask", "variants", "dtype.float32"],
                   "a blocked copy over a 6 x 10 matrix; results do not depend on TM, TN",
                   defines={"TM": [1, 4, 8], "TN": [2, 16]},
                   grid=["cdiv(M, TM)", "cdiv(N, TN)"]))
    return cs


def invalid_cases():
    cs = []
    E = error_case
    cs.append(E("incompatible_16_and_8",
                "__global__ void k(float *Z) {\n  float a[16] = 0;\n  float b[8] = 0;\n"
                "  float c[16] = a + b; // error\n}\n",
                "incompatible shapes [16] and [8] (axis 0: 16 vs 8)", [],
                "[16] + [8]"))
    cs.append(E("incompatible_16x8_and_8x8",
                "__global__ void k(float *Z) {\n  float x[16, 8] = 0;\n  float y[8, 8] = 0;\n"
                "  float z[8, 8] = x + y; // error\n}\n",
                "incompatible shapes [16, 8] and [8, 8] (axis 0: 16 vs 8)", [],
                "the example of docs/semantics.md section 3"))
    cs.append(E("incompatible_after_left_pad",
                "__global__ void k(float *Z) {\n  float a[4, 2] = 0;\n  float b[4] = 0;\n"
                "  float c[4, 4] = a * b; // error\n}\n",
                "incompatible shapes [4, 2] and [4] (axis 1: 2 vs 4)", ["broadcast.left_pad"],
                "[4] is padded to [1, 4]: axis 1 has 2 vs 4"))
    cs.append(E("incompatible_transposed",
                "__global__ void k(float *Z) {\n  float a[2, 4] = 0;\n  float b[4, 2] = 0;\n"
                "  float c[4, 4] = a - b; // error\n}\n",
                "incompatible shapes [2, 4] and [4, 2]", [], "[2, 4] - [4, 2]"))
    cs.append(E("incompatible_3d",
                "__global__ void k(float *Z) {\n  float a[2, 4, 8] = 0;\n  float b[4, 4] = 0;\n"
                "  float c[2, 4, 8] = a + b; // error\n}\n",
                "incompatible shapes [2, 4, 8] and [4, 4] (axis 2: 8 vs 4)", ["broadcast.3d"],
                "[2, 4, 8] + [4, 4]"))
    cs.append(E("incompatible_comparison",
                "__global__ void k(float *Z) {\n  int a[4] = 0 ... 4;\n  int b[8] = 0 ... 8;\n"
                "  bool c[8] = a < b; // error\n}\n",
                "incompatible shapes [4] and [8]", ["comparison"], "comparisons broadcast too"))
    cs.append(E("incompatible_pointer_offsets",
                "__global__ void k(float *Z) {\n  int a[4] = 0 ... 4;\n  int b[8] = 0 ... 8;\n"
                "  *(Z + a + b) = 1.0; // error\n}\n",
                "incompatible shapes", ["broadcast.pointer"],
                "a float*[4] plus an int[8] offset"))
    cs.append(E("incompatible_select",
                "__global__ void k(float *Z) {\n  int a[4] = 0 ... 4;\n  int b[8] = 0 ... 8;\n"
                "  int c[8] = select(b > 2, a, b); // error\n}\n",
                "incompatible shapes", ["select"], "select's operands broadcast together"))
    cs.append(E("init_does_not_broadcast",
                "__global__ void k(float *Z) {\n  float x[16] = 0;\n"
                "  float z[8] = x; // error\n}\n",
                "shape [16] does not broadcast to [8]", ["broadcast.init"],
                "an initialiser must broadcast to the declared shape"))
    cs.append(E("init_rank_grows_wrong_axis",
                "__global__ void k(float *Z) {\n  float x[4] = 0;\n"
                "  float z[4, 8] = x; // error\n}\n",
                "shape [4] does not broadcast to [4, 8]", ["broadcast.init",
                                                            "broadcast.left_pad"],
                "[4] is padded on the left to [1, 4], which does not broadcast to [4, 8]"))
    cs.append(E("assign_cannot_shrink_rank",
                "__global__ void k(float *Z) {\n  float a[4] = 0;\n  float b[2, 4] = 0;\n"
                "  a = b; // error\n}\n",
                "does not broadcast", ["broadcast.assign"],
                "an assignment must broadcast to the variable's shape"))
    cs.append(E("compound_assign_result_too_big",
                "__global__ void k(float *Z) {\n  float a[4] = 0;\n  float b[2, 4] = 0;\n"
                "  a += b; // error\n}\n",
                "does not broadcast", ["broadcast.assign", "assignment.compound"],
                "a += b: a + b is [2, 4], which does not fit a [4] variable"))
    cs.append(E("store_value_bigger_than_pointer",
                "__global__ void k(float *Z) {\n  float v[8] = 0;\n"
                "  *(Z + (0 ... 4)) = v; // error\n}\n",
                "does not broadcast", ["broadcast.store"],
                "a [8] value stored through a [4] pointer tile"))
    cs.append(E("mask_shape_mismatch",
                "__global__ void k(float *Z) {\n  bool m[8] = (0 ... 8) < 3;\n"
                "  float v[4] = *?(m) (Z + (0 ... 4)); // error\n}\n",
                "does not broadcast to the pointer shape", ["broadcast.mask", "mask"],
                "a [8] mask on a [4] pointer tile"))
    return cs


def main():
    cases = valid_cases() + invalid_cases()
    for c in cases:
        dts = set()
        for a in c["args"]:
            dts.add(a["dtype"])
        for d in sorted(dts):
            if "dtype." + d not in c["features"]:
                c["features"].append("dtype." + d)
    C.write_suite("broadcast.json", "broadcast",
                  "docs/semantics.md rule 3: NumPy broadcasting of tiles, pointers, masks, "
                  "initialisers, assignments and stores, and the incompatible-shape errors. "
                  "Generated by conformance/gen/broadcast.py.", cases)


if __name__ == "__main__":
    main()
