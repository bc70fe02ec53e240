// runSuites: which cases run, and running them in forked worker processes
// (`jobs` at once) so that crashes and hangs are contained.
//
// A worker runs a batch of up to `batch` cases (all their variants) in turn on
// one backend, with its stdin and stdout on /dev/null and its stderr on a
// pipe, and writes each case's record as JSON to a second pipe as soon as the
// case is done. The parent polls the pipes; the timeout is per case (each
// record restarts it). A worker killed by a signal or exiting before the
// records of all its cases gives a `crash` record for the first case without
// one (with the signal and the end of what that case wrote on stderr), one
// past its deadline is killed (SIGKILL) and gives `timeout`; the cases after
// it run in a new worker. A worker stops early after a case that may have
// left the backend unusable in its process (see mayPoison).
#include "conformance/Report.h"
#include "conformance/Runner.h"
#include "support/TimeLimit.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tc::conf {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTail = 4000;

// One unit of work: a case to run, or a record decided without running.
struct WorkItem {
  const Suite *suite = nullptr;
  const Case *kase = nullptr;
  std::optional<CaseRecord> decided;
};

CaseRecord baseRecord(const Suite &s, const Case &c, const std::string &backend) {
  CaseRecord r;
  r.suite = s.name;
  r.name = c.name;
  r.file = s.file;
  r.features = c.features;
  r.backend = backend;
  r.expect = std::string(expectKindName(c.expect.kind));
  r.reproduce = reproduceCommand(s.file, c.name, backend);
  return r;
}

CaseRecord skippedRecord(const Suite &s, const Case &c, const std::string &backend,
                         std::string why) {
  CaseRecord r = baseRecord(s, c, backend);
  r.status = Status::Skipped;
  r.reason = std::move(why);
  return r;
}

// Why a case does not run on this backend, or "" when it does.
std::string skipReason(const Case &c, const std::string &backend) {
  if (!c.runsOn(backend)) {
    std::string list;
    for (const std::string &b : c.backends)
      list += (list.empty() ? "" : ", ") + b;
    return "the case runs on " + list + " only";
  }
  if (c.expect.kind == ExpectKind::Trap && c.expect.trap != TrapKind::InvalidLaunch &&
      !backendDetectsTraps(backend))
    return "the " + backend + " backend cannot detect traps";
  if (c.expect.kind == ExpectKind::CompileError && backend == "triton")
    return "a compile_error case tests Triton-C's frontend, which Triton does not use";
  return "";
}

void addSuiteItems(const LoadResult &lr, const RunnerOptions &opts, const std::string &unavailable,
                   std::vector<WorkItem> &items) {
  if (!lr.suite) {
    CaseRecord r;
    r.suite = lr.errors.empty() ? "" : lr.errors.front().substr(0, lr.errors.front().find(':'));
    r.file = r.suite;
    r.name = "<load>";
    r.backend = opts.backend;
    r.status = Status::Error;
    for (const std::string &e : lr.errors)
      r.error += (r.error.empty() ? "" : "\n") + e;
    items.push_back({nullptr, nullptr, std::move(r)});
    return;
  }
  const Suite &s = *lr.suite;
  RunnerOptions byName = opts; // the features of a case that did not load are unknown
  byName.featureGlobs.clear();
  for (const InvalidCase &inv : s.invalid) {
    if (!selected(byName, s.name, inv.name, {}))
      continue;
    CaseRecord r;
    r.suite = s.name;
    r.name = inv.name;
    r.file = s.file;
    r.backend = opts.backend;
    r.status = Status::Error;
    r.error = inv.error;
    items.push_back({&s, nullptr, std::move(r)});
  }
  for (const Case &c : s.cases) {
    if (!selected(opts, s.name, c.name, c.features))
      continue;
    std::string why = unavailable.empty() ? skipReason(c, opts.backend) : unavailable;
    if (!why.empty())
      items.push_back({&s, &c, skippedRecord(s, c, opts.backend, why)});
    else
      items.push_back({&s, &c, std::nullopt});
  }
}

