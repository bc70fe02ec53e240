// The GPU backend: compile (cached), marshal, launch, copy back.
#include "gpu/GpuBackend.h"

#include "codegen/Cuda.h"
#include "ir/Printer.h"
#include "runtime/DiskCache.h"
#include "runtime/Overlap.h"
#include "runtime/Specialize.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

namespace tc::gpu {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// What the disk cache stores for a compiled kernel.
std::string serialize(const codegen::Compiled &c) {
  std::ostringstream os;
  os << c.entry << '\n' << c.numThreads << '\n' << c.sharedBytes << '\n' << c.tensorMaps.size();
  for (const codegen::TensorMapParam &m : c.tensorMaps)
    os << ' ' << m.ptrParam << ' ' << m.ldParam << ' ' << m.ldConst << ' ' << m.elemBytes << ' '
       << m.boxCols << ' ' << m.boxRows << ' ' << m.swizzle;
  os << '\n' << c.ptx;
  return os.str();
}
bool deserialize(const std::string &blob, codegen::Compiled &c) {
  std::istringstream is(blob);
  size_t maps = 0;
  if (!std::getline(is, c.entry) || !(is >> c.numThreads >> c.sharedBytes >> maps) || maps > 64)
    return false;
  c.tensorMaps.resize(maps);
  for (codegen::TensorMapParam &m : c.tensorMaps)
    if (!(is >> m.ptrParam >> m.ldParam >> m.ldConst >> m.elemBytes >> m.boxCols >> m.boxRows >>
          m.swizzle))
      return false;
  if (is.get() != '\n')
    return false;
  c.ptx.assign(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
  return !c.entry.empty() && !c.ptx.empty();
}

/// The kernel's hidden tensor-map parameters (option "tma") for the values
/// `values` of fn's parameters (each as cuLaunchKernel takes it), appended to
/// `params`. (The types come from fn: a kernel from the disk cache has no
/// Compiled::params.)
void appendTensorMaps(const codegen::Compiled &c, const ir::Function &fn, const uint64_t *values,
                      std::vector<cuda::TensorMap> &maps, std::vector<void *> &params) {
  maps.clear();
  maps.reserve(c.tensorMaps.size()); // no reallocation: params point into it
  for (const codegen::TensorMapParam &m : c.tensorMaps) {
    int64_t ld = m.ldConst;
    if (m.ptrParam >= fn.numParams() || (m.ldParam >= 0 && unsigned(m.ldParam) >= fn.numParams()))
      throw cuda::Error("internal: a tensor map names parameter " +
                            std::to_string(std::max<int64_t>(m.ldParam, m.ptrParam)) +
                            " of a kernel with " + std::to_string(fn.numParams()),
                        1, false);
    if (m.ldParam >= 0) {
      uint64_t bits = values[m.ldParam];
      ld = fn.param(static_cast<unsigned>(m.ldParam))->type().dtype == DType::I32
               ? static_cast<int32_t>(static_cast<uint32_t>(bits))
               : static_cast<int64_t>(bits);
    }
    maps.push_back(cuda::encodeTensorMap(values[m.ptrParam], ld, m.elemBytes, m.boxCols, m.boxRows,
                                         m.swizzle));
    params.push_back(&maps.back());
  }
}

std::string gridText(std::array<int64_t, 3> g) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
         ")";
}

class GpuBackendImpl final : public GpuBackend {
public:
  explicit GpuBackendImpl(const GpuOptions &o)
      : opts_(o), disk_(o.diskCache ? (o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir) : "") {}

  std::string name() const override { return "gpu"; }
  bool available(std::string *why) const override { return cudaAvailable(why); }
  void setStream(void *stream) override {
    stream_ = stream;
    if (ctx_)
      ctx_->setStream(stream);
  }
  void setNumWarps(unsigned w) override { opts_.codegen.numWarps = w; }
  unsigned numWarps() const override { return opts_.codegen.numWarps; }
  void setNumStages(unsigned s) override { opts_.codegen.numStages = s; }
  unsigned numStages() const override { return opts_.codegen.numStages; }

  std::string deviceDescription() override {
    try {
      ensureContext();
      return ctx_->deviceName() + ", sm_" + std::to_string(ctx_->computeCapability());
    } catch (const cuda::Error &e) {
      return e.what();
    }
  }

