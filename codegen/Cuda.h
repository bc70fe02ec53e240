//===- Cuda.h - The CUDA driver API, loaded at run time ------------------===//
//
// Nothing links libcuda: the entry points are looked up with
// dlopen("libcuda.so.1") / dlsym into one table the first time a device is
// opened. Every failing CUresult becomes a cuda::Error whose message names the
// call and the driver's error name and text, e.g.
//   "cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)".
// Without a driver or a device, available() says "no CUDA device: ...".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tc::cuda {

/// A failed driver call. `code` is the CUresult; `sticky` is true for errors
/// that leave CUDA unusable (illegal address, trap, assert, launch failure,
/// ...): not only the context but the whole process, since the driver then
/// refuses new contexts; only a new process can use the GPU again.
class Error : public std::runtime_error {
public:
  Error(const std::string &what, int code, bool sticky)
      : std::runtime_error(what), code_(code), sticky_(sticky) {}
  int code() const { return code_; }
  bool sticky() const { return sticky_; }

private:
  int code_;
  bool sticky_;
};

/// CUresult values the callers distinguish.
inline constexpr int kErrorAssert = 710;           // CUDA_ERROR_ASSERT
inline constexpr int kErrorIllegalAddress = 700;   // CUDA_ERROR_ILLEGAL_ADDRESS
inline constexpr int kErrorLaunchTimeout = 702;    // CUDA_ERROR_LAUNCH_TIMEOUT
inline constexpr int kErrorNotSupported = 801;     // CUDA_ERROR_NOT_SUPPORTED

/// How Context::load turns PTX into a module: the driver's JIT
/// (cuModuleLoadDataEx of the PTX, the default), or a `ptxas` process
/// compiling it for the device's exact sm (codegen/PtxCompile.h) and
/// cuModuleLoadData of the cubin. A ptxas process costs about 18 ms of CPU
/// before it compiles anything (its start-up), so Auto takes ptxas only for
/// modules where that pays or its log is wanted: several kernels (a batch),
/// or PTX for an architecture-specific target (sm_90a: wgmma, whose ptxas
/// notes the fuzzer reads); the JIT for the rest. Process-wide; the default
/// comes from $TC_CUBIN ("driver", "ptxas" or "auto").
enum class ImageMode { Driver, Ptxas, Auto };
ImageMode imageMode();
void setImageMode(ImageMode mode);
/// Whether Context::load gives `ptx` to ptxas in `mode`.
bool usesPtxas(ImageMode mode, const std::string &ptx);
/// "driver" / "ptxas" / "auto" -> the mode; false for any other text.
bool parseImageMode(const std::string &text, ImageMode &mode);
const char *imageModeName(ImageMode mode);

/// What the calling thread's last Context::load did (its `seq` counts the
/// loads of this thread, so a caller sees whether a call loaded anything).
/// With ImageMode::Ptxas: ptxas's time and messages (e.g. its "(C7517)
/// warpgroup.wait is injected" note), and `jitFallback` when the driver
/// refused the cubin and the PTX was JIT-compiled instead (`fallbackWhy`).
struct LoadReport {
  uint64_t seq = 0;
  bool cubin = false;
  double ptxasMs = 0; // the ptxas process
  double loadMs = 0;  // cuModuleLoadData (the JIT included in driver mode)
  std::string ptxasLog;
  bool jitFallback = false;
  std::string fallbackWhy;
};
const LoadReport &lastLoad();

/// With reuse on, a (non-primary) Context's destructor keeps its CUDA
/// context and stream, and the next Context::create for that device takes
/// them instead of creating new ones (cuCtxCreate takes a noticeable time):
/// one context per process for a caller that drops and re-creates Contexts
/// to free their modules. Its modules and buffers must be gone (destroyed
/// before the Context, as always). After a sticky error nothing is reused.
void setContextReuse(bool on);
bool contextReuse();
/// How many contexts Context::create made in this process (taken ones not
/// counted), and how many are kept for reuse now.
uint64_t contextsCreated();
size_t parkedContexts();

/// Whether the driver loads and reports at least one device.
bool available(std::string *why);
int deviceCount(); // 0 when unavailable

class Module;
class Function;

/// A device buffer (cuMemAlloc); freed by the destructor.
class Buffer {
public:
  Buffer() = default;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept;
  Buffer &operator=(Buffer &&o) noexcept;
  ~Buffer();
  uint64_t address() const { return ptr_; }
  size_t size() const { return size_; }

private:
  friend class Context;
  uint64_t ptr_ = 0;
  size_t size_ = 0;
};

/// A loaded module (cuModuleLoadData); unloaded by the destructor.
class Module {
public:
  ~Module();
  /// cuModuleGetFunction. The returned handle lives as long as the module.
  void *function(const std::string &name);

private:
  friend class Context;
  void *mod_ = nullptr;
};

