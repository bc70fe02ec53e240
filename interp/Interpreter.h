//===- Interpreter.h - The execution engine of the reference interpreter ===//
//
// Internal to interp/. A launch prepares the kernel once (prepareFunction):
// every SSA value gets a slot number, and every op becomes an Instr holding
// its operand/result slots, the static facts it needs (element counts,
// strides, reduction geometry, ...) and a Handler chosen for its op kind and
// dtypes. Running a program is then a walk over Instrs calling handlers: the
// dtype dispatch happens once per op per launch, never per element.
//
// A Frame is one program's state (its slots, step count, trap, output). A
// handler returns false when the program must stop (it trapped, or a launch
// limit ended it); the trap is in Frame::trap.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "interp/AccessTracker.h"
#include "interp/Memory.h"
#include "interp/Tile.h"
#include "interp/UndoJournal.h"
#include "ir/IR.h"
#include "runtime/Launch.h"
#include "support/Numerics.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace tc::interp {

class Frame;
struct Instr;

/// Runs one prepared op; false stops the program (see Frame::trap).
using Handler = bool (*)(Frame &, const Instr &);
/// Writes the n lanes of an elementwise binary op on poison-free operands
/// `a`, `b` to `out` (which may be exactly a view operand's bytes, Tile.h).
using IntoFn = void (*)(const TileData &a, const TileData &b, void *out, int64_t n);

/// A region's block: argument slots and ops (the terminator last).
struct PBlock {
  std::vector<uint32_t> args;
  std::vector<Instr> ops;
};

/// One op prepared for execution.
struct Instr {
  const ir::Op *op = nullptr;
  Handler run = nullptr;
  std::vector<uint32_t> in, out; // operand and result slots
  std::vector<PBlock> regions;
  int64_t n = 0;            // lanes of the op's main tile (result; pointer operand of store)
  bool scalar = false;      // the main tile is 0-d: traps name no lane
  unsigned elemSize = 0;    // bytes per element of the main tile's dtype
  DType dtype = DType::I32; // the dtype the handler was chosen for (operand or pointee)
  // Op-specific facts: reduce (outer, len, inner), dot (batch, M, K, N), for (-).
  int64_t g0 = 0, g1 = 0, g2 = 0, g3 = 0;
  int kind = 0;                   // reduce / atomic kind, compare predicate, math function
  ir::Shape shape;                // broadcast / trans: the result shape
  std::vector<int64_t> strides;   // broadcast / trans: operand strides per result axis
  Tile constant;                  // constant, range: the value
  std::string label;              // print label, assert message
  std::vector<std::string> names; // result names for --trace (%3, %N)
  uint32_t site = 0;              // memory ops: index in AccessTracker::sites
  // Memory ops: the paramBit()s of the parameters the pointer may be computed
  // from (pointerSources); all bits when not known. An active lane inside a
  // region none of whose parameters is here traps out_of_bounds.
  uint64_t from = ~uint64_t(0);
  // Fusion (fuseBlock, Interpreter.cpp):
  bool view = false;       // load: may return a view of the buffer (Tile.h)
  IntoFn into = nullptr;   // elementwise binary op: its lanes written straight to memory
  Handler inner = nullptr; // the unfused handler of an op whose `run` is a fused one
};

/// A kernel ready to run: its body, with parameters in body.args.
struct PreparedFunction {
  PBlock body;
  uint32_t numSlots = 0;
  std::unordered_map<const ir::Value *, uint32_t> slotOf; // every value's slot
};

/// Prepares `fn`; on failure (an op the engine cannot run) returns false and sets `error`.
bool prepareFunction(const ir::Function &fn, PreparedFunction &out, std::string &error);

