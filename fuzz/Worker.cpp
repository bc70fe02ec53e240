//===- Worker.cpp - The campaign's worker processes ----------------------===//
#include "fuzz/Worker.h"

#include "fuzz/Emi.h"

#include "codegen/Cuda.h"
#include "fuzz/Case.h"
#include "fuzz/Culprit.h"
#include "fuzz/Reducer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tc::fuzz {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kTailBytes = 4096;
constexpr size_t kMessageBytes = 4000;
constexpr double kReducerLaunchSeconds = 2; // per launch of a candidate
constexpr double kCulpritSeconds = 30;      // the culprit search of one finding (fuzz/Culprit.h)

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool hasFeature(const FuzzKernel &k, const std::string &f) {
  return std::find(k.features.begin(), k.features.end(), f) != k.features.end();
}

class CpuChecker : public Checker {
public:
  explicit CpuChecker(OracleOptions o) : opts_(o) {}
  OracleResult check(const FuzzKernel &k) override { return checkKernel(k, opts_); }
  std::string device() override { return ""; }
  bool mustExit() const override { return false; }

private:
  OracleOptions opts_;
};

class GpuChecker : public Checker {
public:
  explicit GpuChecker(GpuOracleOptions o) : oracle_(std::move(o)) {}
  OracleResult check(const FuzzKernel &k) override { return oracle_.check(k); }
  void checkBatch(const std::vector<FuzzKernel> &ks, const GpuOracle::BatchDone &done) override {
    oracle_.checkBatch(ks, done);
  }
  std::string device() override { return oracle_.deviceDescription(); }
  bool mustExit() const override { return oracle_.poisoned(); }

private:
  GpuOracle oracle_;
};

// --fail-on-feature: a passing kernel with the feature fails ("planted").
class PlantedChecker : public Checker {
public:
  PlantedChecker(std::unique_ptr<Checker> inner, std::string feature)
      : inner_(std::move(inner)), feature_(std::move(feature)) {}
  OracleResult check(const FuzzKernel &k) override {
    OracleResult r = inner_->check(k);
    plant(k, r);
    return r;
  }
  void checkBatch(const std::vector<FuzzKernel> &ks, const GpuOracle::BatchDone &done) override {
    inner_->checkBatch(ks, [&](size_t i, OracleResult r, double ms) {
      plant(ks[i], r);
      done(i, std::move(r), ms);
    });
  }
  std::string device() override { return inner_->device(); }
  bool mustExit() const override { return inner_->mustExit(); }

private:
  void plant(const FuzzKernel &k, OracleResult &r) const {
    if (r.status == OracleResult::Status::Pass && hasFeature(k, feature_)) {
      r.status = OracleResult::Status::Fail;
      r.property = "planted";
      r.message = "planted failure: the kernel uses feature " + feature_;
    }
  }

  std::unique_ptr<Checker> inner_;
  std::string feature_;
};

// Writes one JSON line to the parent with a single write where possible.
void reply(int fd, const Json &j) {
  std::string line = j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      std::_Exit(2); // the parent is gone
    done += static_cast<size_t>(n);
  }
}

bool envIndexIs(const char *name, int64_t index) {
  const char *v = std::getenv(name);
  return v && *v && std::strtoll(v, nullptr, 10) == index;
}

// The test hooks of docs/fuzz.md.
void testHooks(int64_t index) {
  if (envIndexIs("TC_FUZZ_TEST_HANG_INDEX", index))
    for (;;)
      ::pause();
  if (envIndexIs("TC_FUZZ_TEST_CRASH_INDEX", index)) {
    std::cerr << "triton-fuzz worker: TC_FUZZ_TEST_CRASH_INDEX: aborting on kernel " << index
              << std::endl;
    std::abort();
  }
}

// `policy` aimed at `aim` ("" leaves it as it is: --focus already set it).
GenPolicy aimed(const GenPolicy &policy, const std::string &aim) {
  GenPolicy p = policy;
  if (!aim.empty())
    p.aim = aim;
  return p;
}

