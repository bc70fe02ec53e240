//===- SharedDivisor.cpp - fp32 divisions by one divisor ------------------===//
//
// `acc / l[:, newaxis]` (attention's epilogue) or `num / den` (softmax)
// divides every element a thread holds of a row by the same value. Each
// `div.rn.f32` is, in SASS, a reciprocal (MUFU.RCP), five dependent FFMAs, an
// FCHK of the operands' range and a branch around a call of the slow path,
// inside a convergence region (BSSY/BSYNC) of its own: 32 of them run one
// after the other. This pass computes the divisor's reciprocal once,
// correctly rounded (y = RN(1/b), `rcp.rn.f32`), and each quotient as
//   q0 = RN(a * y), r = fma(-q0, b, a) (exact), q = RN(q0 + r * y),
// which is RN(a / b) when neither an overflow nor an underflow can occur
// (Markstein's theorem; `div.rn.f32`'s own fast path is the same sequence
// with a refined approximate reciprocal). The range kept is |a| and |b| in
// [2^-63, 2^63): then y, q0 and q are normal, no product overflows, and r,
// a multiple of 2^-110 or coarser, is exact. The tests
// SharedDivisor.FastPathIsCorrectlyRounded* compare the sequence against
// IEEE division on the host over every significand of a at several
// exponents (the range's corners) and random b.
//
// A group is the fdivs of a basic block before the first use of any of them,
// whose divisor divides at least kMinPerDivisor of them, at most kMaxGroup
// (the rest form the next group, which reuses the reciprocals). The block computes
// every fast quotient and one flag, "every a and b in range"; then
//   br flag, cont, slow;  slow: the original fdivs;  cont: phi(fast, slow)
// so a zero, subnormal, huge or non-finite operand anywhere in the group
// gives every quotient of the group through `div.rn.f32`, as before.
//
//===----------------------------------------------------------------------===//
#include "codegen/SharedDivisor.h"
#include "support/PlantedBugs.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace tc::codegen {
namespace {

constexpr unsigned kMinPerDivisor = 4;
// A group keeps its numerators live until its check (the slow path reads
// them) beside the fast quotients: at most this many at a time (attention's
// epilogue at HEAD_DIM 128, 64 quotients a thread, spilled with one group).
constexpr size_t kMaxGroup = 16;
constexpr int kRangeExp = 63; // |a|, |b| in [2^-kRangeExp, 2^kRangeExp)

bool isF32Div(const llvm::Instruction &inst) {
  return inst.getOpcode() == llvm::Instruction::FDiv && inst.getType()->isFloatTy();
}

/// |x| in the fast path's range (false for NaN).
llvm::Value *inRange(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Type *f = x->getType();
  double lo = plantedBug("shared-divisor-range") ? 0.0 : std::ldexp(1.0, -kRangeExp);
  llvm::Value *ge = b.CreateFCmpOGE(ax, llvm::ConstantFP::get(f, lo));
  llvm::Value *lt = b.CreateFCmpOLT(ax, llvm::ConstantFP::get(f, std::ldexp(1.0, kRangeExp)));
  return b.CreateAnd(ge, lt);
}

/// What a block's earlier groups computed for a divisor: its reciprocal and
/// the flag "the divisor is in range" (both in a block that dominates the
/// rest of the original block).
struct Divisor {
  llvm::Value *recip = nullptr, *ok = nullptr;
};
using Divisors = std::map<const llvm::Value *, Divisor>;

/// The group of `bb` from `from` on: the fdivs before the first instruction
/// that uses one of them (`end`), those of divisors with enough of them (or
/// whose reciprocal an earlier group computed), at most kMaxGroup. When the
/// group is cut short, `end` is the instruction after its last fdiv.
std::vector<llvm::Instruction *> findGroup(llvm::BasicBlock::iterator from, llvm::BasicBlock &bb,
                                           const Divisors &known, llvm::Instruction *&end) {
  std::vector<llvm::Instruction *> divs;
  std::set<const llvm::Value *> seen;
  end = bb.getTerminator();
  for (auto it = from; it != bb.end(); ++it) {
    llvm::Instruction &inst = *it;
    bool uses = false;
    for (const llvm::Use &u : inst.operands())
      uses |= seen.count(u.get()) != 0;
    if (uses || inst.isTerminator()) {
      end = &inst;
      break;
    }
    if (isF32Div(inst)) {
      divs.push_back(&inst);
      seen.insert(&inst);
    }
  }
  std::map<const llvm::Value *, unsigned> perDivisor;
  for (llvm::Instruction *d : divs)
    ++perDivisor[d->getOperand(1)];
  std::vector<llvm::Instruction *> group;
  for (llvm::Instruction *d : divs) {
    const llvm::Value *den = d->getOperand(1);
    if (llvm::isa<llvm::Constant>(den) ||
        (perDivisor[den] < kMinPerDivisor && !known.count(den)))
      continue;
    if (group.size() == kMaxGroup) {
      end = group.back()->getNextNode();
      break;
    }
    group.push_back(d);
  }
  return group;
}

/// Rewrites one group (see the file comment); returns the block that holds
/// `end` and what follows it, and sets `slowOut` to the slow path's block.
llvm::BasicBlock *rewriteGroup(const std::vector<llvm::Instruction *> &group,
                               llvm::Instruction *end, Divisors &known,
                               llvm::BasicBlock *&slowOut) {
  llvm::BasicBlock *bb = group.front()->getParent();
  llvm::Function *fn = bb->getParent();
  llvm::Module *m = fn->getParent();
  llvm::LLVMContext &ctx = m->getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(ctx);
  llvm::Function *rcp = llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::nvvm_rcp_rn_f);
  llvm::Function *mul = llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::nvvm_mul_rn_f);
  llvm::Function *fma = llvm::Intrinsic::getDeclaration(m, llvm::Intrinsic::nvvm_fma_rn_f);

  llvm::Value *ok = nullptr;
  std::set<const llvm::Value *> checked; // divisors whose flag is in `ok`
  std::vector<llvm::Value *> fast;
  for (llvm::Instruction *d : group) {
    llvm::IRBuilder<> b(d);
    b.SetCurrentDebugLocation(d->getDebugLoc());
    llvm::Value *a = d->getOperand(0), *den = d->getOperand(1);
    Divisor &dv = known[den];
    if (!dv.recip) {
      dv.recip = b.CreateCall(rcp, {den}, "rcp");
      dv.ok = inRange(b, den);
    }
    if (checked.insert(den).second)
      ok = ok ? b.CreateAnd(ok, dv.ok) : dv.ok;
    llvm::Value *y = dv.recip;
    llvm::Value *q0 = b.CreateCall(mul, {a, y});
    llvm::Value *r = b.CreateCall(fma, {b.CreateFNeg(q0), den, a});
    fast.push_back(b.CreateCall(fma, {r, y, q0}, "quot"));
    ok = b.CreateAnd(ok, inRange(b, a));
  }

  llvm::BasicBlock *cont = bb->splitBasicBlock(end, bb->getName() + ".div.cont");
  llvm::BasicBlock *slow =
      llvm::BasicBlock::Create(ctx, bb->getName() + ".div.slow", fn, cont);
  llvm::IRBuilder<> sb(slow);
  llvm::BranchInst *toCont = sb.CreateBr(cont);
  bb->getTerminator()->eraseFromParent();
  llvm::IRBuilder<> hb(bb);
  hb.CreateCondBr(ok, cont, slow, llvm::MDBuilder(ctx).createBranchWeights(1u << 20, 1));
  slowOut = slow;

  llvm::IRBuilder<> pb(cont, cont->begin());
  for (size_t i = 0; i < group.size(); ++i) {
    llvm::Instruction *d = group[i];
    d->moveBefore(toCont);
    llvm::PHINode *phi = pb.CreatePHI(f32, 2, d->getName());
    phi->addIncoming(fast[i], bb);
    phi->addIncoming(d, slow);
    d->replaceUsesWithIf(phi, [phi](llvm::Use &u) { return u.getUser() != phi; });
  }
  return cont;
}

} // namespace

