// The interpreter as a Backend: checks a launch, lays out memory, runs the
// grid (optionally on a thread pool) and writes the buffers back.
//
// Program order: row-major over (x, y, z) as in Triton's interpreter: x is
// the outermost loop and z the innermost, so program (x, y, z) has index
// (x * Y + y) * Z + z. With one thread programs run in that order and stop at
// the first trap. With several threads, workers take indices in increasing
// order; print/trace output is buffered per program and written in index
// order; when programs trap, the trap of the lowest index is reported (every
// lower program still runs, higher ones stop) and only the output of
// programs up to it is written. A lower program still runs for a bounded
// number of ops only (LaunchContext::opsAtTrap): it may wait for a store that
// the trap kept from happening; past them it is given up, with a note on the
// trap. Buffers are the caller's arrays (interp/Memory.h), so partial results
// can be inspected after a trap.
#include "interp/Interpreter.h"
#include "support/TimeLimit.h"

#include "interp/ExecElem.h"
#include "interp/InterpreterBackend.h"
#include "ir/Verifier.h"
#include "runtime/Overlap.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <pthread.h>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace tc {

namespace {

using interp::Frame;
using interp::LaunchContext;
using interp::Memory;
using interp::PreparedFunction;

/// A trap raised before any program runs.
Trap launchTrap(const CompiledKernel &k, TrapKind kind, std::string message) {
  Trap t;
  t.kind = kind;
  t.kernel = k.name();
  t.message = std::move(message);
  ir::Location loc = k.function().loc();
  const ir::Module &m = k.module();
  if (loc.line != 0 && loc.file < m.files.size()) {
    t.file = m.files[loc.file];
    t.line = loc.line;
    t.col = loc.col;
    t.sourceLine = k.sourceLine(loc.file, loc.line);
  }
  return t;
}

/// Adds to `names` the kernel parameters pointer value `v` may be computed
/// from (interp::pointerSources: every pointer operand followed, both sides
/// of a select, loop-carried values and if/while results through their
/// initial and yielded values); false when some are not known (a pointer made
/// from an integer). A memory op's access outside those parameters' buffers
/// traps (Instr::from), so a known set bounds what the op may touch.
bool pointerParams(const ir::Value *v, std::set<std::string> &names) {
  std::vector<const ir::Value *> params;
  if (!interp::pointerSources(v, params))
    return false;
  for (const ir::Value *p : params)
    names.insert(p->nameHint());
  return true;
}

bool isMemoryWrite(ir::OpKind k) {
  return k == ir::OpKind::Store || k == ir::OpKind::AtomicRMW || k == ir::OpKind::AtomicCas;
}

/// The first store or atomic of `b` (nested regions included) other than
/// `except` that may write the buffer bound to the parameters `names`.
const ir::Op *storeTo(const ir::Block &b, const std::vector<std::string> &names,
                      const ir::Op *except) {
  for (const auto &op : b.ops()) {
    if (isMemoryWrite(op->kind()) && op.get() != except) {
      std::set<std::string> params;
      if (!pointerParams(op->operand(0), params) ||
          std::any_of(names.begin(), names.end(),
                      [&](const std::string &n) { return params.count(n) != 0; }))
        return op.get();
    }
    for (const auto &r : op->regions())
      if (const ir::Op *s = storeTo(*r, names, except))
        return s;
  }
  return nullptr;
}

/// Collects into `names` the parameters whose buffers the stores and atomics
/// of `b` (nested regions included) may write; false when some store's
/// pointer does not come from a parameter (any buffer may be written).
bool storedParams(const ir::Block &b, std::set<std::string> &names) {
  for (const auto &op : b.ops()) {
    if (isMemoryWrite(op->kind()) && !pointerParams(op->operand(0), names))
      return false;
    for (const auto &r : op->regions())
      if (!storedParams(*r, names))
        return false;
  }
  return true;
}

/// Interrupted programs all report: `other`'s place becomes notes of `keep`.
void appendPlace(Trap &keep, Trap &other) {
  Trap::Note n;
  n.file = other.file;
  n.line = other.line;
  n.col = other.col;
  n.sourceLine = other.sourceLine;
  n.text = "program (" + std::to_string(other.programId[0]) + ", " +
           std::to_string(other.programId[1]) + ", " + std::to_string(other.programId[2]) +
           ") was here: " + other.message;
  keep.notes.push_back(std::move(n));
  for (Trap::Note &o : other.notes)
    keep.notes.push_back(std::move(o));
}

std::string typeText(const ir::Type &t) {
  std::string s(conformanceName(t.dtype));
  return t.isPtr ? s + "*" : s;
}

/// The value of scalar argument `v` as bits of parameter dtype `p`, if it fits:
/// integers must be in range (bool: 0 or 1); a float for an integer parameter
/// must be integral and in range; a float parameter takes any number rounded
/// to nearest even, unless a finite value would become infinite.
std::optional<uint64_t> fitScalar(const ScalarValue &v, DType p) {
  if (isFloat(v.dtype)) {
    double d = v.asDouble();
    if (isFloat(p)) {
      uint64_t bits = num::floatBits(p, d);
      if (std::isfinite(d) && std::isinf(num::floatValue(p, bits)))
        return std::nullopt;
      return bits;
    }
    uint64_t bits = 0;
    if (std::trunc(d) != d ||
        num::convert(DType::F64, std::bit_cast<uint64_t>(d), p, bits) != num::Status::Ok)
      return std::nullopt;
    if (p == DType::Bool && d != 0 && d != 1)
      return std::nullopt;
    return bits;
  }
  __int128 iv = num::intValue(v.dtype, v.bits);
  if (isFloat(p)) {
    uint64_t bits = 0;
    num::convert(v.dtype, v.bits, p, bits);
    if (std::isinf(num::floatValue(p, bits)))
      return std::nullopt;
    return bits;
  }
  if (num::intValue(p, num::wrapInt(p, iv)) != iv)
    return std::nullopt;
  return num::wrapInt(p, iv);
}

/// A scalar argument's value as text: integers exactly, floats shortest.
std::string scalarText(const ScalarValue &v) {
  if (!isFloat(v.dtype)) {
    __int128 i = num::intValue(v.dtype, v.bits);
    std::string s = i < 0 ? std::string(1, '-') : std::string();
    return s += std::to_string(static_cast<uint64_t>(i < 0 ? -i : i));
  }
  return interp::formatElement(ir::Type::scalar(v.dtype), &v.bits);
}

/// Every parameter bound exactly once by name, with a matching kind and dtype.
std::optional<Trap> checkLaunchArgumentsImpl(const CompiledKernel &kernel_,
                                             const LaunchArgs &args_) {
  const ir::Function &fn_ = kernel_.function();
  auto bad = [&](std::string msg) { return launchTrap(kernel_, TrapKind::InvalidLaunch, msg); };
  std::set<std::string> names;
  for (size_t i = 0; i < fn_.numParams(); ++i) {
    const std::string &name = fn_.paramName(static_cast<unsigned>(i));
    const ir::Type &t = fn_.param(static_cast<unsigned>(i))->type();
    names.insert(name);
    bool hasBuf = args_.buffers().count(name) != 0;
    const ScalarValue *sc = args_.scalar(name);
    if (hasBuf && sc)
      return bad("parameter '" + name + "' is bound to both a buffer and a scalar");
    if (!hasBuf && !sc)
      return bad("missing argument for parameter '" + name + "' (" + typeText(t) + ")");
    if (t.isPtr) {
      HostArray *a = args_.buffer(name);
      if (!a)
        return bad("parameter '" + name + "' is a pointer (" + typeText(t) + ") but got " +
                   (sc ? "a scalar" : "a null buffer"));
      if (a->dtype != t.dtype)
        return bad("buffer '" + name + "' has dtype " + std::string(conformanceName(a->dtype)) +
                   " but parameter '" + name + "' points to " +
                   std::string(conformanceName(t.dtype)));
      if (a->numElements() < 0 ||
          (a->device == 0 &&
           a->byteCount() != static_cast<size_t>(a->numElements()) * byteSize(a->dtype)))
        return bad("buffer '" + name + "' holds " + std::to_string(a->byteCount()) +
                   " bytes but its shape needs " +
                   std::to_string(a->numElements() * byteSize(a->dtype)));
      if (a->origin > a->byteCount())
        return bad("buffer '" + name + "' is " + std::to_string(a->byteCount()) +
                   " bytes long but its pointer argument is " + std::to_string(a->origin) +
                   " bytes past its start");
    } else {
      if (!sc)
        return bad("parameter '" + name + "' is a scalar (" + typeText(t) + ") but got a buffer");
      if (!fitScalar(*sc, t.dtype))
        return bad("argument '" + name + "' = " + scalarText(*sc) + " (" +
                   std::string(conformanceName(sc->dtype)) + ") does not fit parameter type " +
                   typeText(t));
    }
  }
  for (const auto &[name, a] : args_.buffers())
    if (!names.count(name))
      return bad("kernel '" + kernel_.name() + "' has no parameter named '" + name + "'");
  for (const auto &[name, v] : args_.scalars())
    if (!names.count(name))
      return bad("kernel '" + kernel_.name() + "' has no parameter named '" + name + "'");
  return std::nullopt;
}

/// Calls `ready` until it returns true (then true) or about kSpinMicros
/// passed (then false): a thread that expects work or a result within
/// microseconds takes it without the system's sleep and wake-up (tens of
/// microseconds per thread on an idle core), when threads do not outnumber
/// the cores.
template <typename Ready> bool spinUntil(Ready &&ready) {
  constexpr int64_t kSpinMicros = 200;
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (unsigned i = 1;; ++i) {
    if (ready())
      return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
    if ((i & 31) == 0 && std::chrono::steady_clock::now() > until)
      return false;
  }
}

/// Threads kept from launch to launch, so that a launch neither pays for
/// starting its threads nor finds their tile pools (interp/Tile.cpp) cold.
/// Launches may run at once (each takes idle threads, or starts new ones).
/// A forked child starts with an empty pool (the parent's threads are not
/// in it). A thread that finished a task waits for the next one spinning
/// for a moment before it sleeps, and the launching thread waits for the
/// others likewise, while the pool's threads do not outnumber the cores
/// (issue 32: back-to-back launches of many small programs).
class WorkerPool {
public:
  static WorkerPool &instance() {
    static std::once_flag once;
    std::call_once(once, [] {
      pthread_atfork(nullptr, nullptr, [] {
        new (&gPoolMutex) std::mutex; // (another thread may have held it at the fork)
        gPool = new WorkerPool;
      });
    });
    std::lock_guard<std::mutex> lock(gPoolMutex);
    if (!gPool)
      gPool = new WorkerPool; // never destroyed: idle threads wait in it until exit
    return *gPool;
  }

