//===- Campaign.cpp - A fuzz campaign: workers, journal, shards, reports -===//
#include "fuzz/Campaign.h"
#include "codegen/Codegen.h"
#include "codegen/Cuda.h"
#include "support/FileIO.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <poll.h>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tc::fuzz {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxReducedPerRawSignature = 3;
constexpr int64_t kMaxCasesPerSignature = 3;
constexpr int kMaxDeathsPerKernel = 2; // then it is a finding, not retried again
constexpr int kMaxStartFailures = 3;   // workers that die before saying hello, in a row
constexpr double kProgressSeconds = 5;
constexpr size_t kMaxDiscardSamples = 3;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string fixed1(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << v;
  return os.str();
}

// Writes a file of the campaign folder (atomically); false after a message.
bool writeFile(const fs::path &path, const std::string &text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::string error;
  if (!writeFileAtomic(path.string(), text, error)) {
    std::cerr << "triton-fuzz: error: " << error << "\n";
    return false;
  }
  std::cout << "triton-fuzz: wrote " << path.string() << "\n";
  return true;
}

// The first paragraph of a message, at most 1000 characters (for findings).
std::string paragraph(const std::string &m) {
  std::string p = m.substr(0, m.find("\n\n"));
  return p.size() > 1000 ? p.substr(0, 1000) + "..." : p;
}

// A check worker: one per slot, restarted when it dies.
struct Slot {
  enum class State { Down, Starting, Idle, Busy, Exiting };
  int device = -1; // -1: CPU
  State state = State::Down;
  std::unique_ptr<WorkerProcess> proc;
  std::vector<int64_t> pending; // Busy: the request's kernels without a reply yet
  bool batch = false;           // the request held several kernels
  Clock::time_point since;      // of the request, or of its last reply
};

// A failure waiting for (or in) the reducer process.
struct ReduceJob {
  KernelRecord record; // status "fail": filled but for its finding
  std::string message;
  bool reduce = true; // false: only write the case (the original or `best`)
  std::string note;
  Json best; // the smallest failing kernel the reducer reported
  int deaths = 0;
};

class Campaign {
public:
  explicit Campaign(const CampaignOptions &o)
      : o_(o), seq_(o.shard, o.maxKernels, {}),
        weights_(o.check.cpuOnly ? 0 : o.pathFloor, o.focus) {}
  int run();

private:
  bool load(std::string &error);
  bool finishedAlready() const;
  double elapsed() const { return base_ + since(start_); }
  bool workLeft() const { return !retries_.empty() || !seq_.exhausted(); }
  bool dispatching() const { return !halt_ && !stopping_ && elapsed() < o_.seconds && workLeft(); }
  std::vector<std::string> workerArgs(int device) const;

  void dispatch();
  void startSlot(Slot &s);
  void pollOnce();
  void handleSlotLine(Slot &s, const std::string &line);
  void handleChecked(Slot &s, const Json &j);
  void handleRequeue(Slot &s, const Json &j);
  bool replied(Slot &s, int64_t index, bool exits);
  void slotDied(Slot &s, bool hung);
  void watchdog();

  void failure(KernelRecord r, const std::string &message, bool reduce, const std::string &note);
  void startReduction();
  void handleReducerLine(const std::string &line);
  void reducerDied(const std::string &why);
  void finishReduction(const Json &j);
  void commit(KernelRecord r);

  void progress() const;
  void stopWorkers();
  int finish();
  void printSummary(const CampaignSummary &s) const;
  void printFirstFailure(const Finding &f, double elapsed, int64_t kernels);

  const CampaignOptions &o_;
  CampaignState state_;
  Journal journal_;
  CampaignSummary tally_;
  IndexSequence seq_;
  std::deque<int64_t> retries_;     // checked again, each alone
  std::map<int64_t, Json> inBatch_; // retries that failed in a batch (then CUDA was gone)
  std::map<int64_t, int> deaths_;
  std::map<std::string, int64_t> rawCount_, casesPerSig_;
  std::map<std::string, std::string> rawToSig_;
  std::vector<std::string> samples_;
  std::vector<Slot> slots_;
  std::deque<ReduceJob> jobs_;
  std::unique_ptr<WorkerProcess> reducer_;
  std::optional<ReduceJob> current_;
  Clock::time_point reducerSince_;
  double base_ = 0;
  Clock::time_point start_ = Clock::now(), lastProgress_ = Clock::now();
  int64_t restarts_ = 0, startFailures_ = 0;
  bool stopping_ = false, halt_ = false;
  std::string fatal_;
  std::optional<std::pair<double, int64_t>> firstFailure_; // elapsed, kernels
  PathWeights weights_;                 // the aims of the fast paths (fuzz/PathWeights.h)
  std::map<int64_t, std::string> aims_; // dispatched, not yet journaled kernels' aims
};