/// A context on one device, current on the calling thread while in use
/// (the primary context is not used, so a poisoned context can be dropped
/// and a fresh one created). Not thread-safe.
class Context {
public:
  /// Throws Error; message starts with "no CUDA device" when there is none.
  static std::unique_ptr<Context> create(int ordinal);
  /// The device's primary context (the one the CUDA runtime and PyTorch use),
  /// retained until the destructor releases it; device pointers of other
  /// libraries' allocations are valid in it.
  static std::unique_ptr<Context> createPrimary(int ordinal);
  ~Context();

  /// The stream that launch(), synchronize() and eventRecord() use from now
  /// on: a caller's CUstream, or nullptr for the context's own stream.
  void setStream(void *stream) { userStream_ = stream; }
  bool primary() const { return primary_; }

  std::string deviceName() const;
  int computeCapability() const;      // 90 for sm_90
  size_t maxSharedPerBlockOptin() const;
  int multiprocessorCount() const;

  /// PTX -> module; JIT errors are in the Error message (the driver's log).
  /// `optLevel` 0..4 is ptxas's optimisation level (-1: the driver's default).
  /// With ImageMode::Ptxas the PTX goes through ptxas for this device's sm
  /// at that level (PtxCompile.h) and the cubin is loaded: ptxas's rejection
  /// is an Error (CUDA_ERROR_INVALID_PTX, not sticky) with its log; a cubin
  /// the driver refuses is JIT-compiled from the PTX instead (lastLoad() says so).
  /// `driverJit`: the driver's JIT whatever the image mode.
  std::unique_ptr<Module> load(const std::string &ptx, int optLevel = -1, bool driverJit = false);
  /// A compiled image (a cubin for this device's sm) -> module, no JIT.
  std::unique_ptr<Module> loadImage(const std::string &image);

  Buffer alloc(size_t bytes);         // bytes == 0 gives a 256-byte buffer
  void upload(const Buffer &dst, const void *src, size_t bytes);
  void download(void *dst, const Buffer &src, size_t bytes);
  void memset(const Buffer &dst, uint8_t value, size_t bytes);

  /// cuLaunchKernel on the context's stream; `params` holds a pointer to each
  /// argument's value (as cuLaunchKernel wants). Raises the function's dynamic
  /// shared memory limit first when sharedBytes > 48 KiB.
  void launch(void *function, std::array<unsigned, 3> grid, unsigned blockThreads,
              size_t sharedBytes, void **params);
  /// Waits for the stream; a kernel fault surfaces here as a sticky Error.
  /// With timeoutSeconds > 0, polls and throws Error(kErrorLaunchTimeout,
  /// sticky) when the kernel runs longer.
  void synchronize(double timeoutSeconds = 0);

  /// CUDA events on the context's stream, for timing.
  void *eventCreate();
  void eventDestroy(void *event);
  void eventRecord(void *event);
  float eventElapsedMs(void *start, void *end); // synchronises on `end`

private:
  Context() = default;
  void *ctx_ = nullptr;
  void *stream_ = nullptr;
  void *userStream_ = nullptr;
  bool primary_ = false;
  int device_ = 0;
  void *activeStream() const { return userStream_ ? userStream_ : stream_; }
};

/// A CUtensorMap: what a kernel's hidden tensor-map parameter takes (option
/// "tma", codegen::TensorMapParam), passed by value (`.param .align 64 .b8
/// [128]`).
struct alignas(64) TensorMap {
  std::array<uint64_t, 16> words{};
};

/// Rows of every tensor map's 2-D view: row coordinates are below it (the
/// kernel copies a tile with the map only when its last row is).
inline constexpr uint64_t kTensorMapRows = (uint64_t(1) << 31) - 1;

/// Whether a tensor map over `address` with rows of `ld` elements of
/// `elemBytes` bytes can be encoded: the address 16-byte aligned, 0 < ld <
/// 2^31 (column coordinates are 32-bit), the row pitch a multiple of 16 bytes
/// below 2^40. The kernel checks the
/// same conditions on its arguments before it copies with the map.
bool tensorMapQualifies(uint64_t address, int64_t ld, unsigned elemBytes);

/// cuTensorMapEncodeTiled of the 2-D view address[row * ld + col] (ld columns,
/// kTensorMapRows rows, pitch ld * elemBytes), box {boxCols, boxRows}, the
/// shared-memory swizzle of `swizzle` (32, 64 or 128) bytes; all zeros when
/// tensorMapQualifies is false or ld < boxCols (the kernel then never reads
/// it). Throws cuda::Error when the driver refuses it or has no
/// cuTensorMapEncodeTiled (before CUDA 12.0).
TensorMap encodeTensorMap(uint64_t address, int64_t ld, unsigned elemBytes, unsigned boxCols,
                          unsigned boxRows, unsigned swizzle);

} // namespace tc::cuda
