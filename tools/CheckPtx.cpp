//===- CheckPtx.cpp - `triton-conformance check-ptx` ---------------------===//
#include "tools/CheckPtx.h"

#include "codegen/Codegen.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tc::conf {

namespace {

enum class Outcome : char { Accepted = 'A', Rejected = 'R', Unsupported = 'U' };

/// One distinct kernel and the cases that use it.
struct KernelJob {
  CompileRequest req;
  unsigned numWarps = 4;
  std::string id;        // "suite/case [variant]" of the first case that uses it
  size_t otherCases = 0; // further cases (or variants) with the same kernel
};

struct KernelResult {
  Outcome outcome = Outcome::Accepted;
  std::string message;
};

using Clock = std::chrono::steady_clock;

/// A running child: the job it compiles, its pipes and its deadline.
struct Child {
  pid_t pid = -1;
  size_t job = 0;
  int resultFd = -1, errFd = -1;
  std::string result, err;
  Clock::time_point deadline;
  bool killed = false;
};

std::string jobKey(const CompileRequest &r, unsigned numWarps) {
  std::string key =
      r.path + '\0' + r.sourceText + '\0' + r.kernelName + '\0' + std::to_string(numWarps) + '\0';
  for (const auto &[name, value] : r.defines)
    key += name + '=' + value + '\0';
  for (const std::string &u : r.undefines)
    key += "-U" + u + '\0';
  for (const std::string &i : r.includeDirs)
    key += "-I" + i + '\0';
  return key;
}

/// The distinct kernels of every loaded suite's runnable cases, in suite order.
std::vector<KernelJob> collectJobs(const std::vector<LoadResult> &suites, const CheckPtxFlags &f) {
  std::vector<KernelJob> jobs;
  std::map<std::string, size_t> seen;
  for (const LoadResult &lr : suites) {
    if (!lr.suite)
      continue;
    for (const Case &c : lr.suite->cases) {
      if (c.expect.kind == ExpectKind::CompileError || !c.runsOn("gpu"))
        continue;
      unsigned warps = c.numWarps ? static_cast<unsigned>(*c.numWarps) : f.numWarps;
      for (const Variant &v : c.variants()) {
        CompileRequest req = c.compileRequest(v, *lr.suite);
        auto [it, fresh] = seen.emplace(jobKey(req, warps), jobs.size());
        if (!fresh) {
          ++jobs[it->second].otherCases;
          continue;
        }
        std::string id =
            lr.suite->name + "/" + c.name + (v.label.empty() ? "" : " [" + v.label + "]");
        jobs.push_back({std::move(req), warps, std::move(id), 0});
      }
    }
  }
  return jobs;
}

/// Frontend, codegen and ptxas for one kernel (runs in a child process).
KernelResult checkKernel(const KernelJob &job, const CheckPtxFlags &f) {
  CompileOutcome k = compileKernel(job.req);
  if (!k.ok())
    return {Outcome::Rejected, "frontend: " + k.diagnostics};
  codegen::Options o;
  o.numWarps = job.numWarps;
  o.numStages = f.numStages;
  o.sm = f.sm;
  o.alignedPointers = true; // as the GPU backend compiles (it passes whole allocations)
  std::string optError; // checked when the command starts
  codegen::disableOptimizations(o, f.disableOpt, optError);
  codegen::Result r = codegen::compile(k.kernel->module(), k.kernel->function(), o);
  if (!r.ok())
    return {r.error.starts_with("not supported by the GPU backend") ? Outcome::Unsupported
                                                                    : Outcome::Rejected,
            "codegen: " + r.error};
  std::string log;
  if (!codegen::runPtxas(r.compiled->ptx, f.sm, log))
    return {Outcome::Rejected, "ptxas: " + log};
  return {};
}

void writeAll(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void childMain(const KernelJob &job, const CheckPtxFlags &f, int resultFd, int errFd,
                            const std::vector<Child> &others) {
  ::setpgid(0, 0); // a timeout kills the child with its ptxas
  for (const Child &c : others) {
    ::close(c.resultFd);
    ::close(c.errFd);
  }
  ::dup2(errFd, 2);
  KernelResult r;
  try {
    r = checkKernel(job, f);
  } catch (const std::exception &e) {
    r = {Outcome::Rejected, std::string("uncaught exception: ") + e.what()};
  }
  writeAll(resultFd, static_cast<char>(r.outcome) + r.message);
  ::_exit(0);
}

bool spawn(const std::vector<KernelJob> &jobs, size_t index, const CheckPtxFlags &f,
           std::vector<Child> &active) {
  int res[2], err[2];
  if (::pipe(res) != 0)
    return false;
  if (::pipe(err) != 0) {
    ::close(res[0]);
    ::close(res[1]);
    return false;
  }
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(res[0]);
    ::close(err[0]);
    childMain(jobs[index], f, res[1], err[1], active);
  }
  ::close(res[1]);
  ::close(err[1]);
  if (pid < 0) {
    ::close(res[0]);
    ::close(err[0]);
    return false;
  }
  ::setpgid(pid, pid);
  auto limit = std::chrono::duration<double>(f.timeout > 0 ? f.timeout : 1e9);
  active.push_back({pid, index, res[0], err[0], "", "",
                    Clock::now() + std::chrono::duration_cast<Clock::duration>(limit), false});
  return true;
}

/// Reads what is available on `fd`; closes it at end of file.
void drain(int &fd, std::string &buf) {
  char chunk[16384];
  ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    ::close(fd);
    fd = -1;
    return;
  }
  buf.append(chunk, static_cast<size_t>(n));
}