  /// Runs `task` on up to `n` threads of the pool and on the calling thread,
  /// and returns when every one has finished it; returns how many pool
  /// threads ran it (fewer than `n` when the system gives no more threads).
  unsigned run(unsigned n, const std::function<void()> &task) {
    Job job;
    job.task = &task;
    std::vector<Worker *> mine;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (mine.size() < n && !idle_.empty()) {
        mine.push_back(idle_.back());
        idle_.pop_back();
      }
    }
    while (mine.size() < n) {
      auto *w = new Worker;
      try {
        std::thread([this, w] { loop(w); }).detach();
      } catch (const std::system_error &) {
        delete w;
        break;
      }
      threads_.fetch_add(1, std::memory_order_relaxed);
      mine.push_back(w);
    }
    job.pending.store(static_cast<unsigned>(mine.size()), std::memory_order_relaxed);
    for (Worker *w : mine) {
      w->job.store(&job, std::memory_order_release); // (a spinning worker takes it from here)
      std::lock_guard<std::mutex> lock(w->mutex);
      if (w->sleeping)
        w->wake.notify_one();
    }
    task();
    auto finished = [&] { return job.pending.load(std::memory_order_acquire) == 0; };
    if (!spins() || !spinUntil(finished)) {
      std::unique_lock<std::mutex> lock(job.mutex);
      job.done.wait(lock, finished);
    }
    // The last worker may still hold the job's mutex (it notifies under it):
    // the job outlives this call until it has let go.
    std::lock_guard<std::mutex> lock(job.mutex);
    return static_cast<unsigned>(mine.size());
  }

private:
  struct Job {
    const std::function<void()> *task = nullptr;
    std::mutex mutex;
    std::condition_variable done;
    std::atomic<unsigned> pending{0}; // decremented under `mutex`
  };
  struct Worker {
    std::mutex mutex;
    std::condition_variable wake;
    std::atomic<Job *> job{nullptr};
    bool sleeping = false; // waits on `wake` (under `mutex`)
  };

  /// Whether waiting threads spin first: not when the pool's threads (and
  /// the launching one) outnumber the cores, where a spinning thread would
  /// take a core from one with work.
  bool spins() const {
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return threads_.load(std::memory_order_relaxed) < cores;
  }

  void loop(Worker *w) {
    for (;;) {
      Job *job = nullptr;
      auto handed = [&] { return (job = w->job.load(std::memory_order_acquire)) != nullptr; };
      if (!spins() || !spinUntil(handed)) {
        std::unique_lock<std::mutex> lock(w->mutex);
        w->sleeping = true;
        w->wake.wait(lock, handed);
        w->sleeping = false;
      }
      w->job.store(nullptr, std::memory_order_relaxed);
      (*job->task)();
      interp::trimTilePool();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        idle_.push_back(w);
      }
      std::lock_guard<std::mutex> lock(job->mutex);
      if (job->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
        job->done.notify_all();
    }
  }

