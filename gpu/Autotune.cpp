// The auto-tuner: enumerate the variants (list-valued defines x num_warps x
// num_stages),
// time each on copies of the argument buffers, remember the fastest under a
// key (in memory and in <cacheDir>/autotune), and launch the winner once on
// the caller's buffers.
//
// A variant is skipped (with a note in its report row) when the frontend
// rejects it, its grid cannot be evaluated, the GPU compiler rejects it, or a
// timed launch does not end Ok (fault, trap). A cached winner that no longer
// compiles is ignored and the key is tuned again.
#include "gpu/Autotune.h"

#include "codegen/Codegen.h"
#include "runtime/DiskCache.h"
#include "runtime/Overlap.h"
#include "support/DType.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace tc::gpu {

using Json = nlohmann::json;

std::string TuneVariant::describe() const {
  std::string out;
  for (const auto &[name, value] : defines)
    out += name + "=" + value + " ";
  return out + "num_warps=" + std::to_string(numWarps) + " num_stages=" + std::to_string(numStages);
}

namespace {

bool sameVariant(const TuneVariant &a, const TuneVariant &b) {
  return a.numWarps == b.numWarps && a.numStages == b.numStages && a.defines == b.defines;
}

/// The kernel's source text: base.sourceText, or the contents of base.path.
std::string sourceText(const CompileRequest &base) {
  if (base.path.empty())
    return base.sourceText;
  std::ifstream in(base.path, std::ios::binary);
  if (!in)
    return "<unreadable: " + base.path + ">";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json specsJson(const std::vector<DefineSpec> &specs) {
  Json out = Json::array();
  for (const DefineSpec &s : specs)
    out.push_back({{"name", s.name}, {"values", s.values}, {"list", s.isList}});
  return out;
}

/// Scalars by name with their exact bits; buffers by name with dtype and shape.
Json argsJson(const LaunchArgs &args) {
  Json scalars = Json::object();
  for (const auto &[name, v] : args.scalars()) {
    uint64_t fbits = 0;
    std::memcpy(&fbits, &v.f, sizeof fbits);
    scalars[name] = {{"dtype", irName(v.dtype)}, {"bits", v.bits}, {"f", fbits}};
  }
  Json buffers = Json::object();
  for (const auto &[name, array] : args.buffers()) {
    if (array)
      // "aligned16": the pointer's class (runtime/Specialize.h); the scalars'
      // classes follow from their values.
      buffers[name] = {{"dtype", irName(array->dtype)},
                       {"shape", array->shape},
                       {"aligned16", (array->device + array->origin) % 16 == 0}};
    else
      buffers[name] = nullptr;
  }
  return {{"scalars", scalars}, {"buffers", buffers}};
}

std::string firstLine(const std::string &text) { return text.substr(0, text.find('\n')); }

/// The first error line of a failed frontend compile.
std::string compileErrorLine(const CompileOutcome &out) {
  std::istringstream lines(out.diagnostics);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos)
      return line;
  if (!out.errors.empty())
    return out.errors.front().message;
  return firstLine(out.diagnostics);
}

/// Why a launch that did not end Ok failed, on one line.
std::string runFailure(const RunResult &r) {
  if (r.status == RunResult::Status::Trapped && r.trap)
    return "trap: " + std::string(trapKindName(r.trap->kind)) + ": " + firstLine(r.trap->message);
  return "fault: " + firstLine(r.error);
}

bool validNumStages(unsigned s) { return s >= 1 && s <= 8; }

/// Deep copies of the caller's buffers, bound under the same names: one copy
/// per distinct host memory, so that two names bound to one array, arrays over
/// the same bytes and overlapping views (merged first as a launch merges them,
/// runtime/Overlap.h: one union, each view at its own place in it) share one
/// copy, and external arrays (the caller's own memory, e.g. NumPy arrays) are
/// copied too: a timing run never writes into the caller's memory, and each
/// variant starts from the caller's bytes. `refused`: the launch refuses the
/// overlap (then nothing runs). Not copyable: `args` points into `arrays`.
struct ArgCopies {
  std::deque<HostArray> arrays;
  std::deque<std::vector<uint8_t>> memories;
  LaunchArgs args;
  std::optional<std::string> refused;