bool Campaign::load(std::string &error) {
  CampaignArgs args;
  args.seed = o_.check.seed;
  args.shardIndex = o_.shard.index;
  args.shardCount = o_.shard.count;
  args.mode = o_.check.cpuOnly          ? "cpu-only"
              : o_.check.triton.enabled ? "triton-" + o_.check.triton.mode // --target triton
              : o_.check.gpu.compileOnly ? "compile-only"
                                        : "gpu";
  if (!o_.check.cpuOnly) {
    args.numWarps = o_.check.gpu.codegen.numWarps;
    args.disableOpt = codegen::describeOptions(o_.check.gpu.codegen);
    args.threads = 0;
  } else {
    args.numWarps = 0;
    args.threads = o_.check.cpu.threads;
  }
  args.plantFeature = o_.check.plantFeature;
  if (!openCampaign(o_.out, args, state_, error))
    return false;
  std::string journalPath = (fs::path(o_.out) / "journal.jsonl").string();
  int64_t skipped = 0;
  std::set<int64_t> done;
  for (const KernelRecord &r : readJournal(journalPath, &skipped)) {
    addRecord(tally_, r);
    weights_.add(r.features, r.paths);
    done.insert(r.index);
    base_ = std::max(base_, r.elapsed);
    if (!r.sample.empty() && samples_.size() < kMaxDiscardSamples)
      samples_.push_back("kernel " + std::to_string(r.index) + ": " + r.message + "\n" + r.sample);
    if (r.finding) {
      ++rawCount_[r.rawSignature];
      rawToSig_[r.rawSignature] = r.finding->signature;
      if (!r.finding->caseFile.empty())
        ++casesPerSig_[r.finding->signature];
    }
  }
  restarts_ = tally_.workerRestarts;
  if (skipped)
    std::cout << "triton-fuzz: ignored " << skipped << " torn journal line(s)\n";
  if (tally_.kernels)
    std::cout << "triton-fuzz: resuming " << o_.out << ": " << tally_.kernels << " kernels done, "
              << fixed1(base_) << "s elapsed\n";
  seq_ = IndexSequence(o_.shard, o_.maxKernels, std::move(done));
  return journal_.open(journalPath, error);
}

bool Campaign::finishedAlready() const {
  return base_ >= o_.seconds || !workLeft() || (o_.stopOnFailure && tally_.failures > 0);
}

std::vector<std::string> Campaign::workerArgs(int device) const {
  std::vector<std::string> a = o_.workerArgs;
  if (device >= 0) {
    a.push_back("--device");
    a.push_back(std::to_string(device));
  }
  return a;
}

int Campaign::run() {
  std::string error;
  if (!load(error)) {
    std::cerr << "triton-fuzz: " << error << "\n";
    return 3;
  }
  // $TC_CUBIN (codegen/Cuda.h): how the GPU workers make modules of PTX.
  if (const char *m = std::getenv("TC_CUBIN"); m && *m && !o_.check.cpuOnly) {
    cuda::ImageMode mode = cuda::ImageMode::Driver;
    if (!cuda::parseImageMode(m, mode)) {
      std::cerr << "triton-fuzz: bad $TC_CUBIN '" << m << "' (driver, ptxas or auto)\n";
      return 3;
    }
    if (std::string ptxas = codegen::findPtxas();
        mode != cuda::ImageMode::Driver && (ptxas.empty() || ::access(ptxas.c_str(), X_OK) != 0)) {
      std::cerr << "triton-fuzz: $TC_CUBIN=ptxas: "
                << (ptxas.empty() ? codegen::ptxasMissing() : ptxas + " is not an executable")
                << "\n";
      return 3;
    }
  }
  if (finishedAlready())
    return finish();
  std::signal(SIGPIPE, SIG_IGN);
  if (o_.check.cpuOnly)
    slots_.resize(static_cast<size_t>(std::max(1, o_.cpuWorkers)));
  else
    for (int d : o_.devices)
      for (int i = 0; i < o_.workersPerDevice; ++i)
        slots_.push_back(Slot{d, Slot::State::Down, nullptr, {}, false, {}});
  start_ = lastProgress_ = Clock::now();
  for (;;) {
    dispatch();
    startReduction();
    bool busy = std::any_of(slots_.begin(), slots_.end(),
                            [](const Slot &s) { return s.state == Slot::State::Busy; });
    if (!fatal_.empty() || halt_ || (!dispatching() && !busy && jobs_.empty() && !current_))
      break;
    pollOnce();
    watchdog();
    if (since(lastProgress_) >= kProgressSeconds) {
      progress();
      lastProgress_ = Clock::now();
    }
  }
  stopWorkers();
  if (!fatal_.empty()) {
    std::cerr << "triton-fuzz: " << fatal_ << "\n";
    return 1;
  }
  return finish();
}

