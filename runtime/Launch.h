//===- Launch.h - Compile, bind, launch: the public host API ------------===//
//
// What a host program uses to run a Triton-C kernel (the model is PyTriton's
// PyTriton API): compile a kernel from source with defines, bind arguments by
// parameter name (buffers with dtype and shape, scalars), give the grid as
// numbers or as expressions of defines and scalar arguments
// (`cdiv(N, SIZE)`, as in PyTriton's `grid = lambda opt: [cdiv(M, opt.d('TM'))]`),
// run it on a backend, and read the buffers back.
//
//   auto compiled = tc::compileKernel({.path = "vector_add.tc",
//                                      .defines = {{"SIZE", "1024"}, {"TYPE", "float"}}});
//   tc::HostArray a = tc::HostArray::zeros(tc::DType::F32, {5000}), b = ..., c = ...;
//   tc::LaunchArgs args;
//   args.setScalar("N", tc::ScalarValue::ofInt(tc::DType::I32, 5000));
//   args.setBuffer("a", &a); args.setBuffer("b", &b); args.setBuffer("c", &c);
//   auto grid = tc::evalGrid({{"cdiv(N, SIZE)"}}, *compiled.kernel, args);
//   auto backend = tc::createInterpreterBackend(); // interp/InterpreterBackend.h
//   tc::RunResult r = backend->launch(*compiled.kernel, *grid.dims, args, {});
//   // r.status == RunResult::Status::Ok, c.data holds the sums
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Defines.h"
#include "ir/IR.h"
#include "runtime/Trap.h"
#include "support/DType.h"

#include <array>
#include <atomic>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc {

class SourceManager;

/// A host-side array: dtype, shape and row-major bytes (bool: one byte 0/1;
/// fp16/bf16: their 16-bit patterns).
struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  /// Nonzero: the array lives on the GPU at this device address (a CUDA tensor
  /// passed zero-copy) and `data` is empty. Only the GPU backend takes such arrays.
  uint64_t device = 0;
  /// Non-null: the bytes are the caller's own memory (`externalBytes` of them,
  /// e.g. a NumPy array passed zero-copy from Python) and `data` is empty; the
  /// interpreter's stores land there directly (RunOptions::undoOnTrap puts
  /// them back when the launch traps). `shape` describes those bytes.
  /// Arrays of one launch whose bytes overlap without being the same bytes
  /// (views x[0:128] and x[64:192] of one storage) are one memory on every
  /// backend: one buffer, the union of their bytes, each argument at its own
  /// offset (runtime/Overlap.h; the interpreter reports a race between them,
  /// the GPU makes one allocation). Refused as invalid_launch, naming both
  /// parameters: a read-only one overlapping a writable one, or one that
  /// would start inside another's element.
  uint8_t *external = nullptr;
  size_t externalBytes = 0;
  /// The byte offset inside the bytes at which the kernel's pointer argument
  /// points: a strided view's first element inside the storage it views (the
  /// whole storage is the buffer, so bounds checks use its extent). 0: the start.
  uint64_t origin = 0;
  /// The kernel may not store to the array: the interpreter traps
  /// (invalid_launch) before the first store or atomic to it writes anything
  /// (a read-only NumPy array, a leaf tensor that requires grad).
  bool readOnly = false;

  uint8_t *bytes() { return external ? external : data.data(); }
  const uint8_t *bytes() const { return external ? external : data.data(); }
  size_t byteCount() const { return external ? externalBytes : data.size(); }
  int64_t numElements() const;
  static HostArray zeros(DType t, std::vector<int64_t> shape);
  /// Element i as a double (ints exactly up to 2^53; fp16/bf16 decoded).
  double getDouble(int64_t i) const;
  /// Stores v converted to the dtype (ints: truncation toward zero then wrap;
  /// floats: round to nearest even).
  void setDouble(int64_t i, double v);
  /// Element i's raw bits, zero-extended.
  uint64_t getBits(int64_t i) const;
  void setBits(int64_t i, uint64_t bits);
};

/// A scalar argument: its dtype and value (ints as two's-complement bits in
/// `bits`; floats in `f`).
struct ScalarValue {
  DType dtype = DType::I32;
  uint64_t bits = 0;
  double f = 0;
  static ScalarValue ofInt(DType t, int64_t v);
  static ScalarValue ofFloat(DType t, double v);
  /// The value as a double (for grid expressions and messages).
  double asDouble() const;
  int64_t asInt() const;
};