  bool prepare(const CompiledKernel &kernel, std::string &error, CompileInfo *info,
               const LaunchArgs *args) override {
    try {
      ensureContext();
      if (args && opts_.codegen.specialize && !checkLaunchArguments(kernel, *args)) {
        Variant v = variantOf(kernel, *args);
        return load(kernel, error, info, v) != nullptr;
      }
      return load(kernel, error, info, Variant{}) != nullptr;
    } catch (const cuda::Error &e) {
      error = e.what();
      dropContextIfSticky(e);
      return false;
    }
  }

  bool prepareBatch(const std::vector<const CompiledKernel *> &kernels, std::string &error,
                    CompileInfo *info) override {
    try {
      ensureContext();
      auto t0 = Clock::now();
      configure(true); // launch() passes whole allocations for host buffers
      std::vector<codegen::BatchKernel> batch;
      for (const CompiledKernel *k : kernels)
        batch.push_back({&k->module(), &k->function()});
      codegen::BatchResult r = codegen::compileBatch(batch, opts_.codegen, true);
      if (!r.ok()) {
        error = r.error;
        return false;
      }
      auto t1 = Clock::now();
      std::shared_ptr<cuda::Module> module =
          ctx_->load(r.compiled->ptx, opts_.codegen.jitOptLevel, opts_.codegen.driverJit);
      double loadMs = msSince(t1);
      for (size_t i = 0; i < kernels.size(); ++i) {
        Loaded l;
        l.compiled.entry = r.kernels[i].entry;
        l.compiled.numThreads = r.kernels[i].numThreads;
        l.compiled.sharedBytes = r.kernels[i].sharedBytes;
        l.compiled.params = r.kernels[i].params;
        l.compiled.tensorMaps = r.kernels[i].tensorMaps;
        l.compiled.sm = r.compiled->sm;
        l.compiled.archSpecific = r.compiled->archSpecific;
        l.module = module;
        l.function = module->function(l.compiled.entry);
        batchLoaded_.push_back(std::move(l));
        fast_[std::make_tuple(kernels[i]->id(), opts_.codegen.numWarps, opts_.codegen.numStages,
                              std::string(kAligned))] = &batchLoaded_.back();
      }
      if (info) {
        info->times = r.compiled->times;
        info->loadMs = loadMs;
        info->totalMs = msSince(t0);
        info->cacheHit = "";
        info->paths = r.compiled->paths;
      }
      return true;
    } catch (const cuda::Error &e) {
      error = e.what();
      dropContextIfSticky(e);
      return false;
    }
  }

  bool prepareClasses(const CompiledKernel &kernel, const std::vector<const LaunchArgs *> &args,
                      std::string &error, CompileInfo *info) override {
    if (!opts_.codegen.specialize) {
      error = "launches are not specialised (--disable-opt specialize)";
      return false;
    }
    try {
      ensureContext();
      auto t0 = Clock::now();
      // One copy per class not loaded yet, as load() compiles a class.
      std::vector<Variant> variants;
      for (const LaunchArgs *a : args) {
        if (!a || checkLaunchArguments(kernel, *a))
          continue; // the launch traps before it compiles anything
        Variant v = variantOf(kernel, *a);
        auto key = std::make_tuple(kernel.id(), opts_.codegen.numWarps, opts_.codegen.numStages,
                                   v.key);
        if (fast_.count(key) ||
            std::any_of(variants.begin(), variants.end(),
                        [&](const Variant &w) { return w.key == v.key; }))
          continue;
        variants.push_back(std::move(v));
      }
      if (info)
        *info = CompileInfo{};
      if (variants.empty())
        return true;
      configure(false); // each pointer's alignment is in its class
      std::vector<SpecializedKernel> copies;
      std::vector<codegen::BatchKernel> batch;
      for (const Variant &v : variants) {
        copies.push_back(specializeKernel(kernel.module(), kernel.function(), *v.spec));
        batch.push_back({copies.back().module.get(), copies.back().function});
      }
      codegen::BatchResult r = codegen::compileBatch(batch, opts_.codegen, true);
      if (!r.ok()) {
        error = r.error;
        return false;
      }
      auto t1 = Clock::now();
      std::shared_ptr<cuda::Module> module =
          ctx_->load(r.compiled->ptx, opts_.codegen.jitOptLevel, opts_.codegen.driverJit);
      double loadMs = msSince(t1);
      for (size_t i = 0; i < variants.size(); ++i) {
        Loaded l;
        l.compiled.entry = r.kernels[i].entry;
        l.compiled.numThreads = r.kernels[i].numThreads;
        l.compiled.sharedBytes = r.kernels[i].sharedBytes;
        l.compiled.params = r.kernels[i].params;
        l.compiled.tensorMaps = r.kernels[i].tensorMaps;
        l.compiled.sm = r.compiled->sm;
        l.compiled.archSpecific = r.compiled->archSpecific;
        l.module = module;
        l.function = module->function(l.compiled.entry);
        batchLoaded_.push_back(std::move(l));
        fast_[std::make_tuple(kernel.id(), opts_.codegen.numWarps, opts_.codegen.numStages,
                              variants[i].key)] = &batchLoaded_.back();
      }
      if (info) {
        info->times = r.compiled->times;
        info->loadMs = loadMs;
        info->totalMs = msSince(t0);
        info->paths = r.compiled->paths;
      }
      return true;
    } catch (const cuda::Error &e) {
      error = e.what();
      dropContextIfSticky(e);
      return false;
    }
  }