void Campaign::startSlot(Slot &s) {
  s.proc = std::make_unique<WorkerProcess>();
  std::string error;
  if (!s.proc->start(workerArgs(s.device), error)) {
    fatal_ = "cannot start a worker: " + error;
    s.proc.reset();
    return;
  }
  s.state = Slot::State::Starting;
  s.since = Clock::now();
}

void Campaign::dispatch() {
  for (Slot &s : slots_) {
    if (!dispatching())
      return;
    if (s.state == Slot::State::Down)
      startSlot(s);
    if (s.state != Slot::State::Idle)
      continue;
    // A retry goes alone (today's path names its kernel exactly); fresh
    // indices go in batches of --batch.
    std::vector<int64_t> indices;
    if (!retries_.empty()) {
      indices.push_back(retries_.front());
      retries_.pop_front();
    } else {
      while (indices.size() < static_cast<size_t>(std::max(1, o_.batch)))
        if (std::optional<int64_t> i = seq_.next())
          indices.push_back(*i);
        else
          break;
    }
    bool sample = samples_.size() < kMaxDiscardSamples;
    Json req = {{"op", "check"}, {"sample", sample}};
    if (indices.size() == 1)
      req["index"] = indices.front();
    else
      req["indices"] = indices;
    // Each kernel's aim (a retry keeps the one it had): fuzz/PathWeights.h.
    std::vector<std::string> aims;
    for (int64_t i : indices) {
      auto [it, fresh] = aims_.try_emplace(i);
      if (fresh)
        it->second = weights_.aimFor(o_.check.seed, i);
      aims.push_back(it->second);
    }
    if (std::any_of(aims.begin(), aims.end(), [](const std::string &a) { return !a.empty(); }))
      req["aims"] = aims;
    if (auto it = inBatch_.find(indices.front()); indices.size() == 1 && it != inBatch_.end())
      req["batch_failure"] = it->second;
    if (!s.proc->send(req)) {
      // It died: poll sees the end of its output.
      retries_.insert(retries_.begin(), indices.begin(), indices.end());
      s.state = Slot::State::Exiting;
      continue;
    }
    s.state = Slot::State::Busy;
    s.pending = indices;
    s.batch = indices.size() > 1;
    s.since = Clock::now();
  }
}

void Campaign::pollOnce() {
  std::vector<pollfd> fds;
  std::vector<std::pair<WorkerProcess *, Slot *>> owners;
  auto add = [&](WorkerProcess *p, Slot *s) {
    fds.push_back({p->outFd(), POLLIN, 0});
    fds.push_back({p->errFd(), POLLIN, 0});
    owners.emplace_back(p, s);
  };
  for (Slot &s : slots_)
    if (s.proc && s.proc->running())
      add(s.proc.get(), &s);
  if (reducer_)
    add(reducer_.get(), nullptr);
  if (::poll(fds.data(), fds.size(), 200) <= 0)
    return;
  for (size_t i = 0; i < owners.size(); ++i) {
    auto [proc, slot] = owners[i];
    if (fds[2 * i + 1].revents)
      proc->readErrors();
    if (!fds[2 * i].revents)
      continue;
    std::vector<std::string> lines;
    bool open = proc->readOutput(lines);
    for (const std::string &line : lines)
      slot ? handleSlotLine(*slot, line) : handleReducerLine(line);
    if (open)
      continue;
    if (slot)
      slotDied(*slot, false);
    else if (current_)
      reducerDied("");
    else
      reducer_.reset(); // it exited between jobs (after a GPU fault)
  }
}