  std::mutex mutex_;
  std::vector<Worker *> idle_;
  std::atomic<unsigned> threads_{0}; // pool threads started
  static inline WorkerPool *gPool = nullptr;
  static inline std::mutex gPoolMutex;
};

class Launcher {
public:
  Launcher(const CompiledKernel &k, std::array<int64_t, 3> grid, LaunchArgs &args,
           const RunOptions &opts)
      : kernel_(k), fn_(k.function()), args_(args), opts_(opts), ctx_(k, memory_, grid, opts) {}

  RunResult run();

private:
  bool prepare();
  void setLimits(std::chrono::steady_clock::time_point start);
  unsigned threadCount() const;
  std::optional<Trap> checkArguments();
  std::optional<Trap> checkGrid();
  std::optional<Trap> placeArguments();
  std::vector<uint64_t> claimedAlignments();
  void startTracking(unsigned threads);
  void setNoPlainStores();
  void nameParams();
  std::vector<uint64_t> paramStart_; // per parameter: a pointer's address (placeArguments)
  // Per region: the bytes of the race check's shadow unit (AccessTracker), 0:
  // its element size (startTracking).
  std::vector<unsigned> shadowUnits_;
  bool atomics_ = false; // the kernel has atomics (startTracking)
  void startJournal();
  void numberSites(interp::PBlock &b);
  void collectBuffers();
  struct Rerun;
  void runSequential(int64_t quietBelow = 0, Rerun *rerun = nullptr);
  void rerunInProgramOrder();
  void runParallel(unsigned threads);
  void restoreBuffers();
  void exactRerun(unsigned threads);
  bool overlapsFound(unsigned threads);
  bool quietKernel() const;
  void runWorker(Frame &f);
  void setPid(Frame &f, int64_t index) const;
  void finishProgram(Frame &f, int64_t index);
  void noteWaiting(Frame &f) const;
  struct Waiting {
    const interp::Region *region = nullptr;
    int64_t element = 0;
    const ir::Op *store = nullptr; // a store or atomic of the kernel that writes it
  };
  std::optional<Waiting> waitingOn(const Frame &f) const;
  Trap::Note noteAt(const ir::Op *op, std::string text) const;
  Trap::Note rerunStopped(const Frame &f) const;
  Trap::Note setAside(const Frame &f) const;
  Trap::Note givenUp(const Frame &f) const;
  /// The run again in program order (rerunInProgramOrder): the first program
  /// that ran past its budget is set aside, and why the run stopped.
  struct Rerun {
    std::optional<Trap::Note> setAside; // for the report of this run
    std::optional<Trap::Note> stopped;  // for the threads' report
  };

  const CompiledKernel &kernel_;
  const ir::Function &fn_;
  LaunchArgs &args_;
  const RunOptions &opts_;
  Memory memory_;
  LaunchContext ctx_;
  std::shared_ptr<PreparedFunction> prepared_; // shared by every launch of the kernel
  uint64_t frameBytes_ = 0;
  int64_t total_ = 0; // programs to run
  std::ostream *out_ = nullptr;
  RunResult result_;
  std::atomic<uint64_t> steps_{0};
  std::unique_ptr<interp::AccessTracker> tracker_;
  std::unique_ptr<interp::UndoJournal> journal_; // RunOptions::undoOnTrap
  // With race checks and several threads (and no journal_): a copy of each
  // page stores reach, made before the first store to it, so that the launch
  // can run again from the buffers as they were.
  std::unique_ptr<interp::UndoJournal> cow_;
  // Parallel bookkeeping, guarded by mutex_.
  std::mutex mutex_;
  int64_t next_ = 0;
  // No print and no --trace: workers take programs from an atomic counter and
  // lock only to report a trap (there is no output to order).
  bool quiet_ = false;
  // Programs per take of nextQuiet_.
  int64_t grab_ = 1;
  alignas(64) std::atomic<int64_t> nextQuiet_{0}; // (a cache line of its own)
  alignas(64) std::set<int64_t> running_;
  std::map<int64_t, std::string> pending_;
  // Programs given up below the trap (Frame::abandoned): notes for its
  // report, by index.
  std::map<int64_t, Trap::Note> abandoned_;
  int64_t trapIndex_ = INT64_MAX;
  std::optional<Trap> trap_;
  bool interrupted_ = false; // trap_ is Ctrl-C's report
};

RunResult Launcher::run() {
  auto start = std::chrono::steady_clock::now();
  out_ = opts_.out ? opts_.out : &std::cout;
  if (!prepare())
    return result_;
  std::optional<Trap> bad = checkArguments();
  if (!bad)
    bad = checkGrid();
  if (!bad)
    bad = placeArguments();
  if (bad) {
    result_.status = RunResult::Status::Trapped;
    result_.trap = std::move(bad);
    return result_;
  }
  setLimits(start);
  startJournal();
  ctx_.prepared = prepared_.get();
  unsigned threads = threadCount();
  startTracking(threads);
  if (threads <= 1) {
    runSequential();
    if (tracker_ && tracker_->logged()) {
      tracker_->finishThread();
      if (!interrupted_ && overlapsFound(1))
        exactRerun(1); // programs' accesses overlap: find the race element-wise
    }
  } else {
    runParallel(threads);
    if (tracker_ && tracker_->logged() && !interrupted_ && overlapsFound(threads))
      exactRerun(threads); // programs' accesses overlap: find the race element-wise
    if (trap_ && trap_->kind == TrapKind::DataRace && (cow_ || journal_))
      rerunInProgramOrder();
  }
  collectBuffers();
  result_.interrupted = interrupted_;
  if (journal_)
    for (const auto &r : memory_.regions())
      if (journal_->touched(r->host, r->size))
        result_.written.push_back(r->host);
  if (trap_) {
    result_.status = RunResult::Status::Trapped;
    result_.trap = std::move(trap_);
    if (journal_) { // the caller's memory as the trap left it, then as it was
      for (const auto &r : memory_.regions())
        result_.trapState.try_emplace(r->host, r->host, r->host + r->size);
      journal_->undo();
    }
  }
  result_.steps = steps_.load();
  result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result_;
}

/// Verifies the module and prepares the kernel; on failure sets an Error result.
/// Kernels verified and prepared, by CompiledKernel::id() (ids are never
/// reused, so an entry is only ever found by its own kernel; the cache is
/// emptied when it grows past kMaxPrepared). A launch of a cached kernel
/// skips verification and preparation: what a tiny launch mostly cost.
uint64_t frameBytes(const ir::Function &fn);

struct PreparedEntry {
  std::shared_ptr<PreparedFunction> fn;
  uint64_t frameBytes = 0;
};
constexpr size_t kMaxPrepared = 256;
std::mutex gPreparedMutex;
std::unordered_map<uint64_t, PreparedEntry> gPrepared;

