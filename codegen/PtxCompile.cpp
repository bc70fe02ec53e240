// PTX -> cubin with ptxas processes (PtxCompile.h).
#include "codegen/PtxCompile.h"

#include "codegen/Codegen.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace tc::codegen {
namespace {

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream os(path, std::ios::binary);
  os.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(os);
}

std::string readFile(const std::string &path) {
  std::ifstream is(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
}

} // namespace

std::string ptxasArchFlag(const std::string &ptx, unsigned deviceSm) {
  std::string sm = "sm_" + std::to_string(deviceSm);
  bool archSpecific = ptx.find(".target " + sm + "a") != std::string::npos;
  return "-arch=" + sm + (archSpecific ? "a" : "");
}

PtxasJob::~PtxasJob() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  cleanup();
}

void PtxasJob::cleanup() {
  if (dir_.empty())
    return;
  for (const char *f : {"/in.ptx", "/out.cubin", "/log"})
    ::unlink((dir_ + f).c_str());
  ::rmdir(dir_.c_str());
  dir_.clear();
}

bool PtxasJob::start(const std::string &ptx, unsigned deviceSm, int jitOptLevel,
                     std::string &error, int splitThreads) {
  if (pid_ > 0) {
    error = "a ptxas job is already running";
    return false;
  }
  cleanup();
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    error = ptxasMissing();
    return false;
  }
  const char *tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/tc-cubin-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = "cannot create a temporary folder for ptxas: " + std::string(std::strerror(errno));
    return false;
  }
  dir_ = buf.data();
  if (!writeFile(dir_ + "/in.ptx", ptx)) {
    error = "cannot write the PTX for ptxas to " + dir_;
    cleanup();
    return false;
  }
  std::vector<std::string> args = {ptxas, ptxasArchFlag(ptx, deviceSm)};
  // The driver's levels 0..4 (4, its default, is the highest): ptxas's 0..3.
  if (jitOptLevel >= 0)
    args.push_back("-O" + std::to_string(std::min(jitOptLevel, 3)));
  if (splitThreads > 1)
    args.insert(args.end(), {"--split-compile", std::to_string(splitThreads)});
  args.insert(args.end(), {"-o", dir_ + "/out.cubin", dir_ + "/in.ptx"});
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  std::string logPath = dir_ + "/log";
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  startedAt_ = nowMs();
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, ptxas.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    error = "cannot run " + ptxas + ": " + std::strerror(rc);
    cleanup();
    return false;
  }
  pid_ = pid;
  return true;
}

bool PtxasJob::wait(std::string &image, std::string &log) {
  image.clear();
  if (pid_ <= 0) {
    log = "no ptxas job was started";
    return false;
  }
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  ms_ = nowMs() - startedAt_;
  log = readFile(dir_ + "/log");
  bool ok = r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok)
    image = readFile(dir_ + "/out.cubin");
  else if (r > 0 && WIFSIGNALED(status))
    log += (log.empty() ? "" : "\n") + std::string("ptxas ended by signal ") +
           std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  else if (log.empty())
    log = "ptxas failed without a message";
  cleanup();
  if (ok && image.empty()) {
    log += (log.empty() ? "" : "\n") + std::string("ptxas wrote no cubin");
    return false;
  }
  return ok;
}

bool compileCubin(const std::string &ptx, unsigned deviceSm, int jitOptLevel, std::string &image,
                  std::string &log) {
  PtxasJob job;
  if (!job.start(ptx, deviceSm, jitOptLevel, log))
    return false;
  return job.wait(image, log);
}

std::optional<CubinArch> cubinArch(const std::string &image) {
  // ELF64 little-endian: e_ident[EI_CLASS] = 2, e_machine (offset 18) =
  // EM_CUDA (190), e_flags at offset 48. The CUDA ABI version is e_ident[8]:
  // before 8 the sm is e_flags' low byte, from 8 on (CUDA 13) bits 8..15.
  // `a` is not in e_flags (an sm_90 and an sm_90a cubin have the same ones):
  // ptxas's tool note records its command line, "-arch sm_90a".
  if (image.size() < 64 || image.compare(0, 4, "\x7f" "ELF") != 0 || image[4] != 2)
    return std::nullopt;
  auto u16 = [&](size_t at) {
    return static_cast<unsigned>(static_cast<unsigned char>(image[at])) |
           static_cast<unsigned>(static_cast<unsigned char>(image[at + 1])) << 8;
  };
  if (u16(18) != 190)
    return std::nullopt;
  uint32_t flags = u16(48) | u16(50) << 16;
  unsigned abi = static_cast<unsigned char>(image[8]);
  CubinArch a;
  a.sm = abi >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
  a.archSpecific = image.find("-arch sm_" + std::to_string(a.sm) + "a") != std::string::npos;
  return a;
}

} // namespace tc::codegen
