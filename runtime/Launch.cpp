// The data types of the public launch API (HostArray, ScalarValue, LaunchArgs,
// CompiledKernel) and compileKernel. Grid expressions: GridExpr.cpp.
#include "runtime/Launch.h"

#include "frontend/Compiler.h"
#include "support/EditDistance.h"
#include "support/SourceManager.h"
#include "support/ValueBits.h"

#include <atomic>
#include <cassert>
#include <cstring>

namespace tc {

int64_t HostArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostArray HostArray::zeros(DType t, std::vector<int64_t> shape) {
  HostArray a;
  a.dtype = t;
  a.shape = std::move(shape);
  a.data.assign(static_cast<size_t>(a.numElements()) * byteSize(t), 0);
  return a;
}

uint64_t HostArray::getBits(int64_t i) const {
  uint64_t bits = 0;
  unsigned size = byteSize(dtype);
  std::memcpy(&bits, bytes() + static_cast<size_t>(i) * size, size); // little-endian host
  return bits;
}

void HostArray::setBits(int64_t i, uint64_t bits) {
  unsigned size = byteSize(dtype);
  std::memcpy(bytes() + static_cast<size_t>(i) * size, &bits, size);
}

double HostArray::getDouble(int64_t i) const {
  uint64_t bits = getBits(i);
  if (isFloat(dtype))
    return num::floatValue(dtype, bits);
  return static_cast<double>(num::intValue(dtype, bits));
}

void HostArray::setDouble(int64_t i, double v) {
  if (isFloat(dtype)) {
    setBits(i, num::floatBits(dtype, v));
    return;
  }
  if (dtype == DType::Bool) {
    setBits(i, v != 0 ? 1 : 0);
    return;
  }
  __int128 iv = v >= 0x1p100 || v <= -0x1p100 || v != v ? 0 : static_cast<__int128>(v);
  setBits(i, num::wrapInt(dtype, iv));
}

ScalarValue ScalarValue::ofInt(DType t, int64_t v) {
  ScalarValue s;
  s.dtype = t;
  if (isFloat(t)) {
    s.f = static_cast<double>(v);
    s.bits = num::floatBits(t, s.f);
  } else {
    s.bits = num::wrapInt(t, v);
  }
  return s;
}

ScalarValue ScalarValue::ofFloat(DType t, double v) {
  ScalarValue s;
  s.dtype = t;
  if (isFloat(t)) {
    s.bits = num::floatBits(t, v);
    s.f = num::floatValue(t, s.bits);
  } else {
    s.bits = num::wrapInt(t, static_cast<__int128>(v));
  }
  return s;
}

double ScalarValue::asDouble() const {
  if (isFloat(dtype))
    return num::floatValue(dtype, bits);
  return static_cast<double>(num::intValue(dtype, bits));
}

int64_t ScalarValue::asInt() const {
  if (isFloat(dtype))
    return static_cast<int64_t>(num::floatValue(dtype, bits));
  return static_cast<int64_t>(num::intValue(dtype, bits));
}

bool validNumWarps(int64_t w) {
  return w >= 1 && w <= 32 && (w & (w - 1)) == 0;
}

CompiledKernel::CompiledKernel(std::unique_ptr<ir::Module> module, const ir::Function *function,
                               std::shared_ptr<SourceManager> sources, DefineList defines)
    : module_(std::move(module)), function_(function), sources_(std::move(sources)),
      defines_(std::move(defines)) {
  static std::atomic<uint64_t> next{1};
  id_ = next++;
}

CompiledKernel::~CompiledKernel() = default;

std::string CompiledKernel::sourceLine(uint32_t file, uint32_t line) const {
  if (file >= module_->files.size())
    return "";
  const std::string &name = module_->files[file];
  for (uint32_t f = 0; f < sources_->numFiles(); ++f)
    if (sources_->name(f) == name)
      return escapeInvalidUtf8(sources_->lineText(f, line)); // (reports stay valid UTF-8)
  return "";
}

void LaunchArgs::setBuffer(const std::string &name, HostArray *array) { buffers_[name] = array; }
void LaunchArgs::setScalar(const std::string &name, ScalarValue v) { scalars_[name] = v; }

HostArray *LaunchArgs::buffer(const std::string &name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second;
}

const ScalarValue *LaunchArgs::scalar(const std::string &name) const {
  auto it = scalars_.find(name);
  return it == scalars_.end() ? nullptr : &it->second;
}

CompileOutcome compileKernel(const CompileRequest &req) {
  CompileOutcome out;
  CompileOptions opts;
  opts.defines = req.defines;
  opts.undefines = req.undefines;
  opts.includeDirs = req.includeDirs;
  opts.warningsAsErrors = req.warningsAsErrors;
  opts.kernel = req.kernelName;
  auto c = std::make_shared<Compilation>(opts);
  c->diags().setOutput(nullptr);
  bool loaded = true;
  if (!req.path.empty())
    loaded = c->addMainFile(req.path);
  else
    loaded = c->addMainSource(req.sourceName.empty() ? "<source>" : req.sourceName, req.sourceText);
  bool ok = loaded && c->run(Stage::Lower);
  for (const Diagnostic &d : c->diags().diagnostics()) {
    // Source text may hold any bytes: messages are valid UTF-8 for every consumer.
    out.diagnostics += escapeInvalidUtf8(c->diags().render(d));
    if (d.severity == Severity::Error)
      out.errors.push_back(
          {escapeInvalidUtf8(d.message), c->sourceManager().outermost(d.loc).line});
  }
  if (!ok)
    return out;
  std::unique_ptr<ir::Module> module = c->takeModule();
  const ir::Function *chosen = nullptr;
  if (req.kernelName.empty()) {
    if (module->functions.size() == 1) {
      chosen = module->functions[0].get();
    } else {
      std::string names;
      for (const auto &f : module->functions)
        names += (names.empty() ? "" : ", ") + f->name();
      std::string msg = names.empty()
                            ? "no kernel in the source (a kernel is a __global__ void function)"
                            : "several kernels in the source (" + names + "); pick one by name";
      out.errors.push_back({msg, 0});
      out.diagnostics += "error: " + msg + "\n";
      return out;
    }
  } else {
    chosen = module->lookup(req.kernelName);
    if (!chosen) {
      std::vector<std::string> names;
      for (const auto &f : module->functions)
        names.push_back(f->name());
      std::string msg =
          "no kernel named '" + req.kernelName + "'" + didYouMean(req.kernelName, names);
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      out.errors.push_back({msg, 0});
      out.diagnostics += "error: " + msg + "\nnote: the source's kernels: " + list + "\n";
      return out;
    }
  }
  // The kernel keeps the compilation's SourceManager alive through an aliasing pointer.
  std::shared_ptr<SourceManager> sm(c, &c->sourceManager());
  out.kernel = std::make_shared<CompiledKernel>(std::move(module), chosen, std::move(sm),
                                                req.defines);
  out.kernel->setSourceDefines(c->integerMacros());
  return out;
}

} // namespace tc
