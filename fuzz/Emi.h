//===- Emi.h - Equivalence-modulo-inputs variants of generated kernels ----===//
//
// EMI (docs/fuzz.md, "EMI variants"): a variant of a generated kernel gets a
// fresh pointer parameter `EMI` (int32[4], contents {0, 0, 1, 0} that the
// harness controls) and, at statement boundaries of the kernel's body, code
// behind predicates loaded from it, so the compiler cannot fold them:
//   dead   `if (emiP != 0) { ...overwrite a live variable... }`, `if (emiP != 0)
//          return;`, zero-trip loops `for (i = 0; i < emiB; i++)`, barriers
//          behind a dead predicate, and stores under a never-true mask
//          `*?(m && (emiP != 0)) p = v + 1`;
//   live   re-evaluations of the declaration just made (reductions and `@`,
//          which need barriers in the GPU code) inside `if (emiU != 0)` or a
//          one-trip loop on `emiU`, with or without `__debug_barrier()`
//          (barriers inside divergent-looking, uniform control flow).
// The variant must compute exactly what the plain kernel computes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Generator.h"
#include "runtime/Launch.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tc::fuzz {

/// The name of the variant's extra parameter.
inline constexpr const char *kEmiBuffer = "EMI";

/// A stable hash of the kernel (source and defines): FNV-1a.
uint64_t kernelHash(const FuzzKernel &k);

/// Whether kernel `k` gets an EMI variant at `rate` (deterministic in `k`).
bool emiSelected(const FuzzKernel &k, double rate);

/// An EMI variant of `k` drawn with `seed` (deterministic in both); nullopt
/// when `k` has no kernel body the transformation understands. The variant's
/// features are `k`'s plus "emi" and one "emi.<kind>" per kind of code added.
/// Test hook: TC_FUZZ_TEST_EMI_TAKEN=1 fills the predicate buffer so that the
/// dead code runs (the variant then differs: the oracles must say so).
std::optional<FuzzKernel> emiVariant(const FuzzKernel &k, uint64_t seed);

/// The first element where `got` (a variant's buffers) differs bit for bit from
/// `plain` (the plain kernel's buffers), NaN matching NaN; "" when none.
std::string emiDifference(const std::map<std::string, HostArray> &plain,
                          const std::map<std::string, HostArray> &got);

} // namespace tc::fuzz