/// What every program of one launch shares.
struct LaunchContext {
  LaunchContext(const CompiledKernel &k, Memory &m, std::array<int64_t, 3> g, const RunOptions &o)
      : kernel(k), memory(m), grid(g), opts(o) {}
  const CompiledKernel &kernel;
  Memory &memory;
  std::array<int64_t, 3> grid;
  const RunOptions &opts;
  uint64_t maxSteps = UINT64_MAX;
  bool hasDeadline = false;
  std::chrono::steady_clock::time_point deadline;
  std::mutex atomicMutex;                     // serialises atomics across programs
  std::atomic<int64_t> stopAbove{INT64_MAX};  // programs with a larger index stop early
  // The ops the launch had run when the trap at stopAbove was recorded (the
  // threads' run): a program below it that is still running may run at most
  // waitBudget of those and its own ops by then (and no more than
  // maxSteps); past that it is given up
  // (Frame::abandoned) and the trap stands. (Such a program may wait for a
  // store that the trap kept from happening: it would never end.)
  std::atomic<uint64_t> opsAtTrap{0};
  /// The step budget of a program below the trap that had run `steps` ops
  /// when it learnt of the trap (opsAtTrap read after stopAbove, acquire).
  uint64_t budgetBelowTrap(uint64_t steps) const;
  /// The ops a program that may wait for another one is let run after `ops`
  /// ops of a run that found a trap: 4 x ops + 1,000,000, saturating (the
  /// program-order rerun after a race and a program below a trap).
  static uint64_t waitBudget(uint64_t ops);
  std::vector<Tile> params;                   // parameter values, in order
  AccessTracker *tracker = nullptr;           // the shadow memory, when on
  UndoJournal *journal = nullptr;             // RunOptions::undoOnTrap's page copies
  bool guardStores = false;                   // a journal or a read-only buffer: check stores
  const PreparedFunction *prepared = nullptr; // the kernel being run
};

/// One program's execution state.
class Frame {
public:
  Frame(LaunchContext &launch, uint32_t numSlots)
      : launch(launch), slots(numSlots), cached(numSlots) {}

  const Tile &get(uint32_t slot) const { return slots[slot]; }
  void set(uint32_t slot, Tile t) { slots[slot] = std::move(t); }
  /// Records a trap at `in` (lane ignored for 0-d values) and returns false.
  bool fail(TrapKind kind, const Instr &in, int64_t lane, std::string message);
  /// Appends print / trace text to this program's output.
  void write(const std::string &s);
  /// Checks the step and time limits before an op; false stops the program.
  bool tick(const Instr &in) {
    // Every 1024 ops of this thread, counted across programs (not per program),
    // the slow checks: a grid of many short programs must stop at the deadline too.
    if (steps >= launch.maxSteps || (++ticks & 1023) == 0) [[unlikely]]
      return tickSlow(in);
    ++steps;
    return true;
  }
  bool tickSlow(const Instr &in);

  LaunchContext &launch;
  std::array<int64_t, 3> pid{0, 0, 0};
  int64_t index = 0; // row-major program index
  std::vector<Tile> slots;
  /// Values by result slot kept for every program of this frame: cachedOp's,
  /// and its own copies of constants and parameters (threadCopy, Tile.h).
  std::vector<Tile> cached;
  uint64_t steps = 0; // ops of this program (the step limit)
  uint64_t ticks = 0; // ops of this frame over all its programs (deadline checks)
  std::optional<Trap> trap;
  bool stopped = false;               // ended early by the launch (another program trapped)
  // Given up below a later program's trap, past its budget
  // (LaunchContext::opsAtTrap) at `abandonedAt` (which runs no more).
  bool abandoned = false;
  const ir::Op *abandonedAt = nullptr;
  uint64_t budget = 0; // that budget, once this program learnt of the trap (0: not yet)
  bool interrupted = false;           // the trap is Ctrl-C's report (support/Interrupt.h)
  uint64_t lastLoad = 0;              // address of the last 0-d load or atomic (0: none yet)
  const ir::Op *lastLoadOp = nullptr; // the op that read it
  std::ostream *direct = nullptr;     // output goes straight here when set, else into `buffered`
  std::string buffered;
  VectorClock vc;     // what this program has acquired from others (AccessTracker)
  uint32_t clock = 1; // this program's own clock: ticks at each atomic
  /// Readies the frame for program `index` (pid set by the caller).
  void restart(int64_t programIndex);
};

/// Runs a block's ops, the terminator included (the parent reads its operands).
bool runBlock(Frame &f, const PBlock &b);
/// Runs the kernel body for the program in `f` (pid, index set).
bool runProgram(Frame &f, const PreparedFunction &fn);

/// "[program (x, y, z)] ".
std::string programPrefix(const Frame &f);

