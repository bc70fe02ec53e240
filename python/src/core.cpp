//===- core.cpp - triton_c._core: the host API (runtime/) for Python -----===//
//
// A thin binding of runtime/Launch.h, the interpreter backend, the GPU
// backend and its auto-tuner: compile a kernel, bind Python arguments to its
// parameters (arrays through DLPack / the buffer protocol, scalars checked
// against the parameter type), evaluate the grid with the runtime's grid
// expressions, launch, and report a trap or an error as data that the
// Python layer turns into exceptions. Host arrays run on copies: the caller's
// memory is written only after a launch that succeeded. CUDA arrays go to the
// GPU backend by device pointer (zero-copy) on the caller's stream.
//
//===----------------------------------------------------------------------===//
#include "codegen/Cuda.h"
#include "conformance/Compare.h"
#include "frontend/Defines.h"
#include "gpu/Autotune.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"
#include "runtime/Trap.h"
#include "support/DType.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using tc::DType;

/// A compiled kernel and what it was compiled from.
struct Kernel {
  std::shared_ptr<tc::CompiledKernel> compiled;
  tc::CompileRequest request;
};

std::string typeText(const tc::ir::Type &t) {
  std::string s(tc::conformanceName(t.dtype));
  return t.isPtr ? s + "*" : s;
}

std::string paramText(const tc::CompiledKernel &k, unsigned i) {
  return "'" + k.function().paramName(i) + "' (" + typeText(k.function().param(i)->type()) + ")";
}

std::optional<DType> dtypeOf(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  if (d.lanes != 1)
    return std::nullopt;
  C code = static_cast<C>(d.code);
  if (code == C::Int)
    return d.bits == 8    ? std::optional(DType::I8)
           : d.bits == 16 ? std::optional(DType::I16)
           : d.bits == 32 ? std::optional(DType::I32)
           : d.bits == 64 ? std::optional(DType::I64)
                          : std::nullopt;
  if (code == C::UInt)
    return d.bits == 8    ? std::optional(DType::U8)
           : d.bits == 16 ? std::optional(DType::U16)
           : d.bits == 32 ? std::optional(DType::U32)
           : d.bits == 64 ? std::optional(DType::U64)
                          : std::nullopt;
  if (code == C::Float)
    return d.bits == 16   ? std::optional(DType::F16)
           : d.bits == 32 ? std::optional(DType::F32)
           : d.bits == 64 ? std::optional(DType::F64)
                          : std::nullopt;
  if (code == C::Bfloat && d.bits == 16)
    return DType::BF16;
  if (code == C::Bool && d.bits == 8)
    return DType::Bool;
  return std::nullopt;
}

std::string dlpackText(nb::dlpack::dtype d) {
  if (auto t = dtypeOf(d))
    return std::string(tc::conformanceName(*t));
  return "an unsupported dtype (DLPack code " + std::to_string(d.code) + ", " +
         std::to_string(d.bits) + " bits)";
}

/// An array argument as the binding sees it.
struct ArrayArg {
  nb::ndarray<nb::ro> array;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool cuda = false;
  int device = 0;
  const uint8_t *data = nullptr;
  size_t bytes = 0;
};

