//===- Specialize.h - Argument specialisation at launch ------------------===//
//
// As Triton does, a GPU launch classifies each integer and pointer argument
// and compiles the kernel for that class (docs/gpu-perf.md, "Argument
// specialisation"):
//
//   integer parameter (not bool):  equal to 1 | divisible by 16 | neither
//   pointer parameter:             16-byte aligned | not
//
// The class is given to the compiler exactly as the promises a user can write:
// "divisible by 16" as `__multipleof(16)` on the parameter, "16-byte aligned"
// as `__aligned(16)`, and "equal to 1" by using the constant 1 in place of the
// parameter (so `offs * stride` with stride 1 is proven contiguous). The
// specialised kernel is a copy; the kernel's own IR and its launch checks
// (a broken `__multipleof` still traps) do not change. Caches key on
// Specialization::key(), so a launch never runs code compiled for another class.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "runtime/Launch.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// The class of one argument. Pointers are Any or Div16 (16-byte aligned).
enum class ArgClass : uint8_t { Any, Div16, One };

/// The class's character in Specialization::key(): '.' Any, 'D' Div16, '1' One.
inline char classChar(ArgClass c) {
  return c == ArgClass::Div16 ? 'D' : c == ArgClass::One ? '1' : '.';
}

/// Whether parameters of type `t` are classified (pointers and integers, not bool).
bool isSpecializable(const ir::Type &t);

/// An integer's class: One when it is 1, Div16 when a multiple of 16 (0 too), else Any.
ArgClass classifyInteger(int64_t v);
/// An unsigned 64-bit integer's class (values above INT64_MAX are Div16 or Any).
ArgClass classifyUnsigned(uint64_t v);
/// A device address's class: Div16 when 16-byte aligned, else Any.
ArgClass classifyPointer(uint64_t address);

/// One class per kernel parameter, in order.
struct Specialization {
  std::vector<ArgClass> params;

  /// Whether every class is Any (the kernel compiles as written).
  bool generic() const;
  /// Text for cache keys: one character per parameter ('.' Any, 'D' Div16,
  /// '1' One), e.g. "spec=1.DD"; "spec=" for a kernel without parameters.
  std::string key() const;
  bool operator==(const Specialization &) const = default;
};

/// The class of parameter `i` of `fn` from its raw bits as cuLaunchKernel takes
/// them (a pointer's address; a scalar's value in its own width, as
/// scalarArgumentBits makes it).
ArgClass classifyBits(const ir::Type &t, uint64_t bits);

/// The specialisation of a launch whose parameter i has raw bits `values[i]`.
Specialization classifyValues(const ir::Function &fn, const uint64_t *values);

/// The specialisation of a launch with `args` (checked by checkLaunchArguments):
/// scalars by value; pointers by `address(name, array)`, the device address the
/// kernel will get.
template <typename AddressFn>
Specialization classifyArgs(const ir::Function &fn, const LaunchArgs &args, AddressFn address) {
  std::vector<uint64_t> values(fn.numParams());
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const ir::Type &t = fn.param(i)->type();
    const std::string &name = fn.paramName(i);
    if (t.isPtr) {
      const HostArray *a = args.buffer(name);
      values[i] = a ? address(name, *a) : 1;
    } else if (const ScalarValue *v = args.scalar(name)) {
      values[i] = scalarArgumentBits(*v, t.dtype).value_or(3);
    }
  }
  return classifyValues(fn, values.data());
}

/// "N=16,stride=1,X=16": the parameters that are not Any, by name ("" when none).
std::string describeSpecialization(const ir::Function &fn, const Specialization &s);

/// Parses tritonc's `--specialize` text for `fn`: comma-separated `NAME=16`
/// (an integer divisible by 16, or a 16-byte aligned pointer) and `NAME=1` (an
/// integer equal to 1); parameters not named are Any. Errors name the part.
std::optional<Specialization> parseSpecialization(std::string_view text, const ir::Function &fn,
                                                  std::string &error);

/// A copy of `fn` (of `module`) compiled for `s`, in a module of its own (same
/// file table, same kernel name, same parameters in the same order, so the
/// launch ABI is unchanged): Div16 integers get multipleof lcm(claim, 16),
/// Div16 pointers aligned max(claim, 16), and each use of a One integer is the
/// constant 1; the default IR pipeline (fold, cse, dce) runs on the copy.
struct SpecializedKernel {
  std::unique_ptr<ir::Module> module;
  const ir::Function *function = nullptr;
};
SpecializedKernel specializeKernel(const ir::Module &module, const ir::Function &fn,
                                   const Specialization &s);

} // namespace tc