  bool unusable() const override { return !poisoned_.empty(); }
  bool specializes() const override { return opts_.codegen.specialize; }

  std::string launchVariant(const CompiledKernel &kernel, const uint64_t *values) const override {
    const ir::Function &fn = kernel.function();
    if (opts_.codegen.specialize) { // Specialization::key(), built in place (the fast path's)
      std::string key = "spec=";
      key.reserve(5 + fn.numParams());
      for (unsigned i = 0; i < fn.numParams(); ++i)
        key += classChar(classifyBits(fn.param(i)->type(), values[i]));
      return key;
    }
    for (unsigned i = 0; i < fn.numParams(); ++i)
      if (fn.param(i)->type().isPtr && values[i] % 16 != 0)
        return kUnaligned;
    return kAligned;
  }

  RunResult launch(const CompiledKernel &kernel, std::array<int64_t, 3> grid, LaunchArgs &args,
                   const RunOptions &opts) override {
    return run(kernel, grid, args, opts, 0, 1, nullptr);
  }

  RunResult bench(const CompiledKernel &kernel, std::array<int64_t, 3> grid, LaunchArgs &args,
                  const RunOptions &opts, int warmup, int iterations, BenchResult &out) override {
    return run(kernel, grid, args, opts, std::max(0, warmup), std::max(1, iterations), &out);
  }