// A bad case's progress text after its name: the first line of its error on
// the same line, then every further line of the error, the first mismatch and
// the reproduce command, each on a line of its own indented by four spaces.
std::string details(const CaseRecord &r) {
  size_t firstEnd = std::min(r.error.find('\n'), r.error.size());
  std::string out = firstEnd ? ": " + r.error.substr(0, firstEnd) + "\n" : "\n";
  std::string text = firstEnd < r.error.size() ? r.error.substr(firstEnd + 1) : "";
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  if (r.mismatch && r.mismatch->index >= 0)
    text += (text.empty() ? "" : "\n") + std::string("first mismatch: output '") +
            r.mismatch->output + "' at index " + std::to_string(r.mismatch->index) + ": got " +
            r.mismatch->got + ", want " + r.mismatch->want;
  if (!r.reproduce.empty())
    text += (text.empty() ? "" : "\n") + std::string("reproduce: ") + r.reproduce;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl;
    out += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// Progress on stderr: "[12/50] 1 failed", and for each case that did not pass
// a line naming it followed by its whole error, indented.
class Progress {
public:
  Progress(std::ostream *os, size_t total)
      : os_(os), total_(total), tty_(os == &std::cerr && isatty(2)) {}

  void done(const CaseRecord &r) {
    ++done_;
    bool bad = isFailure(r.status) || r.status == Status::XPass;
    failed_ += bad ? 1 : 0;
    if (!os_)
      return;
    if (bad) {
      std::string status(statusName(r.status));
      for (char &ch : status)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      *os_ << (tty_ ? "\r\033[K" : "") << status << ": " << r.suite << "/" << r.name << " ["
           << r.backend << "]" << (r.variant.empty() ? "" : " (" + r.variant + ")") << details(r);
    }
    size_t step = total_ >= 20 ? total_ / 20 : total_;
    if (tty_)
      *os_ << '\r' << line() << (done_ == total_ ? "\n" : "") << std::flush;
    else if (done_ % step == 0 || done_ == total_)
      *os_ << line() << '\n' << std::flush;
  }

private:
  std::string line() const {
    return "[" + std::to_string(done_) + "/" + std::to_string(total_) + "] " +
           std::to_string(failed_) + " failed";
  }
  std::ostream *os_;
  size_t total_, done_ = 0, failed_ = 0;
  bool tty_;
};

// Runs one case in this process on `backend` (created first when null); an
// escaping exception becomes a `crash` record.
CaseRecord runItem(const WorkItem &item, const RunnerOptions &opts, double maxSeconds,
                   std::unique_ptr<Backend> &backend) {
  try {
    std::string why;
    if (!backend)
      backend = createBackend(opts.backend, why);
    if (!backend)
      return skippedRecord(*item.suite, *item.kase, opts.backend, why);
    RunOptions ro;
    std::ostringstream sink; // print() output is not part of a record
    ro.out = &sink;
    ro.maxSeconds = maxSeconds;
    ro.raceCheck = true; // a race between programs is a trap like any other (data_race)
    return runCase(*item.suite, *item.kase, *backend, ro);
  } catch (const std::exception &e) {
    CaseRecord r = baseRecord(*item.suite, *item.kase, opts.backend);
    r.status = Status::Crash;
    r.error = std::string("uncaught exception: ") + e.what();
    r.source = item.kase->source;
    return r;
  }
}

// Without isolation the timeout is the backend's own wall-clock limit (a
// step_limit trap), reported as `timeout`.
CaseRecord runInProcess(const WorkItem &item, const RunnerOptions &opts) {
  std::unique_ptr<Backend> backend;
  CaseRecord r = runItem(item, opts, opts.timeout, backend);
  if (r.status == Status::Error && r.error.find("step_limit") != std::string::npos &&
      opts.timeout > 0 && r.time >= opts.timeout)
    r.status = Status::Timeout;
  return r;
}

// --- Isolated workers ---------------------------------------------------------
//
// After each case a worker writes kCaseDone to its stderr and then the case's
// record as one frame on its result pipe: "<length>\n<record JSON>". The
// markers tell the parent which stderr text belongs to the case a worker died
// in. An empty frame ("0\n") says the worker stops before the end of its batch
// (the case may have left the backend unusable in that process); the rest of
// the batch then runs in a new worker.

constexpr std::string_view kCaseDone = "\x1e\x1dtc-conformance: case done\x1d\x1e";
constexpr std::string_view kStopFrame = "0\n";
constexpr size_t kMaxFrameHeader = 20;

struct Worker {
  pid_t pid = -1;
  std::vector<size_t> batch; // items, in the order the worker runs them
  size_t recorded = 0;       // records received: those of batch[0, recorded)
  bool stopped = false;      // the worker stops early (an empty frame)
  bool broken = false;       // a malformed frame arrived; later ones are ignored
  std::string perr;          // what was wrong with it
  int resultFd = -1, errFd = -1;
  std::string result;                // bytes not yet split into frames
  std::string err;                   // stderr since the last marker
  size_t markers = 0;                // markers seen
  std::deque<std::string> markedErr; // stderr of cases [markers - size, markers)
  Clock::time_point start, deadline; // of the case running now
};

Clock::time_point deadlineFrom(Clock::time_point t, const RunnerOptions &opts) {
  if (!(opts.timeout > 0))
    return Clock::time_point::max();
  return deadlineAfter(t, opts.timeout);
}

void writeAll(int fd, std::string_view s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    off += static_cast<size_t>(n);
  }
}

