//===- LowerMma.h - Tensor-core plans shared by LowerDot and LowerMmaLoop -===//
//
// Internal to codegen/: how one `@` runs on mma.sync (LowerDot.cpp) and how a
// loop that accumulates `acc + a @ b` keeps acc in fragments and streams a
// and b through shared-memory stages with cp.async (LowerMmaLoop.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Lowerer.h"
#include "support/PlantedBugs.h"

#include <array>

namespace tc::codegen::lower {

/// Whether block b holds, at any depth, a loop with an `@` in it. A loop
/// whose body runs such a loop is not pipelined (matchStreams,
/// planValuePipes): every pipelined loop keeps its stages at pipeBase(), and
/// so does the nested loop's staging (its own stages, a matmul loop's
/// accumulator before and after it, its operands staged every trip), which
/// would overwrite the stages the outer loop filled trips ahead. A loop
/// without an `@` stages nothing there.
inline bool holdsLoopWithDot(const ir::Block &b) {
  if (plantedBug("nested-pipelines"))
    return false;
  bool found = false;
  ir::forEachOp(b, [&](const ir::Op &op, unsigned) {
    if (found || (op.kind() != ir::OpKind::For && op.kind() != ir::OpKind::While))
      return;
    for (size_t r = 0; r < op.numRegions() && !found; ++r)
      ir::forEachOp(*op.region(static_cast<unsigned>(r)), [&](const ir::Op &inner, unsigned) {
        found = found || inner.kind() == ir::OpKind::Dot;
      });
  });
  return found;
}

/// Whether c is the constant +0 (or a splat of it): a plain `a @ b`'s
/// accumulator, a masked load's `other` that a zero-filling copy gives.
bool isPositiveZero(const ir::Value *c);

// wgmma's canonical swizzled layouts (LowerWgmma.cpp's header): shared by the
// matmul loops and the values pipeline (LowerMmaValues.cpp).

/// Swizzle atoms are 8 rows of 128 bytes: stages and streams start at multiples.
constexpr size_t kSwizzleAlign = 1024;

inline size_t alignTo(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Loop structure, shared by the matmul loops (LowerMmaLoop.cpp) and the values
// pipeline (LowerMmaValues.cpp).

/// Whether v is defined inside `loop` (in any of its regions, at any depth).
inline bool definedInside(const ir::Value *v, const ir::Op &loop) {
  const ir::Block *b = v->definingOp() ? v->definingOp()->parentBlock() : v->ownerBlock();
  while (b) {
    const ir::Op *p = b->parentOp();
    if (!p)
      return false;
    if (p == &loop)
      return true;
    b = p->parentBlock();
  }
  return false;
}

/// The carried position of v when it is an argument of a loop's body (after a
/// `for`'s induction variable: the arguments from argBase on).
inline std::optional<size_t> carriedPos(const ir::Value *v, const ir::Block *body,
                                        unsigned argBase) {
  if (v->definingOp() || v->ownerBlock() != body || v->index() < argBase)
    return std::nullopt;
  return v->index() - argBase;
}

/// The swizzled row width for rows of `bytes` (0: none fits).
inline int64_t swizzleWidth(int64_t bytes) {
  if (bytes == 32 || bytes == 64)
    return bytes;
  return bytes % 128 == 0 ? 128 : 0;
}

/// Byte offset of byte column kb in a K-major tile of `rows` rows staged with
/// rows of w bytes (a wider row cut into column blocks of rows x w bytes).
inline int64_t kMajorOffset(int64_t kb, int64_t rows, int64_t w) {
  return (kb / w) * rows * w + kb % w;
}

/// The descriptor's swizzle mode for rows of w bytes.
inline uint64_t swizzleMode(int64_t w) { return w == 128 ? 1 : w == 64 ? 2 : 3; }

/// A matrix descriptor's constant fields (PTX ISA, "Matrix Descriptor
/// Format"): leading and stride byte offsets, the swizzle mode of rows of w bytes.
inline uint64_t descriptorBits(int64_t leading, int64_t stride, int64_t w) {
  return (static_cast<uint64_t>(leading >> 4) << 16) | (static_cast<uint64_t>(stride >> 4) << 32) |
         (swizzleMode(w) << 62);
}

/// The byte offset, in a tile staged in wgmma's swizzled canonical layout with
/// rows of w bytes (a wider row cut into column blocks of w bytes, one after
/// the other, each of `rows` rows), of byte colBytes of row `row` (i32
/// values): the 16-byte chunks of each 8-row group XOR-swizzled as the
/// hardware reads them (Swizzle<log2(w / 16), 4, 3> of the address).
llvm::Value *swizzledOffset(llvm::IRBuilder<> &b, int64_t w, int64_t rows, llvm::Value *row,
                            llvm::Value *colBytes);

/// The row at which the values pipeline stages row r (i32) of a hoisted a
/// operand of m rows read by wgmma from shared memory: warp v of warpgroup g
/// owns rows (4 g + v) tm + 16 i + t (t < 16) of fragment row i, which wgmma
/// reads as row 16 v + t of the 64-row block g * fragsM + i.
llvm::Value *aStagedRow(llvm::IRBuilder<> &b, int64_t m, int64_t numWarps, llvm::Value *r);

/// How one `@` runs on mma.sync; element offsets and pitches are in elements
/// of the staged array, `off*` in bytes from the start of shared memory.
struct Lowerer::MmaPlan {
  const ir::Type *a = nullptr, *b = nullptr, *c = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int64_t kStep = 16;            // the instruction's k
  int64_t tileM = 0, tileN = 0;  // one warp tile
  int64_t tilesN = 0, tiles = 0; // warp tiles per row of tiles, and in all
  int64_t pitchA = 0, pitchB = 0, pitchC = 0;
  size_t offA = 0, offB = 0, offC = 0, bytes = 0;
  bool bTransposed = false; // b staged as n rows of k (int8)
  bool zeroAcc = false;     // acc is +0: fragments start at 0, nothing staged
  bool roundAcc = false;    // accumulate in the input type (planted bug)
  int64_t fragsM() const { return tileM / 16; }
  int64_t fragsN() const { return tileN / 8; }
  int64_t chunk() const { return 16 / static_cast<int64_t>(byteSize(a->dtype)); } // 16 bytes
};

/// This lane's element indices in the staged a, b (at k = 0) and acc for one
/// warp tile.
struct Lowerer::MmaTile {
  llvm::Value *a = nullptr, *b = nullptr, *c = nullptr;
};

/// A loop whose body accumulates `acc = acc + a @ b` (the tutorial's matmul)
/// and how LowerMmaLoop.cpp runs it. Positions are indices of the carried
/// values (for a `for`, after the induction variable).
struct Lowerer::MmaLoop {
  const ir::Op *loop = nullptr;
  bool isFor = false;
  const ir::Block *body = nullptr;
  const ir::Block *cond = nullptr;     // while: the condition region
  const ir::Op *condOp = nullptr;      // while: its `condition`
  const ir::Op *yield = nullptr;
  unsigned argBase = 0;                // body arguments before the carried values
  size_t carried = 0;
  const ir::Op *dot = nullptr;
  size_t accPos = 0;
  MmaPlan p;
  int64_t tilesPerWarp = 0;
  /// A dot operand loaded through a loop-carried pointer tile stepped by a
  /// uniform, loop-invariant offset: copied to shared memory with cp.async.
  struct Stream {
    const ir::Op *load = nullptr, *step = nullptr;
    size_t pos = 0;
    const ir::Value *inc = nullptr; // the step's offset tile (uniform)
    const ir::Type *tile = nullptr;
    int64_t rows = 0, cols = 0, pitch = 0;
    size_t off = 0; // bytes from the start of a stage
    // wgmma: rows of `swizzle` bytes (32, 64 or 128; a wider row is cut into
    // column blocks of that width, one after the other), 16-byte chunks
    // XOR-swizzled as the hardware reads them; 0: rows `pitch` elements apart.
    int64_t swizzle = 0;
    // int8 b of a wgmma loop (transposeB): copied as it is in memory, rows of
    // `pitch` bytes, the 16-byte chunk c of row r at chunk c ^ ((r >> 2) mod
    // X) (X the largest power of two <= 8 dividing the chunks of a row), so
    // that the transposition's reads of 8 rows 4 apart hit 8 different bank
    // groups (rawChunk).
    bool xorRows = false;
    // mma-values pipeline (LowerMmaValues.cpp): the tile is contiguous along
    // axis 0 (K^T from K's rows) and staged as cols rows of `rows` elements,
    // as it is in memory; `user` is the `@` that reads it as its b operand.
    bool transposed = false;
    const ir::Op *user = nullptr;
    // mma-values pipeline, option key-perm (planKeyPermutation): the staged
    // rows (keys: K^T's columns, V's rows) in the permuted order of the #mma
    // columns, key 2 (keyPerm / 8) t + 2j + e at row 8j + 2t + e; 0: in order.
    int64_t keyPerm = 0;
    // The pointer tile recomputed each trip from the carried scalars (not
    // stepped: `ptr`, the load's operand), and the load's mask (null: none;
    // its `other` is +0, which cp.async's zero fill gives), both evaluated at
    // each chunk's coordinates for the trip S - 1 ahead.
    bool recomputed = false;
    const ir::Value *ptr = nullptr, *mask = nullptr;
    // wgmma values pipeline: the user's a operand is loop-invariant (Q of
    // attention, hoisted) and staged once, before the loop, in its own
    // 1024-byte-aligned region at aOff bytes from pipeBase() (past every
    // loop's stages): m rows of k in the K-major layout swizzled as a stream's
    // (rows of aSwizzle bytes, wider rows cut into column blocks), the rows
    // permuted so that the 64 rows wgmma gives warpgroup g for fragment row i
    // of its warps are rows 64 (g * fragsM + i) .. + 63 (aStagedRow). wgmma
    // reads it through a descriptor: no registers for Q in the loop.
    bool aShared = false;
    // Option late-q: a (Q) defined in the loop's block is stored into its
    // region in the loop's prologue, after the first trips' copies are
    // issued, so that the load's latency and theirs overlap; the first trip's
    // wait and barrier publish it (no barriers of its own). Else it is stored
    // where it is defined, between two barriers.
    bool aLate = false;
    size_t aOff = 0;
    int64_t aSwizzle = 0;
    // Option tma (LowerTma.cpp): the tensor map (an index into the kernel's
    // hidden parameters) over `P + r * ld + c` that copies the tile; the
    // pointer parameter P, the row pitch ld; the 32-bit offset tiles of the
    // pointer's sums with their forms along each axis, whose values must not
    // wrap for the map's addresses to be the pointer tile's.
    int tmaMap = -1;
    unsigned tmaPtr = 0;
    TmaCoef tmaLd;
    std::vector<TmaNarrow> tmaNarrow;
    /// Bytes of the user's a operand (its staged region when aShared).
    size_t aBytes() const {
      const ir::Type &a = user->operand(0)->type();
      return static_cast<size_t>(a.numElements()) * byteSize(a.dtype);
    }
  };
  std::array<Stream, 2> streams;
  size_t numStreams = 2; // the mma-values pipeline may stream one tile only
  bool pipelined = false;
  bool wgmma = false;       // the k steps on wgmma.mma_async (a warpgroup per 64 rows)
  // wgmma with fewer 64-row blocks than warpgroups (64-row tiles on 8 warps):
  // the n columns split between splitN warpgroups per 64-row block, warpgroup
  // g taking rows 64 (g / splitN) .. and columns (g mod splitN) n / splitN ..
  // (Triton's warpsPerCTA [4 G / splitN, splitN]); 1: each warpgroup its
  // own 64-row blocks, all n columns.
  int64_t splitN = 1;
  // int8 on wgmma: both operands must be K-major in shared memory, and b (k x
  // n, n contiguous) is copied as it is (streams[1].xorRows); every trip
  // transposes its stage's b into n rows of k bytes at btOff in the stage,
  // swizzled for wgmma with rows of btSwizzle bytes (transposeStageB).
  bool transposeB = false;
  size_t btOff = 0;
  int64_t btSwizzle = 0;
  // wgmma values pipeline (LowerMmaValues.cpp, planValuePipes): the trip's
  // last `@` (P @ V), whose result is the carried value at deferPos and read
  // by nothing else in the trip, commits its group without waiting; the next
  // trip's first streamed `@` waits for both groups (wait_group 0, the carried
  // value passing through it), the loop's exit for the last one.
  const ir::Op *deferDot = nullptr;
  size_t deferPos = 0;
  // Option tma: the stages are filled by the TMA, one mbarrier a stage (8
  // bytes each at mbarOff from pipeBase(), past everything else the loop
  // stages), one thread issuing; a trip whose tiles the maps cannot copy is
  // copied with cp.async and published through the same mbarrier.
  bool tma = false;
  size_t mbarOff = 0;
  int64_t ahead = 1;        // trips whose copies are in flight ahead of the current one
  int64_t wgmmaPending = 0; // wgmma groups left in flight at the end of a trip
  int64_t stages = 1;
  size_t stageBytes = 0;
  size_t bytes = 0; // shared memory: the stages, or acc staged before and after the loop
  // Option epilogue-cast: the acc after the loop has one user, a cast to a
  // narrower type in the loop's block (the tutorial's `*pc = c` into half):
  // the cast is done on the fragments, and the narrow values (half the bytes
  // of fp32's) go through shared memory to the blocked layout. Null: the fp32
  // acc is converted and the cast done after.
  const ir::Op *accCast = nullptr;
  /// The type staged after the loop: the cast's result, else the acc's.
  const ir::Type &stagedAfter() const { return accCast ? accCast->result()->type() : *p.c; }
  /// A carried integer scalar stepped by a loop-invariant amount.
  struct Affine {
    size_t pos = 0;
    const ir::Value *inc = nullptr;
    bool sub = false;
  };
  std::vector<Affine> affine;
  std::vector<bool> unchanged;                  // carried values the body yields as they came
  std::unordered_set<const ir::Op *> hoisted;   // body ops lowered before the loop
  std::unordered_set<const ir::Op *> skipped;   // body ops the pipeline does instead
  std::vector<const ir::Op *> aheadOps; // body scalars lowered again for a later trip (masks)
  bool special(size_t pos) const {
    return pos == accPos || (pipelined && (pos == streams[0].pos || pos == streams[1].pos));
  }
};

/// This thread's 16-byte chunks of each stream's tile: the global address at
/// the loop's start and the byte offset in a stage.
struct Lowerer::StreamChunks {
  std::array<Slots, 2> src, dst;
  std::array<std::vector<Slots>, 2> coords; // each chunk's first element in the tile
  std::array<int64_t, 2> total{}; // chunks of the tile
};

} // namespace tc::codegen::lower
