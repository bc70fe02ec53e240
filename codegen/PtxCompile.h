//===- PtxCompile.h - PTX to cubin with ptxas processes ------------------===//
//
// The offline path from PTX to a loadable image: a `ptxas` process (the one
// codegen::findPtxas finds) compiles the PTX for the device's exact
// architecture, and the caller loads the cubin with cuModuleLoadData
// (cuda::Context::loadImage) instead of having the driver JIT the PTX. The
// toolkit's nvPTXCompiler static library would do the same in-process; it is
// not used (not every toolkit ships it), so each compile is one process, and
// several run at once: PtxasJob starts one and returns at once, so the caller
// can launch kernels or start other compiles while it runs.
//
// What the driver would JIT: the driver compiles PTX for the device it loads
// on, so ptxas gets `-arch=sm_<device>` (sm_<device>a when the PTX targets the
// architecture-specific sm_<device>a, e.g. wgmma on sm_90) and the driver's
// default optimisation level (CU_JIT_OPTIMIZATION_LEVEL 4, its highest, is
// ptxas's -O3, ptxas's default); a JIT level 0..3 is -O0..-O3.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace tc::codegen {

/// ptxas's -arch for `ptx` loaded on a device of compute capability
/// `deviceSm` (90 for sm_90): "-arch=sm_90a" when the PTX targets sm_90a,
/// else "-arch=sm_<deviceSm>".
std::string ptxasArchFlag(const std::string &ptx, unsigned deviceSm);

/// One ptxas process compiling PTX to a cubin (in a fresh temporary folder,
/// removed by wait() or the destructor; a job not waited for is killed).
class PtxasJob {
public:
  PtxasJob() = default;
  PtxasJob(const PtxasJob &) = delete;
  PtxasJob &operator=(const PtxasJob &) = delete;
  ~PtxasJob();
  /// Starts ptxas on `ptx` for device sm `deviceSm` at the driver's JIT
  /// level `jitOptLevel` (-1: the driver's default); `splitThreads` > 1 adds
  /// `--split-compile N` (ptxas's own threads over the module's functions).
  /// False with `error` when no ptxas is found or it cannot be started.
  bool start(const std::string &ptx, unsigned deviceSm, int jitOptLevel, std::string &error,
             int splitThreads = 1);
  bool running() const { return pid_ > 0; }
  /// Waits for it: true with the cubin in `image`; `log` gets ptxas's messages
  /// (its rejection on false). Only once per start().
  bool wait(std::string &image, std::string &log);
  /// Milliseconds from start() to the end of wait().
  double ms() const { return ms_; }

private:
  void cleanup();
  pid_t pid_ = -1;
  std::string dir_;
  double startedAt_ = 0, ms_ = 0;
};

/// start() + wait(): PTX -> cubin for device sm `deviceSm`.
bool compileCubin(const std::string &ptx, unsigned deviceSm, int jitOptLevel, std::string &image,
                  std::string &log);

/// For a CUDA ELF image (a cubin): the sm it was compiled for (90 for sm_90
/// and sm_90a) and whether it is architecture-specific (`a`); nullopt for
/// anything that is not a 64-bit CUDA ELF file.
struct CubinArch {
  unsigned sm = 0;
  bool archSpecific = false;
};
std::optional<CubinArch> cubinArch(const std::string &image);

} // namespace tc::codegen