// Whether the case ran a kernel that did not end normally, which may leave the
// backend unusable in this process (a GPU fault poisons CUDA for the process):
// a trap expectation, a crash, or an error other than one the frontend found.
bool mayPoison(const Case &c, const CaseRecord &r) {
  if (c.expect.kind == ExpectKind::Trap || r.status == Status::Crash)
    return true;
  return r.status == Status::Error && !r.error.starts_with("compile error:") &&
         !r.error.starts_with("grid: ");
}

// Runs the batch with one backend (one CUDA context), writing a marker on
// stderr and a record frame after each case.
[[noreturn]] void childMain(const std::vector<WorkItem> &items, const std::vector<size_t> &batch,
                            const RunnerOptions &opts, int resultFd, int errFd,
                            const std::vector<Worker> &others) {
  for (const Worker &w : others) {
    close(w.resultFd);
    close(w.errFd);
  }
  int devnull = open("/dev/null", O_RDWR);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(errFd, 2);
  std::unique_ptr<Backend> backend;
  for (size_t k = 0; k < batch.size(); ++k) {
    const WorkItem &item = items[batch[k]];
    CaseRecord r = runItem(item, opts, 0, backend);
    std::cerr.flush();
    std::fflush(stderr);
    writeAll(2, kCaseDone);
    std::string text = recordToJsonText(r);
    writeAll(resultFd, std::to_string(text.size()) + "\n" + text);
    if (k + 1 < batch.size() && mayPoison(*item.kase, r)) {
      writeAll(resultFd, kStopFrame);
      break;
    }
  }
  backend.reset();
  _exit(0);
}

bool spawn(const std::vector<WorkItem> &items, const std::vector<size_t> &batch,
           const RunnerOptions &opts, std::vector<Worker> &active, std::string &error) {
  int res[2], err[2];
  if (pipe(res) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (pipe(err) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    close(res[0]);
    close(res[1]);
    return false;
  }
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {res[0], res[1], err[0], err[1]})
      close(fd);
    return false;
  }
  if (pid == 0) {
    close(res[0]);
    close(err[0]);
    childMain(items, batch, opts, res[1], err[1], active);
  }
  close(res[1]);
  close(err[1]);
  for (int fd : {res[0], err[0]}) // what is left after a kill is read without blocking
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Worker w;
  w.pid = pid;
  w.batch = batch;
  w.resultFd = res[0];
  w.errFd = err[0];
  w.start = Clock::now();
  w.deadline = deadlineFrom(w.start, opts);
  active.push_back(std::move(w));
  return true;
}

std::string tail(const std::string &s) {
  return s.size() <= kStderrTail ? s : "..." + s.substr(s.size() - kStderrTail);
}

