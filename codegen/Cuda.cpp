//===- Cuda.cpp - The CUDA driver API, loaded at run time -----------------===//
//
// libcuda.so.1 is dlopen'ed once (std::call_once) and every entry point we use
// is looked up into one table (TC_CUDA_ENTRY_POINTS below). cuda.h is not
// included: the few types and constants we need are declared here, with the
// values of the CUDA Driver API reference
// (https://docs.nvidia.com/cuda/cuda-driver-api/, "Data types used by CUDA
// driver" and the per-module pages).
//
// Faults: a sticky error (illegal address, trap, ...) poisons the whole
// process, not only the context. Measured with driver 580 on an H200: after
// an illegal address, cuCtxDestroy succeeds but every later cuCtxCreate (on
// any thread) and cuDevicePrimaryCtxRetain return CUDA_ERROR_ILLEGAL_ADDRESS.
// Code that must survive faults runs kernels in a worker process that exits
// after a sticky Error (and a parent that never calls cuInit before forking).
//
// Lifetimes: Buffers and Modules must be destroyed before the Context they
// were made in (their destructors free through the driver, which no longer
// knows the pointer once the context is gone; the errors are ignored).
//
//===----------------------------------------------------------------------===//

#include "codegen/Cuda.h"
#include "codegen/PtxCompile.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

namespace tc::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Driver API types (CUDA Driver API reference, "Data types used by CUDA
// driver"). Handles are opaque pointers; CUdevice is an int ordinal handle.
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUjit_option = int;

constexpr CUresult kSuccess = 0;    // CUDA_SUCCESS
constexpr CUresult kNoDevice = 100; // CUDA_ERROR_NO_DEVICE
constexpr CUresult kNotReady = 600; // CUDA_ERROR_NOT_READY
constexpr CUresult kInvalidPtx = 218; // CUDA_ERROR_INVALID_PTX

// CUdevice_attribute values.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedPerBlockOptin = 97;

// CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
constexpr int kFuncAttrMaxDynamicShared = 8;
// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, and its
// CU_SHAREDMEM_CARVEOUT_MAX_SHARED value (percent of the L1/shared storage).
constexpr int kFuncAttrPreferredCarveout = 9;
constexpr int kCarveoutMaxShared = 100;
// Dynamic shared memory a kernel may use without opting in.
constexpr size_t kDefaultSharedLimit = 48 * 1024;

// CUjit_option values.
constexpr CUjit_option kJitInfoLogBuffer = 3;
constexpr CUjit_option kJitInfoLogBufferSize = 4;
constexpr CUjit_option kJitErrorLogBuffer = 5;
constexpr CUjit_option kJitErrorLogBufferSize = 6;
constexpr CUjit_option kJitOptimizationLevel = 7;
constexpr size_t kJitLogBytes = 16 * 1024;

//===----------------------------------------------------------------------===//
// The entry point table: X(member, exported symbol, function type).
//===----------------------------------------------------------------------===//

#define TC_CUDA_ENTRY_POINTS(X)                                                                    \
  X(cuInit, "cuInit", CUresult(unsigned))                                                          \
  X(cuGetErrorName, "cuGetErrorName", CUresult(CUresult, const char **))                           \
  X(cuGetErrorString, "cuGetErrorString", CUresult(CUresult, const char **))                       \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult(int *))                                         \
  X(cuDeviceGet, "cuDeviceGet", CUresult(CUdevice *, int))                                         \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult(char *, int, CUdevice))                           \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult(int *, int, CUdevice))                  \
  X(cuCtxCreate, "cuCtxCreate_v2", CUresult(CUcontext *, unsigned, CUdevice))                      \
  X(cuCtxDestroy, "cuCtxDestroy_v2", CUresult(CUcontext))                                          \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult(CUcontext))                                       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult(CUcontext *, CUdevice))         \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult(CUdevice))                 \
  X(cuStreamCreate, "cuStreamCreate", CUresult(CUstream *, unsigned))                              \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult(CUstream))                                     \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult(CUstream))                                \
  X(cuStreamQuery, "cuStreamQuery", CUresult(CUstream))                                            \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr *, size_t))                                  \
  X(cuMemFree, "cuMemFree_v2", CUresult(CUdeviceptr))                                              \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult(CUdeviceptr, const void *, size_t))                  \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult(void *, CUdeviceptr, size_t))                        \
  X(cuMemsetD8, "cuMemsetD8_v2", CUresult(CUdeviceptr, unsigned char, size_t))                     \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                      \
    CUresult(CUmodule *, const void *, unsigned, CUjit_option *, void **))                         \
  X(cuModuleUnload, "cuModuleUnload", CUresult(CUmodule))                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult(CUfunction *, CUmodule, const char *))    \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult(CUfunction, int, int))                      \
  X(cuLaunchKernel, "cuLaunchKernel",                                                              \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,     \
             CUstream, void **, void **))                                                          \
  X(cuEventCreate, "cuEventCreate", CUresult(CUevent *, unsigned))                                 \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult(CUevent))                                        \
  X(cuEventRecord, "cuEventRecord", CUresult(CUevent, CUstream))                                   \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult(CUevent))                                   \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult(float *, CUevent, CUevent))