  bool launchDevice(const CompiledKernel &kernel, std::array<int64_t, 3> grid,
                    const uint64_t *values, unsigned numWarps, unsigned numStages,
                    void *stream) override {
    // What run() checks, without building its messages: anything that fails
    // goes back to launch(), which reports it.
    for (int64_t d : grid)
      if (d < 1 || d > INT32_MAX)
        return false;
    if (grid[1] > 65535 || grid[2] > 65535 || grid[0] * grid[1] > (int64_t(1) << 31) / grid[2])
      return false;
    const ir::Function &fn = kernel.function();
    bool aligned = true;
    for (unsigned i = 0; i < fn.numParams(); ++i) {
      const ir::Type &t = fn.param(i)->type();
      const ir::ParamAttrs &pa = fn.paramAttrs(i);
      if (t.isPtr) {
        aligned = aligned && values[i] % 16 == 0;
        for (int64_t claim : {pa.aligned, pa.multipleOf})
          if (claim > 1 && values[i] % static_cast<uint64_t>(claim) != 0)
            return false;
      } else if (pa.multipleOf > 1 && !isFloat(t.dtype)) {
        unsigned bits = static_cast<unsigned>(byteSize(t.dtype) * 8);
        __int128 v = static_cast<__int128>(values[i] & (bits == 64 ? ~0ull : (1ull << bits) - 1));
        if (isSignedInt(t.dtype) && (v >> (bits - 1)) & 1)
          v -= static_cast<__int128>(1) << bits;
        if (v % pa.multipleOf != 0)
          return false;
      }
    }
    if (!ctx_ || !poisoned_.empty())
      return false;
    bool wide = wideGrid(grid, numWarps);
    auto it = fast_.find(std::make_tuple(kernel.id(), numWarps, numStages,
                                         launchVariant(kernel, values) + (wide ? ",wide" : "")));
    if (it == fast_.end() && aligned && !wide) // a kernel prepared without arguments (any class)
      it = fast_.find(std::make_tuple(kernel.id(), numWarps, numStages, std::string(kAligned)));
    if (it == fast_.end()) // the first launch of this variant goes through launch()
      return false;
    Loaded &l = *it->second;
    setStream(stream);
    std::array<void *, 64> small;
    std::vector<void *> big;
    void **params = small.data();
    if (fn.numParams() > small.size()) {
      big.resize(fn.numParams());
      params = big.data();
    }
    for (unsigned i = 0; i < fn.numParams(); ++i)
      params[i] = const_cast<uint64_t *>(&values[i]); // little-endian: the low bytes
    std::vector<cuda::TensorMap> maps;
    std::vector<void *> withMaps;
    if (!l.compiled.tensorMaps.empty()) {
      withMaps.assign(params, params + fn.numParams());
      try {
        appendTensorMaps(l.compiled, fn, values, maps, withMaps);
      } catch (const cuda::Error &) {
        return false; // launch() reports it
      }
      params = withMaps.data();
    }
    std::array<unsigned, 3> g = {static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                                 static_cast<unsigned>(grid[2])};
    try {
      ctx_->launch(l.function, g, l.compiled.numThreads, l.compiled.sharedBytes, params);
    } catch (const cuda::Error &e) {
      dropContextIfSticky(e);
      return false;
    }
    return true;
  }

private:
  /// What a kernel is compiled for: `key` "aligned" / "unaligned" (not
  /// specialised: every pointer is a whole allocation, or not), or a
  /// Specialization::key() with `spec`.
  /// Puts a setting of opts_ back as it was when the scope ends (a launch's
  /// own num_warps, a wide grid's prefetch).
  template <typename T> struct Restore {
    explicit Restore(T &v) : ref(v), saved(v) {}
    ~Restore() { ref = saved; }
    Restore(const Restore &) = delete;
    Restore &operator=(const Restore &) = delete;
    T &ref;
    T saved;
  };
  static constexpr const char *kAligned = "aligned";
  static constexpr const char *kUnaligned = "unaligned";
  struct Variant {
    std::string key = kAligned;
    std::optional<Specialization> spec;
    bool wide = false; // compiled without option prefetch (wideGrid)
  };

  /// Whether a launch runs the kernel compiled without option prefetch
  /// (wideGridForPrefetch; the variant's key then gets ",wide").
  bool wideGrid(std::array<int64_t, 3> grid, unsigned numWarps) const {
    return opts_.codegen.prefetch && ctx_ && sms_ && wideGridForPrefetch(grid, numWarps, sms_);
  }
  void markWide(Variant &v, std::array<int64_t, 3> grid, unsigned numWarps) const {
    if (wideGrid(grid, numWarps)) {
      v.wide = true;
      v.key += ",wide";
    }
  }

  /// The variant a launch with `args` (checked) runs.
  Variant variantOf(const CompiledKernel &kernel, const LaunchArgs &args) const {
    Variant v;
    bool aligned = true;
    for (const auto &[name, a] : args.buffers())
      if ((a->device + a->origin) % 16 != 0)
        aligned = false;
    v.key = aligned ? kAligned : kUnaligned;
    if (!opts_.codegen.specialize)
      return v;
    // Host arrays are copied to whole allocations (16-byte aligned): the
    // kernel gets the allocation's address plus the origin.
    v.spec = classifyArgs(kernel.function(), args, [](const std::string &, const HostArray &a) {
      return a.device + a.origin;
    });
    v.key = v.spec->key();
    return v;
  }

  struct Loaded {
    codegen::Compiled compiled;
    std::shared_ptr<cuda::Module> module; // shared by the kernels of a batch
    void *function = nullptr;
  };