// Forgets the stderr of cases that have their records.
void dropMarkedErr(Worker &w) {
  while (!w.markedErr.empty() && w.markers - w.markedErr.size() < w.recorded)
    w.markedErr.pop_front();
}

// Splits the stderr read so far at the markers.
void takeStderr(Worker &w) {
  for (size_t pos; (pos = w.err.find(kCaseDone)) != std::string::npos;) {
    w.markedErr.push_back(tail(w.err.substr(0, pos)));
    w.err.erase(0, pos + kCaseDone.size());
    ++w.markers;
  }
  if (w.err.size() > 4 * kStderrTail) // a partial marker at the end stays
    w.err.erase(0, w.err.size() - 2 * kStderrTail);
  dropMarkedErr(w);
}

// What the k-th case of the batch wrote on stderr (its tail).
std::string stderrOf(const Worker &w, size_t k) {
  if (k == w.markers)
    return w.err;
  size_t first = w.markers - w.markedErr.size();
  return k < first || k > w.markers ? "" : w.markedErr[k - first];
}

std::optional<size_t> frameLength(std::string_view header) {
  size_t n = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), n);
  if (ec != std::errc() || end != header.data() + header.size() || header.empty())
    return std::nullopt;
  return n;
}

// The record of the next case of the batch, from one frame.
template <typename OnDone>
void acceptRecord(Worker &w, const std::string &text, const std::vector<WorkItem> &items,
                  const RunnerOptions &opts, OnDone &onDone) {
  std::string perr;
  std::optional<CaseRecord> r = recordFromJsonText(text, perr);
  if (r && w.recorded < w.batch.size() && r->name != items[w.batch[w.recorded]].kase->name)
    perr = "a record of case '" + r->name + "' in place of '" +
           items[w.batch[w.recorded]].kase->name + "'";
  else if (r && w.recorded >= w.batch.size())
    perr = "more records than cases";
  if (!perr.empty()) {
    w.broken = true;
    w.perr = perr;
    return;
  }
  onDone(w.batch[w.recorded++], std::move(*r));
  w.start = Clock::now();
  w.deadline = deadlineFrom(w.start, opts); // the timeout is per case
  dropMarkedErr(w);
}

// Splits the complete frames off the result bytes and takes their records.
template <typename OnDone>
void takeRecords(Worker &w, const std::vector<WorkItem> &items, const RunnerOptions &opts,
                 OnDone &onDone) {
  while (!w.stopped && !w.broken) {
    size_t nl = w.result.find('\n');
    if (nl == std::string::npos) {
      if (w.result.size() > kMaxFrameHeader) {
        w.broken = true;
        w.perr = "a malformed result frame";
      }
      return;
    }
    std::optional<size_t> len = frameLength(std::string_view(w.result).substr(0, nl));
    if (!len) {
      w.broken = true;
      w.perr = "a malformed result frame";
      return;
    }
    if (w.result.size() - nl - 1 < *len)
      return;
    std::string text = w.result.substr(nl + 1, *len);
    w.result.erase(0, nl + 1 + *len);
    if (*len == 0)
      w.stopped = true;
    else
      acceptRecord(w, text, items, opts, onDone);
  }
}

// What was written of a frame the worker did not finish.
std::string partialFrame(const Worker &w) {
  size_t nl = w.result.find('\n');
  return nl == std::string::npos ? "" : w.result.substr(nl + 1);
}

// The record of the case a worker was running when it died (`status` from
// waitpid) or was killed.
CaseRecord failureRecord(const WorkItem &item, const RunnerOptions &opts, const Worker &w,
                         int status, bool killed) {
  double elapsed = std::chrono::duration<double>(Clock::now() - w.start).count();
  CaseRecord r = baseRecord(*item.suite, *item.kase, opts.backend);
  r.time = elapsed;
  r.source = item.kase->source;
  if (killed) {
    r.status = Status::Timeout;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts.timeout);
    r.error = std::string("no result after ") + secs + " s; the worker was killed";
  } else if (WIFSIGNALED(status)) {
    r.status = Status::Crash;
    r.error = "the worker died of signal " + std::to_string(WTERMSIG(status)) + " (" +
              strsignal(WTERMSIG(status)) + ")";
  } else {
    std::string perr = w.perr;
    if (!w.broken && WEXITSTATUS(status) == 0)
      recordFromJsonText(partialFrame(w), perr);
    r.status = Status::Crash;
    r.error = "the worker exited with status " + std::to_string(WEXITSTATUS(status)) +
              " without a result" + (perr.empty() ? "" : " (" + perr + ")");
  }
  std::string err = stderrOf(w, w.recorded);
  if (!err.empty())
    r.error += "\nworker stderr:\n" + tail(err);
  return r;
}