template <class Signature> using FnPtr = Signature *;

struct Driver {
#define TC_CUDA_MEMBER(member, symbol, signature) FnPtr<signature> member = nullptr;
  TC_CUDA_ENTRY_POINTS(TC_CUDA_MEMBER)
#undef TC_CUDA_MEMBER
  // Optional (drivers of CUDA 12.0 and later; option tma): null when absent.
  FnPtr<CUresult(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                 const unsigned *, const unsigned *, int, int, int, int)>
      cuTensorMapEncodeTiled = nullptr;
  bool ok = false; // loaded, initialised, at least one device
  int deviceCount = 0;
  std::string why; // "no CUDA device: ..." when !ok
};

Driver &driverTable() {
  static Driver d;
  return d;
}

/// The driver's name for `r` ("CUDA_ERROR_INVALID_PTX"), or its number.
std::string errorName(CUresult r) {
  const Driver &d = driverTable();
  const char *name = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) == kSuccess && name)
    return name;
  return "CUDA error " + std::to_string(r);
}

/// The driver's description of `r`, or "unknown error <n>".
std::string errorText(CUresult r) {
  const Driver &d = driverTable();
  const char *text = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &text) == kSuccess && text)
    return text;
  return "unknown error " + std::to_string(r);
}

/// Whether `r` leaves the context (in practice the process) unusable: the
/// CUresult documentation says that after these any further CUDA work
/// returns the same error.
bool isSticky(CUresult r) {
  switch (r) {
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 702: // CUDA_ERROR_LAUNCH_TIMEOUT
  case 710: // CUDA_ERROR_ASSERT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
  case 999: // CUDA_ERROR_UNKNOWN
    return true;
  }
  return false;
}

/// "<call> failed: <NAME> (<text>)".
std::string failureMessage(const char *call, CUresult r) {
  return std::string(call) + " failed: " + errorName(r) + " (" + errorText(r) + ")";
}

/// Throws the Error for a failed `call` (`detail` is appended on new lines).
/// Set by the first sticky error: no context of this process is reused after it.
std::atomic<bool> stickySeen{false};

[[noreturn]] void fail(const char *call, CUresult r, const std::string &detail = "") {
  std::string msg = failureMessage(call, r);
  if (!detail.empty())
    msg += "\n" + detail;
  if (isSticky(r))
    stickySeen = true;
  throw Error(msg, r, isSticky(r));
}

/// Throws unless `r` is CUDA_SUCCESS.
void check(const char *call, CUresult r) {
  if (r != kSuccess)
    fail(call, r);
}

/// dlopen's libcuda and fills every entry of the table; false (with `why`)
/// when the library or one of its symbols is missing.
bool loadSymbols(Driver &d) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *err = dlerror();
    d.why = std::string("no CUDA device: libcuda.so.1 not found (") +
            (err ? err : "unknown reason") + ")";
    return false;
  }
  // The library stays loaded for the life of the process (never dlclose'd).