bool Launcher::prepare() {
  {
    std::lock_guard<std::mutex> lock(gPreparedMutex);
    if (auto it = gPrepared.find(kernel_.id()); it != gPrepared.end()) {
      prepared_ = it->second.fn;
      frameBytes_ = it->second.frameBytes;
      return true;
    }
  }
  if (auto failures = ir::verifyModule(kernel_.module()); !failures.empty()) {
    result_.status = RunResult::Status::Error;
    result_.error = ir::formatFailures(kernel_.module(), failures);
    return false;
  }
  std::string error;
  auto fn = std::make_shared<PreparedFunction>();
  if (!interp::prepareFunction(fn_, *fn, error)) {
    result_.status = RunResult::Status::Error;
    result_.error = "the interpreter cannot run kernel '" + kernel_.name() + "': " + error;
    return false;
  }
  prepared_ = fn;
  frameBytes_ = frameBytes(fn_);
  std::lock_guard<std::mutex> lock(gPreparedMutex);
  if (gPrepared.size() >= kMaxPrepared)
    gPrepared.clear();
  gPrepared[kernel_.id()] = {fn, frameBytes_};
  return true;
}

void Launcher::setLimits(std::chrono::steady_clock::time_point start) {
  ctx_.maxSteps = opts_.maxSteps ? opts_.maxSteps : UINT64_MAX;
  if (opts_.maxSeconds > 0) { // saturating: a huge limit is no limit, never an overflow
    ctx_.deadline = deadlineAfter(start, opts_.maxSeconds);
    ctx_.hasDeadline = ctx_.deadline != std::chrono::steady_clock::time_point::max();
  }
}

/// An upper bound of the tile memory one program holds: the tile of every op
/// result (8 bytes a lane for pointers), as if all were live at once.
uint64_t frameBytes(const ir::Function &fn) {
  uint64_t total = 0;
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
    for (unsigned i = 0; i < op.numResults(); ++i) {
      const ir::Type &t = op.result(i)->type();
      uint64_t lane = t.isPtr ? 8 : byteSize(t.dtype);
      total += uint64_t(std::max<int64_t>(t.numElements(), 1)) * lane;
    }
  });
  return total;
}

/// Threads to use: as asked, but no more than programs (nor 1024), nor more
/// than kMaxThreadTileBytes of tiles allow (programs' results do not depend on
/// the thread count, so fewer threads only take longer).
unsigned Launcher::threadCount() const {
  constexpr int64_t kMaxThreads = 1024;
  int64_t byMemory = static_cast<int64_t>(
      std::max<uint64_t>(1, kMaxThreadTileBytes / std::max<uint64_t>(1, frameBytes_)));
  return static_cast<unsigned>(
      std::min<int64_t>({int64_t(std::max(1u, opts_.threads)), total_, kMaxThreads, byMemory}));
}

std::optional<Trap> Launcher::checkArguments() {
  return checkLaunchArguments(kernel_, args_);
}

std::optional<Trap> Launcher::checkGrid() {
  const auto &g = ctx_.grid;
  auto bad = [&](std::string msg) { return launchTrap(kernel_, TrapKind::InvalidLaunch, msg); };
  std::string text = "grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
                     std::to_string(g[2]) + ")";
  if (auto t = checkLaunchGrid(kernel_, g))
    return t;
  total_ = g[0] * g[1] * g[2];
  if (opts_.onlyProgram) {
    const auto &p = *opts_.onlyProgram;
    for (size_t i = 0; i < 3; ++i)
      if (p[i] < 0 || p[i] >= g[i])
        return bad("program (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " +
                   std::to_string(p[2]) + ") is outside the " + text);
    total_ = 1;
  }
  return std::nullopt;
}

/// Per parameter: what the base of its buffer must be a multiple of to keep
/// the claims (`__aligned(N)`, `__multipleof(N)`) of every pointer parameter
/// bound to the same memory, as a GPU allocator would give it (0: no claim,
/// or one that does not fit in 64 bits).
std::vector<uint64_t> Launcher::claimedAlignments() {
  size_t n = fn_.numParams();
  std::vector<uint64_t> claim(n, 0), align(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!fn_.param(static_cast<unsigned>(i))->type().isPtr)
      continue;
    const ir::ParamAttrs &attrs = fn_.paramAttrs(static_cast<unsigned>(i));
    claim[i] = 1;
    for (int64_t c : {attrs.aligned, attrs.multipleOf})
      if (c > 1 && claim[i] != 0)
        claim[i] = interp::lcmOrZero(claim[i], static_cast<uint64_t>(c));
  }
  for (size_t i = 0; i < n; ++i) {
    if (claim[i] == 0 || !fn_.param(static_cast<unsigned>(i))->type().isPtr)
      continue;
    const HostArray &a = *args_.buffer(fn_.paramName(static_cast<unsigned>(i)));
    uint64_t all = 1;
    for (size_t j = 0; j < n && all != 0; ++j) {
      if (!fn_.param(static_cast<unsigned>(j))->type().isPtr)
        continue;
      const HostArray &b = *args_.buffer(fn_.paramName(static_cast<unsigned>(j)));
      if (interp::Memory::sameMemory(a, b) || interp::Memory::sameMemory(b, a))
        all = claim[j] == 0 ? 0 : interp::lcmOrZero(all, claim[j]);
    }
    align[i] = all;
  }
  return align;
}

