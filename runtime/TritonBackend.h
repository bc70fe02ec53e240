//===- TritonBackend.h - Triton (the Python DSL) as a backend -----------===//
//
// Runs kernels with Triton: each kernel is translated to a Triton Python
// module (tritonpy/TritonPy.h) and run by a worker process,
// `python -m triton_c.triton_worker`, that the backend starts on first use and
// sends every launch to over a line-per-message JSON protocol (the worker's
// docstring), so Python, torch and Triton start once and Triton's compile cache
// serves every kernel. A worker that crashes is replaced at the next launch; one
// that does not answer within the timeout is killed (the launch is an Error).
// Modes: Triton on the GPU, or Triton's interpreter (TRITON_INTERPRET=1, no
// GPU); "auto" takes the GPU when torch sees one.
//
// The worker's Python: $TC_TRITON_PYTHON, else the checkout's .venv/bin/python
// next to the python/ folder the tool finds, else python3. The package
// triton_c comes from that python/ folder (a build tree's checkout) or from
// the environment (a wheel).
//
// The backend reports no traps (the reference interpreter does); kernels that
// Triton cannot express are Errors whose message starts with
// tritonpy::kUnsupported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tc {

struct TritonOptions {
  std::string mode = "auto"; // "auto", "gpu" or "interpret"
  std::string python;        // the Python to run; "" : as the header says
  unsigned numWarps = 4;
  unsigned numStages = 3;
  double timeout = 300; // seconds a launch (with its compile) may take; RunOptions::maxSeconds wins
  /// Set in the worker's environment (Triton's switches, e.g. DISABLE_LLVM_OPT=1).
  std::map<std::string, std::string> env;
  std::optional<bool> fpFusion;           // the launch's enable_fp_fusion (unset: Triton's default)
  std::string dotInputPrecision = "ieee"; // tl.dot of fp32 (tritonpy::Options)
};

/// Said at the end of description() when the worker's NumPy (Triton's
/// interpreter's tl.dot is np.matmul) loses NaN * 0 and inf * 0 products: its
/// BLAS skips zero multiplicands in some operand layouts.
inline constexpr const char *kMatmulDropsNan = "NumPy's matmul drops NaN * 0 (its BLAS skips zeros)";

class TritonBackend : public Backend {
public:
  /// What runs the kernels once the worker started ("Triton 3.6.0 (interpreter,
  /// torch 1.13.0, Python 3.11.2)"), else "".
  virtual std::string description() const = 0;
  virtual void setNumWarps(unsigned w) = 0;
  /// Other launch settings (num_warps, num_stages, fpFusion, dotInputPrecision)
  /// for the next launches, in the same worker (`env` and `mode` stay).
  virtual void setLaunchOptions(const TritonOptions &opts) = 0;
};

std::unique_ptr<TritonBackend> createTritonBackend(const TritonOptions &opts = {});

/// Whether `error` (RunResult::error) is a kernel the triton backend does not
/// translate (outside the comparable subset) rather than a failure.
bool isTritonUnsupported(const std::string &error);

} // namespace tc