#define TC_CUDA_LOOKUP(member, symbol, signature)                                                  \
  d.member = reinterpret_cast<FnPtr<signature>>(dlsym(lib, symbol));                               \
  if (!d.member) {                                                                                 \
    d.why = "no CUDA device: libcuda.so.1 has no " symbol;                                         \
    return false;                                                                                  \
  }
  TC_CUDA_ENTRY_POINTS(TC_CUDA_LOOKUP)
#undef TC_CUDA_LOOKUP
  d.cuTensorMapEncodeTiled =
      reinterpret_cast<decltype(d.cuTensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
  return true;
}

/// Loads the driver, calls cuInit and counts the devices.
void initDriver(Driver &d) {
  if (!loadSymbols(d))
    return;
  if (CUresult r = d.cuInit(0); r != kSuccess) {
    d.why = "no CUDA device: " + failureMessage("cuInit", r);
    return;
  }
  if (CUresult r = d.cuDeviceGetCount(&d.deviceCount); r != kSuccess) {
    d.deviceCount = 0;
    d.why = "no CUDA device: " + failureMessage("cuDeviceGetCount", r);
    return;
  }
  if (d.deviceCount <= 0) {
    d.deviceCount = 0;
    d.why = "no CUDA device: the driver reports 0 devices";
    return;
  }
  d.ok = true;
}

/// The table, initialised on first use (thread-safe).
const Driver &driver() {
  static std::once_flag once;
  std::call_once(once, [] { initDriver(driverTable()); });
  return driverTable();
}

/// The table of a process known to have a driver (a Buffer or Module exists).
const Driver &loadedDriver() {
  return driverTable();
}

} // namespace

//===----------------------------------------------------------------------===//
// Availability
//===----------------------------------------------------------------------===//

/// Note: the first call runs cuInit; a process that forks afterwards cannot
/// use CUDA in the child.
bool available(std::string *why) {
  const Driver &d = driver();
  if (why)
    *why = d.ok ? "" : d.why;
  return d.ok;
}

/// Number of devices the driver reports; 0 when unavailable.
int deviceCount() {
  const Driver &d = driver();
  return d.ok ? d.deviceCount : 0;
}

//===----------------------------------------------------------------------===//
// Buffer and Module
//===----------------------------------------------------------------------===//

Buffer::Buffer(Buffer &&o) noexcept : ptr_(o.ptr_), size_(o.size_) {
  o.ptr_ = 0;
  o.size_ = 0;
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  if (this != &o) {
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
  }
  return *this;
}

/// Frees the memory. Errors are ignored: the context may be poisoned, and
/// must still exist (destroy Buffers before their Context).
Buffer::~Buffer() {
  if (ptr_)
    (void)loadedDriver().cuMemFree(ptr_);
}

/// Unloads the module; errors are ignored (destroy Modules before their
/// Context).
Module::~Module() {
  if (mod_)
    (void)loadedDriver().cuModuleUnload(mod_);
}