void Campaign::handleSlotLine(Slot &s, const std::string &line) {
  Json j = Json::parse(line, nullptr, false);
  std::string op = j.is_object() ? j.value("op", "") : "";
  if (op == "hello") {
    s.state = Slot::State::Idle;
    startFailures_ = 0;
    std::string device = j.value("device", "");
    if (state_.device.empty() && !device.empty()) {
      state_.device = device;
      std::string error;
      saveState(o_.out, state_, error);
    }
  } else if (op == "checked" && s.state == Slot::State::Busy) {
    handleChecked(s, j);
  } else if (op == "requeue" && s.state == Slot::State::Busy) {
    handleRequeue(s, j);
  } else {
    std::cerr << "triton-fuzz: unexpected line from a worker: " << line.substr(0, 200) << "\n";
  }
}

void Campaign::handleChecked(Slot &s, const Json &j) {
  KernelRecord r;
  r.index = j.at("index").get<int64_t>();
  r.status = j.at("status").get<std::string>();
  r.property = j.at("property").get<std::string>();
  r.features = j.at("features").get<std::vector<std::string>>();
  r.genMs = j.at("gen_ms").get<double>();
  r.checkMs = j.at("check_ms").get<double>();
  if (j.contains("stages"))
    r.stageMs = j.at("stages").get<std::map<std::string, double>>();
  if (j.contains("paths"))
    r.paths = j.at("paths").get<std::vector<std::string>>();
  bool exits = j.value("exit", false);
  if (!replied(s, r.index, exits))
    return;
  // A kernel that failed in a batch whose fault ended its worker: that restart is its.
  int batchRestart = inBatch_.erase(r.index) ? 1 : 0;
  r.restarts = deaths_[r.index] + (exits ? 1 : 0) + batchRestart;
  std::string message = j.at("message").get<std::string>(), kernel = j.value("kernel", "");
  if (r.status == "fail") {
    r.rawSignature = j.value("raw_signature", "");
    bool batchOnly = j.value("batch_only", false);
    bool reducible = !exits && !batchOnly && r.property != "gpu-fault" && r.property != "gpu-hang";
    std::cout << "triton-fuzz: FAILURE of property '" << r.property << "' on kernel " << r.index
              << ": " << message.substr(0, 1000) << "\n";
    failure(std::move(r), message, reducible,
            reducible   ? ""
            : batchOnly ? "Not reduced: the kernel fails only when compiled into one module with "
                          "other kernels (--batch); the case holds the original kernel."
                        : "Not reduced: the GPU fault made CUDA unusable in the process that "
                          "checks the candidates; the case holds the original kernel.");
    return;
  }
  r.message = message.substr(0, 1000);
  if (r.status == "discard" && !kernel.empty() && samples_.size() < kMaxDiscardSamples) {
    r.sample = kernel;
    samples_.push_back("kernel " + std::to_string(r.index) + ": " + r.message + "\n" + kernel);
  }
  if (r.status == "generator-bug") {
    std::cout << "triton-fuzz: GENERATOR BUG (kernel " << r.index << " does not "
              << (r.property == "compile" ? "compile" : "launch") << "):\n"
              << message << "\n"
              << kernel << "reproduce: " << reproduceCommand(o_, r.index, aimOf(r.features)) << "\n";
    writeFile(fs::path(o_.out) / ("generator-bug-" + std::to_string(r.index) + ".tc"),
              kernel + "/* " + message + " */\n");
  }
  commit(std::move(r));
}

// Kernel `index` of the slot's request got its reply: the slot is Idle when
// the request is done, Exiting when the worker says it exits (its kernels
// without a reply are checked again, each alone). False for a reply to no
// kernel of the request.
bool Campaign::replied(Slot &s, int64_t index, bool exits) {
  auto it = std::find(s.pending.begin(), s.pending.end(), index);
  if (it == s.pending.end()) {
    std::cerr << "triton-fuzz: a worker answered for kernel " << index
              << ", which it was not asked about\n";
    return false;
  }
  s.pending.erase(it);
  s.since = Clock::now(); // --hang-timeout counts from the last reply
  if (exits) {
    retries_.insert(retries_.begin(), s.pending.begin(), s.pending.end());
    s.pending.clear();
    s.state = Slot::State::Exiting;
  } else if (s.pending.empty()) {
    s.state = Slot::State::Idle;
  }
  return true;
}

// A kernel that failed in a batch, after which CUDA was unusable in the
// worker (a fault, a hang): it is checked again alone in a new worker, and
// fails with "batch-only-<property>" if it passes there.
void Campaign::handleRequeue(Slot &s, const Json &j) {
  int64_t index = j.at("index").get<int64_t>();
  if (!replied(s, index, true))
    return;
  inBatch_[index] = {{"property", j.at("property")}, {"message", j.at("message")}};
  std::cout << "triton-fuzz: kernel " << index << " failed (" << j.at("property").get<std::string>()
            << ") in a batch, which ended its worker; checking it alone\n";
  retries_.push_front(index);
}