// Handler selection, one per op family; each fills `in` and returns false with
// `error` set when the op/dtype combination is not supported.
bool prepareValueOp(const ir::Op &op, Instr &in, std::string &error);     // ExecTile.cpp
bool prepareShapeOp(const ir::Op &op, Instr &in, std::string &error);     // ExecTile.cpp
bool prepareReduce(const ir::Op &op, Instr &in, std::string &error);      // ExecReduce.cpp
bool prepareDot(const ir::Op &op, Instr &in, std::string &error);         // ExecReduce.cpp
bool prepareElementwise(const ir::Op &op, Instr &in, std::string &error); // ExecElementwise.cpp
bool prepareCast(const ir::Op &op, Instr &in, std::string &error);        // ExecElementwise.cpp
bool prepareMemoryOp(const ir::Op &op, Instr &in, std::string &error);    // ExecMemory.cpp
bool prepareDebugOp(const ir::Op &op, Instr &in, std::string &error);     // ExecControl.cpp
bool prepareControlOp(const ir::Op &op, Instr &in, std::string &error);   // ExecControl.cpp

/// Fusion of an elementwise binary op E (whose one use is the next op, a
/// store S, as the stored value): E runs deferredOp, which computes nothing
/// (unless --trace shows E's value), and S runs fusedStore(elemSize), which
/// writes E's lanes straight into the buffer when the store takes the
/// contiguous all-lanes path and every E operand is poison-free and does not
/// partly overlap the destination; otherwise it runs E's and S's own handlers
/// (Instr::inner) in order, so traps, reports and results are those of the
/// unfused ops. (&S)[-1] is E.
bool deferredOp(Frame &f, const Instr &in);                // ExecElementwise.cpp
Handler fusedStoreHandler(unsigned elemSize, bool isBool); // ExecMemory.cpp
/// The handler of a splat of a kernel parameter in the kernel's body: the
/// same value in every program, so each frame (one thread's programs of one
/// launch) makes it once (Instr::inner) and shares it afterwards.
bool cachedOp(Frame &f, const Instr &in); // Interpreter.cpp

/// Adds to `params` the kernel parameters (the body block's arguments) that
/// pointer value `v` may be computed from: through addptr, the shape ops,
/// casts, select, slices, and the results and block arguments of for / while
/// / if (their initial and yielded values, to a fixed point). False when some
/// source is not known (a pointer made from an integer, an op it does not
/// follow) or none is a parameter: such a pointer may reach any buffer
/// (Provenance.cpp).
bool pointerSources(const ir::Value *v, std::vector<const ir::Value *> &params);

/// Poison of an elementwise result: the union of its operands' masks.
void mergePoison(TileData &r, const TileData &a);
void mergePoison(TileData &r, const TileData &a, const TileData &b);
void mergePoison(TileData &r, const TileData &a, const TileData &b, const TileData &c);

/// The value of a defined scalar integer or bool tile of dtype t.
__int128 scalarInt(const TileData &t, DType dtype);
/// Adds notes to f.trap saying where the undefined `lane` (-1: any) of `v`
/// came from: the ops that carried it back to the masked load (Provenance.cpp).
void explainUndefined(Frame &f, const ir::Value *v, int64_t lane);
/// Adds a note to f.trap for each operand lane that caused it (a divisor, an
/// assert's condition, an address) whose value is the fallback of a masked
/// load `m ? *p : other` (its mask false there) (Provenance.cpp).
void explainFallback(Frame &f, const Instr &in, int64_t lane);
/// Traps undefined_value at `lane` of `in` and explains operand `operand`.
bool failUndefined(Frame &f, const Instr &in, int64_t lane, std::string message, unsigned operand);
/// The type of an op's main tile, whose lanes its traps name: its first
/// result, else its first operand (a store's pointers, an assert's condition).
const ir::Type &mainType(const ir::Op &op);
/// " at lane [1, 5] (flat 37)" of the main tile of `in` (laneText); "" for a 0-d one.
std::string atLane(const Instr &in, int64_t lane);

/// A 0-d tile of integer dtype t holding v (wrapped).
Tile makeScalarInt(DType t, __int128 v);

} // namespace tc::interp