void handleCheck(const CheckConfig &cfg, Checker &checker, const Json &req, int out) {
  std::vector<int64_t> indices = req.contains("indices")
                                     ? req.at("indices").get<std::vector<int64_t>>()
                                     : std::vector<int64_t>{req.at("index").get<int64_t>()};
  // Each kernel's aim (fuzz/PathWeights.h), when the campaign gives any.
  std::vector<std::string> aims = req.contains("aims")
                                      ? req.at("aims").get<std::vector<std::string>>()
                                      : std::vector<std::string>{};
  aims.resize(indices.size());
  std::vector<FuzzKernel> ks;
  std::vector<double> genMs;
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t index = indices[i];
    testHooks(index);
    auto t0 = Clock::now();
    ks.push_back(generateKernel(aimed(cfg.policy, aims[i]), kernelSeed(cfg.seed, index), 100));
    ks.back().testCompileFailure = envIndexIs("TC_FUZZ_TEST_COMPILE_FAIL_INDEX", index);
    ks.back().testBatchFault = envIndexIs("TC_FUZZ_TEST_BATCH_FAULT_INDEX", index);
    genMs.push_back(msSince(t0));
  }
  // A kernel that failed in a batch of an earlier worker, which a fault ended.
  std::optional<OracleResult> inBatch;
  if (req.contains("batch_failure")) {
    inBatch = OracleResult{};
    inBatch->status = OracleResult::Status::Fail;
    inBatch->property = req.at("batch_failure").at("property").get<std::string>();
    inBatch->message = req.at("batch_failure").at("message").get<std::string>();
  }
  checker.checkBatch(ks, [&](size_t i, OracleResult r, double checkMs) {
    const FuzzKernel &k = ks[i];
    if (inBatch && r.status != OracleResult::Status::Fail) {
      std::map<std::string, double> stages = std::move(r.stageMs);
      r = onlyInBatch(*inBatch);
      r.stageMs = std::move(stages);
    }
    Json rep = {{"op", r.recheckAlone ? "requeue" : "checked"},
                {"index", indices[i]},
                {"status", statusName(r.status)},
                {"property", r.property},
                {"message", r.message.substr(0, kMessageBytes)},
                {"features", k.features},
                {"gen_ms", genMs[i]},
                {"check_ms", checkMs},
                {"stages", r.stageMs},
                {"exit", checker.mustExit()}};
    if (r.paths)
      rep["paths"] = *r.paths;
    bool fail = r.status == OracleResult::Status::Fail;
    if (fail && !r.recheckAlone)
      rep["raw_signature"] = failureSignature(k, r.property);
    if (r.property.rfind("batch-only-", 0) == 0)
      rep["batch_only"] = true;
    if ((fail && !r.recheckAlone) || r.status == OracleResult::Status::GeneratorBug ||
        (r.status == OracleResult::Status::Discard && req.value("sample", false)))
      rep["kernel"] = describeKernel(k);
    reply(out, rep);
  });
}

// Shrinks (RapidCheck) and reduces `k` while `stillFails`, within `seconds`.
FuzzKernel reduce(const CheckConfig &cfg, int64_t index, bool fromIndex, const FuzzKernel &k,
                  const std::function<bool(const FuzzKernel &)> &stillFails, double seconds,
                  int &steps, const std::string &aim) {
  auto start = Clock::now();
  FuzzKernel best = k;
  if (fromIndex)
    best = shrinkKernel(aimed(cfg.policy, aim), kernelSeed(cfg.seed, index), 100, stillFails,
                        seconds / 2, &steps);
  ReduceStats stats;
  double left = seconds - msSince(start) / 1000;
  if (left > 0)
    best = reduceKernel(best, stillFails, left, &stats);
  steps += stats.accepted;
  return best;
}

// DESIGN.md section 8, "Finding the culprit": the reduced kernel again with
// each optimisation off, LLVM's passes bisected, ptxas at -O0 and (where
// ptxas makes the modules) the driver's JIT, each run in a fresh GPU oracle
// with those options.
Culprit culpritOf(const CheckConfig &cfg, const FuzzKernel &k, const std::string &property,
                  double seconds) {
  bool poisoned = false;
  auto fails = [&](const codegen::Options &o) {
    if (poisoned)
      return true; // CUDA is gone in this process: say nothing went away
    GpuOracleOptions g = cfg.gpu;
    g.codegen = o;
    g.maxSeconds = std::min(g.maxSeconds, kReducerLaunchSeconds);
    GpuOracle oracle(g);
    OracleResult r = oracle.check(k);
    poisoned = oracle.poisoned();
    return r.status == OracleResult::Status::Fail && r.property == property;
  };
  CulpritOptions copts;
  copts.seconds = seconds;
  copts.ptxasModules = cuda::imageMode() != cuda::ImageMode::Driver;
  return findCulprit(k, cfg.gpu.codegen, fails, copts);
}