void Campaign::slotDied(Slot &s, bool hung) {
  s.proc->kill(!hung);
  std::string how = s.proc->howEnded(), tail = s.proc->stderrTail();
  Slot::State was = s.state;
  s.state = Slot::State::Down;
  if (was == Slot::State::Starting && ++startFailures_ >= kMaxStartFailures)
    fatal_ = "workers die before they start (" + how + "); the last one's stderr:\n" + tail;
  if (was != Slot::State::Exiting)
    ++restarts_;
  else
    return; // it said it would exit (after a fault): the restart is in that kernel's record
  if (was != Slot::State::Busy)
    return;
  std::vector<int64_t> pending = std::move(s.pending);
  s.pending.clear();
  if (s.batch) {
    // Which kernel of the batch did it? Each is checked again alone.
    std::cout << "triton-fuzz: the worker on a batch " << (hung ? "did not answer" : "died")
              << "; checking its " << pending.size() << " unchecked kernel(s) one at a time\n";
    retries_.insert(retries_.begin(), pending.begin(), pending.end());
    return;
  }
  if (pending.empty())
    return;
  int64_t index = pending.front();
  std::string what = hung ? "did not answer within " + fixed1(o_.hangTimeout) + "s (killed)"
                          : "died (" + how + ")";
  if (++deaths_[index] < kMaxDeathsPerKernel) {
    std::cout << "triton-fuzz: the worker on kernel " << index << " " << what
              << "; restarting it and checking the kernel once more\n";
    retries_.push_front(index);
    return;
  }
  KernelRecord r;
  r.index = index;
  r.status = "fail";
  bool gpu = !o_.check.cpuOnly;
  r.property = hung ? (gpu ? "gpu-hang" : "hang") : (gpu ? "gpu-fault" : "crash");
  r.restarts = deaths_[index];
  r.rawSignature = r.property + "|" + crashKey(tail);
  std::string message = "the worker checking the kernel " + what +
                        ", twice; its stderr ends with:\n" +
                        tail.substr(tail.size() > 1500 ? tail.size() - 1500 : 0);
  std::cout << "triton-fuzz: FAILURE of property '" << r.property << "' on kernel " << index << ": "
            << message << "\n";
  failure(std::move(r), message, false,
          "Not reduced: the kernel " + std::string(hung ? "hangs" : "kills") +
              " the worker that checks it; the case holds the original kernel.");
}

void Campaign::watchdog() {
  for (Slot &s : slots_) {
    bool late = (s.state == Slot::State::Busy && since(s.since) > o_.hangTimeout) ||
                (s.state == Slot::State::Starting && since(s.since) > o_.hangTimeout + 30);
    if (late) {
      s.proc->kill();
      slotDied(s, s.state == Slot::State::Busy);
    }
  }
  double limit = o_.hangTimeout + (current_ && current_->reduce ? o_.shrinkSeconds : 0);
  if (reducer_ && current_ && since(reducerSince_) > limit) {
    reducer_->kill();
    reducerDied("it did not finish within " + fixed1(limit) + "s (killed)");
  }
}

void Campaign::failure(KernelRecord r, const std::string &message, bool reduce,
                       const std::string &note) {
  if (!firstFailure_)
    firstFailure_ = {elapsed(),
                     tally_.kernels + static_cast<int64_t>(jobs_.size()) + (current_ ? 1 : 0) + 1};
  if (o_.stopOnFailure)
    stopping_ = true;
  int64_t seen = r.rawSignature.empty() ? 0 : rawCount_[r.rawSignature]++;
  if (seen >= kMaxReducedPerRawSignature) {
    // A bug seen often already: record it under the signature its first
    // reductions got, without reducing it or storing a case.
    Finding f;
    auto it = rawToSig_.find(r.rawSignature);
    f.signature = it != rawToSig_.end() ? it->second : r.rawSignature;
    f.property = r.property;
    f.campaignSeed = o_.check.seed;
    f.index = r.index;
    f.message = paragraph(message);
    f.reproduce = reproduceCommand(o_, r.index, aimOf(r.features));
    f.features = r.features;
    r.finding = f;
    commit(std::move(r));
    return;
  }
  jobs_.push_back({std::move(r), message, reduce, note, Json(), 0});
}