/// Reads `obj` as an array (or a (array, "dtype") pair that reinterprets the
/// elements, e.g. uint16 bit patterns as bf16); nullopt when it is no array.
std::optional<ArrayArg> asArray(nb::handle obj, const std::function<std::string()> &whatFn) {
  // ("cuda", data_ptr, dtype name, shape, device): a contiguous CUDA tensor
  // described by the Python layer (cheaper than a DLPack export per launch).
  if (nb::isinstance<nb::tuple>(obj) && nb::len(obj) == 5 && nb::isinstance<nb::str>(obj[0]) &&
      nb::cast<std::string>(obj[0]) == "cuda") {
    ArrayArg a;
    std::string name = nb::cast<std::string>(obj[2]);
    std::optional<DType> t = tc::parseConformanceName(name);
    if (!t)
      throw nb::type_error(
          (whatFn() + " has dtype " + name + ", which the language lacks").c_str());
    a.dtype = *t;
    int64_t n = 1;
    for (nb::handle d : obj[3]) {
      a.shape.push_back(nb::cast<int64_t>(d));
      n *= a.shape.back();
    }
    a.cuda = true;
    a.device = nb::cast<int>(obj[4]);
    a.data = reinterpret_cast<const uint8_t *>(nb::cast<uintptr_t>(obj[1]));
    a.bytes = static_cast<size_t>(n) * tc::byteSize(a.dtype);
    return a;
  }
  std::string what = whatFn();
  nb::handle arrObj = obj;
  std::optional<DType> override;
  if (nb::isinstance<nb::tuple>(obj) && nb::len(obj) == 2 && nb::isinstance<nb::str>(obj[1])) {
    arrObj = obj[1 - 1];
    std::string name = nb::cast<std::string>(obj[1]);
    override = tc::parseConformanceName(name);
    if (!override)
      override = tc::parseIrName(name);
    if (!override)
      throw nb::value_error((what + ": unknown dtype '" + name + "'").c_str());
  }
  ArrayArg a;
  if (!nb::try_cast(arrObj, a.array))
    return std::nullopt;
  std::optional<DType> t = dtypeOf(a.array.dtype());
  if (!t)
    throw nb::type_error(
        (what + " has " + dlpackText(a.array.dtype()) + "; expected one of the language's dtypes")
            .c_str());
  if (override) {
    if (tc::byteSize(*override) != tc::byteSize(*t))
      throw nb::type_error((what + ": cannot read " + std::string(tc::conformanceName(*t)) +
                            " elements as " + std::string(tc::conformanceName(*override)))
                               .c_str());
    t = override;
  }
  a.dtype = *t;
  int64_t expect = 1;
  bool contiguous = true;
  for (size_t i = a.array.ndim(); i-- > 0;) {
    a.shape.insert(a.shape.begin(), static_cast<int64_t>(a.array.shape(i)));
    if (a.array.shape(i) != 1 && a.array.stride(i) != expect)
      contiguous = false;
    expect *= static_cast<int64_t>(a.array.shape(i));
  }
  if (!contiguous && expect != 0)
    throw nb::value_error((what + " is not contiguous (row-major); pass a contiguous copy "
                                  "(numpy.ascontiguousarray(x) or x.contiguous())")
                              .c_str());
  a.cuda = a.array.device_type() == nb::device::cuda::value;
  if (!a.cuda && a.array.device_type() != nb::device::cpu::value)
    throw nb::type_error((what + " lives on an unsupported device (DLPack device type " +
                          std::to_string(a.array.device_type()) + "); expected CPU or CUDA")
                             .c_str());
  a.device = static_cast<int>(a.array.device_id());
  a.data = static_cast<const uint8_t *>(a.array.data());
  a.bytes = static_cast<size_t>(expect) * tc::byteSize(a.dtype);
  return a;
}

/// A Python number as a ScalarValue (ints as i64, or u64 above INT64_MAX; floats as f64).
std::optional<tc::ScalarValue> asScalar(nb::handle obj) {
  PyObject *o = obj.ptr();
  if (PyBool_Check(o))
    return tc::ScalarValue::ofInt(DType::I64, o == Py_True ? 1 : 0);
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {
    nb::object idx = nb::steal(PyNumber_Index(o));
    if (!idx.is_valid()) {
      PyErr_Clear();
      return std::nullopt;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    if (!overflow)
      return tc::ScalarValue::ofInt(DType::I64, v);
    unsigned long long u = PyLong_AsUnsignedLongLong(idx.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return tc::ScalarValue{DType::I64, 0, 0}; // marked below as out of range
    }
    tc::ScalarValue s;
    s.dtype = DType::U64;
    s.bits = u;
    return s;
  }
  if (PyFloat_Check(o) || PyNumber_Check(o)) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return std::nullopt;
    }
    return tc::ScalarValue::ofFloat(DType::F64, d);
  }
  return std::nullopt;
}

bool pyIntTooLarge(nb::handle obj) {
  PyObject *o = obj.ptr();
  if (!PyLong_Check(o))
    return false;
  int overflow = 0;
  (void)PyLong_AsLongLongAndOverflow(o, &overflow);
  if (!overflow)
    return false;
  (void)PyLong_AsUnsignedLongLong(o);
  bool bad = PyErr_Occurred() != nullptr;
  PyErr_Clear();
  return bad;
}

std::string rangeText(DType t) {
  if (tc::isFloat(t))
    return "finite values of " + std::string(tc::conformanceName(t));
  if (t == DType::Bool)
    return "0 or 1";
  unsigned w = tc::bitWidth(t);
  if (tc::isSignedInt(t))
    return "[-2^" + std::to_string(w - 1) + ", 2^" + std::to_string(w - 1) + " - 1]";
  return "[0, 2^" + std::to_string(w) + " - 1]";
}

