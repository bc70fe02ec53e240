//===- PlantedBugs.cpp - The list of planted bugs and $TC_PLANT_BUG -------===//
//
// Each entry names one hook `if (plantedBug("name")) ...` at a real decision
// point of codegen/ ("gpu") or of an ir/ pass ("ir"). $TC_PLANT_BUG is read at
// every call (the hooks run at compile time only), so a test can setenv it.
//
//===----------------------------------------------------------------------===//
#include "support/PlantedBugs.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace tc {

const std::vector<PlantedBugInfo> &plantedBugList() {
  static const std::vector<PlantedBugInfo> kBugs = {
      // codegen/Lowerer.h
      {"mask-off-by-one", "gpu",
       "the ownership mask of a tile smaller than the block is tid <= n, not tid < n "
       "(thread n also owns element 0: stores and atomics happen twice)"},
      {"missing-barrier", "gpu",
       "no barrier between the shared-memory staging writes and the reads of a layout "
       "conversion (broadcast, trans)"},
      {"argmax-tie", "gpu", "argmax/argmin take the right operand on ties (the last index)"},
      {"reduce-acc-type", "gpu",
       "+ reductions accumulate in the operand type (fp16, bf16, int8, int16, uint8, uint16, "
       "bool) instead of the wider accumulator type"},
      {"dropped-fallback", "gpu", "masked-off lanes of `mask ? *p : other` get 0, not other"},
      {"atomic-max-unsigned", "gpu", "atomic_max/atomic_min on signed integers compare unsigned"},
      {"atomic-old-value", "gpu",
       "an atomic returns the operand it was given instead of the old memory value"},
      {"atomic-partword-stale", "gpu",
       "the compare-and-swap loop of an 8- or 16-bit atomic add/min/max/xchg reads the old "
       "element from its first load in every trip (LLVM 19's partword expansion did so at "
       "word offset 0): a retry after another thread's update overwrites it (a lost update)"},
      // codegen/LowerDot.cpp
      {"dot-acc-type", "gpu",
       "`@` multiplies in the input type (e.g. fp16, int8) and only adds in the accumulator "
       "type"},
      // codegen/LowerWgmma.cpp, LowerMmaLoop.cpp
      {"wgmma-swizzle", "gpu",
       "the cp.async copies of a wgmma loop swizzle 16-byte chunks by the wrong row bits"},
      {"wgmma-wait", "gpu",
       "no wgmma.wait_group after a wgmma loop: the last trip's products are read in flight"},
      {"int8-transpose", "gpu",
       "an int8 matmul loop on wgmma transposes its b stage with rows k + 2 and k + 3 in "
       "place of k and k + 1: half of every product reads the wrong b"},
      {"desc-step", "gpu",
       "option desc-steps keeps a wgmma descriptor's constant step (16-byte units) in 6 "
       "bits: a k step or fragment row 1 KiB or more into the operand's shared-memory block "
       "wraps to its start and reads the wrong rows"},
      {"wgmma-stage", "gpu",
       "a wgmma loop issues its copies one trip further ahead, into a stage still being read"},
      // codegen/ScalarEmit.cpp
      {"exp2-range-bound", "gpu",
       "option exp2-range takes exp2(max(x, c)) for c down to -127 (not -126) as never "
       "subnormal: for x below -126 the FTZ exponent flushes 2^c to zero"},
      // codegen/Prefetch.cpp
      {"prefetch-carried", "gpu",
       "option prefetch computes the next trip's loads from this trip's pointers where a "
       "pointer is carried from trip to trip (`p += 64`): every trip after the first reads "
       "the values of the trip before"},
      // codegen/ExitValues.cpp
      {"exit-value-step", "gpu",
       "option exit-values computes a stepped pointer's value after its loop one step short "
       "(init + (n - 1) * inc): code after the loop reads the last trip's addresses"},
      // codegen/LowerTma.cpp
      {"tma-row-end", "gpu",
       "a matmul loop on the TMA (8 warps) does not check that a trip's tile ends within its "
       "first row (lda < K): the tensor map's box reads zeros past the row's end where the "
       "tile reads the next row's elements"},
      {"int8-transpose-fence", "gpu",
       "an int8 matmul loop on wgmma transposes its b stage with generic-proxy stores and "
       "lets wgmma (the async proxy) read it after a barrier but without fence.proxy.async: "
       "the tensor cores may read the bytes from before the transposition"},
      {"tma-refill-barrier", "gpu",
       "a matmul loop on the TMA (8 warps) refills the stage of the trip before without the "
       "barrier after the products' wgmma.wait_group: thread 0's copy may land while another "
       "warpgroup's wgmma still reads that stage"},
      {"pipeline-wait-group", "gpu",
       "a pipelined matmul loop (mma.sync or wgmma) waits with cp.async.wait_group S-1, not "
       "S-2: a trip reads its stage before its copies have landed"},
      // codegen/LowerMmaValues.cpp
      {"values-pipeline-wait", "gpu",
       "the cp.async stages of an attention-style loop (`@` on #mma with streamed b operands) "
       "are waited for with cp.async.wait_group S-1, not S-2: a trip reads K and V before "
       "its copies have landed"},
      {"values-wgmma-wait", "gpu",
       "an `@` of an attention-style loop on wgmma (sm_90a, streamed b operands) waits with "
       "wgmma.wait_group 1, not 0, before its accumulators are read: the softmax reads S = "
       "Q K^T (and the next trip P @ V's acc) while the products may still run, and the next "
       "trip's copies may overwrite a stage that a wgmma still reads"},
      {"stages-start-barrier", "gpu",
       "an attention-style loop's values pipeline issues its first trips' copies without the "
       "barrier before them: they may land in memory another warp still reads as it did "
       "before the loop (a first loop's stages, as in causal attention's second loop, or a "
       "value staged through shared memory)"},
      {"values-wgmma-refill", "gpu",
       "an attention-style loop on wgmma whose P @ V wait is deferred to the next trip issues "
       "its cp.async copies one trip further ahead, into the stage trip i - 1 read: another "
       "warpgroup's P @ V of trip i - 1 (not waited for yet) may still read V there"},
      // codegen/LowerMma.h
      {"nested-pipelines", "gpu",
       "a loop whose trip runs a loop with an `@` is pipelined too (values or matmul "
       "pipeline): the inner loop's stages, at the same place in shared memory, overwrite the "
       "tiles the outer loop copied for the next trips"},
      {"key-perm-cols", "gpu",
       "with an attention loop's keys permuted (key-perm), masks recomputed at a slot's "
       "coordinates and conversions to the blocked layout take the slot's column as if the keys "
       "were in order"},
      {"mma-values-operand", "gpu",
       "an `@` on #mma whose fp16 a operand comes from registers (P of attention) packs its "
       "two n8 accumulator fragments in the wrong order: the a fragment's k 0-7 and 8-15 "
       "swapped"},
      // codegen/LowerDot.cpp
      {"mma-fragment", "gpu",
       "mma.sync takes the two k halves of b swapped in the second n8 fragment of each pair"},
      // codegen/LowerMemory.cpp
      {"vector-width", "gpu",
       "a 16-byte vector load fills its upper half with the lower half's lanes (as if 8 bytes "
       "wide)"},
      {"remat-axis", "gpu",
       "rematerialised index arithmetic drops the last coordinate at an expand_dims instead "
       "of the new axis"},
      // codegen/ScalarEmit.cpp
      {"bf16-truncate", "gpu", "fp32 -> bf16 truncates instead of rounding to nearest even"},
      {"float-to-int-round", "gpu",
       "float -> integer conversions round to nearest instead of truncating toward zero"},
      {"fdiv-approx", "gpu", "fp32 division is x * (1 / y) (two roundings)"},
      // codegen/Target.cpp
      {"fp-contract", "gpu",
       "LLVM may contract a * b + c into an fma (one rounding where the reference rounds the "
       "product, then the sum), as Triton's default fp fusion does"},
      // codegen/SharedDivisor.cpp
      {"shared-divisor-range", "gpu",
       "fp32 divisions that share a divisor take the reciprocal's fast path also for zero and "
       "subnormal operands (-0 / b gives +0, a / 0 gives NaN, a subnormal a / b may round "
       "wrong)"},
      {"umulhi-sign", "gpu", "umulhi takes signed operands as unsigned and vice versa"},
      {"shift-logical", "gpu", ">> on signed integers is a logical shift"},
      {"int-div-unsigned", "gpu", "signed integer division is emitted as udiv"},
      // runtime/Specialize.cpp
      {"spec-div8", "gpu",
       "argument specialisation classes integers divisible by 8 as divisible by 16 (a launch "
       "with 24 runs code compiled for __multipleof(16))"},
      // ir/ passes
      {"fold-sub-commute", "ir", "constant folding of integer a - b computes b - a"},
      {"cse-ignores-attrs", "ir",
       "CSE leaves attributes out of its key (e.g. constants 1 and 7 of one type merge)"},
      {"cse-ignores-dtype", "ir",
       "CSE merges ops that differ only in their result type (e.g. constants 0 : i8 and 0 : i32)"},
      {"dce-drops-atomic", "ir", "DCE removes atomic_* ops whose old value is unused"},
      {"canon-rem-one", "ir", "canonicalize rewrites integer x % 1 to x (as x / 1)"},
  };
  return kBugs;
}

#ifdef TC_PLANTED_BUGS

namespace {

/// The known bug $TC_PLANT_BUG names, or null (warns once about an unknown name).
const PlantedBugInfo *activeInfo() {
  const char *env = std::getenv("TC_PLANT_BUG");
  if (!env || !*env)
    return nullptr;
  for (const PlantedBugInfo &b : plantedBugList())
    if (std::strcmp(b.name, env) == 0)
      return &b;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::cerr << "warning: TC_PLANT_BUG=" << env
              << " names no planted bug (triton-fuzz --list-planted-bugs lists them)\n";
  return nullptr;
}

} // namespace

bool plantedBug(const char *name) {
  assert(std::any_of(plantedBugList().begin(), plantedBugList().end(),
                     [&](const PlantedBugInfo &b) { return std::strcmp(b.name, name) == 0; }) &&
         "a hook names a bug missing from plantedBugList()");
  const PlantedBugInfo *b = activeInfo();
  return b && std::strcmp(b->name, name) == 0;
}

std::string activePlantedBug() {
  const PlantedBugInfo *b = activeInfo();
  return b ? b->name : "";
}

#endif

} // namespace tc
