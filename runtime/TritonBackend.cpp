// The triton backend: translation (tritonpy/) plus a Python worker process
// over a socket, one JSON object per line (python/triton_c/triton_worker.py).
#include "runtime/TritonBackend.h"

#include "support/DType.h"
#include "tritonpy/TritonPy.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tc {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(const uint8_t *p, size_t n) {
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t(p[i]) << 16) | (uint32_t(p[i + 1]) << 8) | p[i + 2];
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t(p[i]) << 16;
    if (i + 1 < n)
      v |= uint32_t(p[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < n ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool base64Decode(const std::string &s, std::vector<uint8_t> &out) {
  static int8_t rev[256];
  static bool init = false;
  if (!init) {
    std::memset(rev, -1, sizeof rev);
    for (int i = 0; i < 64; ++i)
      rev[static_cast<uint8_t>(kB64[i])] = static_cast<int8_t>(i);
    init = true;
  }
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=')
      break;
    int8_t v = rev[static_cast<uint8_t>(c)];
    if (v < 0)
      return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return true;
}

/// The folder of the running executable.
fs::path exeDir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

/// A python/ folder holding triton_c/triton_worker.py near the executable
/// (build/bin/ of a checkout: ../../python), or "".
fs::path findPackageDir() {
  fs::path d = exeDir();
  for (fs::path cand : {d / ".." / ".." / "python", d / ".." / "python"}) {
    std::error_code ec;
    if (fs::exists(cand / "triton_c" / "triton_worker.py", ec))
      return fs::weakly_canonical(cand, ec);
  }
  return {};
}

std::string findPython(const std::string &given, const fs::path &packageDir) {
  if (!given.empty())
    return given;
  if (const char *env = std::getenv("TC_TRITON_PYTHON"); env && *env)
    return env;
  if (!packageDir.empty()) {
    std::error_code ec;
    fs::path venv = packageDir.parent_path() / ".venv" / "bin" / "python";
    if (fs::exists(venv, ec))
      return venv.string();
  }
  return "python3";
}

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

/// One worker process.
class Worker {
public:
  ~Worker() { stop(); }
  bool running() const { return pid_ > 0; }

  bool start(const std::string &python, const fs::path &packageDir, const std::string &mode,
             const std::map<std::string, std::string> &env, std::string &error) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      error = std::string("socketpair: ") + std::strerror(errno);
      return false;
    }
    char tmpl[] = "/tmp/tc-triton-worker-stderr-XXXXXX";
    int errFd = mkostemp(tmpl, O_CLOEXEC);
    if (errFd >= 0)
      unlink(tmpl);
    std::string pythonPath = packageDir.string();
    if (const char *old = std::getenv("PYTHONPATH"); old && *old)
      pythonPath = pythonPath.empty() ? old : pythonPath + ":" + old;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
      error = std::string("fork: ") + std::strerror(errno);
      close(sv[0]);
      close(sv[1]);
      if (errFd >= 0)
        close(errFd);
      return false;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the tool
      if (getppid() != parent)
        _exit(127);
      dup2(sv[1], 0);
      dup2(sv[1], 1);
      if (errFd >= 0)
        dup2(errFd, 2);
      if (!pythonPath.empty())
        setenv("PYTHONPATH", pythonPath.c_str(), 1);
      setenv("PYTHONUNBUFFERED", "1", 1);
      if (mode == "interpret")
        setenv("TRITON_INTERPRET", "1", 1);
      for (const auto &[name, value] : env)
        setenv(name.c_str(), value.c_str(), 1);
      execlp(python.c_str(), python.c_str(), "-m", "triton_c.triton_worker", "--mode",
             mode.c_str(), static_cast<char *>(nullptr));
      dprintf(2, "cannot run %s: %s\n", python.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(sv[1]);
    fd_ = sv[0];
    errFd_ = errFd;
    pid_ = pid;
    buffer_.clear();
    return true;
  }

  void stop() {
    if (fd_ >= 0)
      close(fd_);
    fd_ = -1;
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
    }
    pid_ = 0;
    if (errFd_ >= 0)
      close(errFd_);
    errFd_ = -1;
  }

  /// Reaps the worker after its end of the socket closed: how it ended and
  /// the tail of what it wrote on stderr.
  std::string death(const std::string &note = "") {
    std::string how = "ended";
    if (pid_ > 0) {
      int st = 0;
      if (waitpid(pid_, &st, 0) == pid_)
        how = describeExit(st);
      pid_ = 0;
    }
    std::string tail = stderrTail();
    stop();
    return "the triton worker " + how + note +
           (tail.empty() ? "" : "; its stderr ends with:\n" + tail);
  }

  std::string stderrTail(size_t max = 3000) const {
    if (errFd_ < 0)
      return "";
    struct stat st;
    if (fstat(errFd_, &st) != 0 || st.st_size == 0)
      return "";
    size_t n = std::min<size_t>(max, static_cast<size_t>(st.st_size));
    std::string s(n, '\0');
    ssize_t got = pread(errFd_, s.data(), n, st.st_size - static_cast<off_t>(n));
    s.resize(got > 0 ? static_cast<size_t>(got) : 0);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
      s.pop_back();
    return s;
  }

  bool send(const std::string &line) {
    size_t off = 0;
    while (off < line.size()) {
      ssize_t n = ::send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  enum class Read { Line, Eof, Timeout };
  /// One line (without the newline), waiting at most `seconds` (0: forever).
  Read readLine(double seconds, std::string &line) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return Read::Line;
      }
      int waitMs = -1;
      if (seconds > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0)
          return Read::Timeout;
        waitMs = static_cast<int>(std::min<long long>(left, 1000));
      }
      struct pollfd p{fd_, POLLIN, 0};
      int r = poll(&p, 1, waitMs < 0 ? 1000 : waitMs);
      if (r < 0 && errno != EINTR)
        return Read::Eof;
      if (r <= 0)
        continue;
      char buf[65536];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return Read::Eof;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

private:
  pid_t pid_ = 0;
  int fd_ = -1, errFd_ = -1;
  std::string buffer_;
};