/// The arguments of one launch: copies of host arrays (one per distinct
/// caller buffer), device arrays by address, and the scalars.
struct Bound {
  tc::LaunchArgs args;
  std::vector<std::unique_ptr<tc::HostArray>> arrays;
  std::vector<ArrayArg> sources;  // arrays[i] came from sources[i]
  std::vector<std::string> names; // arrays[i]'s first parameter
  bool anyCuda = false, anyHost = false;
  int device = 0;
};

/// The device addresses the last launch passed (for the zero-copy test).
std::vector<uint64_t> &lastDevicePointers() {
  static std::vector<uint64_t> p;
  return p;
}

void bindArguments(const tc::CompiledKernel &k, nb::list pyArgs, bool deviceOk, Bound &b) {
  const tc::ir::Function &fn = k.function();
  lastDevicePointers().clear();
  size_t n = nb::len(pyArgs);
  if (n < fn.numParams()) {
    unsigned i = static_cast<unsigned>(n);
    throw nb::type_error(("kernel '" + k.name() + "': missing argument for parameter " +
                          paramText(k, i) + " (got " + std::to_string(n) + " of " +
                          std::to_string(fn.numParams()) + " arguments)")
                             .c_str());
  }
  if (n > fn.numParams()) {
    std::string names;
    for (unsigned i = 0; i < fn.numParams(); ++i)
      names += (i ? ", " : "") + fn.paramName(i);
    throw nb::type_error(("kernel '" + k.name() + "' takes " + std::to_string(fn.numParams()) +
                          " arguments (" + names + ") but got " + std::to_string(n) +
                          "; the grid goes after them or as grid=...")
                             .c_str());
  }
  std::map<std::pair<const uint8_t *, size_t>, tc::HostArray *> seen;
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const std::string &name = fn.paramName(i);
    const tc::ir::Type &t = fn.param(i)->type();
    nb::handle obj = pyArgs[i];
    auto whatFn = [&] { return "argument " + paramText(k, i); };
    if (t.isPtr) {
      std::optional<ArrayArg> a = asArray(obj, whatFn);
      std::string what = a && a->cuda && a->dtype == t.dtype ? std::string() : whatFn();
      if (!a)
        throw nb::type_error((what +
                              " expects an array (NumPy, PyTorch or anything with "
                              "__dlpack__), got " +
                              nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                                 .c_str());
      bool bf16Bits = t.dtype == DType::BF16 && a->dtype == DType::U16 && !a->cuda;
      if (a->dtype != t.dtype && !bf16Bits)
        throw nb::type_error((what + " expects an array of " +
                              std::string(tc::conformanceName(t.dtype)) + ", got " +
                              std::string(tc::conformanceName(a->dtype)))
                                 .c_str());
      if (a->cuda && !deviceOk)
        throw nb::type_error(
            (what + " is a CUDA array; the interpreter takes host arrays").c_str());
      if (a->cuda) {
        if (b.anyCuda && a->device != b.device)
          throw nb::value_error((what + " is on CUDA device " + std::to_string(a->device) +
                                 " but an earlier argument is on device " +
                                 std::to_string(b.device))
                                    .c_str());
        b.anyCuda = true;
        b.device = a->device;
      } else {
        b.anyHost = true;
      }
      auto key = std::make_pair(a->data, a->bytes);
      if (auto it = seen.find(key);
          it != seen.end() && a->bytes > 0 && it->second->dtype == t.dtype) {
        b.args.setBuffer(name, it->second);
        continue;
      }
      auto h = std::make_unique<tc::HostArray>();
      h->dtype = t.dtype;
      h->shape = a->shape;
      if (a->cuda) {
        h->device = reinterpret_cast<uint64_t>(a->data);
        lastDevicePointers().push_back(h->device);
      } else {
        h->data.assign(a->data, a->data + a->bytes);
      }
      b.args.setBuffer(name, h.get());
      seen[key] = h.get();
      b.arrays.push_back(std::move(h));
      b.sources.push_back(std::move(*a));
      b.names.push_back(name);
      continue;
    }
    PyObject *o = obj.ptr();
    bool plainNumber = PyLong_Check(o) || PyFloat_Check(o);
    if (!plainNumber && nb::isinstance<nb::ndarray<nb::ro>>(obj) && !PyNumber_Check(o))
      throw nb::type_error((whatFn() + " is a scalar parameter but got an array").c_str());
    if (pyIntTooLarge(obj))
      throw nb::value_error((whatFn() + " = " + nb::cast<std::string>(nb::str(obj)) +
                             " does not fit (range " + rangeText(t.dtype) + ")")
                                .c_str());
    std::optional<tc::ScalarValue> v = asScalar(obj);
    if (!v)
      throw nb::type_error((whatFn() + " expects a number, got " +
                            nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                               .c_str());
    if (!tc::scalarArgumentBits(*v, t.dtype))
      throw nb::value_error((whatFn() + " = " + nb::cast<std::string>(nb::str(obj)) +
                             " does not fit its type (range " + rangeText(t.dtype) +
                             (tc::isFloat(v->dtype) && !tc::isFloat(t.dtype)
                                  ? "; a float must be integral for an integer parameter"
                                  : "") +
                             ")")
                                .c_str());
    b.args.setScalar(name, *v);
  }
}

std::array<int64_t, 3> evalGrid(const tc::CompiledKernel &k, const std::vector<std::string> &dims,
                                const tc::LaunchArgs &args) {
  if (dims.empty() || dims.size() > 3)
    throw nb::value_error(
        ("grid: expected 1 to 3 dimensions, got " + std::to_string(dims.size())).c_str());
  std::array<int64_t, 3> plain = {1, 1, 1};
  bool allPlain = true;
  for (size_t i = 0; i < dims.size() && allPlain; ++i) {
    const std::string &d = dims[i];
    allPlain =
        !d.empty() && d.size() < 12 && d.find_first_not_of("0123456789") == std::string::npos;
    if (allPlain)
      plain[i] = std::stoll(d);
    allPlain = allPlain && plain[i] >= 1;
  }
  if (allPlain) // numbers need no expression evaluation (others go to the runtime's)
    return plain;
  tc::GridOutcome g = tc::evalGrid(tc::GridSpec{dims}, k, args);
  if (!g.dims)
    throw nb::value_error(("grid: " + g.error).c_str());
  return *g.dims;
}

nb::dict trapDict(const tc::Trap &t) {
  nb::dict d;
  d["kind"] = std::string(tc::trapKindName(t.kind));
  d["message"] = t.message;
  d["kernel"] = t.kernel;
  d["program"] = t.hasProgram
                     ? nb::cast(nb::make_tuple(t.programId[0], t.programId[1], t.programId[2]))
                     : nb::none();
  d["lane"] = t.lane >= 0 ? nb::cast(t.lane) : nb::none();
  d["lane_shape"] = t.laneShape;
  d["file"] = t.file;
  d["line"] = t.line;
  d["col"] = t.col;
  d["report"] = t.render();
  return d;
}

/// The arrays as they were when the launch stopped: name -> (bytes, dtype, shape).
nb::dict stateDict(const Bound &b) {
  nb::dict d;
  for (size_t i = 0; i < b.arrays.size(); ++i) {
    const tc::HostArray &h = *b.arrays[i];
    if (h.device)
      continue;
    d[b.names[i].c_str()] =
        nb::make_tuple(nb::bytes(reinterpret_cast<const char *>(h.data.data()), h.data.size()),
                       std::string(tc::conformanceName(h.dtype)), h.shape);
  }
  return d;
}

/// Writes the host copies back into the caller's arrays (only what changed).
void copyBack(Bound &b) {
  for (size_t i = 0; i < b.arrays.size(); ++i) {
    const tc::HostArray &h = *b.arrays[i];
    if (h.device || h.data.empty())
      continue;
    uint8_t *dst = const_cast<uint8_t *>(b.sources[i].data);
    if (std::memcmp(dst, h.data.data(), h.data.size()) != 0)
      std::memcpy(dst, h.data.data(), h.data.size());
  }
}

nb::tuple resultTuple(const tc::RunResult &r, Bound &b) {
  switch (r.status) {
  case tc::RunResult::Status::Ok: copyBack(b); return nb::make_tuple("ok", nb::none());
  case tc::RunResult::Status::Trapped: {
    nb::dict d = trapDict(*r.trap);
    d["state"] = stateDict(b);
    return nb::make_tuple("trap", d);
  }
  case tc::RunResult::Status::Error: return nb::make_tuple("error", r.error);
  }
  return nb::make_tuple("error", "internal: unknown run status");
}

tc::Backend &interpreter() {
  static std::unique_ptr<tc::Backend> b = tc::createInterpreterBackend();
  return *b;
}

/// One GPU backend per device, on the device's primary context (the one
/// PyTorch uses), and one auto-tuner each.
struct GpuState {
  std::unique_ptr<tc::gpu::GpuBackend> backend;
  std::unique_ptr<tc::gpu::Autotuner> tuner;
};
GpuState &gpu(int device) {
  static std::map<int, GpuState> states;
  GpuState &s = states[device];
  if (!s.backend) {
    tc::gpu::GpuOptions o;
    o.device = device;
    o.primaryContext = true;
    s.backend = tc::gpu::createGpuBackend(o);
    s.tuner = std::make_unique<tc::gpu::Autotuner>(*s.backend);
  }
  return s;
}

std::shared_ptr<Kernel> compile(const std::string &text, const std::string &name,
                                const std::string &path, const tc::DefineList &defines,
                                const std::vector<std::string> &includeDirs,
                                const std::string &kernelName, std::string &diagnostics) {
  auto k = std::make_shared<Kernel>();
  tc::CompileRequest &req = k->request;
  if (!path.empty())
    req.path = path;
  else {
    req.sourceName = name;
    req.sourceText = text;
  }
  req.defines = defines;
  req.includeDirs = includeDirs;
  req.kernelName = kernelName;
  tc::CompileOutcome out = tc::compileKernel(req);
  diagnostics = out.diagnostics;
  if (!out.ok())
    return nullptr;
  k->compiled = out.kernel;
  return k;
}

tc::HostArray hostArrayOf(nb::handle obj, const std::string &what) {
  std::optional<ArrayArg> a = asArray(obj, [&] { return what; });
  if (!a)
    throw nb::type_error((what + " is not an array").c_str());
  if (a->cuda)
    throw nb::type_error((what + " is a CUDA array; compare host copies").c_str());
  tc::HostArray h;
  h.dtype = a->dtype;
  h.shape = a->shape;
  h.data.assign(a->data, a->data + a->bytes);
  return h;
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "triton_c's C++ core: the runtime/ host API, the interpreter and the GPU backend";
  // Kernels cached in module-level objects (triton_c.ops) live until the
  // interpreter exits; nanobind would list them as leaks then.
  nb::set_leak_warnings(false);

  nb::class_<Kernel>(m, "Kernel")
      .def_prop_ro("name", [](const Kernel &k) { return k.compiled->name(); })
      .def_prop_ro("params",
                   [](const Kernel &k) {
                     std::vector<std::pair<std::string, std::string>> out;
                     const tc::ir::Function &fn = k.compiled->function();
                     for (unsigned i = 0; i < fn.numParams(); ++i)
                       out.emplace_back(fn.paramName(i), typeText(fn.param(i)->type()));
                     return out;
                   })
      .def_prop_ro("defines", [](const Kernel &k) { return k.compiled->defines(); });

  m.def(
      "compile",
      [](const std::string &text, const std::string &name, const std::string &path,
         const tc::DefineList &defines, const std::vector<std::string> &includeDirs,
         const std::string &kernelName) {
        std::string diagnostics;
        std::shared_ptr<Kernel> k =
            compile(text, name, path, defines, includeDirs, kernelName, diagnostics);
        return std::make_pair(k, diagnostics);
      },
      "text"_a, "name"_a, "path"_a, "defines"_a, "include_dirs"_a, "kernel_name"_a,
      "Compiles one variant; returns (Kernel or None, rendered diagnostics).");

  m.def(
      "launch",
      [](const Kernel &k, const std::string &backend, nb::list args,
         const std::vector<std::string> &grid, unsigned numWarps, unsigned numStages,
         uintptr_t stream, unsigned threads, double maxSeconds) {
        bool onGpu = backend == "gpu";
        if (!onGpu && backend != "interp")
          throw nb::value_error(("unknown backend '" + backend + "'").c_str());
        Bound b;
        bindArguments(*k.compiled, args, onGpu, b);
        std::array<int64_t, 3> g = evalGrid(*k.compiled, grid, b.args);
        tc::RunOptions opts;
        opts.maxSeconds = maxSeconds;
        tc::RunResult r;
        {
          nb::gil_scoped_release release;
          if (onGpu) {
            tc::gpu::GpuBackend &gb = *gpu(b.device).backend;
            gb.setNumWarps(numWarps);
            if (numStages)
              gb.setNumStages(numStages);
            gb.setStream(reinterpret_cast<void *>(stream));
            r = gb.launch(*k.compiled, g, b.args, opts);
          } else {
            opts.threads = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
            r = interpreter().launch(*k.compiled, g, b.args, opts);
          }
        }
        return resultTuple(r, b);
      },
      "kernel"_a, "backend"_a, "args"_a, "grid"_a, "num_warps"_a = 4, "num_stages"_a = 0,
      "stream"_a = 0, "threads"_a = 0, "max_seconds"_a = 0.0);

  m.def(
      "tune",
      [](const Kernel &base,
         const std::vector<std::pair<std::string, std::vector<std::string>>> &specs, nb::list args,
         const std::vector<std::string> &grid, const std::vector<unsigned> &warps,
         const std::vector<unsigned> &stages, int device) {
        // Tunes on the arguments given (host copies of the caller's arrays),
        // returns the winner: (defines of the variant, num_warps, num_stages,
        // from_cache, report).
        tc::gpu::TuneRequest req;
        req.base = base.request;
        req.base.defines.clear();
        for (const auto &[name, values] : specs)
          req.specs.push_back({name, values, values.size() != 1});
        req.numWarps = warps;
        if (!stages.empty())
          req.numStages = stages;
        req.grid = tc::GridSpec{grid};
        Bound b;
        bindArguments(*base.compiled, args, false, b);
        tc::RunResult r;
        tc::gpu::TuneOutcome o;
        {
          nb::gil_scoped_release release;
          o = gpu(device).tuner->run(req, b.args, {}, r);
        }
        if (!o.error.empty())
          throw std::runtime_error("autotune: " + o.error);
        if (r.status == tc::RunResult::Status::Error)
          throw std::runtime_error(r.error);
        tc::DefineList chosen = tc::gpu::detail::compileDefines(req, o.best);
        return nb::make_tuple(chosen, o.best.numWarps, o.best.numStages, o.fromCache,
                              tc::gpu::Autotuner::report(o));
      },
      "kernel"_a, "specs"_a, "args"_a, "grid"_a, "num_warps"_a, "num_stages"_a, "device"_a = 0);

  m.def(
      "expand_defines",
      [](const std::vector<std::pair<std::string, std::vector<std::string>>> &specs) {
        std::vector<tc::DefineSpec> s;
        for (const auto &[name, values] : specs)
          s.push_back({name, values, values.size() != 1});
        return tc::expandDefines(s);
      },
      "The variants of list-valued defines (Cartesian product, first name varying slowest).");

  m.def(
      "compare",
      [](nb::handle got, nb::handle want, std::optional<double> rtol,
         std::optional<double> atol) -> nb::object {
        tc::HostArray g = hostArrayOf(got, "actual"), w = hostArrayOf(want, "expected");
        tc::conf::CompareSpec spec = tc::conf::defaultCompare(w.dtype);
        if (rtol || atol)
          spec =
              tc::conf::CompareSpec::tolerance(rtol.value_or(spec.rtol), atol.value_or(spec.atol));
        std::optional<tc::conf::Mismatch> mm = tc::conf::compareArrays(g, w, spec);
        if (!mm)
          return nb::none();
        return nb::make_tuple(mm->index, mm->got, mm->want, mm->count, spec.str());
      },
      "got"_a, "want"_a, "rtol"_a = nb::none(), "atol"_a = nb::none(),
      "None when the arrays match under the dtype's tolerance, else (index, got, want, count, "
      "rule).");

  m.def("lang_name", [](const std::string &conformance) {
    auto t = tc::parseConformanceName(conformance);
    if (!t)
      throw nb::value_error(("unknown dtype '" + conformance + "'").c_str());
    return std::string(tc::langName(*t));
  });

  m.def(
      "last_device_pointers", []() { return lastDevicePointers(); },
      "The device addresses bound by the last launch (CUDA arrays passed zero-copy).");

  // Probed in this process (the CLI tools probe in a child so that they can
  // fork GPU workers later; a forked probe fails once PyTorch has initialised CUDA).
  m.def("cuda_available", []() {
    std::string why;
    bool ok = tc::cuda::available(&why);
    return std::make_pair(ok, why);
  });
}
