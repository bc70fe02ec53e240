//===- AxisInfo.h - Contiguity, divisibility and constancy of tile values --===//
//
// Internal to codegen/ (no LLVM here). A forward analysis over the tile IR
// that tells the lowering which accesses can be vectorised and coalesced
// (docs/gpu-perf.md). For every value and every axis d of its shape:
//
//   contig[d]  the index along d splits into blocks of contig[d] (starting at
//              index 0, for every fixed index of the other axes) over which
//              the value goes up by one element (ints: +1; pointers: + one
//              pointee, i.e. byteSize bytes);
//   div[d]     a power of two dividing the first element of every such block
//              (pointers: of the address in bytes);
//   cnst[d]    the index along d splits into blocks of cnst[d] over which the
//              value does not change;
//   eltDiv     a power of two dividing every element (all axes).
//
// All four are powers of two (the tile dims are), at least 1. The analysis is
// sound for programs without traps, assuming integer offsets do not wrap
// around inside one contiguous block (as Triton's AxisInfo does). A loop-carried
// value that each trip leaves alone or steps by a uniform amount (`p + s`,
// `p - s` with s the same over the whole tile) keeps its initial value's
// contiguity and constancy, with divisibilities combined with the step's;
// other loop-carried values and everything else it does not model get the
// conservative answer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tc::codegen {

struct AxisInfo {
  std::vector<int64_t> contig, div, cnst; // one entry per axis (none for scalars)
  int64_t eltDiv = 1;

  /// What is known of any value of type t: nothing, except the natural
  /// alignment of pointers (byteSize of the pointee).
  static AxisInfo unknown(const ir::Type &t);
  bool operator==(const AxisInfo &) const = default;
};

/// The largest divisibility recorded (0 and other multiples of it get this).
constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

/// The largest power of two dividing v (kMaxDivisibility for 0, capped).
int64_t powerOfTwoFactor(int64_t v);

class AxisAnalysis {
public:
  /// Analyses every value of fn (parameters, op results in nested regions);
  /// with alignedPointers, pointer parameters are taken as 16-byte aligned.
  explicit AxisAnalysis(const ir::Function &fn, bool alignedPointers = false);

  /// The facts about v (the conservative answer for a value it did not see).
  AxisInfo info(const ir::Value *v) const;

  /// Divisibility (bytes for pointers) of the first element of every block of
  /// `run` consecutive elements along `axis` (blocks start at multiples of
  /// run), given that the value is contiguous over them (contig >= run);
  /// `unit` is the bytes of one element step (1 for integers).
  static int64_t runDivisibility(const AxisInfo &a, size_t axis, int64_t run, int64_t unit);

  /// For a loop-carried tile (a loop's region argument, or a while body's
  /// argument its condition forwards one to) that every trip yields unchanged
  /// or stepped by an amount the same over the whole tile: its initial value
  /// (then v = init + D elementwise, D one value for the whole tile in each
  /// trip). Null for anything else.
  const ir::Value *steppedFrom(const ir::Value *v) const;

private:
  void visitBlock(const ir::Block &b);
  void visitOp(const ir::Op &op);
  void visitLoop(const ir::Op &op);
  void visitLoopRegions(const ir::Op &op);
  AxisInfo carriedInfo(const ir::Op &op, size_t i);
  AxisInfo stepped(const ir::Value *init, const ir::Value *step, bool scale) const;
  bool uniformStep(const ir::Value *step) const;
  AxisInfo compute(const ir::Op &op);
  AxisInfo addLike(const ir::Op &op, bool sub);
  AxisInfo mul(const ir::Op &op);
  AxisInfo compare(const ir::Op &op);
  AxisInfo constant(const ir::Op &op);
  AxisInfo broadcast(const ir::Op &op);
  AxisInfo expandDims(const ir::Op &op);
  AxisInfo trans(const ir::Op &op);
  AxisInfo cast(const ir::Op &op);
  AxisInfo neg(const ir::Op &op);
  /// Unknown, except that constancy survives every elementwise op.
  AxisInfo elementwiseDefault(const ir::Op &op);

  std::unordered_map<const ir::Value *, AxisInfo> infos_;
  std::unordered_map<const ir::Value *, const ir::Value *> steppedInit_;
};

} // namespace tc::codegen