/// cuModuleGetFunction; the handle is valid while the module lives.
void *Module::function(const std::string &name) {
  CUfunction fn = nullptr;
  CUresult r = loadedDriver().cuModuleGetFunction(&fn, mod_, name.c_str());
  if (r != kSuccess)
    fail("cuModuleGetFunction", r, "no kernel named '" + name + "'");
  return fn;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

namespace {

/// Throws the "no CUDA device" Error unless the driver has device `ordinal`.
void requireDevice(const Driver &d, int ordinal) {
  if (!d.ok)
    throw Error(d.why, kNoDevice, false);
  if (ordinal < 0 || ordinal >= d.deviceCount)
    throw Error("no CUDA device: ordinal " + std::to_string(ordinal) +
                    " out of range (the driver reports " + std::to_string(d.deviceCount) +
                    (d.deviceCount == 1 ? " device)" : " devices)"),
                kNoDevice, false);
}

/// One device attribute (CUdevice_attribute `attr`).
int deviceAttribute(int device, int attr) {
  int value = 0;
  check("cuDeviceGetAttribute", driver().cuDeviceGetAttribute(&value, attr, device));
  return value;
}

/// Makes `ctx` current on the calling thread.
void makeCurrent(void *ctx) {
  check("cuCtxSetCurrent", loadedDriver().cuCtxSetCurrent(ctx));
}

/// The driver's JIT logs, after a trailing-NUL trim, for an error message.
std::string jitLogs(const std::vector<char> &errorLog, const std::vector<char> &infoLog) {
  std::string err(errorLog.data());
  std::string info(infoLog.data());
  std::string out;
  if (!err.empty())
    out += "JIT error log:\n" + err;
  if (!info.empty())
    out += (out.empty() ? "" : "\n") + std::string("JIT info log:\n") + info;
  return out;
}

} // namespace

namespace {

/// Contexts (with their streams) kept for reuse (setContextReuse).
struct Parked {
  int device;
  void *ctx, *stream;
};
struct ContextPool {
  std::mutex mutex;
  bool on = false;
  std::vector<Parked> parked;
  uint64_t created = 0;
};
ContextPool &pool() {
  static ContextPool *p = new ContextPool(); // never destroyed: contexts outlive statics
  return *p;
}

} // namespace

void setContextReuse(bool on) {
  ContextPool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.on = on;
}

uint64_t contextsCreated() {
  ContextPool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.created;
}

bool contextReuse() {
  ContextPool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.on;
}

size_t parkedContexts() {
  ContextPool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.parked.size();
}

/// Creates a (non-primary) context on device `ordinal`, current on the
/// calling thread, and its stream (or takes a parked one: setContextReuse).
std::unique_ptr<Context> Context::create(int ordinal) {
  const Driver &d = driver();
  requireDevice(d, ordinal);
  std::unique_ptr<Context> c(new Context());
  check("cuDeviceGet", d.cuDeviceGet(&c->device_, ordinal));
  {
    ContextPool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    for (size_t i = 0; i < p.parked.size() && !stickySeen; ++i)
      if (p.parked[i].device == c->device_) {
        c->ctx_ = p.parked[i].ctx;
        c->stream_ = p.parked[i].stream;
        p.parked.erase(p.parked.begin() + static_cast<long>(i));
        makeCurrent(c->ctx_);
        return c;
      }
    ++p.created;
  }
  if (CUresult r = d.cuCtxCreate(&c->ctx_, 0, c->device_); r != kSuccess)
    fail("cuCtxCreate", r,
         isSticky(r) ? "an earlier kernel fault poisoned this process: the driver makes no new "
                       "context in it; only a new process can use the GPU again"
                     : "");
  // A blocking stream, so that the synchronous copies on the legacy default
  // stream are ordered after the kernels launched on it.
  check("cuStreamCreate", d.cuStreamCreate(&c->stream_, 0));
  return c;
}

std::unique_ptr<Context> Context::createPrimary(int ordinal) {
  const Driver &d = driver();
  requireDevice(d, ordinal);
  std::unique_ptr<Context> c(new Context());
  check("cuDeviceGet", d.cuDeviceGet(&c->device_, ordinal));
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&c->ctx_, c->device_); r != kSuccess)
    fail("cuDevicePrimaryCtxRetain", r,
         isSticky(r) ? "an earlier kernel fault poisoned this process: only a new process can "
                       "use the GPU again"
                     : "");
  c->primary_ = true;
  makeCurrent(c->ctx_);
  check("cuStreamCreate", d.cuStreamCreate(&c->stream_, 0));
  return c;
}

/// Destroys the stream, then the context (a primary context is released);
/// never throws (errors are ignored, the context may be poisoned).
Context::~Context() {
  if (!ctx_)
    return;
  if (!primary_ && !stickySeen) {
    ContextPool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.on) { // its modules and buffers are gone (destroyed before it)
      p.parked.push_back({device_, ctx_, stream_});
      return;
    }
  }
  const Driver &d = loadedDriver();
  (void)d.cuCtxSetCurrent(ctx_);
  if (stream_)
    (void)d.cuStreamDestroy(stream_);
  if (primary_)
    (void)d.cuDevicePrimaryCtxRelease(device_);
  else
    (void)d.cuCtxDestroy(ctx_);
}

/// The device's marketing name ("NVIDIA H100 80GB HBM3").
std::string Context::deviceName() const {
  char name[256] = {};
  check("cuDeviceGetName", loadedDriver().cuDeviceGetName(name, sizeof(name) - 1, device_));
  return name;
}