void handleReduce(const CheckConfig &cfg, Checker &checker, const Json &req, int out) {
  int64_t index = req.at("index").get<int64_t>();
  bool fromIndex = !req.contains("kernel");
  std::string aim = req.value("aim", "");
  FuzzKernel original = fromIndex
                            ? generateKernel(aimed(cfg.policy, aim), kernelSeed(cfg.seed, index), 100)
                            : kernelFromJson(req.at("kernel"));
  std::string property = req.at("property").get<std::string>();
  std::string message = req.at("message").get<std::string>();
  std::string note = req.value("note", "");
  int steps = 0;
  FuzzKernel best = original;
  // An EMI finding is reduced with every candidate checked by its EMI variant.
  bool emi = property.rfind("emi-", 0) == 0;
  CheckConfig emiCfg = cfg;
  emiCfg.cpu.emiRate = emiCfg.gpu.emiRate = emiCfg.triton.emiRate = 1;
  std::unique_ptr<Checker> emiChecker = emi ? makeChecker(emiCfg) : nullptr;
  Checker &check = emi ? *emiChecker : checker;
  if (req.value("reduce", false)) {
    auto stillFails = [&](const FuzzKernel &c) {
      if (check.mustExit())
        return false;
      OracleResult r = check.check(c);
      bool same = r.status == OracleResult::Status::Fail && r.property == property;
      // The GPU oracle's interpreter run does not check races (the generator's
      // kernels have none), but a reduction step can make two programs store
      // one element, which the conformance runner then reports as data_race:
      // such a candidate is no reduction.
      if (same && !cfg.cpuOnly) {
        std::map<std::string, HostArray> ref;
        std::string error;
        same = interpReference(c, 20, ref, error, /*raceCheck=*/true);
      }
      if (same) {
        message = r.message.substr(0, kMessageBytes);
        reply(out, {{"op", "best"}, {"kernel", kernelToJson(c)}});
      }
      return same;
    };
    best =
        reduce(cfg, index, fromIndex, original, stillFails, req.at("seconds").get<double>(), steps,
               aim);
    note = "Reduced in " + std::to_string(steps) + " steps from kernel " + std::to_string(index) +
           " of the campaign (the reproduce command shows the original).";
  }
  OracleResult r;
  r.status = OracleResult::Status::Fail;
  r.property = property;
  r.message = message;
  std::string error;
  if (!interpReference(best, 20, r.reference, error)) {
    note += " The reduced kernel no longer runs on the interpreter (" + error.substr(0, 200) +
            "): the case holds the original.";
    best = original;
    if (!interpReference(best, 20, r.reference, error))
      r.reference.clear();
  }
  CaseInfo info;
  info.name = req.at("case_name").get<std::string>();
  info.seed = kernelSeed(cfg.seed, index);
  info.reproduce = req.at("reproduce").get<std::string>();
  info.signature = failureSignature(best, property);
  info.exact = cfg.cpuOnly || best.smallInts;
  if (!info.exact && !cfg.triton.enabled) // as the GPU oracle compared them
    if (CompileOutcome c = compileFuzzKernel(best); c.ok())
      info.ulpOutputs = boundedOutputs(c.kernel->function());
  info.note = note;
  if (!cfg.cpuOnly)
    info.numWarps = cfg.triton.enabled ? cfg.triton.numWarps : cfg.gpu.codegen.numWarps;
  info.ptxasModules = !cfg.cpuOnly && !cfg.triton.enabled && !cfg.gpu.compileOnly &&
                      cuda::imageMode() != cuda::ImageMode::Driver;
  if (!cfg.cpuOnly)
    info.expected = std::string("the reference interpreter's (interp(ir), one thread); ") +
                    (cfg.triton.enabled ? "Triton's differ" : "the GPU's differ");
  std::string culprit;
  if (!cfg.cpuOnly && cfg.plantFeature.empty() && req.value("culprit", true) &&
      (property == "gpu-mismatch" || property == "gpu-compile" || property == "emi-gpu-mismatch" ||
       property == "emi-gpu-compile") &&
      !check.mustExit()) {
    // At most --shrink-time, as the reduction (scripts/planted-bugs.sh keeps both short).
    double seconds = std::min(kCulpritSeconds, req.at("seconds").get<double>());
    culprit = culpritOf(emi ? emiCfg : cfg, best, property, seconds).summary();
    info.note += (info.note.empty() ? "" : " ") + culprit + ".";
  }
  // (No time for a culprit search when the campaign's time is up: not reduced.)
  if (cfg.plantFeature.empty() && req.value("culprit", true))
    if (std::string more = check.onFinding(
            best, property, info.name,
            req.value("reduce", false) ? std::min(kCulpritSeconds, req.at("seconds").get<double>())
                                       : 0);
        !more.empty()) {
      culprit += (culprit.empty() ? "" : "; ") + more;
      info.note += (info.note.empty() ? "" : " ") + more + ".";
    }
  // An EMI finding's case is the variant, expecting the plain kernel's outputs.
  FuzzKernel caseKernel = best;
  if (emi && !r.reference.empty())
    if (std::optional<FuzzKernel> v = emiVariant(best, kernelHash(best))) {
      caseKernel = *v;
      r.reference.emplace(kEmiBuffer, makeBuffers(*v).at(kEmiBuffer));
      info.note += (info.note.empty() ? "" : " ") +
                   std::string("The case is the kernel's EMI variant (fuzz/Emi.h), which must "
                               "give the plain kernel's outputs.");
    }
  reply(out, {{"op", "reduced"},
              {"culprit", culprit},
              {"signature", info.signature},
              {"case", r.reference.empty() ? "" : conformanceCase(caseKernel, r, info)},
              {"features", best.features},
              {"message", message},
              {"kernel", describeKernel(best)},
              {"steps", steps}});
}