  void ensureContext() {
    if (!poisoned_.empty())
      throw cuda::Error("the GPU cannot be used in this process after an earlier fault (" +
                            poisoned_ + "); only a new process can use it again",
                        0, false);
    if (!ctx_) {
      ctx_ = opts_.primaryContext ? cuda::Context::createPrimary(opts_.device)
                                  : cuda::Context::create(opts_.device);
      ctx_->setStream(stream_);
      sms_ = std::max(1, ctx_->multiprocessorCount()); // (wideGrid)
    }
  }

  /// A sticky error poisons CUDA for the whole process (the driver refuses new
  /// contexts afterwards): drop the context and refuse later launches clearly.
  void dropContextIfSticky(const cuda::Error &e) {
    if (!e.sticky())
      return;
    loaded_.clear();
    batchLoaded_.clear();
    fast_.clear();
    ctx_.reset();
    poisoned_ = e.what();
  }

  std::string cacheKey(const CompiledKernel &kernel, const Variant &v) const {
    ir::PrintOptions po;
    po.locations = true;
    std::string defines;
    for (const auto &[k, v] : kernel.defines())
      defines += k + "=" + v + ";";
    std::vector<std::string> parts = {ir::toString(kernel.module(), po), kernel.name(), defines,
                                      codegen::describeOptions(opts_.codegen),
                                      codegen::compilerVersion()};
    if (v.spec) // the argument classes ("spec=D.D1"); unspecialised keys are as before
      parts.push_back(v.key);
    return DiskCache::fullKey(parts);
  }

  /// The codegen options for the device; `aligned`: every pointer argument
  /// is a whole allocation (a specialised variant has each pointer's
  /// alignment in its class instead).
  void configure(bool aligned) {
    if (!sm_)
      sm_ = static_cast<unsigned>(std::min(ctx_->computeCapability(), 90));
    opts_.codegen.sm = sm_;
    if (ctx_->computeCapability() != 90) // sm_90a code (wgmma) runs on sm_90 devices only
      opts_.codegen.wgmma = false;
    // Buffers copied by execute() are whole allocations (16-byte aligned);
    // device arrays may be views at any element offset.
    opts_.codegen.alignedPointers = aligned;
  }

  /// Compiles (or finds) and loads the kernel for the current options and `v`.
  Loaded *load(const CompiledKernel &kernel, std::string &error, CompileInfo *info,
               const Variant &v) {
    auto t0 = Clock::now();
    // Repeated launches of one kernel object skip the cache key (it prints the IR).
    auto fastKey =
        std::make_tuple(kernel.id(), opts_.codegen.numWarps, opts_.codegen.numStages, v.key);
    if (!info) {
      if (auto it = fast_.find(fastKey); it != fast_.end())
        return it->second;
      // A kernel prepared without arguments (the generic one) serves every
      // launch whose pointers are aligned: it assumes nothing else.
      if (v.spec && !v.wide && allPointersAligned(kernel.function(), *v.spec))
        if (auto it = fast_.find(std::make_tuple(kernel.id(), opts_.codegen.numWarps,
                                                 opts_.codegen.numStages, std::string(kAligned)));
            it != fast_.end())
          return it->second;
    }
    Restore<bool> restorePrefetch(opts_.codegen.prefetch);
    if (v.wide)
      opts_.codegen.prefetch = false;
    configure(v.spec ? false : v.key.rfind(kAligned, 0) == 0);
    std::string key = cacheKey(kernel, v);
    if (auto it = loaded_.find(key); it != loaded_.end()) {
      if (info) {
        info->cacheHit = "memory";
        info->totalMs = msSince(t0);
        if (!it->second.compiled.paths.empty())
          info->paths = it->second.compiled.paths;
      }
      fast_[fastKey] = &it->second;
      return &it->second;
    }
    Loaded l;
    std::string hit;
    if (auto blob = disk_.get(key); blob && deserialize(*blob, l.compiled)) {
      hit = "disk";
    } else {
      codegen::Result r;
      if (v.spec) {
        SpecializedKernel sk = specializeKernel(kernel.module(), kernel.function(), *v.spec);
        r = codegen::compile(*sk.module, *sk.function, opts_.codegen);
      } else {
        r = codegen::compile(kernel.module(), kernel.function(), opts_.codegen);
      }
      if (!r.ok()) {
        error = r.error;
        return nullptr;
      }
      l.compiled = std::move(*r.compiled);
      disk_.put(key, serialize(l.compiled));
    }
    auto t1 = Clock::now();
    l.module = ctx_->load(l.compiled.ptx, opts_.codegen.jitOptLevel, opts_.codegen.driverJit);
    l.function = l.module->function(l.compiled.entry);
    if (info) {
      info->times = l.compiled.times;
      info->loadMs = msSince(t1);
      info->totalMs = msSince(t0);
      info->cacheHit = hit;
      info->paths = l.compiled.paths; // empty from the disk cache (not stored)
    }
    Loaded *out = &loaded_.emplace(key, std::move(l)).first->second;
    fast_[fastKey] = out;
    return out;
  }