constexpr const char *kRestart = " (a new one starts with the next kernel)";

class TritonBackendImpl final : public TritonBackend {
public:
  explicit TritonBackendImpl(TritonOptions opts) : opts_(std::move(opts)) {
    packageDir_ = findPackageDir();
    python_ = findPython(opts_.python, packageDir_);
  }

  std::string name() const override { return "triton"; }
  std::string description() const override { return description_; }
  void setNumWarps(unsigned w) override { opts_.numWarps = w; }
  void setLaunchOptions(const TritonOptions &o) override {
    if (o.dotInputPrecision != opts_.dotInputPrecision || o.numWarps != opts_.numWarps)
      cache_.clear(); // the translation depends on them
    opts_.numWarps = o.numWarps;
    opts_.numStages = o.numStages;
    opts_.fpFusion = o.fpFusion;
    opts_.dotInputPrecision = o.dotInputPrecision;
  }

  bool available(std::string *why) const override {
    auto *self = const_cast<TritonBackendImpl *>(this);
    if (!self->ensureWorker()) {
      if (why)
        *why = startError_;
      return false;
    }
    return true;
  }

  RunResult launch(const CompiledKernel &kernel, std::array<int64_t, 3> grid, LaunchArgs &args,
                   const RunOptions &opts) override {
    RunResult r;
    auto fail = [&](std::string e) {
      r.status = RunResult::Status::Error;
      r.error = std::move(e);
      return r;
    };
    auto trapped = [&](Trap t) {
      r.status = RunResult::Status::Trapped;
      r.trap = std::move(t);
      return r;
    };
    if (auto t = checkLaunchArguments(kernel, args))
      return trapped(std::move(*t));
    if (auto t = checkScalarClaims(kernel, args))
      return trapped(std::move(*t));
    if (auto t = checkLaunchGrid(kernel, grid))
      return trapped(std::move(*t));
    unsigned warps = opts.numWarps.value_or(opts_.numWarps); // a case's own num_warps first
    const std::string *source = translated(kernel, warps, r.error);
    if (!source)
      return fail(r.error);

    // The arrays (each once, however many parameters point into it), then the
    // arguments in parameter order.
    const ir::Function &fn = kernel.function();
    std::vector<HostArray *> arrays;
    std::map<HostArray *, size_t> index;
    Json jargs = Json::array();
    for (unsigned i = 0; i < fn.numParams(); ++i) {
      const ir::Type &t = fn.param(i)->type();
      const std::string &pn = fn.paramName(i);
      if (t.isPtr) {
        HostArray *a = args.buffer(pn);
        if (a->device)
          return fail("the triton backend takes host arrays (buffer '" + pn + "' is on the GPU)");
        auto [it, fresh] = index.emplace(a, arrays.size());
        if (fresh)
          arrays.push_back(a);
        Json j = {{"array", it->second}};
        uint64_t elem = byteSize(a->dtype);
        if (a->origin)
          j["offset"] = a->origin / elem;
        jargs.push_back(j);
      } else {
        const ScalarValue *v = args.scalar(pn);
        std::optional<uint64_t> bits = scalarArgumentBits(*v, t.dtype);
        if (!bits)
          return fail("scalar argument '" + pn + "' does not fit its parameter type");
        unsigned w = bitWidth(t.dtype);
        uint64_t u = *bits & (w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1);
        int64_t s = w >= 64 || !(u >> (w - 1)) ? static_cast<int64_t>(u)
                                                 : static_cast<int64_t>(u) - (int64_t(1) << w);
        if (t.dtype == DType::Bool)
          jargs.push_back({{"value", u ? 1 : 0}});
        else if (isUnsignedInt(t.dtype))
          jargs.push_back({{"value", u}});
        else
          jargs.push_back({{"value", s}}); // floats: the bit pattern as a signed integer
      }
    }
    Json jarrays = Json::array();
    for (HostArray *a : arrays)
      jarrays.push_back({{"dtype", std::string(tritonpy::paramDTypeName(a->dtype))},
                         {"data", base64Encode(a->bytes(), a->byteCount())}});
    Json req = {{"source", *source},
                {"grid", {grid[0], grid[1], grid[2]}},
                {"num_warps", warps},
                {"num_stages", opts_.numStages},
                {"arrays", std::move(jarrays)},
                {"args", std::move(jargs)}};
    if (opts_.fpFusion)
      req["options"] = {{"enable_fp_fusion", *opts_.fpFusion}};
    if (!ensureWorker())
      return fail(startError_);
    double timeout = opts.maxSeconds > 0 ? opts.maxSeconds : opts_.timeout;
    std::string line;
    if (!worker_.send(req.dump() + "\n"))
      return fail(worker_.death(kRestart));
    switch (worker_.readLine(timeout, line)) {
    case Worker::Read::Line: break;
    case Worker::Read::Eof: return fail(worker_.death(kRestart));
    case Worker::Read::Timeout: {
      std::string tail = worker_.stderrTail(1000);
      worker_.stop();
      return fail("the triton worker did not finish the launch within " +
                  std::to_string(static_cast<int>(timeout)) +
                  " s: killed (a new one starts with the next kernel)" +
                  (tail.empty() ? "" : "; its stderr ends with:\n" + tail));
    }
    }
    Json reply = Json::parse(line, nullptr, false);
    if (reply.is_discarded() || !reply.is_object())
      return fail("the triton worker answered something that is not JSON: " + line.substr(0, 200));
    if (!reply.value("ok", false))
      return fail("Triton: " + reply.value("error", std::string("failed without a message")));
    const Json &outs = reply["arrays"];
    if (!outs.is_array() || outs.size() != arrays.size())
      return fail("the triton worker returned " + std::to_string(outs.size()) + " arrays, not " +
                  std::to_string(arrays.size()));
    std::vector<uint8_t> bytes;
    for (size_t k = 0; k < arrays.size(); ++k) {
      if (!outs[k].is_string() || !base64Decode(outs[k].get<std::string>(), bytes) ||
          bytes.size() != arrays[k]->byteCount())
        return fail("the triton worker returned array " + std::to_string(k) + " with " +
                    std::to_string(bytes.size()) + " bytes, not " +
                    std::to_string(arrays[k]->byteCount()));
      if (!bytes.empty())
        std::memcpy(arrays[k]->bytes(), bytes.data(), bytes.size());
    }
    r.seconds = reply.value("seconds", 0.0);
    return r;
  }

private:
  TritonOptions opts_;
  fs::path packageDir_;
  std::string python_, description_, startError_;
  Worker worker_;
  // (kernel id, num_warps) -> (code, error)
  std::map<std::pair<uint64_t, unsigned>, std::pair<std::string, std::string>> cache_;