void Campaign::startReduction() {
  if (current_ || jobs_.empty() || halt_)
    return;
  current_ = std::move(jobs_.front());
  jobs_.pop_front();
  ReduceJob &job = *current_;
  if (job.reduce && elapsed() >= o_.seconds) {
    job.reduce = false;
    job.note = "Not reduced: the campaign's time was up; the case holds the original kernel.";
  }
  const KernelRecord &r = job.record;
  Json req = {{"op", "reduce"},
              {"index", r.index},
              {"property", r.property},
              {"message", job.message},
              {"seconds", o_.shrinkSeconds},
              {"reduce", job.reduce},
              {"case_name", "seed" + std::to_string(o_.check.seed) + "_kernel" +
                                std::to_string(r.index) + "_" + r.property},
              {"reproduce", reproduceCommand(o_, r.index, aimOf(r.features))},
              {"note", job.note},
              {"aim", aimOf(r.features)}};
  if (!job.best.is_null())
    req["kernel"] = job.best;
  std::string error;
  if (!reducer_ || !reducer_->running()) { // one process serves jobs until it exits
    reducer_ = std::make_unique<WorkerProcess>();
    std::vector<std::string> args = workerArgs(o_.devices.empty() ? -1 : o_.devices.front());
    args.push_back("--reducer");
    if (!reducer_->start(args, error)) {
      reducerDied("cannot start it: " + error);
      return;
    }
  }
  if (!reducer_->send(req)) {
    reducerDied("it stopped");
    return;
  }
  reducerSince_ = Clock::now();
}

void Campaign::handleReducerLine(const std::string &line) {
  Json j = Json::parse(line, nullptr, false);
  std::string op = j.is_object() ? j.value("op", "") : "";
  if (op == "best" && current_)
    current_->best = j.at("kernel");
  else if (op == "reduced" && current_)
    finishReduction(j);
}

void Campaign::reducerDied(const std::string &why) {
  reducer_->kill(why.empty());
  std::string how = why.empty() ? "it died (" + reducer_->howEnded() + ")" : why;
  std::string tail = reducer_->stderrTail();
  reducer_.reset();
  ReduceJob job = std::move(*current_);
  current_.reset();
  if (++job.deaths < kMaxDeathsPerKernel) {
    job.note = "The reducer process stopped (" + how + "); the case holds " +
               (job.best.is_null() ? "the original kernel." : "the smallest kernel it reported.");
    job.reduce = false;
    jobs_.push_front(std::move(job));
    return;
  }
  std::cout << "triton-fuzz: no case for kernel " << job.record.index
            << ": the reducer process stopped twice (" << how << ")\n";
  Finding f;
  f.signature = job.record.rawSignature.empty() ? job.record.property : job.record.rawSignature;
  f.property = job.record.property;
  f.campaignSeed = o_.check.seed;
  f.index = job.record.index;
  f.message = paragraph(job.message) + " (no case: the reducer process stopped twice: " + how + ")";
  f.reproduce = reproduceCommand(o_, job.record.index, aimOf(job.record.features));
  f.features = job.record.features;
  job.record.finding = f;
  commit(std::move(job.record));
}

void Campaign::finishReduction(const Json &j) {
  ReduceJob job = std::move(*current_);
  current_.reset();
  KernelRecord &r = job.record;
  Finding f;
  f.signature = j.at("signature").get<std::string>();
  f.property = r.property;
  f.campaignSeed = o_.check.seed;
  f.index = r.index;
  f.message = paragraph(j.at("message").get<std::string>());
  f.reproduce = reproduceCommand(o_, r.index, aimOf(r.features));
  f.features = j.at("features").get<std::vector<std::string>>();
  f.culprit = j.value("culprit", "");
  std::string caseText = j.at("case").get<std::string>();
  std::cout << "triton-fuzz: kernel " << r.index << " (signature " << f.signature << ")"
            << (job.reduce ? ", reduced in " + std::to_string(j.value("steps", 0)) + " steps to:\n"
                           : ":\n")
            << j.value("kernel", "") << (f.culprit.empty() ? "" : f.culprit + "\n");
  if (!caseText.empty() && casesPerSig_[f.signature] < kMaxCasesPerSignature) {
    std::string name = "seed" + std::to_string(o_.check.seed) + "_kernel" +
                       std::to_string(r.index) + "_" + r.property + ".json";
    writeFile(fs::path(o_.out) / "cases" / name, caseText);
    f.caseFile = "cases/" + name;
    ++casesPerSig_[f.signature];
  }
  if (!r.rawSignature.empty())
    rawToSig_[r.rawSignature] = f.signature;
  r.finding = f;
  commit(std::move(r));
  if (o_.stopOnFailure && firstFailure_) {
    printFirstFailure(f, firstFailure_->first, firstFailure_->second);
    halt_ = true;
  }
}

