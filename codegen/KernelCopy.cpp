// Helpers of the IR rewrites on a kernel's copy (KernelCopy.h).
#include "codegen/KernelCopy.h"

#include <map>

namespace tc::codegen {

KernelCopy copyKernel(const ir::Module &module, const ir::Function &fn) {
  KernelCopy out;
  out.module = std::make_unique<ir::Module>();
  out.module->files = module.files;
  out.function = out.module->addFunction(fn.name(), fn.loc());
  std::map<const ir::Value *, ir::Value *> map;
  for (unsigned i = 0; i < fn.numParams(); ++i)
    map[fn.param(i)] =
        out.function->addParam(fn.paramName(i), fn.param(i)->type(), fn.paramAttrs(i));
  ir::copyOps(fn.body(), out.function->body(), map);
  return out;
}

void replaceUses(ir::Block &b, const ir::Value *from, ir::Value *to) {
  for (auto &op : b.ops()) {
    for (unsigned i = 0; i < op->numOperands(); ++i)
      if (op->operand(i) == from)
        op->setOperand(i, to);
    for (const auto &r : op->regions())
      replaceUses(*r, from, to);
  }
}

void collectLoops(ir::Block &b, std::vector<ir::Op *> &loops) {
  for (auto &op : b.ops()) {
    for (const auto &r : op->regions())
      collectLoops(*r, loops);
    if (op->kind() == ir::OpKind::For || op->kind() == ir::OpKind::While)
      loops.push_back(op.get());
  }
}

} // namespace tc::codegen