Json doubleBits(const std::vector<double> &v) {
  Json a = Json::array();
  for (double d : v)
    a.push_back(std::bit_cast<uint64_t>(d));
  return a;
}

std::vector<double> doublesFromBits(const Json &a) {
  std::vector<double> v;
  for (const Json &x : a)
    v.push_back(std::bit_cast<double>(x.get<uint64_t>()));
  return v;
}

DType dtypeNamed(const std::string &name) {
  std::optional<DType> t = parseIrName(name);
  if (!t)
    throw std::runtime_error("unknown dtype " + name);
  return *t;
}

} // namespace

uint64_t kernelSeed(uint64_t seed, int64_t index) {
  return splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(index));
}

void Checker::checkBatch(const std::vector<FuzzKernel> &ks, const GpuOracle::BatchDone &done) {
  for (size_t i = 0; i < ks.size() && !mustExit(); ++i) {
    auto t0 = Clock::now();
    OracleResult r = check(ks[i]);
    done(i, std::move(r), msSince(t0));
  }
}

std::unique_ptr<Checker> makeChecker(const CheckConfig &cfg) {
  std::unique_ptr<Checker> c;
  if (cfg.cpuOnly)
    c = std::make_unique<CpuChecker>(cfg.cpu);
  else if (cfg.triton.enabled)
    c = makeTritonChecker(cfg.triton);
  else
    c = std::make_unique<GpuChecker>(cfg.gpu);
  if (!cfg.plantFeature.empty())
    c = std::make_unique<PlantedChecker>(std::move(c), cfg.plantFeature);
  return c;
}

std::string statusName(OracleResult::Status s) {
  switch (s) {
  case OracleResult::Status::Pass: return "pass";
  case OracleResult::Status::Discard: return "discard";
  case OracleResult::Status::GeneratorBug: return "generator-bug";
  case OracleResult::Status::Fail: return "fail";
  }
  return "?";
}

nlohmann::json kernelToJson(const FuzzKernel &k) {
  Json buffers = Json::array(), scalars = Json::array();
  for (const BufferDesc &b : k.buffers)
    buffers.push_back({{"name", b.name},
                       {"dtype", irName(b.dtype)},
                       {"shape", b.shape},
                       {"data", doubleBits(b.data)},
                       {"output", b.isOutput},
                       {"dims", b.dims},
                       {"offset", b.offset}});
  for (const ScalarDesc &s : k.scalars)
    scalars.push_back({{"name", s.name},
                       {"dtype", irName(s.dtype)},
                       {"value", std::bit_cast<uint64_t>(s.value)}});
  Json axes = Json::array(), launches = Json::array();
  for (const GridAxis &a : k.gridAxes)
    axes.push_back({a.size, a.tile});
  for (const ClassLaunch &l : k.classLaunches)
    launches.push_back({{"ints", l.ints}, {"offset", l.offset}});
  return {{"source", k.source},     {"kernel", k.kernelName},   {"defines", k.defines},
          {"buffers", buffers},     {"scalars", scalars},       {"grid", k.grid},
          {"features", k.features}, {"small_ints", k.smallInts}, {"grid_axes", axes},
          {"class_launches", launches}};
}