/// Places buffers, builds parameter values, checks __multipleof / __aligned.
std::optional<Trap> Launcher::placeArguments() {
  std::vector<uint64_t> align = claimedAlignments();
  for (size_t i = 0; i < fn_.numParams(); ++i) {
    const std::string &name = fn_.paramName(static_cast<unsigned>(i));
    const ir::Type &t = fn_.param(static_cast<unsigned>(i))->type();
    const ir::ParamAttrs &attrs = fn_.paramAttrs(static_cast<unsigned>(i));
    auto misaligned = [&](std::string msg) {
      return launchTrap(kernel_, TrapKind::Misaligned, msg);
    };
    if (t.isPtr) {
      uint64_t base =
          memory_.place(name, args_.buffer(name), i, align[i]) + args_.buffer(name)->origin;
      paramStart_.resize(fn_.numParams());
      paramStart_[i] = base;
      ctx_.params.push_back(interp::makeScalarInt(DType::U64, base));
      if (attrs.multipleOf > 1 && base % static_cast<uint64_t>(attrs.multipleOf) != 0)
        return misaligned("pointer argument '" + name + "' = " + interp::hexAddr(base) +
                          " is not a multiple of " + std::to_string(attrs.multipleOf) +
                          " (its __multipleof(" + std::to_string(attrs.multipleOf) + ") claim)");
      if (attrs.aligned > 0 && base % static_cast<uint64_t>(attrs.aligned) != 0)
        return misaligned("pointer argument '" + name + "' = " + interp::hexAddr(base) +
                          " is not aligned to " + std::to_string(attrs.aligned) +
                          " bytes (its __aligned(" + std::to_string(attrs.aligned) + ") claim)");
      continue;
    }
    uint64_t bits = *fitScalar(*args_.scalar(name), t.dtype);
    interp::TilePtr v = interp::makeTile(1, byteSize(t.dtype));
    std::memcpy(v->raw(), &bits, byteSize(t.dtype));
    ctx_.params.push_back(v);
  }
  // The race check keeps a buffer's shadow in units of its first
  // parameter's elements: views of other element sizes over the same memory
  // (an int16 view of a float32 array) would make accesses to different
  // bytes of one unit look like a race.
  if (opts_.raceCheck && !opts_.onlyProgram && total_ > 1)
    for (const auto &r : memory_.regions())
      for (const std::string &name : r->names)
        if (byteSize(args_.buffer(name)->dtype) != byteSize(r->array->dtype))
          return launchTrap(
              kernel_, TrapKind::InvalidLaunch,
              "argument '" + name + "' (" +
                  std::string(conformanceName(args_.buffer(name)->dtype)) + "*) and argument '" +
                  r->names[0] + "' (" + std::string(conformanceName(r->array->dtype)) +
                  "*) are views of one memory with different element sizes: not supported yet "
                  "with the race check on; pass race_check=False / --no-race-check");
  return checkScalarClaims(kernel_, args_);
}

void Launcher::setPid(Frame &f, int64_t index) const {
  const auto &g = ctx_.grid;
  f.index = index;
  if (opts_.onlyProgram) {
    f.pid = *opts_.onlyProgram;
    return;
  }
  f.pid = {index / (g[1] * g[2]), (index / g[2]) % g[1], index % g[2]};
}

void Launcher::numberSites(interp::PBlock &b) {
  for (interp::Instr &in : b.ops) {
    ir::OpKind k = in.op->kind();
    if (k == ir::OpKind::Load || k == ir::OpKind::Store || k == ir::OpKind::AtomicRMW ||
        k == ir::OpKind::AtomicCas) {
      // The same number every launch: written once, so launches of one
      // (shared, prepared) kernel on several threads do not race here.
      if (uint32_t site = static_cast<uint32_t>(tracker_->sites.size()); in.site != site)
        in.site = site;
      tracker_->sites.push_back(&in);
    }
    for (interp::PBlock &r : in.regions)
      numberSites(r);
  }
}

/// The undo journal (RunOptions::undoOnTrap) over every writable buffer, and
/// whether stores must be checked at all.
void Launcher::startJournal() {
  bool readOnly = false;
  for (const auto &r : memory_.regions())
    readOnly = readOnly || r->readOnly;
  if (opts_.undoOnTrap) {
    journal_ = std::make_unique<interp::UndoJournal>();
    for (const auto &r : memory_.regions())
      if (!r->readOnly)
        journal_->cover(r->host, r->size);
    journal_->build();
    ctx_.journal = journal_.get();
  }
  ctx_.guardStores = journal_ || readOnly;
}

/// The shadow memory, when races are checked or coverage / access maps asked
/// for (not for a single program: --program).
void Launcher::startTracking(unsigned threads) {
  bool races = opts_.raceCheck && !opts_.onlyProgram && total_ > 1;
  if (!races && !opts_.coverage && !opts_.accessMap)
    return;
  // No atomics (so no happens-before between programs), no
  // output to order and no access map: per-thread logs of intervals, checked
  // for overlaps after the run (interp/AccessTracker.h).
  bool atomics = false;
  const auto &regions = memory_.regions();
  shadowUnits_.assign(regions.size(), 0);
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) {
    ir::OpKind k = op.kind();
    atomics = atomics || k == ir::OpKind::AtomicRMW || k == ir::OpKind::AtomicCas;
    if (!races || (k != ir::OpKind::Load && k != ir::OpKind::Store && k != ir::OpKind::AtomicRMW &&
                   k != ir::OpKind::AtomicCas))
      return;
    // A buffer reached through a narrower pointer (a `char *` cast of a float
    // parameter) is checked in units of that access, so that two programs
    // writing different bytes of one element do not race. A pointer of no
    // known parameter may reach any buffer.
    unsigned size = byteSize(op.operand(0)->type().dtype);
    std::set<std::string> params;
    bool known = pointerParams(op.operand(0), params);
    for (size_t i = 0; i < regions.size(); ++i) {
      const auto &names = regions[i]->names;
      if (known && std::none_of(names.begin(), names.end(),
                                [&](const std::string &n) { return params.count(n) != 0; }))
        continue;
      unsigned &u = shadowUnits_[i];
      u = std::min(u ? u : byteSize(regions[i]->array->dtype), size);
    }
  });
  atomics_ = atomics;
  bool logged = races && !opts_.accessMap && !atomics && quietKernel();
  tracker_ = std::make_unique<interp::AccessTracker>(memory_, races, opts_.accessMap, threads > 1,
                                                     logged ? threads : 0, shadowUnits_);
  tracker_->setAtomics(races && atomics);
  setNoPlainStores();
  numberSites(prepared_->body);
  nameParams();
  ctx_.tracker = tracker_.get();
  if (races && (threads > 1 || tracker_->logged())) { // which buffers the kernel stores to
    std::set<std::string> stored;
    bool known = storedParams(fn_.body(), stored);
    if (!journal_) // (the undo journal, when there is one, already copies each page first)
      cow_ = std::make_unique<interp::UndoJournal>();
    for (size_t i = 0; i < regions.size(); ++i) {
      const interp::Region &r = *regions[i];
      bool written = !known || std::any_of(r.names.begin(), r.names.end(), [&](const auto &n) {
                       return stored.count(n) != 0;
                     });
      if (!written)
        tracker_->setNoStores(i);
      if (cow_ && !r.readOnly) // (a page costs only once a store reaches it)
        cow_->cover(r.host, r.size);
    }
    if (cow_) {
      cow_->build();
      tracker_->setJournal(cow_.get());
    }
  }
}

/// Tells the tracker the buffers that no plain store of the kernel's text
/// reaches (their readers need no keeping aside: AccessTracker::setAtomics).
/// (A store through a pointer computed from another parameter's cannot land
/// in such a buffer: it traps out_of_bounds first, Instr::from.)
void Launcher::setNoPlainStores() {
  std::set<std::string> stored;
  bool known = true;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) {
    if (op.kind() == ir::OpKind::Store)
      known = pointerParams(op.operand(0), stored) && known;
  });
  if (!known)
    return;
  const auto &regions = memory_.regions();
  for (size_t i = 0; i < regions.size(); ++i)
    if (std::none_of(regions[i]->names.begin(), regions[i]->names.end(),
                     [&](const std::string &n) { return stored.count(n) != 0; }))
      tracker_->setNoPlainStores(i);
}