// Reads what is available on `fd` into `buf`; closes it at end of file.
// Returns whether it read something.
bool drain(int &fd, std::string &buf) {
  char chunk[65536];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return false;
  if (n <= 0) {
    close(fd);
    fd = -1;
    return false;
  }
  buf.append(chunk, static_cast<size_t>(n));
  return true;
}

// Waits for output from any worker (until the nearest deadline) and reads it.
void pollWorkers(std::vector<Worker> &active) {
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, bool>> owner; // (worker, is result fd)
  Clock::time_point nearest = Clock::time_point::max();
  for (size_t i = 0; i < active.size(); ++i) {
    nearest = std::min(nearest, active[i].deadline);
    if (active[i].resultFd >= 0) {
      fds.push_back({active[i].resultFd, POLLIN, 0});
      owner.push_back({i, true});
    }
    if (active[i].errFd >= 0) {
      fds.push_back({active[i].errFd, POLLIN, 0});
      owner.push_back({i, false});
    }
  }
  int timeoutMs = 1000;
  if (nearest != Clock::time_point::max()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(nearest - Clock::now());
    timeoutMs = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1000));
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max(timeoutMs, 1)));
    return;
  }
  if (poll(fds.data(), fds.size(), timeoutMs) <= 0)
    return;
  for (size_t k = 0; k < fds.size(); ++k) {
    if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    Worker &w = active[owner[k].first];
    if (owner[k].second)
      drain(w.resultFd, w.result);
    else
      drain(w.errFd, w.err);
  }
}

void closeFds(Worker &w) {
  for (int *fd : {&w.resultFd, &w.errFd})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
}

// A worker has ended: the first case of its batch without a record gets the
// crash or timeout record (unless the worker stopped early on purpose), and
// the cases after it are handed to `requeue` to run in a new worker.
template <typename OnDone, typename Requeue>
void finishWorker(const Worker &w, const std::vector<WorkItem> &items, const RunnerOptions &opts,
                  int status, bool killed, OnDone &onDone, Requeue &requeue) {
  if (w.recorded >= w.batch.size())
    return;
  size_t rest = w.recorded;
  if (!w.stopped) {
    size_t index = w.batch[rest++];
    onDone(index, failureRecord(items[index], opts, w, status, killed));
  }
  if (rest < w.batch.size())
    requeue(
        std::vector<size_t>(w.batch.begin() + static_cast<std::ptrdiff_t>(rest), w.batch.end()));
}

