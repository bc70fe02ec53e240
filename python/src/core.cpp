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
#include "codegen/Codegen.h"
#include "codegen/Cuda.h"
#include "conformance/Compare.h"
#include "frontend/Defines.h"
#include "gpu/Autotune.h"
#include "gpu/GpuBackend.h"
#include "interp/AccessMap.h"
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "runtime/Launch.h"
#include "runtime/Overlap.h"
#include "runtime/Trap.h"
#include "support/DType.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "support/SourceWords.h"
#include "tritonpy/TritonPy.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using tc::DType;

/// A compiled kernel and what it was compiled from.
struct Kernel {
  std::shared_ptr<tc::CompiledKernel> compiled;
  tc::CompileRequest request;
  std::vector<bool> mayStore; // per parameter: a store or atomic may write it
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
  std::vector<int64_t> shape;   // the view's
  std::vector<int64_t> strides; // the view's, in bytes
  bool cuda = false;
  int device = 0;
  const uint8_t *data = nullptr; // the view's first element
  size_t bytes = 0;              // the view's bytes when contiguous
  // The buffer the kernel gets: the view's own bytes when it is contiguous,
  // else the storage the view is part of (bounds checks use its extent).
  const uint8_t *storage = nullptr;
  size_t storageBytes = 0;
  bool contiguous = true;
  bool readOnly = false;
  uint64_t origin() const { return static_cast<uint64_t>(data - storage); }
};

