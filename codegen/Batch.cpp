// Many kernels, each from its own IR module, in one PTX module (Codegen.h).
#include "codegen/Codegen.h"
#include "codegen/CompileKernels.h"

#include <map>

namespace tc::codegen {
namespace {

// Copies a function into another module (ir::copyOps, locations mapped to
// the destination's file table).
class FunctionCopier {
public:
  FunctionCopier(ir::Module &dst, const ir::Module &src) : dst_(dst), src_(src) {}

  ir::Location loc(ir::Location l) {
    if (l.file < src_.files.size())
      l.file = dst_.fileIndex(src_.files[l.file]);
    return l;
  }

  ir::Function *copy(const ir::Function &fn, const std::string &name) {
    ir::Function *out = dst_.addFunction(name, loc(fn.loc()));
    for (unsigned i = 0; i < fn.numParams(); ++i)
      map_[fn.param(i)] = out->addParam(fn.paramName(i), fn.param(i)->type(), fn.paramAttrs(i));
    ir::copyOps(fn.body(), out->body(), map_, [this](ir::Location l) { return loc(l); });
    return out;
  }

private:
  ir::Module &dst_;
  const ir::Module &src_;
  std::map<const ir::Value *, ir::Value *> map_;
};

} // namespace

ir::Function *copyFunction(ir::Module &dst, const ir::Module &src, const ir::Function &fn,
                           const std::string &name) {
  return FunctionCopier(dst, src).copy(fn, name);
}

BatchResult compileBatch(const std::vector<BatchKernel> &kernels, const Options &opts,
                         bool launchInfo) {
  BatchResult out;
  ir::Module merged;
  std::vector<const ir::Function *> fns;
  for (size_t i = 0; i < kernels.size(); ++i)
    fns.push_back(copyFunction(merged, *kernels[i].module, *kernels[i].function,
                               kernels[i].function->name() + "_b" + std::to_string(i)));
  // Each kernel's launch interface comes from the one lowering that made the
  // module (before 2026-12-04 each kernel was lowered once more for it).
  std::vector<BatchEntry> entries;
  Result r = compileKernels(merged, fns, opts, entries);
  if (!r.ok()) {
    out.error = r.error;
    return out;
  }
  if (launchInfo)
    out.kernels = std::move(entries);
  out.compiled = std::move(r.compiled);
  return out;
}

} // namespace tc::codegen