  static bool allPointersAligned(const ir::Function &fn, const Specialization &s) {
    for (unsigned i = 0; i < fn.numParams() && i < s.params.size(); ++i)
      if (fn.param(i)->type().isPtr && s.params[i] != ArgClass::Div16)
        return false;
    return true;
  }

  RunResult fail(RunResult::Status st, std::string msg) {
    RunResult r;
    r.status = st;
    r.error = std::move(msg);
    return r;
  }

  static RunResult trapped(Trap t) {
    RunResult r;
    r.status = RunResult::Status::Trapped;
    r.trap = std::move(t);
    return r;
  }

  RunResult run(const CompiledKernel &kernel, std::array<int64_t, 3> grid, LaunchArgs &callerArgs,
                const RunOptions &opts, int warmup, int iterations, BenchResult *bench) {
    if (auto t = checkLaunchArguments(kernel, callerArgs))
      return trapped(*t);
    // Overlapping host arrays (two slices of one array) are one allocation, the union.
    OverlappingViews views;
    if (auto t = views.prepare(kernel, callerArgs))
      return trapped(*t);
    LaunchArgs &args = views.launchArgs();
    if (auto t = checkScalarClaims(kernel, args))
      return trapped(*t);
    if (auto t = checkLaunchGrid(kernel, grid))
      return trapped(*t);
    if (grid[1] > 65535 || grid[2] > 65535)
      return fail(RunResult::Status::Error, "grid " + gridText(grid) +
                                                ": the GPU allows at most 65535 programs on axes "
                                                "1 and 2");
    if (opts.onlyProgram)
      return fail(RunResult::Status::Error,
                  "running a single program (--program) is not supported by the GPU backend");
    // A launch's own num_warps (a conformance case's) for this run only.
    if (opts.numWarps && !validNumWarps(*opts.numWarps))
      return fail(RunResult::Status::Error,
                  "num_warps " + std::to_string(*opts.numWarps) +
                      " is not supported: 1, 2, 4, 8, 16 or 32 warps per program");
    Restore<unsigned> restoreWarps(opts_.codegen.numWarps);
    if (opts.numWarps)
      opts_.codegen.numWarps = *opts.numWarps;
    auto start = Clock::now();
    auto what = [&] {
      return "kernel '" + kernel.name() + "', grid " + gridText(grid) + ", num_warps " +
             std::to_string(opts_.codegen.numWarps);
    };
    try {
      ensureContext();
      std::string error;
      Variant v = variantOf(kernel, args);
      markWide(v, grid, opts_.codegen.numWarps);
      Loaded *l = load(kernel, error, nullptr, v);
      if (!l)
        return fail(RunResult::Status::Error, error);
      RunResult r = execute(kernel, *l, grid, args, opts, warmup, iterations, bench);
      r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return r;
    } catch (const cuda::Error &e) {
      dropContextIfSticky(e);
      if (e.code() == cuda::kErrorAssert) {
        Trap t = makeLaunchTrap(kernel, TrapKind::AssertionFailed,
                                "an assert failed on the GPU (" + what() +
                                    "); the device printed which one");
        t.hasProgram = false;
        return trapped(t);
      }
      return fail(RunResult::Status::Error, what() + ": " + e.what());
    }
  }