  const std::string *translated(const CompiledKernel &k, unsigned warps, std::string &error) {
    auto it = cache_.find({k.id(), warps});
    if (it == cache_.end()) {
      tritonpy::Options to;
      to.numWarps = warps;
      to.dotInputPrecision = opts_.dotInputPrecision;
      tritonpy::Result t = tritonpy::translate(k.module(), k.function(), to);
      it = cache_.emplace(std::make_pair(k.id(), warps), std::make_pair(t.code, t.error)).first;
    }
    if (!it->second.second.empty()) {
      error = it->second.second;
      return nullptr;
    }
    return &it->second.first;
  }

  /// Starts a worker unless one runs; a worker that cannot start here (no
  /// triton, no torch, no GPU in gpu mode) is remembered, not retried.
  bool ensureWorker() {
    if (worker_.running())
      return true;
    if (!startError_.empty() && description_.empty())
      return false;
    std::string error;
    if (!worker_.start(python_, packageDir_, opts_.mode, opts_.env, error)) {
      startError_ = "cannot start the triton worker: " + error;
      return false;
    }
    std::string line;
    Worker::Read rd = worker_.readLine(180, line);
    if (rd != Worker::Read::Line) {
      std::string what = rd == Worker::Read::Timeout
                             ? "did not start within 180 s"
                             : worker_.death();
      if (rd == Worker::Read::Timeout)
        worker_.stop();
      startError_ = "the triton backend's worker (" + python_ +
                    " -m triton_c.triton_worker) " + what;
      if (packageDir_.empty() && line.empty())
        startError_ += " (is the triton_c package installed for " + python_ + "?)";
      return false;
    }
    Json ready = Json::parse(line, nullptr, false);
    if (ready.is_discarded() || !ready.value("ready", false)) {
      startError_ = ready.is_object() ? ready.value("error", line) : "the triton worker said: " + line;
      worker_.stop();
      return false;
    }
    std::string mode = ready.value("mode", std::string("?"));
    description_ = "Triton " + ready.value("triton", std::string("?")) +
                   (mode == "gpu" ? " on " + ready.value("device", std::string("the GPU"))
                                  : std::string(" interpreter (TRITON_INTERPRET=1)")) +
                   ", torch " + ready.value("torch", std::string("?")) + ", Python " +
                   ready.value("python", std::string("?"));
    if (ready.value("matmul_drops_nan", false))
      description_ += std::string(", ") + kMatmulDropsNan;
    startError_.clear();
    return true;
  }
};

} // namespace

std::unique_ptr<TritonBackend> createTritonBackend(const TritonOptions &opts) {
  return std::make_unique<TritonBackendImpl>(opts);
}

bool isTritonUnsupported(const std::string &error) {
  return error.starts_with(tritonpy::kUnsupported);
}

} // namespace tc