/// Compute capability as major * 10 + minor (90 for sm_90).
int Context::computeCapability() const {
  return deviceAttribute(device_, kAttrComputeCapabilityMajor) * 10 +
         deviceAttribute(device_, kAttrComputeCapabilityMinor);
}

/// Largest shared memory a block can use after opting in.
size_t Context::maxSharedPerBlockOptin() const {
  return static_cast<size_t>(deviceAttribute(device_, kAttrMaxSharedPerBlockOptin));
}

/// Number of streaming multiprocessors.
int Context::multiprocessorCount() const {
  return deviceAttribute(device_, kAttrMultiprocessorCount);
}

//===----------------------------------------------------------------------===//
// Loading modules: the driver's JIT or ptxas's cubin
//===----------------------------------------------------------------------===//

namespace {

ImageMode initialImageMode() {
  ImageMode m = ImageMode::Driver;
  if (const char *e = std::getenv("TC_CUBIN"); e && *e)
    (void)parseImageMode(e, m); // tools check the text and say what is wrong
  return m;
}

std::atomic<ImageMode> &modeSlot() {
  static std::atomic<ImageMode> mode{initialImageMode()};
  return mode;
}

thread_local LoadReport tlsLoad;

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

ImageMode imageMode() { return modeSlot().load(); }
void setImageMode(ImageMode mode) { modeSlot().store(mode); }

bool parseImageMode(const std::string &text, ImageMode &mode) {
  if (text == "driver")
    mode = ImageMode::Driver;
  else if (text == "ptxas")
    mode = ImageMode::Ptxas;
  else if (text == "auto")
    mode = ImageMode::Auto;
  else
    return false;
  return true;
}

const char *imageModeName(ImageMode mode) {
  return mode == ImageMode::Ptxas ? "ptxas" : mode == ImageMode::Auto ? "auto" : "driver";
}

bool usesPtxas(ImageMode mode, const std::string &ptx) {
  if (mode != ImageMode::Auto)
    return mode == ImageMode::Ptxas;
  size_t target = ptx.find(".target sm_");
  if (target != std::string::npos) {
    size_t end = ptx.find_first_of(" ,\n", target + 11);
    if (end != std::string::npos && ptx[end - 1] == 'a')
      return true; // sm_90a
  }
  size_t first = ptx.find(".entry ");
  return first != std::string::npos && ptx.find(".entry ", first + 1) != std::string::npos;
}

const LoadReport &lastLoad() { return tlsLoad; }

/// JIT-compiles `ptx` (or, with ImageMode::Ptxas, loads ptxas's cubin of it);
/// on failure the Error carries the driver's (or ptxas's) logs.
std::unique_ptr<Module> Context::load(const std::string &ptx, int optLevel, bool driverJit) {
  LoadReport report;
  report.seq = tlsLoad.seq + 1;
  if (!driverJit && usesPtxas(imageMode(), ptx)) {
    report.cubin = true;
    std::string image, log;
    codegen::PtxasJob job;
    bool ok = job.start(ptx, static_cast<unsigned>(computeCapability()), optLevel, log) &&
              job.wait(image, log);
    report.ptxasMs = job.ms();
    report.ptxasLog = log;
    tlsLoad = report;
    if (!ok)
      throw Error("ptxas (" + codegen::ptxasArchFlag(ptx, static_cast<unsigned>(computeCapability())) +
                      ", for cuModuleLoadData) rejects the PTX: CUDA_ERROR_INVALID_PTX (as the "
                      "driver's JIT would)\n" + log,
                  kInvalidPtx, false);
    auto t0 = std::chrono::steady_clock::now();
    try {
      std::unique_ptr<Module> m = loadImage(image);
      report.loadMs = msSince(t0);
      tlsLoad = report;
      return m;
    } catch (const Error &e) {
      if (e.sticky())
        throw;
      // A cubin this driver does not take (a toolkit newer than the driver):
      // the PTX through its JIT, as in driver mode.
      report.jitFallback = true;
      report.fallbackWhy = e.what();
    }
  }
  makeCurrent(ctx_);
  std::vector<char> errorLog(kJitLogBytes, '\0');
  std::vector<char> infoLog(kJitLogBytes, '\0');
  CUjit_option options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize, kJitInfoLogBuffer,
                            kJitInfoLogBufferSize, kJitOptimizationLevel};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(kJitLogBytes - 1), infoLog.data(),
                    reinterpret_cast<void *>(kJitLogBytes - 1),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(optLevel < 0 ? 0 : optLevel))};
  std::unique_ptr<Module> m(new Module());
  auto t0 = std::chrono::steady_clock::now();
  CUresult r = loadedDriver().cuModuleLoadDataEx(&m->mod_, ptx.c_str(), optLevel < 0 ? 4 : 5,
                                                 options, values);
  report.loadMs = msSince(t0);
  tlsLoad = report;
  if (r != kSuccess) {
    m->mod_ = nullptr;
    fail("cuModuleLoadData", r, jitLogs(errorLog, infoLog));
  }
  return m;
}