  ArgCopies(const CompiledKernel &kernel, const LaunchArgs &from) {
    std::map<const HostArray *, HostArray *> copyOf;
    // First views of the caller's bytes (an owned array too), merged as a
    // launch merges them; then one copy per distinct memory.
    for (const auto &[name, array] : from.buffers()) {
      if (array && !copyOf.count(array)) {
        HostArray &c = arrays.emplace_back();
        c.dtype = array->dtype;
        c.shape = array->shape;
        c.device = array->device;
        c.origin = array->origin;
        c.readOnly = array->readOnly;
        if (!array->device) {
          c.external = const_cast<uint8_t *>(array->bytes());
          c.externalBytes = array->byteCount();
        }
        copyOf[array] = &c;
      }
      args.setBuffer(name, array ? copyOf[array] : nullptr);
    }
    for (const auto &[name, v] : from.scalars())
      args.setScalar(name, v);
    if (!checkLaunchArguments(kernel, args))
      refused = mergeOverlappingHostArrays(kernel, args);
    std::map<std::pair<const uint8_t *, size_t>, uint8_t *> copyOfMemory;
    for (HostArray &a : arrays) {
      if (a.device)
        continue;
      if (!a.external || !a.externalBytes) { // no bytes: an empty owned array
        a.external = nullptr;
        a.externalBytes = 0;
        continue;
      }
      auto [it, fresh] = copyOfMemory.emplace(std::make_pair(a.external, a.externalBytes), nullptr);
      if (fresh)
        it->second = memories.emplace_back(a.external, a.external + a.externalBytes).data();
      a.external = it->second;
    }
  }
  ArgCopies(const ArgCopies &) = delete;
  ArgCopies &operator=(const ArgCopies &) = delete;
};

/// A variant compiled by the frontend, with its evaluated grid.
struct Prepared {
  std::shared_ptr<CompiledKernel> kernel;
  std::array<int64_t, 3> grid{1, 1, 1};
  std::string error; // set when the variant cannot be launched
};

Prepared prepareVariant(const TuneRequest &req, const TuneVariant &v, const LaunchArgs &args) {
  Prepared p;
  if (!validNumWarps(v.numWarps)) {
    p.error = "num_warps must be 1, 2, 4, 8, 16 or 32";
    return p;
  }
  if (!validNumStages(v.numStages)) {
    p.error = "num_stages must be 1 to 8";
    return p;
  }
  CompileRequest creq = req.base;
  creq.defines = detail::compileDefines(req, v);
  CompileOutcome out = compileKernel(creq);
  if (!out.ok()) {
    p.error = "compile error: " + compileErrorLine(out);
    return p;
  }
  GridOutcome grid = evalGrid(req.grid, *out.kernel, args);
  if (!grid.dims) {
    p.error = "grid: " + grid.error;
    return p;
  }
  p.kernel = out.kernel;
  p.grid = *grid.dims;
  return p;
}

/// Makes the backend compile `v`'s num_warps and num_stages.
void useVariant(GpuBackend &b, const TuneVariant &v) {
  b.setNumWarps(v.numWarps);
  b.setNumStages(v.numStages);
}

/// Puts the backend's num_warps and num_stages back when it goes out of scope.
class VariantGuard {
public:
  explicit VariantGuard(GpuBackend &b) : backend_(b) {
    saved_.numWarps = b.numWarps();
    saved_.numStages = b.numStages();
  }
  ~VariantGuard() { useVariant(backend_, saved_); }
  VariantGuard(const VariantGuard &) = delete;
  VariantGuard &operator=(const VariantGuard &) = delete;

private:
  GpuBackend &backend_;
  TuneVariant saved_;
};

RunResult errorResult(std::string message) {
  RunResult r;
  r.status = RunResult::Status::Error;
  r.error = std::move(message);
  return r;
}

/// <dir>/autotune, <defaultCacheDir()>/autotune when `dir` is "", or "" (no
/// disk cache) when there is no default either.
std::string autotuneDir(std::string dir) {
  if (dir.empty())
    dir = defaultCacheDir();
  return dir.empty() ? dir : dir + "/autotune";
}

} // namespace

//===----------------------------------------------------------------------===//
// detail: the parts without a GPU
//===----------------------------------------------------------------------===//

namespace detail {

std::vector<TuneVariant> enumerateVariants(const TuneRequest &req) {
  std::vector<TuneVariant> out;
  for (const DefineList &full : expandDefines(req.specs)) {
    TuneVariant v;
    for (size_t i = 0; i < req.specs.size(); ++i)
      if (req.specs[i].isList)
        v.defines.push_back(full[i]);
    for (unsigned w : req.numWarps) {
      v.numWarps = w;
      for (unsigned s : req.numStages) {
        v.numStages = s;
        out.push_back(v);
      }
    }
  }
  return out;
}

DefineList compileDefines(const TuneRequest &req, const TuneVariant &v) {
  DefineList out = req.base.defines;
  auto set = [&out](const std::string &name, const std::string &value) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto &d) { return d.first == name; });
    if (it != out.end())
      it->second = value;
    else
      out.emplace_back(name, value);
  };
  size_t listIndex = 0;
  for (const DefineSpec &spec : req.specs) {
    if (!spec.isList) {
      set(spec.name, spec.values.empty() ? "1" : spec.values.front());
      continue;
    }
    assert(listIndex < v.defines.size() && "variant does not belong to the request");
    set(spec.name, v.defines[listIndex++].second);
  }
  return out;
}