/// Reads `obj` as an array; nullopt when it is no array. Forms (the Python
/// layer's triton_c._arrays.for_core):
///   an ndarray-like (C-contiguous, writable: the common case);
///   ("host", array, dtype name or "", storage address, storage bytes, read-only)
///     where a storage address of 0 means the array's own bytes;
///   ("cuda", data_ptr, dtype name, shape, device): a CUDA tensor by address.
std::optional<ArrayArg> asArray(nb::handle obj, const std::function<std::string()> &whatFn) {
  nb::handle arrObj = obj;
  std::optional<DType> override;
  uintptr_t storage = 0;
  size_t storageBytes = 0;
  bool readOnly = false;
  if (nb::isinstance<nb::tuple>(obj) && nb::len(obj) >= 1 && nb::isinstance<nb::str>(obj[0])) {
    std::string form = nb::cast<std::string>(obj[0]);
    if (form == "cuda" && nb::len(obj) == 5) {
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
      a.storage = a.data;
      a.storageBytes = a.bytes;
      return a;
    }
    if (form == "host" && nb::len(obj) == 6) {
      arrObj = obj[1];
      std::string name = nb::cast<std::string>(obj[2]);
      if (!name.empty()) {
        override = tc::parseConformanceName(name);
        if (!override)
          throw nb::value_error((whatFn() + ": unknown dtype '" + name + "'").c_str());
      }
      storage = nb::cast<uintptr_t>(obj[3]);
      storageBytes = nb::cast<size_t>(obj[4]);
      readOnly = nb::cast<bool>(obj[5]);
    }
  }
  ArrayArg a;
  if (!nb::try_cast(arrObj, a.array))
    return std::nullopt;
  std::string what = whatFn();
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
  a.readOnly = readOnly;
  int64_t es = tc::byteSize(a.dtype);
  int64_t expect = 1, lo = 0, hi = 0; // the view's byte extent relative to data
  bool empty = false;
  for (size_t i = a.array.ndim(); i-- > 0;) {
    int64_t n = static_cast<int64_t>(a.array.shape(i)), st = a.array.stride(i);
    a.shape.insert(a.shape.begin(), n);
    a.strides.insert(a.strides.begin(), st * es);
    if (n != 1 && st != expect)
      a.contiguous = false;
    expect *= n;
    empty = empty || n == 0;
    if (n > 1)
      (st < 0 ? lo : hi) += (n - 1) * st * es;
  }
  a.cuda = a.array.device_type() == nb::device::cuda::value;
  if (!a.cuda && a.array.device_type() != nb::device::cpu::value)
    throw nb::type_error((what + " lives on an unsupported device (DLPack device type " +
                          std::to_string(a.array.device_type()) + "); expected CPU or CUDA")
                             .c_str());
  a.device = static_cast<int>(a.array.device_id());
  a.data = static_cast<const uint8_t *>(a.array.data());
  a.bytes = static_cast<size_t>(expect) * static_cast<size_t>(es);
  if (empty)
    a.contiguous = true;
  if (a.contiguous || storage == 0) {
    if (!a.contiguous)
      throw nb::value_error((what + " is a strided view whose storage is unknown; pass a NumPy "
                                    "array, a PyTorch tensor or a contiguous copy")
                                .c_str());
    a.storage = a.data;
    a.storageBytes = a.bytes;
    return a;
  }
  // A strided view: its buffer is the storage, from its start to its end, in
  // whole elements from the view's alignment.
  const uint8_t *s = reinterpret_cast<const uint8_t *>(storage);
  if (a.data < s || a.data + lo < s || a.data + hi + es > s + storageBytes)
    throw nb::value_error((what + " reaches outside the storage it views").c_str());
  size_t skew = static_cast<size_t>(a.data - s) % static_cast<size_t>(es);
  a.storage = s + skew;
  a.storageBytes = (storageBytes - skew) / static_cast<size_t>(es) * static_cast<size_t>(es);
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
      return std::nullopt; // out of every range: the caller reports it
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

/// Whether `obj` is an integer (or has __index__) outside [-2^63, 2^64).
bool pyIntTooLarge(nb::handle obj) {
  PyObject *o = obj.ptr();
  if (PyFloat_Check(o) || !(PyLong_Check(o) || PyIndex_Check(o)))
    return false;
  nb::object idx = nb::steal(PyNumber_Index(o));
  if (!idx.is_valid()) {
    PyErr_Clear();
    return false;
  }
  int overflow = 0;
  (void)PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (!overflow)
    return false;
  (void)PyLong_AsUnsignedLongLong(idx.ptr());
  bool bad = PyErr_Occurred() != nullptr;
  PyErr_Clear();
  return bad;
}

/// An integer (or __index__ object) as the nearest float64, as Python's
/// float() rounds it; none when it is beyond float64's finite range.
std::optional<tc::ScalarValue> bigIntAsDouble(nb::handle obj) {
  nb::object idx = nb::steal(PyNumber_Index(obj.ptr()));
  if (!idx.is_valid()) {
    PyErr_Clear();
    return std::nullopt;
  }
  double d = PyLong_AsDouble(idx.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return tc::ScalarValue::ofFloat(DType::F64, d);
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

/// A Python str of compiler or runtime text: bytes that are not UTF-8 (from a
/// source file) become \xNN escapes instead of a UnicodeDecodeError.
nb::str pyText(const std::string &s) {
  PyObject *o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (!o)
    throw nb::python_error();
  return nb::steal<nb::str>(o);
}

/// The arguments of one launch. On the interpreter every host array is the
/// caller's own memory (zero-copy; the interpreter's undo journal puts it
/// back after a trap). On the GPU host arrays are copies, one per distinct
/// memory: the arrays of one union of overlapping views share one copy (one
/// device allocation), each at its own offset; `before` keeps what was
/// uploaded, so that only the bytes the kernel changed are written back.
/// Device arrays go by address.
struct Bound {
  tc::LaunchArgs args;
  std::vector<std::unique_ptr<tc::HostArray>> arrays;
  std::vector<ArrayArg> sources;          // arrays[i] came from sources[i]
  std::vector<std::string> names;         // arrays[i]'s first parameter
  std::vector<int> arrayOf;               // per parameter: its index in arrays, or -1
  // Copies (GPU and tuning): the bytes, the caller's memory they copy, and
  // (GPU) the bytes uploaded; per array its copy, or -1.
  struct Copy {
    std::vector<uint8_t> bytes, before;
    uint8_t *source = nullptr;
    bool readOnly = false;
  };
  std::vector<Copy> copies;
  std::vector<int> copyOf;
  bool anyCuda = false, anyHost = false;
  int device = 0;
};

/// The device addresses the last launch passed (for the zero-copy test).
std::vector<uint64_t> &lastDevicePointers() {
  static std::vector<uint64_t> p;
  return p;
}

enum class Target { Interp, Gpu, Copy };

void bindArguments(const tc::CompiledKernel &k, nb::list pyArgs, Target target, Bound &b) {
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
  b.arrayOf.assign(fn.numParams(), -1);
  // One HostArray per distinct (storage, view start, dtype, read-only).
  std::map<std::tuple<const uint8_t *, size_t, uint64_t, DType, bool>, size_t> seen;
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const std::string &name = fn.paramName(i);
    const tc::ir::Type &t = fn.param(i)->type();
    nb::handle obj = pyArgs[i];
    auto whatFn = [&] { return "argument " + paramText(k, i); };
    if (t.isPtr) {
      std::optional<ArrayArg> a = asArray(obj, whatFn);
      if (!a) {
        // An ndarray the binding cannot take: say what is wrong with its dtype
        // (byte order, records, objects, strings), not that it is no array.
        nb::handle arr = obj;
        if (nb::isinstance<nb::tuple>(obj) && nb::len(obj) == 6)
          arr = obj[1];
        if (nb::hasattr(arr, "__array_interface__") && nb::hasattr(arr, "dtype")) {
          nb::object dtype = arr.attr("dtype");
          std::string dt = nb::cast<std::string>(dtype.attr("__str__")());
          std::string str =
              nb::hasattr(dtype, "str") ? nb::cast<std::string>(dtype.attr("str")) : dt;
          bool swapped =
              !str.empty() && str[0] == (std::endian::native == std::endian::little ? '>' : '<');
          throw nb::type_error(
              (whatFn() + " expects an array of " + std::string(tc::conformanceName(t.dtype)) +
               ", got a NumPy array of dtype " + (dt == str ? dt : dt + " ('" + str + "')") +
               (swapped ? ", in the other byte order; pass arr.astype(arr.dtype.newbyteorder('='))"
                        : ", which the language has no type for"))
                  .c_str());
        }
        throw nb::type_error((whatFn() +
                              " expects an array (NumPy, PyTorch or anything with "
                              "__dlpack__), got " +
                              nb::cast<std::string>(nb::str(obj.type().attr("__name__"))))
                                 .c_str());
      }
      bool bf16Bits = t.dtype == DType::BF16 && a->dtype == DType::U16 && !a->cuda;
      if (a->dtype != t.dtype && !bf16Bits)
        throw nb::type_error((whatFn() + " expects an array of " +
                              std::string(tc::conformanceName(t.dtype)) + ", got " +
                              std::string(tc::conformanceName(a->dtype)))
                                 .c_str());
      if (a->cuda && target != Target::Gpu)
        throw nb::type_error(
            (whatFn() + " is a CUDA array; the interpreter takes host arrays").c_str());
      if (a->cuda) {
        if (b.anyCuda && a->device != b.device)
          throw nb::value_error((whatFn() + " is on CUDA device " + std::to_string(a->device) +
                                 " but an earlier argument is on device " +
                                 std::to_string(b.device))
                                    .c_str());
        b.anyCuda = true;
        b.device = a->device;
      } else {
        b.anyHost = true;
      }
      auto key = std::make_tuple(a->storage, a->storageBytes, a->origin(), t.dtype, a->readOnly);
      if (auto it = seen.find(key); it != seen.end() && a->storageBytes > 0) {
        b.args.setBuffer(name, b.arrays[it->second].get());
        b.arrayOf[i] = static_cast<int>(it->second);
        continue;
      }
      auto h = std::make_unique<tc::HostArray>();
      h->dtype = t.dtype;
      size_t es = tc::byteSize(t.dtype);
      h->shape = a->contiguous ? a->shape
                               : std::vector<int64_t>{static_cast<int64_t>(a->storageBytes / es)};
      h->readOnly = a->readOnly;
      if (a->cuda) {
        h->device = reinterpret_cast<uint64_t>(a->data);
        lastDevicePointers().push_back(h->device);
      } else { // the caller's memory (copied below for the GPU)
        h->external = const_cast<uint8_t *>(a->storage);
        h->externalBytes = a->storageBytes;
        h->origin = a->origin();
      }
      b.args.setBuffer(name, h.get());
      b.arrayOf[i] = static_cast<int>(b.arrays.size());
      seen[key] = b.arrays.size();
      b.arrays.push_back(std::move(h));
      b.sources.push_back(std::move(*a));
      b.names.push_back(name);
      continue;
    }
    PyObject *o = obj.ptr();
    bool plainNumber = PyLong_Check(o) || PyFloat_Check(o);
    if (!plainNumber && nb::isinstance<nb::ndarray<nb::ro>>(obj) && !PyNumber_Check(o))
      throw nb::type_error((whatFn() + " is a scalar parameter but got an array").c_str());
    std::optional<tc::ScalarValue> v;
    if (pyIntTooLarge(obj)) {
      // Outside every 64-bit integer: fine for a float parameter that holds it
      // (2**64 for a double), checked against that type's range below.
      if (tc::isFloat(t.dtype))
        v = bigIntAsDouble(obj);
      if (!v)
        throw nb::value_error((whatFn() + " = " + nb::cast<std::string>(nb::str(obj)) +
                               " does not fit (range " + rangeText(t.dtype) + ")")
                                  .c_str());
    } else {
      v = asScalar(obj);
    }
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
  // Host arrays whose bytes overlap without being the same bytes (NumPy or
  // PyTorch slices x[0:128] and x[64:192]) are one memory, the union of their
  // bytes, each argument at its own offset (runtime/Overlap.h): one buffer on
  // the interpreter (races between them are reported, undo copies made once),
  // one copy and one device allocation on the GPU.
  if (b.anyHost)
    if (std::optional<std::string> refused = tc::mergeOverlappingHostArrays(k, b.args))
      throw nb::value_error(refused->c_str());
  b.copyOf.assign(b.arrays.size(), -1);
  if (target == Target::Interp)
    return;
  std::map<std::pair<const uint8_t *, size_t>, int> copyOfMemory;
  for (size_t i = 0; i < b.arrays.size(); ++i) {
    tc::HostArray &h = *b.arrays[i];
    if (!h.external)
      continue;
    auto [it, fresh] = copyOfMemory.emplace(std::make_pair(h.external, h.externalBytes),
                                            static_cast<int>(b.copies.size()));
    if (fresh) {
      Bound::Copy c;
      c.bytes.assign(h.external, h.external + h.externalBytes);
      c.source = h.external;
      if (target == Target::Gpu)
        c.before = c.bytes;
      b.copies.push_back(std::move(c));
    }
    Bound::Copy &c = b.copies[static_cast<size_t>(it->second)];
    c.readOnly = c.readOnly || h.readOnly;
    b.copyOf[i] = it->second;
  }
  // (After every copy exists: the vectors no longer move.)
  for (size_t i = 0; i < b.arrays.size(); ++i)
    if (int c = b.copyOf[i]; c >= 0)
      b.arrays[i]->external = b.copies[static_cast<size_t>(c)].bytes.data();
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
    throw nb::value_error(("grid: " + tc::escapeInvalidUtf8(g.error)).c_str());
  return *g.dims;
}

nb::dict trapDict(const tc::Trap &t) {
  nb::dict d;
  d["kind"] = std::string(tc::trapKindName(t.kind));
  d["message"] = pyText(t.message);
  d["kernel"] = t.kernel;
  d["program"] = t.hasProgram
                     ? nb::cast(nb::make_tuple(t.programId[0], t.programId[1], t.programId[2]))
                     : nb::none();
  d["lane"] = t.lane >= 0 ? nb::cast(t.lane) : nb::none();
  d["lane_shape"] = t.laneShape;
  d["file"] = pyText(t.file);
  d["line"] = t.line;
  d["col"] = t.col;
  d["report"] = pyText(t.render());
  return d;
}

/// The arrays as the trap left them, by parameter name: (bytes of the buffer,
/// dtype, the view's shape, the view's byte strides or None when contiguous,
/// the view's byte offset in the bytes).
nb::dict stateDict(const tc::CompiledKernel &k, const Bound &b, const tc::RunResult &r) {
  nb::dict d;
  const tc::ir::Function &fn = k.function();
  for (unsigned p = 0; p < fn.numParams(); ++p) {
    int i = b.arrayOf.empty() ? -1 : b.arrayOf[p];
    if (i < 0)
      continue;
    const tc::HostArray &h = *b.arrays[static_cast<size_t>(i)];
    const ArrayArg &src = b.sources[static_cast<size_t>(i)];
    if (h.device)
      continue;
    const uint8_t *bytes = h.bytes();
    size_t n = h.byteCount();
    if (auto it = r.trapState.find(h.bytes()); it != r.trapState.end()) {
      bytes = it->second.data();
      n = it->second.size();
    }
    d[fn.paramName(p).c_str()] = nb::make_tuple(
        nb::bytes(reinterpret_cast<const char *>(bytes), n),
        std::string(tc::conformanceName(h.dtype)), src.shape,
        src.contiguous ? nb::none() : nb::cast(src.strides), h.origin);
  }
  return d;
}

/// GPU launches with host arrays: writes back into the caller's memory the
/// bytes the kernel changed (and only those: one array passed as two dtypes
/// and other threads' updates of the memory keep their bytes); `changed`
/// tells which arrays' copies had any (every array of a union of overlapping
/// views shares its copy).
void copyBack(Bound &b, std::vector<bool> &changed) {
  std::vector<bool> copyChanged(b.copies.size(), false);
  for (size_t ci = 0; ci < b.copies.size(); ++ci) {
    Bound::Copy &c = b.copies[ci];
    if (c.readOnly || c.bytes.empty())
      continue;
    uint8_t *dst = c.source;
    const uint8_t *now = c.bytes.data(), *was = c.before.data();
    size_t n = c.bytes.size(), j = 0;
    for (; j + 8 <= n; j += 8) {
      uint64_t x, y;
      std::memcpy(&x, now + j, 8);
      std::memcpy(&y, was + j, 8);
      if (x == y)
        continue;
      copyChanged[ci] = true;
      for (size_t q = j; q < j + 8; ++q)
        if (now[q] != was[q])
          dst[q] = now[q];
    }
    for (; j < n; ++j)
      if (now[j] != was[j]) {
        dst[j] = now[j];
        copyChanged[ci] = true;
      }
  }
  changed.assign(b.arrays.size(), false);
  for (size_t i = 0; i < b.arrays.size(); ++i)
    changed[i] = b.copyOf[i] >= 0 && copyChanged[static_cast<size_t>(b.copyOf[i])];
}

/// The kernel parameters a pointer value may be computed from (through
/// address arithmetic, selects, loop-carried values and `if` results);
/// `unknown` when it cannot tell (a `while` value, a pointer from an integer).
void pointerRoots(const tc::ir::Value *v, std::set<const tc::ir::Value *> &roots,
                  std::set<const tc::ir::Value *> &visiting, bool &unknown) {
  using tc::ir::OpKind;
  if (unknown || !visiting.insert(v).second)
    return;
  auto yielded = [&](const tc::ir::Block *blk, unsigned j) {
    if (const tc::ir::Op *t = blk ? blk->terminator() : nullptr;
        t && t->kind() == OpKind::Yield && j < t->numOperands())
      pointerRoots(t->operand(j), roots, visiting, unknown);
    else
      unknown = true;
  };
  if (const tc::ir::Op *d = v->definingOp()) {
    if (d->kind() == OpKind::For) {
      unsigned j = v->index();
      if (3 + j >= d->numOperands())
        unknown = true;
      else
        pointerRoots(d->operand(3 + j), roots, visiting, unknown);
      yielded(d->numRegions() ? d->region(0) : nullptr, j);
      return;
    }
    if (d->kind() == OpKind::If) {
      for (const auto &r : d->regions())
        yielded(r.get(), v->index());
      return;
    }
    if (d->numRegions()) { // while, and anything else with regions
      unknown = true;
      return;
    }
    bool any = false;
    for (const tc::ir::Value *o : d->operands())
      if (o->type().isPtr) {
        any = true;
        pointerRoots(o, roots, visiting, unknown);
      }
    if (!any)
      unknown = true;
    return;
  }
  const tc::ir::Block *blk = v->ownerBlock();
  const tc::ir::Op *parent = blk ? blk->parentOp() : nullptr;
  if (blk && !parent) {
    roots.insert(v);
    return;
  }
  if (parent && parent->kind() == OpKind::For && v->index() >= 1 &&
      3 + v->index() - 1 < parent->numOperands()) {
    unsigned j = v->index() - 1;
    pointerRoots(parent->operand(3 + j), roots, visiting, unknown);
    yielded(blk, j);
    return;
  }
  unknown = true;
}

/// Which parameters a store or atomic of the kernel may write (every pointer
/// parameter when some store's pointer cannot be traced to parameters).
std::vector<bool> mayStore(const tc::CompiledKernel &k) {
  const tc::ir::Function &fn = k.function();
  std::vector<bool> out(fn.numParams(), false);
  bool unknown = false;
  std::set<const tc::ir::Value *> roots;
  tc::ir::forEachOp(fn.body(), [&](const tc::ir::Op &op, unsigned) {
    tc::ir::OpKind kd = op.kind();
    if ((kd == tc::ir::OpKind::Store || kd == tc::ir::OpKind::AtomicRMW ||
         kd == tc::ir::OpKind::AtomicCas) &&
        op.numOperands()) {
      std::set<const tc::ir::Value *> visiting;
      pointerRoots(op.operand(0), roots, visiting, unknown);
    }
  });
  for (unsigned i = 0; i < fn.numParams(); ++i)
    out[i] = fn.param(i)->type().isPtr && (unknown || roots.count(fn.param(i)));
  return out;
}

// Ctrl-C during a launch on the interpreter. While any such launch runs,
// onSigint is SIGINT's handler: it counts the signal (gSigintSeq), sets the
// cancel flag (RunOptions::cancel, polled by the interpreter) of every launch
// armed in gCancelArmed, and passes the signal on to the handler that was
// installed (Python's, which makes the Python-level handler pending). Each
// launch has a flag of its own, cleared when it starts: a Ctrl-C that stopped
// one launch never reaches a later one. Who decides is Python's SIGINT handler
// (SigintMode): the default one (KeyboardInterrupt) stops the launch at once;
// any other runs during the launch (waitRunningHandlers) and the launch stops
// only if it raised.
constexpr int kCancelSlots = 64;
std::atomic<bool> gCancel[kCancelSlots];
std::atomic<bool> gCancelArmed[kCancelSlots];
bool gSlotTaken[kCancelSlots]; // (under gSigintMutex)
std::atomic<unsigned long> gSigintSeq{0};
std::mutex gSigintMutex;
int gSigintUsers = 0;
bool gSigintInstalled = false;
struct sigaction gPrevSigint;

extern "C" void onSigint(int sig, siginfo_t *info, void *ctx) {
  gSigintSeq.fetch_add(1);
  for (int i = 0; i < kCancelSlots; ++i)
    if (gCancelArmed[i].load())
      gCancel[i].store(true);
  if (gPrevSigint.sa_flags & SA_SIGINFO) {
    if (gPrevSigint.sa_sigaction)
      gPrevSigint.sa_sigaction(sig, info, ctx);
  } else if (gPrevSigint.sa_handler != SIG_DFL && gPrevSigint.sa_handler != SIG_IGN) {
    gPrevSigint.sa_handler(sig);
  }
}

/// What Ctrl-C does to a launch, by Python's SIGINT handler (read with the GIL).
enum class SigintMode {
  Cancel,   // signal.default_int_handler (or one set from C): stop the launch at once
  Ask,      // another Python handler, launched from the main thread: run it, stop if it raised
  Continue, // another Python handler, launched from another thread: the handler runs on the
            // main thread and cannot raise here; the launch goes on
};

SigintMode sigintMode() {
  static PyObject *getsignal = nullptr, *defaultHandler = nullptr, *mainThread = nullptr;
  if (!getsignal) { // (kept for the process' lifetime: no destructor after Python's end)
    nb::module_ signal = nb::module_::import_("signal");
    getsignal = signal.attr("getsignal").inc_ref().ptr();
    defaultHandler = signal.attr("default_int_handler").inc_ref().ptr();
    mainThread = nb::module_::import_("threading").attr("main_thread").inc_ref().ptr();
  }
  nb::object h = nb::steal(PyObject_CallFunction(getsignal, "i", SIGINT));
  if (!h.is_valid()) {
    PyErr_Clear();
    return SigintMode::Cancel;
  }
  if (h.ptr() == defaultHandler || !PyCallable_Check(h.ptr()))
    return SigintMode::Cancel; // (SIG_DFL / SIG_IGN: SigintScope installs nothing then)
  nb::object main = nb::steal(PyObject_CallNoArgs(mainThread));
  nb::object ident = main.is_valid() ? nb::getattr(main, "ident", nb::none()) : nb::none();
  PyErr_Clear();
  bool onMain =
      !ident.is_none() && PyLong_AsUnsignedLong(ident.ptr()) == PyThread_get_thread_ident();
  PyErr_Clear();
  return onMain ? SigintMode::Ask : SigintMode::Continue;
}

/// Installs onSigint for its lifetime (the first of concurrent launches
/// installs, the last restores), unless SIGINT is ignored or has its default
/// action (then Ctrl-C does what it always did, and no launch is cancelled),
/// and gives the launch its cancel flag, clear.
class SigintScope {
public:
  explicit SigintScope(SigintMode mode) : mode_(mode) {
    std::lock_guard<std::mutex> lock(gSigintMutex);
    if (gSigintUsers++ == 0) {
      struct sigaction prev;
      bool plain = true;
      if (sigaction(SIGINT, nullptr, &prev) == 0)
        plain = !(prev.sa_flags & SA_SIGINFO) &&
                (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN);
      if (!plain) {
        gPrevSigint = prev;
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = onSigint;
        sa.sa_flags = SA_SIGINFO | (prev.sa_flags & SA_ONSTACK);
        sigemptyset(&sa.sa_mask);
        gSigintInstalled = sigaction(SIGINT, &sa, nullptr) == 0;
      }
    }
    if (!gSigintInstalled || mode_ == SigintMode::Continue)
      return;
    if (mode_ == SigintMode::Ask) {
      cancel_ = &own_;
      return;
    }
    for (int i = 0; i < kCancelSlots; ++i)
      if (!gSlotTaken[i]) {
        gSlotTaken[i] = true;
        slot_ = i;
        gCancel[i].store(false);
        gCancelArmed[i].store(true);
        cancel_ = &gCancel[i];
        break;
      }
  }
  ~SigintScope() {
    std::lock_guard<std::mutex> lock(gSigintMutex);
    if (slot_ >= 0) {
      gCancelArmed[slot_].store(false);
      gSlotTaken[slot_] = false;
    }
    if (--gSigintUsers == 0 && gSigintInstalled) {
      sigaction(SIGINT, &gPrevSigint, nullptr);
      gSigintInstalled = false;
    }
  }
  /// The launch's RunOptions::cancel (null: Ctrl-C does not stop it).
  const std::atomic<bool> *cancel() const { return cancel_; }
  /// Whether the Python handler is to run during the launch (waitRunningHandlers).
  bool asks() const { return cancel_ == &own_; }
  void stop() { own_.store(true); }
  SigintScope(const SigintScope &) = delete;
  SigintScope &operator=(const SigintScope &) = delete;

private:
  SigintMode mode_;
  int slot_ = -1;
  std::atomic<bool> own_{false};
  const std::atomic<bool> *cancel_ = nullptr;
};

/// The exception a Python SIGINT handler raised during a launch (empty: none).
struct RaisedByHandler {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  explicit operator bool() const { return type != nullptr; }
};

/// Runs `run` on a thread of its own while this (the main) thread, without
/// the GIL, waits; after each SIGINT it takes the GIL and runs the Python
/// handler (PyErr_CheckSignals): if the handler raised, the launch is stopped
/// (scope.stop()) and its exception kept in `raised`; if not, the launch goes on.
void waitRunningHandlers(const std::function<void()> &run, SigintScope &scope,
                         RaisedByHandler &raised) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  unsigned long seen = gSigintSeq.load();
  std::thread worker([&] {
    try {
      run();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(m);
  while (!done) {
    cv.wait_for(lock, std::chrono::milliseconds(10));
    if (done || raised)
      continue;
    unsigned long now = gSigintSeq.load();
    if (now == seen)
      continue;
    seen = now;
    lock.unlock();
    {
      nb::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        PyErr_Fetch(&raised.type, &raised.value, &raised.traceback);
        scope.stop();
      }
    }
    lock.lock();
  }
  lock.unlock();
  worker.join();
  if (error)
    std::rethrow_exception(error);
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
  unsigned defaultStages = 0; // what num_stages=None means
};
GpuState &gpu(int device) {
  static std::map<int, GpuState> states; // (nodes never move: DeviceLauncher keeps pointers)
  GpuState &s = states[device];
  if (!s.backend) {
    tc::gpu::GpuOptions o;
    o.device = device;
    o.primaryContext = true;
    // $TRITON_C_DISABLE_OPT: the GPU tools' --disable-opt for the package's GPU
    // launches (e.g. `specialize`: one kernel for every argument class).
    if (const char *env = std::getenv("TRITON_C_DISABLE_OPT"); env && *env) {
      std::string error;
      if (!tc::codegen::disableOptimizations(o.codegen, env, error))
        throw nb::value_error(("TRITON_C_DISABLE_OPT=" + std::string(env) + ": " + error).c_str());
    }
    s.backend = tc::gpu::createGpuBackend(o);
    s.tuner = std::make_unique<tc::gpu::Autotuner>(*s.backend);
    s.defaultStages = s.backend->numStages();
  }
  return s;
}

/// The repeated launch of one kernel variant with CUDA tensors (the Python
/// layer's fast path, made after a first launch went through launch()).
/// Reads each argument straight from the tensor (type, dtype, device,
/// requires_grad, data_ptr) and each scalar from a Python int or float, and
/// launches asynchronously. Anything else — a tensor of another type, dtype or
/// device, one autograd watches, a scalar that does not fit, a claim that does
/// not hold, a CUDA error — makes call() return False having launched nothing,
/// and the caller takes launch(), which handles and reports every case.
class DeviceLauncher {
public:
  DeviceLauncher(std::shared_ptr<Kernel> k, int device, unsigned numWarps, unsigned numStages,
                 nb::list dtypes, nb::handle tensorType, nb::object bump)
      : kernel_(std::move(k)), device_(device), numWarps_(numWarps),
        tensorType_(nb::borrow(tensorType)), bump_(std::move(bump)) {
    const tc::ir::Function &fn = kernel_->compiled->function();
    if (nb::len(dtypes) != fn.numParams())
      throw nb::value_error("DeviceLauncher: one dtype (or None) per parameter");
    for (unsigned i = 0; i < fn.numParams(); ++i) {
      const tc::ir::Type &t = fn.param(i)->type();
      Param p;
      p.isPtr = t.isPtr;
      p.dtype = t.dtype;
      p.mayStore = kernel_->mayStore[i];
      if (t.isPtr) {
        if (dtypes[i].is_none())
          throw nb::value_error("DeviceLauncher: a pointer parameter needs its torch dtype");
        p.torchDtype = nb::borrow(dtypes[i]);
      }
      params_.push_back(std::move(p));
    }
    state_ = &gpu(device);
    numStages_ = numStages ? numStages : state_->defaultStages;
  }

  /// Launches with `args` (a tuple: the parameters, then anything) on `stream`;
  /// False: nothing was launched, take launch().
  bool call(nb::handle args, int64_t g0, int64_t g1, int64_t g2, uintptr_t stream,
            bool gradEnabled) {
    std::vector<uint64_t> values;
    unsigned written = 0;
    if (!collect(args, gradEnabled, values, written))
      return false;
    bool launched;
    {
      nb::gil_scoped_release release;
      // The backend finds the kernel compiled for these values' argument
      // classes (GpuBackend::launchVariant, runtime/Specialize.h), never one
      // compiled for another class: a launch of a new class takes launch().
      launched = state_->backend->launchDevice(*kernel_->compiled, {g0, g1, g2}, values.data(),
                                               numWarps_, numStages_,
                                               reinterpret_cast<void *>(stream));
    }
    if (!launched)
      return false;
    ++launches_;
    if (written) { // as an in-place op does: autograd refuses a backward that saved them
      nb::tuple ts = nb::steal<nb::tuple>(PyTuple_New(written));
      Py_ssize_t j = 0;
      size_t n = params_.size();
      PyObject *seq = args.ptr();
      for (size_t i = 0; i < n; ++i)
        if (params_[i].isPtr && params_[i].mayStore) {
          PyObject *o = PyTuple_GET_ITEM(seq, static_cast<Py_ssize_t>(i));
          Py_INCREF(o);
          PyTuple_SET_ITEM(ts.ptr(), j++, o);
        }
      bump_(ts);
    }
    return true;
  }

  /// The variant call() would launch with `args` (part of the backend's key
  /// for the compiled kernel: the argument classes), or None when call()
  /// would launch nothing. For tests: no GPU is needed.
  std::optional<std::string> variant(nb::handle args, bool gradEnabled) {
    std::vector<uint64_t> values;
    unsigned written = 0;
    if (!collect(args, gradEnabled, values, written))
      return std::nullopt;
    return state_->backend->launchVariant(*kernel_->compiled, values.data());
  }

  /// Launches made by call() (for tests: the fast path was taken).
  uint64_t launches() const { return launches_; }

private:
  /// Each parameter's raw value from `args` (as cuLaunchKernel takes it) and
  /// how many arguments the kernel may write; false: take launch().
  bool collect(nb::handle args, bool gradEnabled, std::vector<uint64_t> &values,
               unsigned &written) {
    static PyObject *sDtype = PyUnicode_InternFromString("dtype");
    static PyObject *sRequiresGrad = PyUnicode_InternFromString("requires_grad");
    static PyObject *sGetDevice = PyUnicode_InternFromString("get_device");
    static PyObject *sDataPtr = PyUnicode_InternFromString("data_ptr");
    static PyObject *sIsInference = PyUnicode_InternFromString("is_inference");
    PyObject *seq = args.ptr();
    size_t n = params_.size();
    if (!PyTuple_Check(seq) || static_cast<size_t>(PyTuple_GET_SIZE(seq)) < n)
      return false;
    values.assign(n, 0);
    written = 0;
    for (size_t i = 0; i < n; ++i) {
      PyObject *o = PyTuple_GET_ITEM(seq, static_cast<Py_ssize_t>(i));
      const Param &p = params_[i];
      if (p.isPtr) {
        if (reinterpret_cast<PyObject *>(Py_TYPE(o)) != tensorType_.ptr())
          return false;
        if (gradEnabled) {
          nb::object rg = nb::steal(PyObject_GetAttr(o, sRequiresGrad));
          if (!rg.is_valid() || rg.ptr() != Py_False)
            return failed();
        }
        if (p.mayStore) { // an inference tensor: the full path applies torch's rule
          nb::object inf = nb::steal(PyObject_CallMethodNoArgs(o, sIsInference));
          if (!inf.is_valid() || inf.ptr() != Py_False)
            return failed();
        }
        nb::object dt = nb::steal(PyObject_GetAttr(o, sDtype));
        if (!dt.is_valid() || !dt.is(p.torchDtype))
          return failed();
        nb::object dev = nb::steal(PyObject_CallMethodNoArgs(o, sGetDevice));
        if (!dev.is_valid() || !PyLong_Check(dev.ptr()) || PyLong_AsLong(dev.ptr()) != device_)
          return failed();
        nb::object ptr = nb::steal(PyObject_CallMethodNoArgs(o, sDataPtr));
        if (!ptr.is_valid() || !PyLong_Check(ptr.ptr()))
          return failed();
        values[i] = PyLong_AsUnsignedLongLong(ptr.ptr());
        if (PyErr_Occurred())
          return failed();
        written += p.mayStore;
        continue;
      }
      std::optional<tc::ScalarValue> v;
      if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred()))
          return failed();
        v = tc::ScalarValue::ofInt(DType::I64, x);
      } else if (PyFloat_CheckExact(o)) {
        v = tc::ScalarValue::ofFloat(DType::F64, PyFloat_AS_DOUBLE(o));
      } else {
        return false;
      }
      std::optional<uint64_t> bits = tc::scalarArgumentBits(*v, p.dtype);
      if (!bits)
        return false;
      values[i] = *bits;
    }
    return true;
  }

  struct Param {
    bool isPtr = false, mayStore = false;
    DType dtype = DType::F32;
    nb::object torchDtype;
  };
  static bool failed() {
    PyErr_Clear();
    return false;
  }
  std::shared_ptr<Kernel> kernel_;
  int device_;
  unsigned numWarps_, numStages_ = 0;
  nb::object tensorType_, bump_;
  std::vector<Param> params_;
  GpuState *state_ = nullptr;
  uint64_t launches_ = 0;
};

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
  k->mayStore = mayStore(*out.kernel);
  return k;
}