std::unique_ptr<Module> Context::loadImage(const std::string &image) {
  makeCurrent(ctx_);
  std::unique_ptr<Module> m(new Module());
  CUresult r = loadedDriver().cuModuleLoadDataEx(&m->mod_, image.data(), 0, nullptr, nullptr);
  if (r != kSuccess) {
    m->mod_ = nullptr;
    fail("cuModuleLoadData", r, "(a cubin)");
  }
  return m;
}

/// cuMemAlloc; a zero-byte request gets 256 bytes (a valid, unique address).
Buffer Context::alloc(size_t bytes) {
  makeCurrent(ctx_);
  Buffer b;
  b.size_ = bytes == 0 ? 256 : bytes;
  CUdeviceptr ptr = 0;
  check("cuMemAlloc", loadedDriver().cuMemAlloc(&ptr, b.size_));
  b.ptr_ = ptr;
  return b;
}

/// Synchronous host-to-device copy of `bytes` bytes.
void Context::upload(const Buffer &dst, const void *src, size_t bytes) {
  assert(bytes <= dst.size() && "upload larger than the buffer");
  if (bytes == 0)
    return;
  makeCurrent(ctx_);
  check("cuMemcpyHtoD", loadedDriver().cuMemcpyHtoD(dst.address(), src, bytes));
}

/// Synchronous device-to-host copy of `bytes` bytes.
void Context::download(void *dst, const Buffer &src, size_t bytes) {
  assert(bytes <= src.size() && "download larger than the buffer");
  if (bytes == 0)
    return;
  makeCurrent(ctx_);
  check("cuMemcpyDtoH", loadedDriver().cuMemcpyDtoH(dst, src.address(), bytes));
}

/// Sets the first `bytes` bytes of `dst` to `value`.
void Context::memset(const Buffer &dst, uint8_t value, size_t bytes) {
  assert(bytes <= dst.size() && "memset larger than the buffer");
  if (bytes == 0)
    return;
  makeCurrent(ctx_);
  check("cuMemsetD8", loadedDriver().cuMemsetD8(dst.address(), value, bytes));
}

/// Launches `function` on the context's stream with a 1-D block.
void Context::launch(void *function, std::array<unsigned, 3> grid, unsigned blockThreads,
                     size_t sharedBytes, void **params) {
  makeCurrent(ctx_);
  const Driver &d = loadedDriver();
  if (sharedBytes > kDefaultSharedLimit) {
    check("cuFuncSetAttribute",
          d.cuFuncSetAttribute(function, kFuncAttrMaxDynamicShared, static_cast<int>(sharedBytes)));
    // Without this hint the driver may configure just enough shared memory
    // for one program per SM (measured: 102 KB for a 70 KB matmul program),
    // leaving the SM to one program's warps.
    check("cuFuncSetAttribute",
          d.cuFuncSetAttribute(function, kFuncAttrPreferredCarveout, kCarveoutMaxShared));
  }
  check("cuLaunchKernel",
        d.cuLaunchKernel(function, grid[0], grid[1], grid[2], blockThreads, 1, 1,
                         static_cast<unsigned>(sharedBytes), activeStream(), params, nullptr));
}