std::string tuneKey(const TuneRequest &req, const LaunchArgs &args, const std::string &device,
                    bool specialize) {
  Json key = {
      {"source", sourceText(req.base)},
      {"kernel", req.base.kernelName},
      {"defines", req.base.defines},
      {"undefines", req.base.undefines},
      {"includeDirs", req.base.includeDirs},
      {"specs", specsJson(req.specs)},
      {"numWarps", req.numWarps},
      {"numStages", req.numStages},
      {"grid", req.grid.dims},
      {"device", device},
      {"compiler", codegen::compilerVersion()},
      {"args", argsJson(args)},
      {"specialize", specialize},
  };
  return DiskCache::fullKey(
      {"autotune-v2", key.dump(-1, ' ', false, Json::error_handler_t::replace)});
}

std::string serializeVariant(const TuneVariant &v) {
  Json j = {{"defines", v.defines}, {"num_warps", v.numWarps}, {"num_stages", v.numStages}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<TuneVariant> parseVariant(const std::string &text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("defines") || !j.contains("num_warps") ||
      !j.contains("num_stages"))
    return std::nullopt;
  const Json &defines = j["defines"], &warps = j["num_warps"], &stages = j["num_stages"];
  if (!defines.is_array() || !warps.is_number_unsigned() || !stages.is_number_unsigned())
    return std::nullopt;
  TuneVariant v;
  v.numWarps = warps.get<unsigned>();
  v.numStages = stages.get<unsigned>();
  for (const Json &d : defines) {
    if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_string())
      return std::nullopt;
    v.defines.emplace_back(d[0].get<std::string>(), d[1].get<std::string>());
  }
  return v;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Autotuner
//===----------------------------------------------------------------------===//

struct Autotuner::Impl {
  GpuBackend &backend;
  DiskCache disk;
  std::mutex mutex;
  std::map<std::string, TuneVariant> memory;

  Impl(GpuBackend &b, std::string dir) : backend(b), disk(autotuneDir(std::move(dir))) {}

  std::optional<TuneVariant> lookup(const std::string &key, const std::vector<TuneVariant> &space);
  void remember(const std::string &key, const TuneVariant &v);
  TuneRow timeVariant(const TuneRequest &req, const TuneVariant &v, const LaunchArgs &args,
                      const RunOptions &opts, Prepared &prepared);
  TuneOutcome tune(const TuneRequest &req, const std::vector<TuneVariant> &space,
                   const LaunchArgs &args, const RunOptions &opts, Prepared &winner);
  RunResult launch(const TuneVariant &v, const Prepared &p, LaunchArgs &args,
                   const RunOptions &opts);
};

/// The remembered winner of `key` (memory first, then disk), if it is still
/// one of the variants of `space`.
std::optional<TuneVariant> Autotuner::Impl::lookup(const std::string &key,
                                                   const std::vector<TuneVariant> &space) {
  std::optional<TuneVariant> found;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memory.find(key); it != memory.end())
      found = it->second;
  }
  if (!found && disk.enabled())
    if (std::optional<std::string> blob = disk.get(key))
      found = detail::parseVariant(*blob);
  if (!found)
    return std::nullopt;
  bool inSpace = std::any_of(space.begin(), space.end(),
                             [&](const TuneVariant &v) { return sameVariant(v, *found); });
  return inSpace ? found : std::nullopt;
}

void Autotuner::Impl::remember(const std::string &key, const TuneVariant &v) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    memory[key] = v;
  }
  if (disk.enabled())
    disk.put(key, detail::serializeVariant(v));
}

/// Compiles and times one variant on copies of `args`; `prepared` gets its kernel.
TuneRow Autotuner::Impl::timeVariant(const TuneRequest &req, const TuneVariant &v,
                                     const LaunchArgs &args, const RunOptions &opts,
                                     Prepared &prepared) {
  TuneRow row{v, -1, "", false};
  prepared = prepareVariant(req, v, args);
  if (!prepared.kernel) {
    row.note = prepared.error;
    return row;
  }
  useVariant(backend, v);
  std::string error;
  ArgCopies copies(*prepared.kernel, args);
  if (copies.refused) {
    row.note = "refused: " + *copies.refused;
    return row;
  }
  // For the arguments' classes, as the launch compiles it (runtime/Specialize.h).
  if (!backend.prepare(*prepared.kernel, error, nullptr, &copies.args)) {
    row.note = "GPU compile error: " + firstLine(error);
    return row;
  }
  BenchResult bench;
  RunResult r = backend.bench(*prepared.kernel, prepared.grid, copies.args, opts, req.warmup,
                              req.iterations, bench);
  if (r.status != RunResult::Status::Ok)
    row.note = runFailure(r);
  else
    row.medianMs = bench.medianMs;
  return row;
}