FuzzKernel kernelFromJson(const nlohmann::json &j) {
  FuzzKernel k;
  k.source = j.at("source").get<std::string>();
  k.kernelName = j.at("kernel").get<std::string>();
  k.defines = j.at("defines").get<std::vector<std::pair<std::string, std::string>>>();
  for (const Json &b : j.at("buffers"))
    k.buffers.push_back({b.at("name").get<std::string>(), dtypeNamed(b.at("dtype")),
                         b.at("shape").get<std::vector<int64_t>>(), doublesFromBits(b.at("data")),
                         b.at("output").get<bool>(),
                         b.value("dims", std::vector<std::string>{}), b.value("offset", int64_t{0})});
  for (const Json &s : j.at("scalars"))
    k.scalars.push_back({s.at("name").get<std::string>(), dtypeNamed(s.at("dtype")),
                         std::bit_cast<double>(s.at("value").get<uint64_t>())});
  k.grid = j.at("grid").get<std::array<int64_t, 3>>();
  k.features = j.at("features").get<std::vector<std::string>>();
  k.smallInts = j.at("small_ints").get<bool>();
  for (const Json &a : j.value("grid_axes", Json::array()))
    k.gridAxes.push_back({a.at(0).get<std::string>(), a.at(1).get<std::string>()});
  for (const Json &l : j.value("class_launches", Json::array()))
    k.classLaunches.push_back(
        {l.at("ints").get<std::vector<std::pair<std::string, int64_t>>>(), l.at("offset").get<int64_t>()});
  return k;
}

int runWorker(const CheckConfig &cfg, bool reportDevice) {
  // Replies go to the original stdout; anything else printed goes to stderr.
  int out = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  // Reducing, a candidate that runs long is not worth waiting for.
  CheckConfig own = cfg;
  if (!reportDevice)
    own.cpu.maxSeconds = own.gpu.maxSeconds = std::min(cfg.cpu.maxSeconds, kReducerLaunchSeconds);
  std::unique_ptr<Checker> checker = makeChecker(own);
  reply(out, {{"op", "hello"}, {"device", reportDevice ? checker->device() : ""}});
  std::string line;
  while (std::getline(std::cin, line)) {
    Json req = Json::parse(line, nullptr, false);
    try {
      std::string op = req.at("op").get<std::string>();
      if (op == "check")
        handleCheck(cfg, *checker, req, out);
      else if (op == "reduce")
        handleReduce(cfg, *checker, req, out);
      else
        throw std::runtime_error("unknown op " + op);
    } catch (const std::exception &e) {
      std::cerr << "triton-fuzz worker: bad request (" << e.what() << "): " << line << std::endl;
      return 2;
    }
    if (checker->mustExit())
      return 0;
  }
  return 0;
}

WorkerProcess::~WorkerProcess() {
  kill(false);
}

bool WorkerProcess::start(const std::vector<std::string> &args, std::string &error) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> all = {"triton-fuzz"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Even a kill -9 of the parent takes the workers with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::signal(SIGPIPE, SIG_DFL);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    closeFds();
    return false;
  }
  ::fcntl(out_, F_SETFL, O_NONBLOCK);
  ::fcntl(err_, F_SETFL, O_NONBLOCK);
  pid_ = pid;
  outBuf_.clear();
  errTail_.clear();
  ended_.clear();
  return true;
}

bool WorkerProcess::send(const nlohmann::json &request) {
  std::string line = request.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(in_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool WorkerProcess::readOutput(std::vector<std::string> &lines) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n > 0) {
      outBuf_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    bool eof = n == 0;
    for (size_t nl; (nl = outBuf_.find('\n')) != std::string::npos;) {
      lines.push_back(outBuf_.substr(0, nl));
      outBuf_.erase(0, nl + 1);
    }
    return !eof;
  }
}

void WorkerProcess::readErrors() {
  char buf[8192];
  ssize_t n;
  while ((n = ::read(err_, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0)
      errTail_.append(buf, static_cast<size_t>(n));
    if (errTail_.size() > 2 * kTailBytes)
      errTail_.erase(0, errTail_.size() - kTailBytes);
  }
}

void WorkerProcess::kill(bool exiting) {
  if (pid_ <= 0)
    return;
  // A worker that closed its stdout is exiting: give it a moment to do so.
  int status = 0;
  pid_t done = ::waitpid(pid_, &status, WNOHANG);
  for (int i = 0; exiting && done == 0 && i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    done = ::waitpid(pid_, &status, WNOHANG);
  }
  if (done == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  ended_ = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) + " (" +
                                     strsignal(WTERMSIG(status)) + ")"
                               : "exit code " + std::to_string(WEXITSTATUS(status));
  if (errTail_.size() > kTailBytes)
    errTail_.erase(0, errTail_.size() - kTailBytes);
  readErrors();
  closeFds();
  pid_ = -1;
}

void WorkerProcess::closeFds() {
  for (int *fd : {&in_, &out_, &err_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

} // namespace tc::fuzz