/// The pointer parameters as bound (reports name an element through the
/// parameter whose pointer reached it: AccessTracker::ParamView).
void Launcher::nameParams() {
  for (size_t i = 0; i < fn_.numParams(); ++i) {
    const ir::Value *p = fn_.param(static_cast<unsigned>(i));
    if (!p->type().isPtr)
      continue;
    const std::string &name = fn_.paramName(static_cast<unsigned>(i));
    const HostArray *a = args_.buffer(name);
    interp::AccessTracker::ParamView v;
    v.name = name;
    v.param = p;
    v.start = paramStart_[i];
    v.elemSize = static_cast<unsigned>(byteSize(a->dtype));
    v.shape = a->shape;
    tracker_->addParam(std::move(v));
  }
}

/// The caller's buffers as they were before the launch (cow_ or journal_).
void Launcher::restoreBuffers() {
  if (cow_)
    cow_->undo();
  else if (journal_)
    journal_->undo();
}

/// After a logged run (interp/AccessTracker.h) whose intervals overlap: the
/// launch again, from the buffers as they were, with the element-wise check.
void Launcher::exactRerun(unsigned threads) {
  restoreBuffers();
  tracker_ = std::make_unique<interp::AccessTracker>(memory_, true, false, true, 0, shadowUnits_);
  tracker_->setAtomics(atomics_);
  setNoPlainStores();
  tracker_->setJournal(cow_.get());
  numberSites(prepared_->body);
  nameParams();
  ctx_.tracker = tracker_.get();
  trap_.reset();
  trapIndex_ = INT64_MAX;
  interrupted_ = false;
  steps_ = 0;
  if (threads <= 1) {
    tracker_->setLocked(false);
    runSequential();
    return;
  }
  next_ = 0;
  running_.clear();
  pending_.clear();
  abandoned_.clear();
  ctx_.opsAtTrap.store(0);
  ctx_.stopAbove.store(INT64_MAX);
  runParallel(threads);
}

/// Logged mode: whether the intervals of two programs overlap (one a store),
/// checked in parts on `threads` threads.
bool Launcher::overlapsFound(unsigned threads) {
  size_t parts = tracker_->prepareCheck(threads * 4);
  if (tracker_->overflowed())
    return true;
  std::atomic<size_t> next{0};
  std::atomic<bool> found{false};
  std::function<void()> task = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts &&
                   !found.load(std::memory_order_relaxed);)
      if (tracker_->checkPart(i))
        found.store(true, std::memory_order_relaxed);
  };
  if (threads <= 1 || parts <= 1)
    task();
  else
    WorkerPool::instance().run(std::min<unsigned>(threads, static_cast<unsigned>(parts)) - 1, task);
  return found.load();
}

/// No print and no --trace: nothing to write in program order.
bool Launcher::quietKernel() const {
  bool quiet = !opts_.trace;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) {
    quiet = quiet && op.kind() != ir::OpKind::Print;
  });
  return quiet;
}

/// RunResult::buffers from the shadow memory.
void Launcher::collectBuffers() {
  if (!tracker_ || opts_.onlyProgram)
    return;
  for (const auto &r : memory_.regions()) {
    BufferAccess b;
    b.name = r->names.empty() ? "?" : r->names[0];
    if (r->names.size() > 1)
      b.sharedWith.assign(r->names.begin() + 1, r->names.end());
    b.shape = r->array->shape;
    interp::AccessTracker::Coverage c = tracker_->coverage(*r);
    b.elements = c.elements;
    b.stored = c.stored;
    b.unwritten = std::move(c.unwritten);
    if (opts_.accessMap) {
      b.writer.resize(static_cast<size_t>(b.elements));
      b.reader.resize(static_cast<size_t>(b.elements));
      for (int64_t e = 0; e < b.elements; ++e)
        std::tie(b.writer[static_cast<size_t>(e)], b.reader[static_cast<size_t>(e)]) =
            tracker_->touch(*r, e);
    }
    result_.buffers.push_back(std::move(b));
  }
  if (!opts_.accessMap || result_.buffers.empty())
    return;
  const auto &regions = memory_.regions();
  for (const auto &o : tracker_->outOfBounds()) {
    // The nearest buffer: the last one starting at or below the address, or the first.
    size_t best = 0;
    for (size_t i = 0; i < regions.size(); ++i)
      if (regions[i]->base <= o.addr)
        best = i;
    const interp::Region &r = *regions[best];
    unsigned es = byteSize(r.array->dtype);
    int64_t diff = static_cast<int64_t>(o.addr - r.base);
    BufferAccess::Attempt a;
    a.program = o.prog;
    a.element = diff >= 0 ? diff / es : -((-diff + es - 1) / es);
    ir::Location loc = tracker_->sites[o.site]->op->loc();
    a.line = loc.line;
    result_.buffers[best].outOfBounds.push_back(a);
  }
}

/// Runs the programs one after another. With `rerun` (the run again in
/// program order, rerunInProgramOrder): the first program that reaches the
/// step limit (its budget) is set aside where it stopped and the later ones
/// run (it may wait for one of them); a second one, or the time limit, ends
/// the run with no trap. rerun->stopped then says why (the first one's
/// reason, if any), and rerun->setAside says which was set aside.
void Launcher::runSequential(int64_t quietBelow, Rerun *rerun) {
  Frame f(ctx_, prepared_->numSlots);
  for (int64_t i = 0; i < total_; ++i) {
    setPid(f, i);
    f.restart(i);
    f.direct = i < quietBelow ? nullptr : out_;
    bool ok = interp::runProgram(f, *prepared_);
    steps_ += f.steps;
    if (!ok) {
      if (f.trap && f.trap->kind == TrapKind::StepLimit && !f.interrupted) {
        if (rerun) {
          bool first = !rerun->setAside;
          if (!rerun->stopped)
            rerun->stopped = rerunStopped(f);
          if (first && f.steps >= ctx_.maxSteps) {
            rerun->setAside = setAside(f);
            continue;
          }
          return;
        }
        noteWaiting(f);
      }
      interrupted_ = f.interrupted;
      trap_ = std::move(f.trap);
      return;
    }
  }
}