std::set<std::string> shareDivisors(llvm::Module &m) {
  std::set<std::string> rewritten;
  for (llvm::Function &fn : m) {
    if (fn.isDeclaration())
      continue;
    std::vector<llvm::BasicBlock *> work;
    for (llvm::BasicBlock &bb : fn)
      work.push_back(&bb);
    std::set<llvm::BasicBlock *> slow; // blocks this pass made for slow paths
    std::map<llvm::BasicBlock *, Divisors> chain; // a cont block -> its head's divisors
    while (!work.empty()) {
      llvm::BasicBlock *bb = work.back();
      work.pop_back();
      if (slow.count(bb))
        continue;
      Divisors known = std::move(chain[bb]);
      chain.erase(bb);
      for (auto from = bb->begin(); from != bb->end();) {
        llvm::Instruction *end = nullptr;
        std::vector<llvm::Instruction *> group = findGroup(from, *bb, known, end);
        if (group.empty()) {
          if (end->isTerminator())
            break;
          from = std::next(end->getIterator()); // the next group starts after that use
          continue;
        }
        rewritten.insert(fn.getName().str());
        llvm::BasicBlock *slowBlock = nullptr;
        llvm::BasicBlock *cont = rewriteGroup(group, end, known, slowBlock);
        slow.insert(slowBlock);
        chain[cont] = std::move(known);
        work.push_back(cont); // the rest of the block, from the first use on
        break;
      }
    }
  }
  return rewritten;
}

bool sharedDivisorQuotient(float a, float b, float &q) {
  auto in = [](float x) {
    return std::fabs(x) >= std::ldexp(1.0f, -kRangeExp) && std::fabs(x) < std::ldexp(1.0f, kRangeExp);
  };
  if (!in(a) || !in(b))
    return false;
  volatile float y = 1.0f / b; // RN(1/b), as rcp.rn.f32
  volatile float q0 = a * y;   // mul.rn.f32
  float r = std::fma(-q0, b, a);
  q = std::fma(r, y, q0);
  return true;
}

} // namespace tc::codegen