// Collects the workers that are done or past their deadline.
template <typename OnDone, typename Requeue>
void reapWorkers(std::vector<Worker> &active, const std::vector<WorkItem> &items,
                 const RunnerOptions &opts, OnDone &onDone, Requeue &requeue) {
  for (size_t i = 0; i < active.size();) {
    Worker &w = active[i];
    int status = 0;
    bool killed = false;
    if (w.resultFd >= 0 || w.errFd >= 0) {
      if (Clock::now() < w.deadline) {
        ++i;
        continue;
      }
      kill(w.pid, SIGKILL);
      killed = true;
    }
    while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (killed) { // its last stderr (a record that came after the deadline does not count)
      while (w.errFd >= 0 && drain(w.errFd, w.err)) {
      }
      takeStderr(w);
    }
    closeFds(w);
    finishWorker(w, items, opts, status, killed, onDone, requeue);
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// Hands out batches: cases to run again first, then up to `batch` consecutive
// cases (fewer near the end, so that every worker gets a share). Cases decided
// without running are reported as they are passed.
class Batcher {
public:
  Batcher(const std::vector<WorkItem> &items, const RunnerOptions &opts, unsigned jobs)
      : items_(items), jobs_(jobs), max_(std::max(1u, opts.batch)) {
    for (const WorkItem &item : items)
      unassigned_ += item.decided ? 0 : 1;
  }

  bool empty() const { return next_ == items_.size() && requeued_.empty(); }
  void requeue(std::vector<size_t> batch) { requeued_.push_back(std::move(batch)); }

  template <typename OnDone> std::vector<size_t> take(OnDone &onDone) {
    if (!requeued_.empty()) {
      std::vector<size_t> b = std::move(requeued_.front());
      requeued_.pop_front();
      return b;
    }
    size_t want = std::clamp<size_t>((unassigned_ + jobs_ - 1) / jobs_, 1, max_);
    std::vector<size_t> b;
    while (next_ < items_.size() && b.size() < want) {
      size_t index = next_++;
      if (items_[index].decided)
        onDone(index, *items_[index].decided);
      else
        b.push_back(index);
    }
    unassigned_ -= b.size();
    return b;
  }

private:
  const std::vector<WorkItem> &items_;
  size_t jobs_, max_, next_ = 0, unassigned_ = 0;
  std::deque<std::vector<size_t>> requeued_;
};

// The reproduce command with the run's extra arguments for the case.
void finishRecord(const WorkItem &item, const RunnerOptions &opts, CaseRecord &r) {
  if (item.kase && item.suite && opts.reproduceArgs)
    r.reproduce = reproduceCommand(item.suite->file, item.kase->name, r.backend,
                                   opts.reproduceArgs(*item.kase));
}

void runIsolated(const std::vector<WorkItem> &items, const RunnerOptions &opts,
                 std::vector<CaseRecord> &records, Progress &progress) {
  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worker> active;
  Batcher batcher(items, opts, jobs);
  auto onDone = [&](size_t index, CaseRecord r) {
    finishRecord(items[index], opts, r);
    if (opts.known)
      applyKnownFailures(r, *opts.known);
    progress.done(r);
    records[index] = std::move(r);
  };
  auto requeue = [&](std::vector<size_t> batch) { batcher.requeue(std::move(batch)); };
  while (!batcher.empty() || !active.empty()) {
    while (active.size() < jobs && !batcher.empty()) {
      std::vector<size_t> batch = batcher.take(onDone);
      std::string error;
      if (batch.empty() || spawn(items, batch, opts, active, error))
        continue;
      CaseRecord r = baseRecord(*items[batch[0]].suite, *items[batch[0]].kase, opts.backend);
      r.status = Status::Crash;
      r.error = "could not start a worker: " + error;
      onDone(batch[0], std::move(r));
      if (batch.size() > 1)
        requeue(std::vector<size_t>(batch.begin() + 1, batch.end()));
    }
    if (active.empty())
      continue;
    pollWorkers(active);
    for (Worker &w : active) {
      takeStderr(w);
      takeRecords(w, items, opts, onDone);
    }
    reapWorkers(active, items, opts, onDone, requeue);
  }
}

} // namespace

std::vector<CaseRecord> runSuites(const std::vector<LoadResult> &suites,
                                  const RunnerOptions &opts) {
  std::string unavailable;
  {
    std::string why;
    std::unique_ptr<Backend> b = createBackend(opts.backend, why);
    if (!b)
      unavailable = why;
    else if (!b->available(&why))
      unavailable = why.empty() ? "the " + opts.backend + " backend is not available" : why;
  }
  std::vector<WorkItem> items;
  for (const LoadResult &lr : suites)
    addSuiteItems(lr, opts, unavailable, items);
  std::vector<CaseRecord> records(items.size());
  Progress progress(opts.progress, items.size());
  if (opts.isolate) {
    runIsolated(items, opts, records, progress);
    return records;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    CaseRecord r = items[i].decided ? *items[i].decided : runInProcess(items[i], opts);
    finishRecord(items[i], opts, r);
    if (opts.known)
      applyKnownFailures(r, *opts.known);
    progress.done(r);
    records[i] = std::move(r);
  }
  return records;
}

} // namespace tc::conf