/// Times every variant of `space`; `winner` gets the fastest one's kernel.
TuneOutcome Autotuner::Impl::tune(const TuneRequest &req, const std::vector<TuneVariant> &space,
                                  const LaunchArgs &args, const RunOptions &opts,
                                  Prepared &winner) {
  TuneOutcome o;
  VariantGuard guard(backend);
  std::optional<size_t> best;
  for (const TuneVariant &v : space) {
    Prepared p;
    o.rows.push_back(timeVariant(req, v, args, opts, p));
    const TuneRow &row = o.rows.back();
    if (row.medianMs < 0 || (best && row.medianMs >= o.rows[*best].medianMs))
      continue;
    best = o.rows.size() - 1;
    winner = std::move(p);
  }
  if (!best) {
    o.error = "no variant could run (" + std::to_string(space.size()) +
              " tried, all skipped; see --autotune-report)";
    return o;
  }
  o.rows[*best].winner = true;
  o.best = o.rows[*best].variant;
  return o;
}

/// The one real launch: `v` on the caller's buffers.
RunResult Autotuner::Impl::launch(const TuneVariant &v, const Prepared &p, LaunchArgs &args,
                                  const RunOptions &opts) {
  VariantGuard guard(backend);
  useVariant(backend, v);
  return backend.launch(*p.kernel, p.grid, args, opts);
}

Autotuner::Autotuner(GpuBackend &backend, std::string cacheDir)
    : impl_(std::make_shared<Impl>(backend, std::move(cacheDir))) {}

TuneOutcome Autotuner::run(const TuneRequest &req, LaunchArgs &args, const RunOptions &opts,
                           RunResult &result) {
  TuneOutcome o;
  std::vector<TuneVariant> space = detail::enumerateVariants(req);
  if (space.empty() || req.iterations < 1 || req.warmup < 0) {
    o.error = space.empty() ? "no num_warps or num_stages value to tune over"
                            : "iterations must be at least 1 and warmup at least 0";
    result = errorResult("autotune: " + o.error);
    return o;
  }
  std::string key =
      detail::tuneKey(req, args, impl_->backend.deviceDescription(), impl_->backend.specializes());
  if (std::optional<TuneVariant> cached = impl_->lookup(key, space)) {
    Prepared p = prepareVariant(req, *cached, args);
    if (p.kernel) {
      o.fromCache = true;
      o.best = *cached;
      result = impl_->launch(o.best, p, args, opts);
      return o;
    }
  }
  Prepared winner;
  o = impl_->tune(req, space, args, opts, winner);
  if (!o.error.empty()) {
    result = errorResult("autotune: " + o.error);
    return o;
  }
  impl_->remember(key, o.best);
  result = impl_->launch(o.best, winner, args, opts);
  return o;
}

namespace {

std::string formatMs(double ms) {
  if (ms < 0)
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", ms);
  return buf;
}

std::string padRight(const std::string &s, size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

std::string padLeft(const std::string &s, size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

/// One table line; no trailing blanks when the note is empty.
std::string tableLine(const std::string &variant, size_t variantWidth, const std::string &ms,
                      size_t msWidth, const std::string &note) {
  std::string line = padRight(variant, variantWidth) + " | " + padLeft(ms, msWidth) + " |";
  return note.empty() ? line + "\n" : line + " " + note + "\n";
}

} // namespace

std::string Autotuner::report(const TuneOutcome &o) {
  if (o.fromCache)
    return "autotune: cached winner " + o.best.describe() + "\n";
  const std::string variantHeader = "variant", msHeader = "median ms";
  size_t variantWidth = variantHeader.size(), msWidth = msHeader.size();
  for (const TuneRow &row : o.rows) {
    variantWidth = std::max(variantWidth, row.variant.describe().size());
    msWidth = std::max(msWidth, formatMs(row.medianMs).size());
  }
  std::string out = tableLine(variantHeader, variantWidth, msHeader, msWidth, "note");
  for (const TuneRow &row : o.rows) {
    std::string note = row.winner ? (row.note.empty() ? "winner" : "winner; " + row.note) : row.note;
    out += tableLine(row.variant.describe(), variantWidth, formatMs(row.medianMs), msWidth, note);
  }
  if (!o.error.empty())
    out += "autotune: " + o.error + "\n";
  return out;
}

} // namespace tc::gpu