void Campaign::commit(KernelRecord r) {
  r.elapsed = elapsed();
  std::string error;
  if (!journal_.append(r, error))
    fatal_ = error;
  addRecord(tally_, r);
  weights_.add(r.features, r.paths);
  aims_.erase(r.index);
}

void Campaign::progress() const {
  int workers = static_cast<int>(std::count_if(
      slots_.begin(), slots_.end(), [](const Slot &s) { return s.state != Slot::State::Down; }));
  std::cout << progressLine(tally_, elapsed(), o_.seconds, workers, restarts_) << std::endl;
}

void Campaign::stopWorkers() {
  for (Slot &s : slots_)
    if (s.proc)
      s.proc->kill();
  if (reducer_)
    reducer_->kill();
}

void Campaign::printFirstFailure(const Finding &f, double elapsed, int64_t kernels) {
  std::cout << "first-failure-seconds: " << fixed1(elapsed) << " kernels: " << kernels
            << " property: " << f.property << " signature: " << f.signature << std::endl;
  if (!f.culprit.empty())
    std::cout << "first-failure-" << f.culprit << std::endl; // "first-failure-culprit: ..."
}

int Campaign::finish() {
  CampaignSummary s = tally_;
  s.name = fs::path(o_.out).lexically_normal().filename().string();
  if (s.name.empty() || s.name == ".")
    s.name = fs::absolute(o_.out).lexically_normal().parent_path().filename().string();
  s.seed = o_.check.seed;
  s.shardIndex = o_.shard.index;
  s.shardCount = o_.shard.count;
  s.mode = o_.check.cpuOnly          ? "cpu-only"
           : o_.check.triton.enabled ? "triton-" + o_.check.triton.mode // --target triton
           : o_.check.gpu.compileOnly ? "compile-only"
                                     : "gpu";
  s.device = state_.device;
  s.started = state_.started;
  s.finished = isoNow();
  s.elapsedSeconds = slots_.empty() ? base_ : elapsed();
  if (slots_.empty() && o_.stopOnFailure)
    for (const Finding &f : s.findings) { // a resumed campaign that stopped already
      printFirstFailure(f, base_, s.kernels);
      break;
    }
  printSummary(s);
  std::set<std::string> known = knownSignatures(o_.casesDir, o_.knownFile);
  fs::path dir(o_.out);
  bool written = writeFile(dir / "campaign.json", summaryToJson(s));
  written = writeFile(dir / "report.md", markdownReport(s, known)) && written;
  written = writeFile(dir / "report.html", htmlReport(s, known)) && written;
  return s.failures || s.generatorBugs || !written ? 1 : 0;
}

void Campaign::printSummary(const CampaignSummary &s) const {
  std::cout << "\ntriton-fuzz summary (seed " << s.seed << ", shard " << s.shardIndex << "/"
            << s.shardCount << ", " << s.mode << (s.device.empty() ? "" : ", " + s.device) << "):\n"
            << progressLine(s, s.elapsedSeconds, o_.seconds, static_cast<int>(slots_.size()),
                            s.workerRestarts)
            << "\n";
  std::cout << "passed " << s.passed << ", discarded " << s.discards << ", failed " << s.failures
            << ", generator bugs " << s.generatorBugs << "\n";
  if (std::string stages = stageTimesLine(s); !stages.empty())
    std::cout << stages << "\n";
  for (const auto &[p, n] : s.failuresByProperty)
    std::cout << "  failed property " << p << ": " << n << "\n";
  for (const auto &[kind, n] : s.discardsByKind)
    std::cout << "  discard (trap " << kind << "): " << n << "\n";
  std::cout << "features (kernels using each):\n";
  for (const auto &[f, n] : s.features)
    std::cout << "  " << std::setw(6) << std::fixed << std::setprecision(2)
              << (s.kernels ? 100.0 * n / s.kernels : 0) << "% " << f << " (" << n << ")\n";
  if (std::string table = pathCoverageText(s); !table.empty())
    std::cout << table;
  for (const std::string &sample : samples_)
    std::cout << "sample of a discarded (trapping) kernel, " << sample << "\n";
}

} // namespace