/// A kernel compiled for launching. Owns its IR and the sources (for messages).
class CompiledKernel {
public:
  CompiledKernel(std::unique_ptr<ir::Module> module, const ir::Function *function,
                 std::shared_ptr<SourceManager> sources, DefineList defines);
  ~CompiledKernel();
  const ir::Module &module() const { return *module_; }
  const ir::Function &function() const { return *function_; }
  const SourceManager &sources() const { return *sources_; }
  const std::string &name() const { return function_->name(); }
  const DefineList &defines() const { return defines_; }
  /// The source's own integer `#define`s (`#define ROWS 4`, `#define T (ROWS * 8)`)
  /// as they stood at the end of preprocessing, with their values: grid
  /// expressions see them after the -D defines.
  const std::map<std::string, int64_t> &sourceDefines() const { return sourceDefines_; }
  void setSourceDefines(std::map<std::string, int64_t> d) { sourceDefines_ = std::move(d); }
  /// The text of source line `line` of IR file index `file` ("" if unknown).
  std::string sourceLine(uint32_t file, uint32_t line) const;
  /// A number unique to this object in the process (for backends' caches).
  uint64_t id() const { return id_; }

private:
  std::unique_ptr<ir::Module> module_;
  const ir::Function *function_;
  std::shared_ptr<SourceManager> sources_;
  DefineList defines_;
  std::map<std::string, int64_t> sourceDefines_;
  uint64_t id_;
};

struct CompileRequest {
  std::string path;       // a file to read, or
  std::string sourceName; // with sourceText: an in-memory source
  std::string sourceText;
  DefineList defines;                 // one variant
  std::vector<std::string> undefines; // -U NAME, applied after the defines (also to built-ins)
  std::vector<std::string> includeDirs;
  std::string kernelName; // which __global__ function; empty: the only one
  bool warningsAsErrors = false;
};

struct CompileOutcome {
  std::shared_ptr<CompiledKernel> kernel; // null on failure
  std::string diagnostics;                // rendered diagnostics (warnings too)
  /// Messages and lines of the errors, for `compile_error` expectations.
  struct Error {
    std::string message;
    uint32_t line = 0;
  };
  std::vector<Error> errors;
  bool ok() const { return kernel != nullptr; }
};

/// Preprocesses, parses, analyses and lowers; picks the kernel.
CompileOutcome compileKernel(const CompileRequest &req);

/// Arguments bound by parameter name.
class LaunchArgs {
public:
  /// Binds a pointer parameter to `array` (not owned; results are written back into it).
  void setBuffer(const std::string &name, HostArray *array);
  void setScalar(const std::string &name, ScalarValue v);
  HostArray *buffer(const std::string &name) const;
  const ScalarValue *scalar(const std::string &name) const;
  const std::map<std::string, HostArray *> &buffers() const { return buffers_; }
  const std::map<std::string, ScalarValue> &scalars() const { return scalars_; }

private:
  std::map<std::string, HostArray *> buffers_;
  std::map<std::string, ScalarValue> scalars_;
};

/// 1 to 3 grid entries, each a number or an expression over the kernel's defines
/// and scalar arguments: integers, names, + - * / % (C semantics on int64),
/// parentheses, cdiv(a, b), min(a, b), max(a, b).
struct GridSpec {
  std::vector<std::string> dims;
};

struct GridOutcome {
  std::optional<std::array<int64_t, 3>> dims; // missing dims are 1
  std::string error;                          // when dims is empty
};
GridOutcome evalGrid(const GridSpec &spec, const CompiledKernel &kernel, const LaunchArgs &args);

/// The interpreter runs no more threads than leave every thread's tiles (an
/// upper bound: every op result of the kernel at once) within this many bytes.
inline constexpr uint64_t kMaxThreadTileBytes = uint64_t(1) << 30;

