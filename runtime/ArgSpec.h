//===- ArgSpec.h - Kernel arguments from `--arg NAME=SPEC` ----------------===//
//
// The command-line notation for kernel arguments, shared by the tools:
//
//   N=5000  x=1.5  flag=true  bits=0x7fc00000     a scalar; its dtype is the parameter's
//   zeros:f32[5000]                                 a buffer of zeros
//   full:V:f32[64,32]                               every element V
//   arange:i32[128]                                 element i is i (converted as C does)
//   rand:f32[N]                                     uniform in [0, 1)
//   randn:f32[5000]                                 about normal(0, 1) (Irwin-Hall, see below)
//   randint:LO:HI:i32[100]                          integers in [LO, HI] (also for float dtypes)
//   ...:seed=S                                      (random kinds) a fixed seed
//   @file.npy                                       a NumPy file (its dtype must match)
//
// The dtype may be an IR name (f32, i32, bf16, i1, ...), a conformance name
// (float32, int32, bfloat16, bool, ...) or a C name (float, double, half,
// int); it may be left out (`zeros:[N]`), and then is the parameter's. Shape
// dimensions and randint bounds are integer expressions over integer literals,
// the defines and the integer scalar arguments (GridExpr.h): `zeros:f32[N]`.
//
// Values (scalars, `full`): integers in decimal (must fit the dtype); floats
// in decimal (rounded to nearest even; f32 directly from the decimal, f16 and
// bf16 through double), `nan`, `inf`, `-inf`; `true`/`false` for bool; and
// raw bits `0x...` with at most as many hex digits as the dtype has.
//
// Random generators (deterministic and identical on every platform, standard
// library, thread count and chunking; no <random> distributions and no libm).
// The seed S is `:seed=S`, or without it splitmix64(defaultSeed ^ fnv1a(NAME)),
// so that two arguments never share a stream. Every element is computed from
// its flat row-major index i alone (counter-based, so buffers are filled in
// parallel), from 64-bit words of SplitMix64 streams:
//   splitmix64(x): x += 0x9e3779b97f4a7c15; x = (x ^ (x >> 30)) *
//            0xbf58476d1ce4e5b9; x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
//            x ^ (x >> 31) (Steele, Lea and Flood's SplitMix64, one step);
//   W_k(i) = splitmix64(K_k + i * 0x9e3779b97f4a7c15), output i of the
//            SplitMix64 generator seeded with K_k; K_0 = S,
//            K_k = splitmix64(S + k * 0x632be59bd9b4e019) for k >= 1;
//   rand:    W_0(i) >> (64 - p) times 2^-p, p = the dtype's significand bits
//            (11 f16, 8 bf16, 24 f32, 53 f64): exact in the dtype and always
//            in [0, 1);
//   randn:   Irwin-Hall of 12 uniforms: the three 21-bit fields (bits 63-43,
//            42-22, 21-1) of each of W_0(i) .. W_3(i), f, as (f + 1/2) * 2^-21,
//            summed minus 6 (exact in binary32), then rounded to the dtype:
//            mean 0, variance 1 - 2^-42, symmetric, within (-6, 6);
//   randint: LO + floor(x * r / 2^64), r = HI - LO + 1, x = W_0(i) (Lemire's
//            method: drawing again from W_1(i), W_2(i), ... while
//            (x * r) mod 2^64 < 2^64 mod r, so there is no bias); r = 2^64
//            takes x itself; float dtypes get the integer rounded to nearest
//            even.
// These streams are not the conformance suite's `random` inputs
// (conformance/Random.h, std::mt19937_64 drawn in order).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/GridExpr.h"
#include "runtime/Launch.h"
#include "support/FileIO.h"
#include "support/Npy.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// One `--arg NAME=SPEC`, parsed but not yet made (shapes may depend on defines
/// and scalar arguments, which differ between variants).
struct ArgSpec {
  enum class Kind : uint8_t { Scalar, Zeros, Full, Arange, Rand, Randn, Randint, File };
  std::string name;
  std::string text; // SPEC as written, for messages
  Kind kind = Kind::Scalar;
  std::string value;              // Scalar: the value; Full: V
  std::string low, high;          // Randint: bound expressions
  std::optional<DType> dtype;     // buffers: as written; none: the parameter's
  std::vector<std::string> shape; // dimension expressions
  std::optional<uint64_t> seed;
  std::string path; // File

  bool isBuffer() const { return kind != Kind::Scalar; }
};

/// Parses `NAME=SPEC` (syntax only). Errors name the bad part.
std::optional<ArgSpec> parseArgSpec(std::string_view text, std::string &error);

/// A dtype from its IR, conformance or C name.
std::optional<DType> parseDTypeName(std::string_view name);

/// Parses a value of dtype `t` into its bit pattern (see the header comment).
std::optional<uint64_t> parseValueBits(std::string_view text, DType t, std::string &error);

/// A scalar argument of dtype `t` from a Scalar spec.
std::optional<ScalarValue> makeScalar(const ArgSpec &spec, DType t, std::string &error);

struct BufferOptions {
  uint64_t defaultSeed = 0;              // the tools' --seed
  bool bf16FromU2 = false;               // --bf16-as-u2: read u2/V2 .npy files as bf16
  std::string baseDir;                   // relative @file paths are taken from here ("" = cwd)
  uint64_t maxBytes = kMaxBufferBytes;   // largest buffer made
  uint64_t maxTotalBytes = kMaxLaunchBufferBytes; // all buffers of one bindArgs together
};

/// Makes the buffer of a buffer spec for a parameter pointing to `pointee`;
/// `env` gives the names usable in shapes and bounds.
std::optional<HostArray> makeBuffer(const ArgSpec &spec, DType pointee, const ExprEnv &env,
                                    const BufferOptions &opts, std::string &error);

/// The seed a random spec uses (its own, or derived from the default and the name).
uint64_t effectiveSeed(const ArgSpec &spec, uint64_t defaultSeed);

/// Arguments bound for one launch: owns the buffers that `args` points to.
struct BoundArgs {
  LaunchArgs args;
  std::map<std::string, HostArray> arrays; // map nodes never move
  /// "--arg s=1e40: 1e40 overflows float32 and becomes infinity": a value
  /// rounded to infinity (the rounding is the rule; the warning says so).
  std::vector<std::string> warnings;
};

/// Binds every parameter of `kernel` from `specs`: unknown or repeated names,
/// missing parameters ("missing --arg for parameter 'c' (float*)") and a scalar
/// given for a pointer (or the reverse) are errors that list the parameters.
/// Scalars are made first, then buffers (their shapes may use the scalars).
bool bindArgs(const std::vector<ArgSpec> &specs, const CompiledKernel &kernel,
              const BufferOptions &opts, BoundArgs &out, std::string &error);

/// "int N, float* a, float* b, float* c": the parameters in the language's terms.
std::string describeParams(const ir::Function &f);

} // namespace tc
