// runSuites: which cases run, and running them in forked worker processes
// (one per case, `jobs` at once) so that crashes and hangs are contained.
//
// A worker runs one case (all its variants) with its stdin and stdout on
// /dev/null and its stderr on a pipe, writes its record as JSON to a second
// pipe and exits. The parent polls the pipes; a worker killed by a signal or
// exiting without a record gives a `crash` record (with the signal and the end
// of its stderr), one past its deadline is killed (SIGKILL) and gives `timeout`.
#include "conformance/Report.h"
#include "conformance/Runner.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
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
  r.reproduce = reproduceCommand(s.file, c.name);
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

// Progress on stderr: "[12/50] 1 failed", and one line per case that did not pass.
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
      std::string first = r.error.substr(0, r.error.find('\n'));
      *os_ << (tty_ ? "\r\033[K" : "") << status << ": " << r.suite << "/" << r.name << " ["
           << r.backend << "]" << (r.variant.empty() ? "" : " (" + r.variant + ")")
           << (first.empty() ? "" : ": " + first) << '\n';
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

// Runs one case in this process; an escaping exception becomes a `crash` record.
CaseRecord runItem(const WorkItem &item, const RunnerOptions &opts, double maxSeconds) {
  try {
    std::string why;
    std::unique_ptr<Backend> backend = createBackend(opts.backend, why);
    if (!backend)
      return skippedRecord(*item.suite, *item.kase, opts.backend, why);
    RunOptions ro;
    std::ostringstream sink; // print() output is not part of a record
    ro.out = &sink;
    ro.maxSeconds = maxSeconds;
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
  CaseRecord r = runItem(item, opts, opts.timeout);
  if (r.status == Status::Error && r.error.find("step_limit") != std::string::npos &&
      opts.timeout > 0 && r.time >= opts.timeout)
    r.status = Status::Timeout;
  return r;
}

// --- Isolated workers ---------------------------------------------------------

struct Worker {
  pid_t pid = -1;
  size_t item = 0;
  int resultFd = -1, errFd = -1;
  std::string result, err;
  Clock::time_point start, deadline;
};

void writeAll(int fd, const std::string &s) {
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

[[noreturn]] void childMain(const WorkItem &item, const RunnerOptions &opts, int resultFd,
                            int errFd, const std::vector<Worker> &others) {
  for (const Worker &w : others) {
    close(w.resultFd);
    close(w.errFd);
  }
  int devnull = open("/dev/null", O_RDWR);
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(errFd, 2);
  CaseRecord r = runItem(item, opts, 0);
  writeAll(resultFd, recordToJsonText(r));
  _exit(0);
}

bool spawn(const std::vector<WorkItem> &items, size_t index, const RunnerOptions &opts,
           std::vector<Worker> &active, std::string &error) {
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
    childMain(items[index], opts, res[1], err[1], active);
  }
  close(res[1]);
  close(err[1]);
  Worker w;
  w.pid = pid;
  w.item = index;
  w.resultFd = res[0];
  w.errFd = err[0];
  w.start = Clock::now();
  w.deadline = opts.timeout > 0 ? w.start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(opts.timeout))
                                : Clock::time_point::max();
  active.push_back(std::move(w));
  return true;
}

std::string tail(const std::string &s) {
  return s.size() <= kStderrTail ? s : "..." + s.substr(s.size() - kStderrTail);
}

// The record of a worker that has finished (`status` from waitpid) or was killed.
CaseRecord finish(const WorkItem &item, const RunnerOptions &opts, Worker &w, int status,
                  bool killed) {
  double elapsed = std::chrono::duration<double>(Clock::now() - w.start).count();
  std::string perr;
  if (!killed && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    if (std::optional<CaseRecord> r = recordFromJsonText(w.result, perr))
      return *r;
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
    r.status = Status::Crash;
    r.error = "the worker exited with status " + std::to_string(WEXITSTATUS(status)) +
              " without a result" + (perr.empty() ? "" : " (" + perr + ")");
  }
  if (!w.err.empty())
    r.error += "\nworker stderr:\n" + tail(w.err);
  return r;
}

// Reads what is available on `fd` into `buf`; closes it at end of file.
void drain(int &fd, std::string &buf, bool capTail) {
  char chunk[65536];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    close(fd);
    fd = -1;
    return;
  }
  buf.append(chunk, static_cast<size_t>(n));
  if (capTail && buf.size() > 4 * kStderrTail)
    buf.erase(0, buf.size() - 2 * kStderrTail);
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
      drain(w.resultFd, w.result, false);
    else
      drain(w.errFd, w.err, true);
  }
}

void closeFds(Worker &w) {
  for (int *fd : {&w.resultFd, &w.errFd})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
}

// Collects the workers that are done or past their deadline.
template <typename OnDone>
void reapWorkers(std::vector<Worker> &active, const std::vector<WorkItem> &items,
                 const RunnerOptions &opts, OnDone onDone) {
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
    closeFds(w);
    onDone(w.item, finish(items[w.item], opts, w, status, killed));
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void runIsolated(const std::vector<WorkItem> &items, const RunnerOptions &opts,
                 std::vector<CaseRecord> &records, Progress &progress) {
  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worker> active;
  size_t next = 0;
  auto onDone = [&](size_t index, CaseRecord r) {
    if (opts.known)
      applyKnownFailures(r, *opts.known);
    progress.done(r);
    records[index] = std::move(r);
  };
  while (next < items.size() || !active.empty()) {
    while (active.size() < jobs && next < items.size()) {
      size_t index = next++;
      if (items[index].decided) {
        onDone(index, *items[index].decided);
        continue;
      }
      std::string error;
      if (!spawn(items, index, opts, active, error)) {
        CaseRecord r = baseRecord(*items[index].suite, *items[index].kase, opts.backend);
        r.status = Status::Crash;
        r.error = "could not start a worker: " + error;
        onDone(index, std::move(r));
      }
    }
    if (active.empty())
      continue;
    pollWorkers(active);
    reapWorkers(active, items, opts, onDone);
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
    if (opts.known)
      applyKnownFailures(r, *opts.known);
    progress.done(r);
    records[i] = std::move(r);
  }
  return records;
}

} // namespace tc::conf