tc::HostArray hostArrayOf(nb::handle obj, const std::string &what) {
  std::optional<ArrayArg> a = asArray(obj, [&] { return what; });
  if (!a)
    throw nb::type_error((what + " is not an array").c_str());
  if (a->cuda)
    throw nb::type_error((what + " is a CUDA array; compare host copies").c_str());
  if (!a->contiguous)
    throw nb::type_error((what + " is not contiguous; compare contiguous copies").c_str());
  tc::HostArray h;
  h.dtype = a->dtype;
  h.shape = a->shape;
  h.data.assign(a->data, a->data + a->bytes);
  return h;
}

/// What one launch asks for beyond the arguments and the grid.
struct LaunchOptions {
  unsigned numWarps = 4, numStages = 0, threads = 0;
  uintptr_t stream = 0;
  double maxSeconds = 0;
  bool raceCheck = false, trace = false, accessMap = false;
};

/// Runs one launch; returns a dict: status ('ok', 'trap', 'error',
/// 'interrupted'), trap (dict) or error (str), written (the parameters whose
/// memory the kernel wrote: exact on the interpreter and for host arrays on
/// the GPU; for device arrays the parameters a store may reach), warnings
/// (never-written ranges), output (print / trace text), access_map (HTML).
nb::dict launch(const Kernel &k, const std::string &backend, nb::list args,
                const std::vector<std::string> &grid, const LaunchOptions &lo) {
  bool onGpu = backend == "gpu";
  if (!onGpu && backend != "interp")
    throw nb::value_error(("unknown backend '" + backend + "'").c_str());
  const tc::CompiledKernel &ck = *k.compiled;
  Bound b;
  bindArguments(ck, args, onGpu ? Target::Gpu : Target::Interp, b);
  std::array<int64_t, 3> g = evalGrid(ck, grid, b.args);
  tc::RunOptions opts;
  opts.maxSeconds = lo.maxSeconds;
  std::ostringstream out;
  opts.out = &out;
  tc::RunResult r;
  SigintMode mode = onGpu ? SigintMode::Continue : sigintMode();
  RaisedByHandler raised;
  {
    nb::gil_scoped_release release;
    if (onGpu) {
      GpuState &st = gpu(b.device);
      tc::gpu::GpuBackend &gb = *st.backend;
      gb.setNumWarps(lo.numWarps);
      gb.setNumStages(lo.numStages ? lo.numStages : st.defaultStages);
      gb.setStream(reinterpret_cast<void *>(lo.stream));
      r = gb.launch(ck, g, b.args, opts);
    } else {
      static const unsigned cores = std::max(1u, std::thread::hardware_concurrency()); // (reads /sys)
      opts.threads = lo.threads ? lo.threads : cores;
      opts.undoOnTrap = true;
      opts.raceCheck = lo.raceCheck;
      opts.trace = lo.trace;
      opts.accessMap = lo.accessMap;
      SigintScope sigint(mode);
      opts.cancel = sigint.cancel();
      if (sigint.asks())
        waitRunningHandlers([&] { r = interpreter().launch(ck, g, b.args, opts); }, sigint, raised);
      else
        r = interpreter().launch(ck, g, b.args, opts);
    }
  }
  if (raised) { // the Python SIGINT handler raised: its exception, arrays as they were
    if (r.status != tc::RunResult::Status::Ok) {
      PyErr_Restore(raised.type, raised.value, raised.traceback);
      throw nb::python_error();
    }
  }
  nb::dict d;
  d["output"] = pyText(out.str());
  const tc::ir::Function &fn = ck.function();
  nb::list written;
  if (r.status == tc::RunResult::Status::Ok) {
    if (onGpu) {
      std::vector<bool> changed;
      copyBack(b, changed);
      for (unsigned p = 0; p < fn.numParams(); ++p) {
        int i = b.arrayOf[p];
        if (i >= 0 && (b.arrays[static_cast<size_t>(i)]->device ? k.mayStore[p]
                                                                 : changed[static_cast<size_t>(i)]))
          written.append(fn.paramName(p));
      }
    } else {
      for (unsigned p = 0; p < fn.numParams(); ++p) {
        int i = b.arrayOf[p];
        if (i >= 0 && std::find(r.written.begin(), r.written.end(),
                                b.arrays[static_cast<size_t>(i)]->bytes()) != r.written.end())
          written.append(fn.paramName(p));
      }
    }
  }
  d["written"] = written;
  nb::list warnings;
  for (const tc::BufferAccess &ba : r.buffers) {
    // A strided view's buffer is its whole storage, most of which is no output.
    bool strided = false;
    for (unsigned p = 0; p < fn.numParams(); ++p)
      if (fn.paramName(p) == ba.name && b.arrayOf[p] >= 0)
        strided = !b.sources[static_cast<size_t>(b.arrayOf[p])].contiguous;
    if (strided)
      continue;
    if (std::string u = tc::describeUnwritten(ba); !u.empty())
      warnings.append(pyText("kernel '" + ck.name() + "': " + u));
  }
  d["warnings"] = warnings;
  if (lo.accessMap && r.status != tc::RunResult::Status::Error) {
    tc::AccessMapLaunch m;
    m.kernel = ck.name();
    m.title = ck.name();
    m.grid = g;
    m.buffers = r.buffers;
    d["access_map"] = tc::renderAccessMap(m);
  } else {
    d["access_map"] = nb::none();
  }
  switch (r.status) {
  case tc::RunResult::Status::Ok: d["status"] = "ok"; break;
  case tc::RunResult::Status::Trapped:
  {
    d["status"] = r.interrupted ? "interrupted" : "trap";
    nb::dict td = trapDict(*r.trap);
    td["state"] = stateDict(ck, b, r);
    d["trap"] = td;
    break;
  }
  case tc::RunResult::Status::Error:
    d["status"] = "error";
    d["error"] = pyText(r.error);
    break;
  }
  // The launch finished before the Python SIGINT handler's exception stopped
  // it: the results stand, and the Python layer raises the exception after
  // taking them (as Python raises it after the statement that was running).
  d["raised"] = nb::none();
  if (raised) {
    PyErr_NormalizeException(&raised.type, &raised.value, &raised.traceback);
    if (raised.traceback)
      PyException_SetTraceback(raised.value, raised.traceback);
    d["raised"] = nb::steal(raised.value);
    Py_XDECREF(raised.type);
    Py_XDECREF(raised.traceback);
  }
  return d;
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
      .def_prop_ro("defines", [](const Kernel &k) { return k.compiled->defines(); })
      .def_prop_ro(
          "may_store", [](const Kernel &k) { return k.mayStore; },
          "Per parameter: whether a store or atomic of the kernel may write it.");

  nb::class_<DeviceLauncher>(m, "DeviceLauncher",
                             "The repeated launch of one kernel variant with CUDA tensors.")
      .def(nb::init<std::shared_ptr<Kernel>, int, unsigned, unsigned, nb::list, nb::handle,
                    nb::object>(),
           "kernel"_a, "device"_a, "num_warps"_a, "num_stages"_a, "dtypes"_a, "tensor_type"_a,
           "bump"_a)
      .def("__call__", &DeviceLauncher::call, "args"_a, "g0"_a, "g1"_a, "g2"_a, "stream"_a,
           "grad_enabled"_a,
           "Launches; False: nothing was launched (take launch(), which reports why).")
      .def_prop_ro("launches", &DeviceLauncher::launches)
      .def("variant", &DeviceLauncher::variant, "args"_a, "grad_enabled"_a,
           "The compiled variant a launch with these arguments runs (the argument classes: "
           "'spec=.DD1'), or None when the fast path would launch nothing.");

  m.def(
      "triton_module",
      [](const Kernel &k, unsigned numWarps) {
        tc::tritonpy::Options o;
        o.sourceName = k.compiled->sources().numFiles() ? k.compiled->sources().name(0) : "";
        o.numWarps = numWarps;
        tc::tritonpy::Result r =
            tc::tritonpy::translate(k.compiled->module(), k.compiled->function(), o);
        return nb::make_tuple(r.ok() ? pyText(r.code) : nb::str(""), pyText(r.error));
      },
      "kernel"_a, "num_warps"_a = 4,
      "The kernel as a Python module of Triton's DSL (tritonc --emit=triton): (code, error); "
      "error names what Triton cannot express.");

  m.def(
      "eval_grid",
      [](const Kernel &k, const std::vector<std::string> &grid, nb::dict scalars) {
        tc::LaunchArgs args;
        for (auto [name, value] : scalars) {
          std::optional<tc::ScalarValue> v = asScalar(value);
          if (!v)
            throw nb::type_error(("grid: scalar '" + nb::cast<std::string>(name) +
                                  "' is not a number")
                                     .c_str());
          args.setScalar(nb::cast<std::string>(name), *v);
        }
        std::array<int64_t, 3> g = evalGrid(*k.compiled, grid, args);
        return nb::make_tuple(g[0], g[1], g[2]);
      },
      "kernel"_a, "grid"_a, "scalars"_a,
      "The grid's expressions evaluated with the kernel's defines and these scalar "
      "arguments: (x, y, z).");

  m.def(
      "source_identifiers",
      [](const Kernel &k) {
        std::set<std::string> used;
        const tc::SourceManager &sm = k.compiled->sources();
        for (uint32_t f = 0; f < sm.numFiles(); ++f)
          if (sm.name(f) != "<built-in>" && sm.name(f) != "<command line>")
            tc::addIdentifiers(sm.text(f), used);
        return std::vector<std::string>(used.begin(), used.end());
      },
      "The identifiers the kernel's source and its includes mention (not the defines).");

  m.def(
      "compile",
      [](const std::string &text, const std::string &name, const std::string &path,
         const tc::DefineList &defines, const std::vector<std::string> &includeDirs,
         const std::string &kernelName) {
        std::string diagnostics;
        std::shared_ptr<Kernel> k =
            compile(text, name, path, defines, includeDirs, kernelName, diagnostics);
        return nb::make_tuple(k ? nb::cast(k) : nb::none(), pyText(diagnostics));
      },
      "text"_a, "name"_a, "path"_a, "defines"_a, "include_dirs"_a, "kernel_name"_a,
      "Compiles one variant; returns (Kernel or None, rendered diagnostics).");

  m.def(
      "launch",
      [](const Kernel &k, const std::string &backend, nb::list args,
         const std::vector<std::string> &grid, unsigned numWarps, unsigned numStages,
         uintptr_t stream, unsigned threads, double maxSeconds, bool raceCheck, bool trace,
         bool accessMap) {
        LaunchOptions lo;
        lo.numWarps = numWarps;
        lo.numStages = numStages;
        lo.stream = stream;
        lo.threads = threads;
        lo.maxSeconds = maxSeconds;
        lo.raceCheck = raceCheck;
        lo.trace = trace;
        lo.accessMap = accessMap;
        return launch(k, backend, args, grid, lo);
      },
      "kernel"_a, "backend"_a, "args"_a, "grid"_a, "num_warps"_a = 4, "num_stages"_a = 0,
      "stream"_a = 0, "threads"_a = 0, "max_seconds"_a = 0.0, "race_check"_a = false,
      "trace"_a = false, "access_map"_a = false,
      "Runs one launch; returns a dict (status, trap or error, written, warnings, output, "
      "access_map).");

  m.def(
      "asm",
      [](const Kernel &k, const std::string &what, unsigned numWarps, unsigned sm) {
        if (what == "ir") {
          std::ostringstream os;
          tc::ir::printModule(k.compiled->module(), os);
          return os.str();
        }
        if (what != "llvm" && what != "ptx")
          throw nb::value_error(
              ("asm: expected 'ir', 'llvm' or 'ptx', got '" + what + "'").c_str());
        tc::codegen::Options o;
        o.numWarps = numWarps;
        o.sm = sm;
        o.alignedPointers = true; // as the GPU backend compiles
        o.wantLLVM = what == "llvm";
        tc::codegen::Result r;
        {
          nb::gil_scoped_release release;
          r = tc::codegen::compile(k.compiled->module(), k.compiled->function(), o);
        }
        if (!r.ok())
          throw std::runtime_error(r.error);
        return what == "llvm" ? r.compiled->llvmIR : r.compiled->ptx;
      },
      "kernel"_a, "what"_a, "num_warps"_a = 4, "sm"_a = 90,
      "The kernel's tile IR ('ir'), or the LLVM IR / PTX the GPU backend generates for it.");

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
        bindArguments(*base.compiled, args, Target::Copy, b);
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

  m.def(
      "dlpack_to_numpy",
      [](nb::handle obj) -> nb::object {
        // Imports the object's DLPack array once (writable unless only a
        // read-only import works) and hands it to NumPy zero-copy; the
        // import lives as long as the NumPy array.
        // The capsule is taken here and handed to nanobind as a capsule, so
        // nanobind marks it used: an object whose __dlpack__ returns the same
        // capsule twice is then refused the second time, instead of two
        // owners freeing one DLPack tensor (nanobind marks a capsule it got
        // from calling __dlpack__ itself as its own, not as used).
        // DLPack 1.0 first (max_version): only its versioned capsule says
        // whether the memory is read-only, and a read-only array must not
        // be written. A producer older than the keyword raises TypeError and
        // gets the plain call (no flag: taken as writable, as before 1.0).
        nb::object method = obj.attr("__dlpack__");
        nb::object cap;
        try {
          cap = method(nb::arg("max_version") = nb::make_tuple(1, 0));
        } catch (nb::python_error &e) {
          if (!e.matches(PyExc_TypeError))
            throw;
          cap = method();
        }
        if (!PyCapsule_CheckExact(cap.ptr()) ||
            (!PyCapsule_IsValid(cap.ptr(), "dltensor") &&
             !PyCapsule_IsValid(cap.ptr(), "dltensor_versioned")))
          return nb::none();
        auto *held = new nb::ndarray<nb::ro>();
        bool writable = true;
        {
          nb::ndarray<> w;
          if (nb::try_cast(cap, w))
            *held = nb::ndarray<nb::ro>(w);
          else if (!nb::try_cast(cap, *held)) {
            delete held;
            return nb::none();
          }
          else
            writable = false;
        }
        if (held->device_type() != nb::device::cpu::value) {
          delete held;
          throw nb::type_error("a DLPack array that is not in host memory");
        }
        nb::capsule owner(held, [](void *p) noexcept {
          delete static_cast<nb::ndarray<nb::ro> *>(p);
        });
        std::vector<size_t> shape(held->ndim());
        std::vector<int64_t> strides(held->ndim());
        for (size_t i = 0; i < held->ndim(); ++i) {
          shape[i] = held->shape(i);
          strides[i] = held->stride(i);
        }
        nb::ndarray<nb::numpy> out(const_cast<void *>(held->data()), held->ndim(), shape.data(),
                                   owner, strides.data(), held->dtype());
        nb::object arr = nb::cast(out);
        if (!writable)
          arr.attr("flags").attr("writeable") = false;
        return arr;
      },
      "obj"_a, "A NumPy array over the memory of a host DLPack array, or None.");

  m.def("lang_name", [](const std::string &conformance) {
    auto t = tc::parseConformanceName(conformance);
    if (!t)
      throw nb::value_error(("unknown dtype '" + conformance + "'").c_str());
    return std::string(tc::langName(*t));
  });

  m.def(
      "host_buffers",
      [](const Kernel &k, nb::list args, const std::string &backend) {
        if (backend != "gpu" && backend != "interp")
          throw nb::value_error(("unknown backend '" + backend + "'").c_str());
        Bound b;
        bindArguments(*k.compiled, args, backend == "gpu" ? Target::Gpu : Target::Interp, b);
        // The backends make one buffer (the GPU: one device allocation) per
        // distinct host memory: bytes and length.
        std::map<std::pair<const uint8_t *, size_t>, size_t> index;
        nb::list out;
        const tc::ir::Function &fn = k.compiled->function();
        for (unsigned p = 0; p < fn.numParams(); ++p) {
          int i = b.arrayOf[p];
          if (i < 0 || b.arrays[static_cast<size_t>(i)]->device) {
            out.append(nb::none());
            continue;
          }
          const tc::HostArray &h = *b.arrays[static_cast<size_t>(i)];
          auto [it, fresh] =
              index.emplace(std::make_pair(h.bytes(), h.byteCount()), index.size());
          out.append(nb::make_tuple(it->second, h.origin, h.byteCount()));
        }
        return out;
      },
      "kernel"_a, "args"_a, "backend"_a,
      "The host buffers a launch on `backend` ('interp' or 'gpu') would hand the backend, per "
      "parameter: (buffer index, the argument's byte offset in it, its bytes), or None for a "
      "scalar or a device array. One buffer per index (on the GPU: one copy, uploaded to one "
      "allocation and downloaded once); nothing runs.");

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