/// After the threads found a data race: the launch again in program order,
/// from the buffers as they were, so that the report is the one every thread
/// count gives. In program order a program may wait forever for a later one
/// (a flag that one sets after the race): each program of this run gets at
/// most LaunchContext::waitBudget of the ops of the threads' whole run (and
/// the user's own limits). The first one that runs past
/// that is set aside where it stopped and the later ones run (one of them
/// may race with what it did: that report, with a note, is this run's); a
/// second one, or the time limit, ends the run, and the threads' report
/// stands, as where this run finds no race.
void Launcher::rerunInProgramOrder() {
  restoreBuffers();
  tracker_->reset();
  tracker_->setLocked(false);
  std::optional<Trap> found = std::move(trap_);
  trap_.reset();
  uint64_t threadSteps = steps_.exchange(0);
  uint64_t budget = interp::LaunchContext::waitBudget(threadSteps);
  uint64_t userSteps = ctx_.maxSteps;
  ctx_.maxSteps = std::min(userSteps, budget);
  ctx_.stopAbove.store(INT64_MAX);
  std::ostringstream later; // what programs past the threads' trap print
  std::ostream *out = std::exchange(out_, &later);
  Rerun rerun;
  runSequential(trapIndex_ + 1, &rerun); // (the output up to the trap is written)
  out_ = out;
  ctx_.maxSteps = userSteps;
  if (trap_) {
    if (rerun.setAside)
      trap_->notes.push_back(std::move(*rerun.setAside));
    *out_ << later.str();
    return;
  }
  // In program order the atomics ordered what the threads' run found racing
  // (a program that read a flag before another one set it), or a program
  // waited for a later one: the race is real all the same. Report it, the
  // buffers as they were.
  restoreBuffers();
  trap_ = std::move(found);
  if (rerun.stopped) {
    trap_->notes.push_back(std::move(*rerun.stopped));
    steps_ = threadSteps; // (the report is the threads' run's)
  }
}

void Launcher::runParallel(unsigned threads) {
  quiet_ = quietKernel();
  nextQuiet_ = 0;
  // A few programs per take, at least 16 takes per thread (the last takes
  // balance the threads' ends).
  grab_ = std::clamp<int64_t>(total_ / (int64_t(threads) * 16), 1, 16);
  std::function<void()> work = [this] {
    Frame f(ctx_, prepared_->numSlots);
    runWorker(f);
    if (tracker_)
      tracker_->finishThread(); // (sorts this thread's log in logged mode)
  };
  // The calling thread is one of the workers (the system may give fewer pool threads).
  WorkerPool::instance().run(threads - 1, work);
  for (auto &[index, text] : pending_) // what the last finisher could not yet write
    if (index <= trapIndex_)
      *out_ << text;
  pending_.clear();
  for (auto &[index, note] : abandoned_) // (in index order)
    if (trap_ && index < trapIndex_)
      trap_->notes.push_back(std::move(note));
  abandoned_.clear();
}

void Launcher::runWorker(Frame &f) {
  if (quiet_) {
    // Programs are taken grab_ at a time and steps added up once per thread:
    // the threads share one counter, and its cache line moves between cores
    // on every update (issue 32: many small programs on 16 cores).
    uint64_t steps = 0;
    for (bool more = true; more;) {
      int64_t first = nextQuiet_.fetch_add(grab_, std::memory_order_relaxed);
      for (int64_t index = first; index < first + grab_; ++index) {
        if (index >= total_ || index > ctx_.stopAbove.load(std::memory_order_relaxed)) {
          more = false;
          break;
        }
        setPid(f, index);
        f.restart(index);
        interp::runProgram(f, *prepared_);
        steps += f.steps;
        if (f.trap || f.abandoned) {
          // (the ops so far count for the budget of the programs below a trap)
          steps_.fetch_add(std::exchange(steps, 0), std::memory_order_relaxed);
          finishProgram(f, index);
        }
      }
    }
    steps_.fetch_add(steps, std::memory_order_relaxed);
    return;
  }
  for (;;) {
    int64_t index;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= total_ || next_ > trapIndex_)
        return;
      index = next_++;
      running_.insert(index);
    }
    setPid(f, index);
    f.restart(index);
    interp::runProgram(f, *prepared_);
    steps_ += f.steps;
    finishProgram(f, index);
  }
}