  RunResult execute(const CompiledKernel &kernel, Loaded &l, std::array<int64_t, 3> grid,
                    LaunchArgs &args, const RunOptions &opts, int warmup, int iterations,
                    BenchResult *bench) {
    const ir::Function &fn = kernel.function();
    // One device buffer per distinct host memory (an array bound twice, or
    // views of one union of overlapping arrays (OverlappingViews): one buffer,
    // uploaded and downloaded once).
    using Memory = std::pair<const uint8_t *, size_t>;
    auto memoryOf = [](const HostArray *a) { return Memory(a->bytes(), a->byteCount()); };
    std::map<Memory, cuda::Buffer> buffers;
    std::map<Memory, bool> readOnly; // some array of the memory is read-only
    bool anyHost = false;
    for (const auto &[name, a] : args.buffers())
      if (!a->device)
        readOnly[memoryOf(a)] = readOnly[memoryOf(a)] || a->readOnly;
    for (const auto &[name, a] : args.buffers())
      if (!a->device && !buffers.count(memoryOf(a))) {
        anyHost = true;
        // Rounded up to whole 16-byte words: 8/16-bit atomics are compare-and-swap
        // loops on the aligned 32-bit word that holds the element.
        cuda::Buffer b = ctx_->alloc((a->byteCount() + 15) & ~size_t(15));
        if (a->byteCount())
          ctx_->upload(b, a->bytes(), a->byteCount());
        buffers.emplace(memoryOf(a), std::move(b));
      }
    std::vector<uint64_t> values(fn.numParams());
    std::vector<void *> params(fn.numParams());
    for (unsigned i = 0; i < fn.numParams(); ++i) {
      const std::string &name = fn.paramName(i);
      const ir::Type &t = fn.param(i)->type();
      if (t.isPtr) {
        HostArray *a = args.buffer(name);
        uint64_t addr = a->device ? a->device : buffers.at(memoryOf(a)).address();
        if (!a->device && addr % 16) // compiled with Options::alignedPointers
          return fail(RunResult::Status::Error,
                      "internal: device allocation for '" + name + "' is not 16-byte aligned");
        addr += a->origin;
        const ir::ParamAttrs &pa = fn.paramAttrs(i);
        for (int64_t claim : {pa.aligned, pa.multipleOf})
          if (claim > 1 && addr % static_cast<uint64_t>(claim) != 0)
            return trapped(makeLaunchTrap(kernel, TrapKind::Misaligned,
                                          "pointer argument '" + name + "' is not aligned to " +
                                              std::to_string(claim) + " bytes on the device"));
        values[i] = addr;
      } else {
        values[i] = *scalarArgumentBits(*args.scalar(name), t.dtype);
      }
      params[i] = &values[i]; // little-endian: the low bytes hold narrower values
    }
    std::vector<cuda::TensorMap> maps;
    try {
      appendTensorMaps(l.compiled, fn, values.data(), maps, params);
    } catch (const cuda::Error &e) {
      return fail(RunResult::Status::Error, e.what());
    }
    std::array<unsigned, 3> g = {static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                                 static_cast<unsigned>(grid[2])};
    auto launchOnce = [&] {
      ctx_->launch(l.function, g, l.compiled.numThreads, l.compiled.sharedBytes, params.data());
    };
    for (int i = 0; i < warmup; ++i)
      launchOnce();
    if (bench) {
      std::optional<cuda::Buffer> flush;
      if (opts_.flushL2)
        flush = ctx_->alloc(kL2FlushBytes);
      void *e0 = ctx_->eventCreate(), *e1 = ctx_->eventCreate();
      for (int i = 0; i < iterations; ++i) {
        if (flush) // ordered before e0 (GpuOptions::flushL2), so not timed
          ctx_->memset(*flush, 0, kL2FlushBytes);
        ctx_->eventRecord(e0);
        launchOnce();
        ctx_->eventRecord(e1);
        bench->ms.push_back(ctx_->eventElapsedMs(e0, e1));
      }
      ctx_->eventDestroy(e0);
      ctx_->eventDestroy(e1);
      std::vector<double> sorted = bench->ms;
      std::sort(sorted.begin(), sorted.end());
      bench->minMs = sorted.front();
      bench->medianMs = sorted[sorted.size() / 2];
    } else {
      for (int i = 0; i < iterations; ++i)
        launchOnce();
      if (!anyHost) // device arrays only: asynchronous, like a CUDA launch
        return RunResult{};
    }
    ctx_->synchronize(opts.maxSeconds);
    // A read-only host array the kernel changed: a trap, and nothing is written back.
    for (auto &[m, b] : buffers)
      if (readOnly.at(m) && m.second) {
        std::vector<uint8_t> now(m.second);
        ctx_->download(now.data(), b, now.size());
        if (std::memcmp(now.data(), m.first, now.size()) != 0) {
          std::string names;
          for (const auto &[name, x] : args.buffers())
            if (!x->device && memoryOf(x) == m)
              names += (names.empty() ? "'" : ", '") + name + "'";
          return trapped(makeLaunchTrap(kernel, TrapKind::InvalidLaunch,
                                        "store to " + names +
                                            ", a read-only array (the kernel changed it on "
                                            "the GPU); nothing was written back"));
        }
      }
    for (auto &[m, b] : buffers)
      if (m.second && !readOnly.at(m))
        ctx_->download(const_cast<uint8_t *>(m.first), b, m.second);
    return RunResult{};
  }

