// The loaded form of a case: variants, compile requests, argument binding.
// The loader itself is CaseLoader.cpp.
#include "conformance/Case.h"

namespace tc::conf {

int64_t ArgSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostArray makeBuffer(const ArgSpec &arg) {
  switch (arg.init) {
  case InitKind::Data:
  case InitKind::Npy:
    return arg.contents;
  case InitKind::Fill: {
    HostArray a = HostArray::zeros(arg.dtype, arg.shape);
    for (int64_t i = 0, n = a.numElements(); i < n; ++i)
      a.setBits(i, arg.fillBits);
    return a;
  }
  case InitKind::Random: {
    HostArray a = HostArray::zeros(arg.dtype, arg.shape);
    fillRandom(a, arg.random);
    return a;
  }
  }
  return HostArray::zeros(arg.dtype, arg.shape);
}

std::string_view expectKindName(ExpectKind k) {
  switch (k) {
  case ExpectKind::Outputs:
    return "outputs";
  case ExpectKind::CompileError:
    return "compile_error";
  case ExpectKind::Trap:
    return "trap";
  case ExpectKind::ImplementationDefined:
    return "implementation_defined";
  }
  return "outputs";
}

std::vector<Variant> Case::variants() const {
  std::vector<Variant> out;
  for (DefineList &l : expandDefines(defines)) {
    Variant v;
    v.label = describeVariant(defines, l);
    v.defines = std::move(l);
    out.push_back(std::move(v));
  }
  return out;
}

bool Case::runsOn(std::string_view backend) const {
  if (backends.empty())
    return true;
  for (const std::string &b : backends)
    if (b == backend)
      return true;
  return false;
}

CompileRequest Case::compileRequest(const Variant &v, const Suite &suite) const {
  CompileRequest r;
  if (!sourceFile.empty()) {
    r.path = sourceFile;
  } else {
    r.sourceName = sourceName;
    r.sourceText = source;
  }
  r.defines = v.defines;
  r.includeDirs = {suite.dir.empty() ? "." : suite.dir};
  r.kernelName = kernel;
  return r;
}

const ArgSpec *Case::arg(std::string_view argName) const {
  for (const ArgSpec &a : args)
    if (a.name == argName)
      return &a;
  return nullptr;
}

const Case *Suite::find(std::string_view caseName) const {
  for (const Case &c : cases)
    if (c.name == caseName)
      return &c;
  return nullptr;
}

void overrideDefaultTolerances(Suite &s, const ToleranceOverride &o) {
  for (Case &c : s.cases)
    for (OutputSpec &out : c.expect.outputs)
      if (!out.compareGiven)
        out.compare = defaultCompare(out.want.dtype, o);
}

std::unique_ptr<BoundArgs> bindArgs(const Case &c) {
  auto b = std::make_unique<BoundArgs>();
  for (const ArgSpec &a : c.args) {
    if (!a.isBuffer) {
      b->buffers.push_back(nullptr);
      b->initial.emplace_back();
      b->launch.setScalar(a.name, a.scalar);
      continue;
    }
    HostArray init = makeBuffer(a);
    b->buffers.push_back(std::make_unique<HostArray>(init));
    b->initial.push_back(std::move(init));
    b->launch.setBuffer(a.name, b->buffers.back().get());
  }
  return b;
}

} // namespace tc::conf