struct RunOptions {
  unsigned threads = 1;           // programs run in parallel; results identical for any count
                                  // (fewer when their tiles would pass kMaxThreadTileBytes)
  uint64_t maxSteps = 0;          // executed ops per program before step_limit; 0: no limit
  double maxSeconds = 0;          // wall-clock limit for the launch; 0: none
  std::optional<std::array<int64_t, 3>> onlyProgram; // run just this program
  bool trace = false;                                // write each op's value summary to `out`
  /// The interpreter's shadow memory (DESIGN.md rule 15): trap data_race on
  /// unsynchronised accesses of different programs to one element. On by
  /// default (it costs 1.1-1.5x on bench/interp_bench's kernels,
  /// bench/RESULTS.md); triton-interp --no-race-check turns it off.
  bool raceCheck = true;
  /// Fill RunResult::buffers (which elements no program stored; cheap: one
  /// byte per element, set by stores).
  bool coverage = true;
  /// Also fill BufferAccess::writer/reader/outOfBounds (--access-map).
  bool accessMap = false;
  std::ostream *out = nullptr; // print() and --trace output (default: std::cout)
  /// Polled with the time limit: once it reads true every program stops with
  /// an "interrupted" step_limit trap (RunResult::interrupted). How a library
  /// caller (Python's Ctrl-C) stops a launch.
  const std::atomic<bool> *cancel = nullptr;
  /// When the launch traps (or is cancelled), put back every byte the
  /// interpreter stored into the buffers, so they are exactly as they were
  /// before the launch (RunResult::trapState keeps them as the trap left them).
  bool undoOnTrap = false;
  /// GPU backends (ours, Triton): warps per program for this launch instead
  /// of the backend's own setting (a conformance case's num_warps); the
  /// interpreter ignores it.
  std::optional<unsigned> numWarps;
};

/// Whether a program may have `w` warps on the GPU backends: 1, 2, 4, 8, 16 or 32.
bool validNumWarps(int64_t w);

/// What a launch did to one buffer (the interpreter's shadow memory).
struct BufferAccess {
  std::string name;           // its parameter (the first, when several share the array)
  std::vector<std::string> sharedWith; // the other parameters whose views share the array
  std::vector<int64_t> shape; // the host array's
  int64_t elements = 0, stored = 0;
  std::vector<std::pair<int64_t, int64_t>> unwritten; // [first, last] ranges never stored
  // With RunOptions::accessMap: per element the row-major index of the program
  // that stored it last / loaded it last (-1: none), and the active lanes that
  // tried an address outside every buffer, this one the nearest.
  std::vector<int32_t> writer, reader;
  struct Attempt {
    int64_t program = 0;
    int64_t element = 0; // relative to the buffer's start: < 0 or >= elements
    uint32_t line = 0;
  };
  std::vector<Attempt> outOfBounds;
};

struct RunResult {
  enum class Status { Ok, Trapped, Error };
  Status status = Status::Ok;
  std::optional<Trap> trap; // when Trapped
  std::string error;        // when Error (the backend failed, not the kernel)
  uint64_t steps = 0;       // ops executed, all programs
  double seconds = 0;
  std::vector<BufferAccess> buffers; // with RunOptions::coverage (interpreter only)
  bool interrupted = false;          // stopped by RunOptions::cancel or Ctrl-C
  /// With RunOptions::undoOnTrap and a trap: each buffer's bytes as the trap
  /// left them, by the host bytes' address (HostArray::bytes()).
  std::map<const uint8_t *, std::vector<uint8_t>> trapState;
  /// With RunOptions::undoOnTrap: the host bytes (HostArray::bytes()) of each
  /// buffer that a store or atomic wrote.
  std::vector<const uint8_t *> written;
};

/// Something that runs compiled kernels: the interpreter, or a GPU.
class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Whether this backend can run here; if not, `why` says why.
  virtual bool available(std::string *why) const = 0;
  /// Runs the grid. Arguments are checked first (a missing or extra argument, a
  /// dtype that differs from the pointee, a broken __multipleof/__aligned claim
  /// are traps of kind invalid_launch / misaligned). Buffers are written back.
  virtual RunResult launch(const CompiledKernel &kernel, std::array<int64_t, 3> grid,
                           LaunchArgs &args, const RunOptions &opts) = 0;
};

/// Checks shared by every backend before anything runs: each parameter bound
/// exactly once with a matching kind and dtype, scalars that fit their
/// parameter type (invalid_launch); __multipleof claims of scalar arguments
/// (misaligned); grid dimensions in [1, 2^31) and at most 2^31 programs.
std::optional<Trap> checkLaunchArguments(const CompiledKernel &kernel, const LaunchArgs &args);
std::optional<Trap> checkScalarClaims(const CompiledKernel &kernel, const LaunchArgs &args);
std::optional<Trap> checkLaunchGrid(const CompiledKernel &kernel, std::array<int64_t, 3> grid);
/// The bits of scalar argument `v` converted to parameter dtype `param`, if it fits.
std::optional<uint64_t> scalarArgumentBits(const ScalarValue &v, DType param);
/// A trap raised before any program runs, located at the kernel's declaration.
Trap makeLaunchTrap(const CompiledKernel &kernel, TrapKind kind, std::string message);

} // namespace tc