/// Records a finished program's trap and output; writes, in index order, the
/// output of every program below the lowest still running.
void Launcher::finishProgram(Frame &f, int64_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(index);
  if (f.trap && f.interrupted && trap_ && interrupted_) {
    // Ctrl-C stops every running program: the report names each one's place.
    if (index < trapIndex_) {
      std::swap(*trap_, *f.trap);
      trapIndex_ = index;
    }
    appendPlace(*trap_, *f.trap);
    f.trap.reset();
  } else if (f.trap && index < trapIndex_) {
    trapIndex_ = index;
    trap_ = std::move(f.trap);
    interrupted_ = f.interrupted;
    // The programs below it that still run get a budget from the ops so far
    // (LaunchContext::opsAtTrap): they may wait for a store that this trap
    // kept from happening.
    ctx_.opsAtTrap.store(steps_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    ctx_.stopAbove.store(index, std::memory_order_release);
  } else if (f.abandoned && index < trapIndex_) {
    abandoned_.emplace(index, givenUp(f));
  }
  if (!f.stopped && !f.buffered.empty())
    pending_.emplace(index, std::move(f.buffered));
  int64_t frontier = running_.empty() ? next_ : *running_.begin();
  while (!pending_.empty() && pending_.begin()->first < frontier) {
    if (pending_.begin()->first <= trapIndex_)
      *out_ << pending_.begin()->second;
    pending_.erase(pending_.begin());
  }
}

/// The element a program that reached the step limit kept reading, when its
/// last 0-d load or atomic read a buffer that some store or atomic of the
/// kernel (another one) writes and the grid has other programs: it may be
/// waiting for another program's store.
std::optional<Launcher::Waiting> Launcher::waitingOn(const Frame &f) const {
  if (!f.lastLoad || ctx_.grid[0] * ctx_.grid[1] * ctx_.grid[2] < 2)
    return std::nullopt;
  const interp::Region *r = memory_.find(f.lastLoad, 1);
  if (!r)
    return std::nullopt;
  const ir::Op *store = storeTo(fn_.body(), r->names, f.lastLoadOp);
  if (!store)
    return std::nullopt;
  int64_t element = static_cast<int64_t>((f.lastLoad - r->base) / byteSize(r->array->dtype));
  return Waiting{r, element, store};
}

/// A note at `op`'s source line (none when it has no location).
Trap::Note Launcher::noteAt(const ir::Op *op, std::string text) const {
  Trap::Note n;
  ir::Location loc = op ? op->loc() : ir::Location{};
  const ir::Module &m = kernel_.module();
  if (loc.line != 0 && loc.file < m.files.size()) {
    n.file = m.files[loc.file];
    n.line = loc.line;
    n.col = loc.col;
    n.sourceLine = kernel_.sourceLine(loc.file, loc.line);
  }
  n.text = std::move(text);
  return n;
}

/// A program that hit the step limit with programs run one at a time, whose
/// last 0-d load read a buffer the kernel also writes, may be waiting for
/// another program's store that can only come when both run at once: say so.
void Launcher::noteWaiting(Frame &f) const {
  std::optional<Waiting> w = waitingOn(f);
  if (!w)
    return;
  f.trap->notes.push_back(noteAt(
      w->store,
      "the program kept reading " + w->region->label() + " element " + std::to_string(w->element) +
          ", which programs of this kernel write here: with one thread the programs run one "
          "after another, so a program that waits for another one's store never sees it: "
          "run with --threads N, N at least the number of programs that must run at the same "
          "time (2 or more)"));
}

/// Why the run again in program order stopped at `f`'s step or time limit
/// (rerunInProgramOrder), as a note of the threads' report.
Trap::Note Launcher::rerunStopped(const Frame &f) const {
  std::string program = "program (" + std::to_string(f.pid[0]) + ", " + std::to_string(f.pid[1]) +
                        ", " + std::to_string(f.pid[2]) + ")";
  std::string why;
  const ir::Op *at = nullptr;
  if (std::optional<Waiting> w = waitingOn(f)) {
    why = program + " waits here for a later one (it kept reading " + w->region->label() +
          " element " + std::to_string(w->element) + ")";
    at = f.lastLoadOp;
  } else if (f.steps >= ctx_.maxSteps) {
    why = program + " ran more than " + std::to_string(ctx_.maxSteps) + " ops";
  } else {
    why = program + " reached the time limit";
  }
  Trap::Note n = noteAt(at, "the launch was not run again in program order: " + why +
                                "; this report is the threads' run's, with the buffers as "
                                "they were before the launch");
  if (!at && f.trap) { // where the program stopped
    n.file = f.trap->file;
    n.line = f.trap->line;
    n.col = f.trap->col;
    n.sourceLine = f.trap->sourceLine;
  }
  return n;
}

/// Where program `f` was given up below a later program's trap
/// (Frame::abandoned), as a note of that trap's report.
Trap::Note Launcher::givenUp(const Frame &f) const {
  std::string text = "program (" + std::to_string(f.pid[0]) + ", " + std::to_string(f.pid[1]) +
                     ", " + std::to_string(f.pid[2]) +
                     ") was still running here, and was given up after the ops that a program "
                     "below the trapping one may still run";
  if (std::optional<Waiting> w = waitingOn(f))
    return noteAt(f.lastLoadOp, text + ": it kept reading " + w->region->label() + " element " +
                                    std::to_string(w->element) +
                                    ", which this kernel writes (it may wait for a write that the "
                                    "trap kept from happening)");
  return noteAt(f.abandonedAt, text);
}

/// Why the run again in program order set program `f` aside where it reached
/// its step limit (rerunInProgramOrder), as a note of that run's report.
Trap::Note Launcher::setAside(const Frame &f) const {
  std::string program = "program (" + std::to_string(f.pid[0]) + ", " + std::to_string(f.pid[1]) +
                        ", " + std::to_string(f.pid[2]) + ")";
  std::string after = ": it was stopped there, and the programs after it ran";
  if (std::optional<Waiting> w = waitingOn(f))
    return noteAt(f.lastLoadOp,
                  "in program order, " + program + " waits here for a later one (it kept reading " +
                      w->region->label() + " element " + std::to_string(w->element) + ")" + after);
  Trap::Note n = noteAt(nullptr, "in program order, " + program + " ran more than " +
                                     std::to_string(ctx_.maxSteps) + " ops" + after);
  if (f.trap) { // where the program stopped
    n.file = f.trap->file;
    n.line = f.trap->line;
    n.col = f.trap->col;
    n.sourceLine = f.trap->sourceLine;
  }
  return n;
}

class InterpreterBackend : public Backend {
public:
  std::string name() const override { return "interp"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &kernel, std::array<int64_t, 3> grid, LaunchArgs &args,
                   const RunOptions &opts) override {
    for (const auto &[name, a] : args.buffers())
      if (a && a->device != 0) {
        RunResult r;
        r.status = RunResult::Status::Error;
        r.error = "buffer '" + name + "' lives on the GPU; the interpreter takes host arrays";
        return r;
      }
    // Overlapping host arrays (two slices of one array) are one buffer, the union.
    OverlappingViews views;
    if (std::optional<Trap> t = views.prepare(kernel, args)) {
      RunResult r;
      r.status = RunResult::Status::Trapped;
      r.trap = std::move(t);
      return r;
    }
    Launcher l(kernel, grid, views.launchArgs(), opts);
    RunResult r = l.run();
    views.finish(r);
    return r;
  }
};

} // namespace

std::optional<Trap> checkLaunchArguments(const CompiledKernel &kernel, const LaunchArgs &args) {
  return checkLaunchArgumentsImpl(kernel, args);
}

std::optional<uint64_t> scalarArgumentBits(const ScalarValue &v, DType param) {
  return fitScalar(v, param);
}

std::optional<Trap> checkScalarClaims(const CompiledKernel &kernel, const LaunchArgs &args) {
  const ir::Function &fn = kernel.function();
  for (size_t i = 0; i < fn.numParams(); ++i) {
    const std::string &name = fn.paramName(static_cast<unsigned>(i));
    const ir::Type &t = fn.param(static_cast<unsigned>(i))->type();
    const ir::ParamAttrs &attrs = fn.paramAttrs(static_cast<unsigned>(i));
    const ScalarValue *sv = args.scalar(name);
    if (t.isPtr || !sv || attrs.multipleOf <= 1 || isFloat(t.dtype))
      continue;
    std::optional<uint64_t> bits = fitScalar(*sv, t.dtype);
    if (!bits)
      continue;
    __int128 value = num::intValue(t.dtype, *bits);
    if (value % attrs.multipleOf != 0)
      return launchTrap(kernel, TrapKind::Misaligned,
                        "argument '" + name + "' = " + std::to_string(static_cast<int64_t>(value)) +
                            " is not a multiple of " + std::to_string(attrs.multipleOf) +
                            " (its __multipleof(" + std::to_string(attrs.multipleOf) + ") claim)");
  }
  return std::nullopt;
}

std::optional<Trap> checkLaunchGrid(const CompiledKernel &kernel, std::array<int64_t, 3> g) {
  std::string text = "grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
                     std::to_string(g[2]) + ")";
  for (int64_t d : g)
    if (d < 1 || d > INT32_MAX)
      return launchTrap(kernel, TrapKind::InvalidLaunch,
                        text + " must have every dimension in [1, 2^31)");
  if (g[0] * g[1] > (int64_t(1) << 31) / g[2])
    return launchTrap(kernel, TrapKind::InvalidLaunch, text + " has more than 2^31 programs");
  return std::nullopt;
}

Trap makeLaunchTrap(const CompiledKernel &kernel, TrapKind kind, std::string message) {
  return launchTrap(kernel, kind, std::move(message));
}

std::unique_ptr<Backend> createInterpreterBackend() {
  return std::make_unique<InterpreterBackend>();
}

} // namespace tc