/// The result of a child whose pipes are closed.
KernelResult finish(Child &c, const CheckPtxFlags &f) {
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !c.result.empty())
    return {static_cast<Outcome>(c.result[0]), c.result.substr(1)};
  if (c.killed) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", f.timeout);
    return {Outcome::Rejected,
            std::string("timeout: no result after ") + secs + " s (codegen and ptxas); killed"};
  }
  std::string why = WIFSIGNALED(status)
                        ? "the compiler died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                              strsignal(WTERMSIG(status)) + ")"
                        : "the compiler exited with status " + std::to_string(WEXITSTATUS(status));
  std::string err = c.err.size() > 4000 ? "..." + c.err.substr(c.err.size() - 4000) : c.err;
  return {Outcome::Rejected, "crash: " + why + (err.empty() ? "" : "\n" + err)};
}

/// Waits for output of the running children and collects those that are done.
void pollChildren(std::vector<Child> &active, std::vector<KernelResult> &results, size_t &done,
                  const CheckPtxFlags &f) {
  std::vector<pollfd> fds;
  for (const Child &c : active)
    for (int fd : {c.resultFd, c.errFd})
      if (fd >= 0)
        fds.push_back({fd, POLLIN, 0});
  if (!fds.empty() && ::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR)
    return;
  for (Child &c : active) {
    for (const pollfd &p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      if (p.fd == c.resultFd)
        drain(c.resultFd, c.result);
      else if (p.fd == c.errFd)
        drain(c.errFd, c.err);
    }
  }
  for (Child &c : active)
    if (!c.killed && Clock::now() > c.deadline) {
      ::kill(-c.pid, SIGKILL);
      c.killed = true;
    }
  for (size_t i = 0; i < active.size();) {
    if (active[i].resultFd >= 0 || active[i].errFd >= 0) {
      ++i;
      continue;
    }
    results[active[i].job] = finish(active[i], f);
    ++done;
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

/// Runs every job in at most `f.jobs` children at once.
std::vector<KernelResult> runJobs(const std::vector<KernelJob> &jobs, const CheckPtxFlags &f) {
  std::vector<KernelResult> results(jobs.size());
  unsigned width = f.jobs ? f.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Child> active;
  size_t next = 0, done = 0, reported = 0;
  while (done < jobs.size()) {
    while (next < jobs.size() && active.size() < width) {
      if (!spawn(jobs, next, f, active)) { // no fork: check it in this process
        results[next] = checkKernel(jobs[next], f);
        ++done;
      }
      ++next;
    }
    pollChildren(active, results, done, f);
    if (!f.quiet && (done - reported >= std::max<size_t>(jobs.size() / 10, 1) ||
                     (done == jobs.size() && reported != done))) {
      std::cerr << "[" << done << "/" << jobs.size() << "]\n";
      reported = done;
    }
  }
  return results;
}

std::string indent(const std::string &text) {
  std::string out = "    ";
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size())
      out += "    ";
  }
  return out.ends_with('\n') ? out : out + "\n";
}

} // namespace

int checkPtxCommand(const std::vector<LoadResult> &suites, const CheckPtxFlags &f) {
  codegen::Options probe; // also the stages every kernel is compiled with
  probe.numStages = f.numStages;
  if (std::string error; !codegen::disableOptimizations(probe, f.disableOpt, error)) {
    std::cerr << "triton-conformance: error: --disable-opt: " << error << '\n';
    return 3;
  }
  if (codegen::findPtxas().empty()) {
    std::cout << "check-ptx skipped: " << codegen::ptxasMissing() << std::endl;
    return kCheckPtxSkipped;
  }
  size_t unloaded = 0;
  for (const LoadResult &lr : suites)
    unloaded += lr.suite ? lr.suite->invalid.size() : 1;
  std::vector<KernelJob> jobs = collectJobs(suites, f);
  std::vector<KernelResult> results = runJobs(jobs, f);
  size_t accepted = 0, rejected = 0, unsupported = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const KernelResult &r = results[i];
    accepted += r.outcome == Outcome::Accepted;
    rejected += r.outcome == Outcome::Rejected;
    unsupported += r.outcome == Outcome::Unsupported;
    if (r.outcome == Outcome::Accepted)
      continue;
    std::cout << (r.outcome == Outcome::Rejected ? "REJECTED: " : "UNSUPPORTED: ") << jobs[i].id
              << (jobs[i].otherCases ? " (and " + std::to_string(jobs[i].otherCases) + " more)"
                                     : "")
              << " num_warps=" << jobs[i].numWarps << " num_stages=" << probe.numStages << '\n'
              << indent(r.message);
  }
  if (unloaded)
    std::cerr << "note: " << unloaded
              << " suite files or cases did not load and were not checked "
                 "(see triton-conformance check)\n";
  std::cout << jobs.size() << " kernels, " << accepted << " accepted by ptxas, " << rejected
            << " rejected, " << unsupported << " not supported by the GPU backend" << std::endl;
  return rejected || (unsupported && !f.allowUnsupported) ? 1 : 0;
}

} // namespace tc::conf