  GpuOptions opts_;
  DiskCache disk_;
  std::unique_ptr<cuda::Context> ctx_;
  std::map<std::string, Loaded> loaded_;
  std::list<Loaded> batchLoaded_; // kernels of prepareBatch modules (reached through fast_)
  std::map<std::tuple<uint64_t, unsigned, unsigned, std::string>, Loaded *> fast_;
  void *stream_ = nullptr;
  unsigned sm_ = 0;
  int sms_ = 0;          // the device's multiprocessors (wideGrid), read with the context
  std::string poisoned_; // the fault that made CUDA unusable in this process
};

} // namespace

/// Runs `probe` in a child process (initialising the driver in this process
/// would make it unusable in the workers the conformance runner and the fuzzer
/// fork) and returns what it wrote, or nullopt when no child could run. `ok`
/// is whether the child exited with status 0 (probe returned true).
static std::optional<std::string> probeInChild(const std::function<bool(std::string &)> &probe,
                                               bool &ok) {
  int fds[2];
  if (::pipe(fds) != 0)
    return std::nullopt;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    bool good = probe(out);
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(good ? 0 : 1);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ok =
      pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return msg;
}

bool wideGridForPrefetch(std::array<int64_t, 3> grid, unsigned numWarps, int multiprocessors) {
  constexpr int64_t kPrefetchWarpsPerSm = 16; // a quarter of Hopper's 64
  __int128 warps = static_cast<__int128>(grid[0]) * grid[1] * grid[2] * numWarps;
  return warps > static_cast<__int128>(std::max(multiprocessors, 1)) * kPrefetchWarpsPerSm;
}

bool cudaAvailable(std::string *why) {
  static std::mutex mu;
  static std::optional<std::pair<bool, std::string>> cached;
  std::lock_guard<std::mutex> lock(mu);
  if (!cached) {
    bool ok = false;
    std::optional<std::string> msg =
        probeInChild([](std::string &out) { return cuda::available(&out); }, ok);
    if (!msg)
      cached = {cuda::available(why), why ? *why : ""};
    else
      cached = {ok, !ok && msg->empty() ? "no CUDA device: the device probe failed" : *msg};
  }
  if (why)
    *why = cached->second;
  return cached->first;
}

int cudaDeviceCount(std::string *why) {
  bool ok = false;
  std::optional<std::string> got = probeInChild(
      [](std::string &out) {
        std::string w;
        out = cuda::available(&w) ? std::to_string(cuda::deviceCount()) : "0 " + w;
        return true;
      },
      ok);
  if (!got) {
    if (why)
      *why = "no CUDA device: cannot create a pipe for the device probe";
    return 0;
  }
  const std::string &msg = *got;
  int count = std::atoi(msg.c_str());
  if (count <= 0 && why)
    *why = msg.size() > 2 ? msg.substr(2) : "no CUDA device: the device probe failed";
  return std::max(count, 0);
}

std::unique_ptr<GpuBackend> createGpuBackend(const GpuOptions &opts) {
  return std::make_unique<GpuBackendImpl>(opts);
}

} // namespace tc::gpu