std::optional<Shard> parseShard(const std::string &text, std::string &error) {
  size_t slash = text.find('/');
  try {
    size_t usedK = 0, usedN = 0;
    Shard s;
    if (slash == std::string::npos)
      throw std::invalid_argument("no slash");
    s.index = std::stoi(text.substr(0, slash), &usedK);
    s.count = std::stoi(text.substr(slash + 1), &usedN);
    if (usedK == slash && usedN == text.size() - slash - 1 && s.count > 0 && s.index >= 0 &&
        s.index < s.count)
      return s;
  } catch (const std::exception &) {
  }
  error = "bad --shard '" + text + "' (use K/N with 0 <= K < N, e.g. 3/64)";
  return std::nullopt;
}

IndexSequence::IndexSequence(Shard shard, int64_t limit, std::set<int64_t> done)
    : shard_(shard), limit_(limit), next_(shard.index), done_(std::move(done)) {
  skipDone();
}

void IndexSequence::skipDone() {
  while (!exhausted() && done_.count(next_))
    next_ += shard_.count;
}

bool IndexSequence::exhausted() const {
  return limit_ > 0 && next_ >= limit_;
}

std::optional<int64_t> IndexSequence::next() {
  if (exhausted())
    return std::nullopt;
  int64_t i = next_;
  next_ += shard_.count;
  skipDone();
  return i;
}

void addRecord(CampaignSummary &s, const KernelRecord &r) {
  ++s.kernels;
  for (const std::string &f : r.features)
    ++s.features[f];
  if (r.paths) {
    ++s.pathKernels;
    for (const std::string &p : *r.paths)
      ++s.paths[p];
  }
  s.generationSeconds += r.genMs / 1000;
  // The stages of a check, "gen" before them and "other" for what no stage timed.
  if (r.genMs > 0 || r.checkMs > 0) {
    s.stageSeconds["gen"] += r.genMs / 1000;
    double timed = 0;
    for (const auto &[stage, ms] : r.stageMs) {
      s.stageSeconds[stage] += ms / 1000;
      timed += ms;
    }
    if (r.checkMs - timed > 0)
      s.stageSeconds[r.stageMs.empty() ? "check" : "other"] += (r.checkMs - timed) / 1000;
  }
  s.workerRestarts += r.restarts;
  if (r.status == "pass") {
    ++s.passed;
  } else if (r.status == "discard") {
    ++s.discards;
    ++s.discardsByKind[r.property];
  } else if (r.status == "generator-bug") {
    ++s.generatorBugs;
  } else if (r.status == "fail") {
    ++s.failures;
    ++s.failuresByProperty[r.property];
    if (r.finding)
      s.findings.push_back(*r.finding);
  }
}

std::string crashKey(const std::string &stderrTail) {
  std::istringstream in(stderrTail);
  std::string line, key;
  while (std::getline(in, line))
    if (line.find("ERROR") != std::string::npos || line.find("rror:") != std::string::npos ||
        line.find("Assertion") != std::string::npos || line.find("terminate") != std::string::npos)
      key = line;
  static const std::regex hex("0x[0-9a-fA-F]+"), number("[0-9]+");
  key = std::regex_replace(std::regex_replace(key, hex, "#"), number, "N");
  return key.substr(0, 200);
}

int64_t signatureCount(const CampaignSummary &s) {
  std::set<std::string> sigs;
  for (const Finding &f : s.findings)
    sigs.insert(f.signature);
  return static_cast<int64_t>(sigs.size());
}

std::string progressLine(const CampaignSummary &s, double elapsed, double total, int workers,
                         int64_t restarts) {
  double rate = elapsed > 0 ? s.kernels / elapsed : 0;
  double discardPct = s.kernels ? 100.0 * s.discards / s.kernels : 0;
  return "[" + fixed1(elapsed) + "s / " + fixed1(total) + "s] kernels " +
         std::to_string(s.kernels) + " (" + fixed1(rate) + "/s), discards " + fixed1(discardPct) +
         "%, failures " + std::to_string(s.failures) + " (" + std::to_string(signatureCount(s)) +
         " signatures), workers " + std::to_string(workers) + " (restarts " +
         std::to_string(restarts) + "), remaining " + fixed1(std::max(0.0, total - elapsed)) + "s";
}

std::string reproduceCommand(const CampaignOptions &o, int64_t index, const std::string &aim) {
  return "triton-fuzz --seed " + std::to_string(o.check.seed) + " --replay " +
         std::to_string(index) + " --print" + o.reproduceFlags + (aim.empty() ? "" : " --focus " + aim);
}

int runCampaign(const CampaignOptions &opts) {
  return Campaign(opts).run();
}

} // namespace tc::fuzz