/// Waits for the stream. With a timeout, polls (50 us, backing off to 1 ms)
/// and throws a sticky kErrorLaunchTimeout Error when the kernel is still
/// running: it keeps running, so the context (and in practice the process)
/// is unusable; the caller, a worker process, should exit.
void Context::synchronize(double timeoutSeconds) {
  makeCurrent(ctx_);
  const Driver &d = loadedDriver();
  if (timeoutSeconds <= 0) {
    check("cuStreamSynchronize", d.cuStreamSynchronize(activeStream()));
    return;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds);
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    CUresult r = d.cuStreamQuery(activeStream());
    if (r == kSuccess)
      return;
    if (r != kNotReady)
      fail("cuStreamQuery", r);
    if (Clock::now() >= deadline) {
      std::ostringstream msg;
      msg << "kernel did not finish within " << timeoutSeconds << " s";
      stickySeen = true;
      throw Error(msg.str(), kErrorLaunchTimeout, true);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

/// A new event (default flags, so it records timing).
void *Context::eventCreate() {
  makeCurrent(ctx_);
  CUevent e = nullptr;
  check("cuEventCreate", loadedDriver().cuEventCreate(&e, 0));
  return e;
}

/// Destroys `event`; errors are ignored.
void Context::eventDestroy(void *event) {
  if (!event)
    return;
  const Driver &d = loadedDriver();
  (void)d.cuCtxSetCurrent(ctx_);
  (void)d.cuEventDestroy(event);
}

/// Records `event` on the context's stream.
void Context::eventRecord(void *event) {
  makeCurrent(ctx_);
  check("cuEventRecord", loadedDriver().cuEventRecord(event, activeStream()));
}

/// Milliseconds between two recorded events; waits for `end` first.
float Context::eventElapsedMs(void *start, void *end) {
  makeCurrent(ctx_);
  const Driver &d = loadedDriver();
  check("cuEventSynchronize", d.cuEventSynchronize(end));
  float ms = 0;
  check("cuEventElapsedTime", d.cuEventElapsedTime(&ms, start, end));
  return ms;
}

//===----------------------------------------------------------------------===//
// Tensor maps (option "tma")
//===----------------------------------------------------------------------===//

bool tensorMapQualifies(uint64_t address, int64_t ld, unsigned elemBytes) {
  if (address % 16 || ld <= 0 || ld > INT32_MAX)
    return false;
  uint64_t pitch = static_cast<uint64_t>(ld) * elemBytes;
  return pitch % 16 == 0 && pitch < (uint64_t(1) << 40);
}

TensorMap encodeTensorMap(uint64_t address, int64_t ld, unsigned elemBytes, unsigned boxCols,
                          unsigned boxRows, unsigned swizzle) {
  TensorMap map;
  // Zeros where the kernel never uses the map: its own checks send every copy
  // to cp.async (also a row shorter than a box: no tile fits in one).
  if (!tensorMapQualifies(address, ld, elemBytes) || ld < static_cast<int64_t>(boxCols))
    return map;
  const Driver &d = driver();
  if (!d.cuTensorMapEncodeTiled)
    throw Error("cuTensorMapEncodeTiled: this CUDA driver has none (it came with CUDA 12.0); "
                "compile with --disable-opt tma",
                kErrorNotSupported, false);
  // CUtensorMapDataType: UINT8 0, UINT16 1, UINT32 2, UINT64 4 (the bits are
  // copied; no out-of-bounds fill is ever used). CUtensorMapSwizzle: 32B 1,
  // 64B 2, 128B 3. Interleave none (0), L2 promotion 128B (2), OOB fill none (0).
  int type = elemBytes == 1 ? 0 : elemBytes == 2 ? 1 : elemBytes == 4 ? 2 : 4;
  int sw = swizzle == 128 ? 3 : swizzle == 64 ? 2 : 1;
  uint64_t dims[2] = {static_cast<uint64_t>(ld), kTensorMapRows};
  uint64_t strides[1] = {static_cast<uint64_t>(ld) * elemBytes};
  unsigned box[2] = {boxCols, boxRows}, elementStrides[2] = {1, 1};
  check("cuTensorMapEncodeTiled",
        d.cuTensorMapEncodeTiled(map.words.data(), type, 2, reinterpret_cast<void *>(address), dims,
                                 strides, box, elementStrides, 0, sw, 2, 0));
  return map;
}

} // namespace tc::cuda
