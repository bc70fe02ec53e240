// LLVM module -> PTX: link libdevice, run the O3 pipeline, emit with NVPTX.
#include "codegen/Codegen.h"
#include "codegen/CompileKernels.h"
#include "codegen/Libdevice.h"
#include "codegen/Lower.h"
#include "codegen/PtxLint.h"
#include "codegen/ScalarEmit.h"
#include "codegen/SharedDivisor.h"
#include "support/PlantedBugs.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/OptBisect.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Local.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tc::codegen {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// LLVM's fatal errors (a backend that cannot select an instruction, say)
/// end the process: say what happened as a compiler error, not a bare
/// `LLVM ERROR:` and an abort with a core dump, and exit with 70 (EX_SOFTWARE).
void reportLlvmFatalError(void *, const char *reason, bool) {
  std::fprintf(stderr,
               "error: internal compiler error: LLVM's NVPTX code generator stopped: %s\n"
               "note: this is a bug in the GPU backend or in LLVM, not in the kernel; please "
               "report it with the kernel's source and its -D values\n",
               reason);
  std::fflush(stderr);
  std::_Exit(70);
}

} // namespace

void installLlvmFatalErrorHandler() {
  static std::once_flag once;
  std::call_once(once, [] { llvm::install_fatal_error_handler(reportLlvmFatalError); });
}

namespace {

void initTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    installLlvmFatalErrorHandler();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// sm_<sm>, or the architecture-specific sm_<sm>a (wgmma, setmaxnreg) when
/// archSpecific: LLVM then writes `.target sm_90a` and PTX ISA 8.0.
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(unsigned sm, bool archSpecific,
                                                       unsigned optLevel, std::string &error) {
  initTarget();
  const std::string triple = "nvptx64-nvidia-cuda";
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions to;
  // No contraction: results match the reference. (Planted bug fp-contract:
  // LLVM may fuse a * b + c, a rounding fewer.)
  to.AllowFPOpFusion =
      plantedBug("fp-contract") ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  // O3 keeps the backend at Default: Aggressive emitted the same PTX for the
  // bench kernels (matmul, softmax, transpose, vector add) and took 20% longer
  // (matmul 128x128x64: 85 -> 68 ms); ptxas optimises the PTX in any case.
  auto level = optLevel >= 2   ? llvm::CodeGenOptLevel::Default
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                               : llvm::CodeGenOptLevel::None;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, "sm_" + std::to_string(sm) + (archSpecific ? "a" : ""),
                                  "", to, llvm::Reloc::PIC_, std::nullopt, level));
}

/// Links the libdevice functions the module calls and internalises them.
bool linkLibdevice(llvm::Module &m, std::string &error) {
  std::string needed;
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_") && needed.empty())
      needed = f.getName().str();
  if (needed.empty())
    return true;
  if (std::string missing = libdeviceMissing(); !missing.empty()) {
    error =
        "the kernel calls a GPU math function (" + needed + "), which needs libdevice; " + missing;
    return false;
  }
  std::string_view bc = libdeviceBitcode();
  // Lazily: only the bodies of the functions the kernel needs are read (the
  // linker materialises them); parsing all of libdevice took most of a small
  // kernel's compile time.
  auto lib = llvm::getLazyBitcodeModule(
      llvm::MemoryBufferRef(llvm::StringRef(bc.data(), bc.size()), "libdevice.10.bc"),
      m.getContext());
  if (!lib) {
    error = "cannot read the embedded libdevice: " + llvm::toString(lib.takeError());
    return false;
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded)) {
    error = "linking libdevice failed";
    return false;
  }
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}

/// Options::optBisectLimit: lets the first `limit` optional passes run and
/// skips the rest, recording each one offered. Installed on the LLVMContext
/// (the legacy pass manager of the NVPTX code generator asks it) and asked by
/// the optimiser's pass instrumentation.
class BisectGate : public llvm::OptPassGate {
public:
  explicit BisectGate(int limit) : limit_(limit) {}
  bool shouldRunPass(const llvm::StringRef pass, llvm::StringRef ir) override {
    seen.push_back(pass.str() + (ir.empty() ? "" : " on " + ir.str()));
    return static_cast<int64_t>(seen.size()) <= limit_;
  }
  bool isEnabled() const override { return true; }
  std::vector<std::string> seen;

private:
  int64_t limit_;
};

/// The name of the IR unit a new-PM pass runs on, for BisectGate's list.
std::string irUnitName(const llvm::Any &ir) {
  if (const auto *f = llvm::any_cast<const llvm::Function *>(&ir))
    return (*f)->getName().str();
  if (const auto *l = llvm::any_cast<const llvm::Loop *>(&ir))
    return "loop " + (*l)->getHeader()->getName().str();
  if (llvm::any_cast<const llvm::Module *>(&ir))
    return "module";
  return "";
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm, unsigned optLevel,
              BisectGate *gate = nullptr) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks pic;
  if (gate)
    pic.registerShouldRunOptionalPassCallback([gate](llvm::StringRef pass, llvm::Any ir) {
      return gate->shouldRunPass(pass, irUnitName(ir));
    });
  llvm::PassBuilder pb(&tm, llvm::PipelineTuningOptions(), std::nullopt, gate ? &pic : nullptr);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  auto level = optLevel >= 3   ? llvm::OptimizationLevel::O3
               : optLevel == 2 ? llvm::OptimizationLevel::O2
               : optLevel == 1 ? llvm::OptimizationLevel::O1
                               : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

/// Marks every loop of `m` `llvm.loop.unroll.runtime.disable` (before the
/// optimiser): LLVM's NVPTX target unrolls loops whose trip count is known
/// only at run time (by 8, with a remainder loop in front), and ptxas (CUDA
/// 13.0, sm_90) miscompiles the unrolled loop's exit test for some trip
/// counts: `for (i = K; i > 0; i -= 1)` became a loop that ran on forever for
/// K = 16 and ended for K = 8, 9 and 24 (three gpu-hang findings of the fuzz
/// campaign of seed 20261207; docs/upstream/ptxas-runtime-unroll-exit.md).
/// Loops with a constant trip count are still unrolled, and ptxas unrolls the
/// rolled loops itself.
void keepRuntimeLoopsRolled(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  for (llvm::Function &f : m) {
    if (f.isDeclaration())
      continue;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop *loop : li.getLoopsInPreorder()) {
      llvm::SmallVector<llvm::BasicBlock *, 4> latches;
      loop->getLoopLatches(latches);
      llvm::SmallVector<llvm::Metadata *, 4> ops = {nullptr};
      if (llvm::MDNode *old = loop->getLoopID())
        for (unsigned i = 1; i < old->getNumOperands(); ++i)
          ops.push_back(old->getOperand(i));
      ops.push_back(
          llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.runtime.disable")));
      llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, ops);
      id->replaceOperandWith(0, id);
      for (llvm::BasicBlock *latch : latches)
        latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
  }
}

/// Rewrites every `sitofp i1` (or of a vector of i1) into a select of -1.0
/// and 0.0. LLVM 19's NVPTX selects `sitofp i1` as a signed cvt of `selp 1, 0`,
/// so true became +1.0 instead of -1.0. The frontend converts bool with
/// `uitofp`, but InstCombine forms `sitofp i1` from `-(int)b`, `~(b - 1)`,
/// `b - 1` or `b % k` then converted to a float, so this runs after the
/// optimiser (which would fold the select back).
void legalizeBoolToFloat(llvm::Module &m) {
  std::vector<llvm::SIToFPInst *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *cvt = llvm::dyn_cast<llvm::SIToFPInst>(&inst);
          cvt && cvt->getSrcTy()->isIntOrIntVectorTy(1))
        work.push_back(cvt);
  for (llvm::SIToFPInst *cvt : work) {
    llvm::IRBuilder<> b(cvt);
    llvm::Type *ty = cvt->getType();
    llvm::Value *legal = b.CreateSelect(cvt->getOperand(0), llvm::ConstantFP::get(ty, -1.0),
                                        llvm::ConstantFP::get(ty, 0.0));
    legal->takeName(cvt);
    cvt->replaceAllUsesWith(legal);
    cvt->eraseFromParent();
  }
}

/// `~x` through inline PTX, which neither LLVM nor ptxas folds into a `neg`
/// together with the `+ 1` after it (widths below 32 go through 32 bits).
llvm::Value *opaqueNot(llvm::IRBuilder<> &b, llvm::Value *x) {
  auto *ty = llvm::cast<llvm::IntegerType>(x->getType());
  bool wide = ty->getBitWidth() > 32;
  llvm::Type *reg = wide ? b.getInt64Ty() : b.getInt32Ty();
  auto *asmTy = llvm::FunctionType::get(reg, {reg}, false);
  auto *notAsm = llvm::InlineAsm::get(asmTy, wide ? "not.b64 $0, $1;" : "not.b32 $0, $1;",
                                      wide ? "=l,l" : "=r,r", /*hasSideEffects=*/false);
  llvm::Value *n = b.CreateCall(asmTy, notAsm, {b.CreateZExtOrTrunc(x, reg)});
  return b.CreateZExtOrTrunc(n, ty);
}

/// `scalar(b, x)` for a scalar `x`; element by element for a vector (the
/// inline PTX of the opaque helpers takes one register).
template <typename Scalar>
llvm::Value *perElement(llvm::IRBuilder<> &b, llvm::Value *x, Scalar scalar) {
  auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vty)
    return scalar(b, x);
  llvm::Value *out = llvm::PoisonValue::get(vty);
  for (unsigned i = 0; i < vty->getNumElements(); ++i)
    out = b.CreateInsertElement(out, scalar(b, b.CreateExtractElement(x, i)), i);
  return out;
}

/// `0 - x` as `~x + 1`, element by element for vectors.
llvm::Value *opaqueNeg(llvm::IRBuilder<> &b, llvm::Value *x) {
  return perElement(b, x, [](llvm::IRBuilder<> &b, llvm::Value *e) {
    return b.CreateAdd(opaqueNot(b, e), llvm::ConstantInt::get(e->getType(), 1));
  });
}

/// Whether `inst` is `x * C` or `x / C` (signed) with C a negative constant
/// (or a splat of one): InstCombine's forms of `-(x << k)`, `-(x * c)` and
/// `-(x / c)`, which NVPTX writes as a `neg` of the shift, product or
/// quotient (seed 20261821 kernel 180: `max(max(~x, -(x << 1)), ~~x)` became
/// `VIMNMX3 (~x, x << 1, x)`). Not a division by the most negative value,
/// whose negation is itself.
bool isNegatingMul(const llvm::Instruction *inst) {
  const llvm::APInt *c = nullptr;
  if (!llvm::PatternMatch::match(inst->getOperand(1), llvm::PatternMatch::m_APInt(c)) ||
      !c->isNegative())
    return false;
  return inst->getOpcode() == llvm::Instruction::Mul ||
         (inst->getOpcode() == llvm::Instruction::SDiv && !c->isMinSignedValue());
}

/// Hides every negation `0 - x` (and difference `a - x`) that an integer
/// min/max takes as an operand (or a right shift, or a bitcast to a float:
/// takesHiddenNegation) behind `~x + 1` with the `~` in inline PTX. ptxas (CUDA 13.0, sm_90, -O1
/// and up, also the driver's JIT) fuses two chained min/max into one
/// three-input VIMNMX3 and drops a `neg` it folds into one of its operands:
/// `min(min(a, -b), c)` became `min(a, b, c)` (docs/upstream/ptxas-vimnmx3-neg.md;
/// found by the GPU fuzz campaigns of 2026-11-26 and 2026-11-28). A difference
/// `a - b` taken by a min/max is hidden the same way, as `a + (~b + 1)`:
/// `max(2 - x, 0) + 2` came out wrong too (campaign of 2026-11-27, seed
/// 20261209 kernel 57892; right at ptxas -O0). ptxas keeps
/// `~x + 1` as a LOP3 and an add. Runs after the optimiser, which would fold
/// it back into `0 - x`.
/// Whether `user` takes the difference `sub` where ptxas misfolds its
/// negation: an integer min/max, the shifted operand of a right shift, or a
/// bitcast of a negation `0 - x` to a float.
/// ptxas (CUDA 13.0, the driver 580 JIT, sm_90; right at -O0) folds
/// `(0 - x) >> 1` into `LEA.HI.SX32 d, -x, a, 0x1f`, which shifts before it
/// negates: `(-1) >> 1` came out 0, not -1 (seed 20261320 kernel 35709,
/// `x0 + ((-rm) >> 1)` stored to int64; tests/lit/gpu/fuzz-neg-shift.tc).
/// It also folds the integer `neg` of a float's bits, compared with 0
/// (`setp.gt.f64 (mov.b64 (neg.s64 x)), 0`), into the float negation
/// modifier of an FSETP/DSETP/HSETP2 (`0 < -x`), which differs when x's
/// bits or -x's are a NaN: `bitcast<double>(-S) > 0` with S = -2 (the bits
/// of a NaN; -S is the smallest subnormal) came out false (seed 20261601
/// kernel 139394; docs/upstream/ptxas-neg-bits-setp.md,
/// tests/lit/gpu/fuzz-neg-bits-setp.tc).
bool takesHiddenNegation(const llvm::User *user, const llvm::Value *sub) {
  if (llvm::isa<llvm::MinMaxIntrinsic>(user))
    return true;
  // A negation (not a difference) that an integer compare takes: the code
  // generator turns `x < -y && x < n` into `x < min(-y, n)` after this pass
  // (seed 2026120695 kernel 1130, found by the hazard check of a compile-only
  // campaign: `min.s32 (neg.s32 r), n`).
  if (llvm::isa<llvm::ICmpInst>(user))
    return isNegatingMul(llvm::cast<llvm::Instruction>(sub)) ||
           llvm::PatternMatch::match(llvm::cast<llvm::User>(sub)->getOperand(0),
                                     llvm::PatternMatch::m_Zero());
  if (llvm::isa<llvm::BitCastInst>(user) && user->getType()->isFPOrFPVectorTy())
    return isNegatingMul(llvm::cast<llvm::Instruction>(sub)) ||
           llvm::PatternMatch::match(llvm::cast<llvm::User>(sub)->getOperand(0),
                                     llvm::PatternMatch::m_Zero());
  auto *shift = llvm::dyn_cast<llvm::BinaryOperator>(user);
  return shift &&
         (shift->getOpcode() == llvm::Instruction::AShr ||
          shift->getOpcode() == llvm::Instruction::LShr) &&
         shift->getOperand(0) == sub;
}

void hideNegatedMinMaxOperands(llvm::Module &m) {
  std::vector<llvm::BinaryOperator *> negs;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *sub = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
      if (!sub || (sub->getOpcode() != llvm::Instruction::Sub && !isNegatingMul(sub)) ||
          !sub->getType()->isIntOrIntVectorTy() || sub->getType()->getScalarSizeInBits() > 64)
        continue;
      for (llvm::User *u : sub->users())
        if (takesHiddenNegation(u, sub)) {
          negs.push_back(sub);
          break;
        }
    }
  for (llvm::BinaryOperator *sub : negs) {
    llvm::IRBuilder<> b(sub->getNextNode());
    b.SetCurrentDebugLocation(sub->getDebugLoc());
    llvm::Value *hidden = nullptr;
    if (isNegatingMul(sub)) {
      // x * C as -(x * -C), which wraps to the same bits for every C; x / C as
      // -(x / -C), the same since the division truncates.
      auto *c = llvm::cast<llvm::Constant>(sub->getOperand(1));
      llvm::Value *pos = sub->getOpcode() == llvm::Instruction::Mul
                             ? b.CreateMul(sub->getOperand(0), llvm::ConstantExpr::getNeg(c))
                             : b.CreateSDiv(sub->getOperand(0), llvm::ConstantExpr::getNeg(c));
      hidden = opaqueNeg(b, pos);
    } else {
      hidden = opaqueNeg(b, sub->getOperand(1));
      if (!llvm::PatternMatch::match(sub->getOperand(0), llvm::PatternMatch::m_Zero()))
        hidden = b.CreateAdd(sub->getOperand(0), hidden); // a - b as a + (~b + 1)
    }
    sub->replaceUsesWithIf(hidden,
                           [sub](llvm::Use &use) { return takesHiddenNegation(use.getUser(), sub); });
    if (sub->use_empty())
      sub->eraseFromParent();
  }
}

/// Hides every integer `abs(x)` that a bitcast to a float takes as
/// `x < 0 ? ~x + 1 : x`, the `~` in inline PTX. ptxas (CUDA 13.0, sm_90, -O1
/// and up; right at -O0) folds the integer `abs` of a uniform value whose bits
/// are compared as a float with 0 into the compare's float absolute-value
/// modifier (`FSETP.LT RZ, |x|`), as it folds a `neg` into its negation
/// modifier (takesHiddenNegation): wrong where x's bits are a NaN, so
/// `bitcast<float>(abs(A)) > 0` with A = -2 read false
/// (docs/upstream/ptxas-neg-bits-setp.md, tests/lit/gpu/fuzz-neg-bits-setp.tc).
/// Runs after the optimiser, which would fold it back into an `abs`.
void hideAbsOfFloatBits(llvm::Module &m) {
  std::vector<llvm::IntrinsicInst *> work;
  auto isFloatBitcast = [](const llvm::Use &u) {
    return llvm::isa<llvm::BitCastInst>(u.getUser()) && u.getUser()->getType()->isFPOrFPVectorTy();
  };
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
          ii && ii->getIntrinsicID() == llvm::Intrinsic::abs &&
          ii->getType()->getScalarSizeInBits() <= 64 && llvm::any_of(ii->uses(), isFloatBitcast))
        work.push_back(ii);
  for (llvm::IntrinsicInst *abs : work) {
    llvm::IRBuilder<> b(abs->getNextNode());
    b.SetCurrentDebugLocation(abs->getDebugLoc());
    llvm::Value *x = abs->getArgOperand(0);
    llvm::Value *hidden = b.CreateSelect(
        b.CreateICmpSLT(x, llvm::Constant::getNullValue(x->getType())), opaqueNeg(b, x), x);
    abs->replaceUsesWithIf(hidden, isFloatBitcast);
  }
}

/// Whether the bits of `v` are those of a bool in every case ptxas can see:
/// the constants 0, 1 and all ones (of any type), undef, `zext`/`sext` of an
/// i1, and selects, phis, integer extensions and truncations, and bitcasts of
/// such values.
bool isBoolBits(const llvm::Value *v, unsigned depth, llvm::SmallPtrSetImpl<const llvm::Value *> &seen) {
  if (llvm::isa<llvm::UndefValue>(v))
    return true;
  auto boolConstant = [](const llvm::Constant *c) {
    llvm::APInt bits;
    if (auto *ci = llvm::dyn_cast<llvm::ConstantInt>(c))
      bits = ci->getValue();
    else if (auto *cf = llvm::dyn_cast<llvm::ConstantFP>(c))
      bits = cf->getValueAPF().bitcastToAPInt();
    else
      return llvm::isa<llvm::UndefValue>(c);
    return bits.isZero() || bits.isOne() || bits.isAllOnes();
  };
  if (auto *c = llvm::dyn_cast<llvm::Constant>(v)) {
    auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(c->getType());
    if (!vty)
      return boolConstant(c);
    for (unsigned i = 0; i < vty->getNumElements(); ++i) {
      const llvm::Constant *e = c->getAggregateElement(i);
      if (!e || !boolConstant(e))
        return false;
    }
    return true;
  }
  if (depth == 0)
    return false;
  if (!seen.insert(v).second)
    return true; // a cycle through phis adds no other value
  if (auto *cast = llvm::dyn_cast<llvm::CastInst>(v)) {
    if ((llvm::isa<llvm::ZExtInst>(cast) || llvm::isa<llvm::SExtInst>(cast)) &&
        cast->getSrcTy()->isIntOrIntVectorTy(1))
      return true;
    // Widening, narrowing or reinterpreting the bits of a bool keeps them a bool's.
    return (llvm::isa<llvm::ZExtInst>(cast) || llvm::isa<llvm::SExtInst>(cast) ||
            llvm::isa<llvm::TruncInst>(cast) || llvm::isa<llvm::BitCastInst>(cast)) &&
           isBoolBits(cast->getOperand(0), depth - 1, seen);
  }
  if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(v))
    return isBoolBits(sel->getTrueValue(), depth - 1, seen) &&
           isBoolBits(sel->getFalseValue(), depth - 1, seen);
  if (auto *phi = llvm::dyn_cast<llvm::PHINode>(v))
    return llvm::all_of(phi->incoming_values(),
                        [&](const llvm::Use &in) { return isBoolBits(in.get(), depth - 1, seen); });
  return false;
}

bool isBoolBits(const llvm::Value *v) {
  llvm::SmallPtrSet<const llvm::Value *, 8> seen;
  return !llvm::isa<llvm::Constant>(v) && isBoolBits(v, 6, seen);
}

/// `x` (an integer of at most 64 bits) through an identity `prmt.b32` in
/// inline PTX for each 32-bit word: the same bits, in a register whose value
/// ptxas does not know.
llvm::Value *opaqueScalarBits(llvm::IRBuilder<> &b, llvm::Value *x) {
  bool wide = x->getType()->getIntegerBitWidth() > 32;
  llvm::Type *reg = wide ? b.getInt64Ty() : b.getInt32Ty();
  auto *asmTy = llvm::FunctionType::get(reg, {reg}, false);
  auto *prmt = llvm::InlineAsm::get(
      asmTy,
      wide ? "{\n\t.reg .b32 %tc_lo, %tc_hi;\n\tmov.b64 {%tc_lo, %tc_hi}, $1;\n\t"
             "prmt.b32 %tc_lo, %tc_lo, 0, 0x3210;\n\tprmt.b32 %tc_hi, %tc_hi, 0, 0x3210;\n\t"
             "mov.b64 $0, {%tc_lo, %tc_hi};\n\t}"
           : "prmt.b32 $0, $1, 0, 0x3210;",
      wide ? "=l,l" : "=r,r", /*hasSideEffects=*/false);
  llvm::Value *r = b.CreateCall(asmTy, prmt, {b.CreateZExtOrTrunc(x, reg)});
  return b.CreateZExtOrTrunc(r, x->getType());
}

/// opaqueScalarBits of an integer or of each element of a vector of them.
llvm::Value *opaqueBits(llvm::IRBuilder<> &b, llvm::Value *x) {
  return perElement(b, x, opaqueScalarBits);
}

/// Hides from ptxas every register whose bits are a bool's (isBoolBits: a
/// `selp 1, 0`, a phi of 0 and 1) where it is used as a float: a bitcast of
/// such an integer to a float, and a float select or phi of such bits (the
/// subnormal 2^-149 and 0), go through opaqueBits. ptxas (CUDA 13.0, also
/// the driver 580 JIT, sm_90; right at -O0) takes such a register for a bool
/// in float arithmetic: it turned `(double)bitcast<float>(b)` of a bool b
/// into `b ? 1.0 : 0.0` (the bits 1 read as the number 1), so `v < acc` with
/// v those bits and acc = 1.0 came out false (seed 20261811 kernel 125084),
/// and it tests a compare with 1.0 `!= 0` (compareWithOneAsBits; seed
/// 20261801 kernel 59412). docs/upstream/ptxas-bool-bits-float.md,
/// tests/lit/gpu/fuzz-bool-bits-float.tc. Runs after the optimiser, which would
/// see through nothing here but could move the bitcasts.
void hideBoolBitsFromFloats(llvm::Module &m) {
  std::vector<llvm::BitCastInst *> casts;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *bc = llvm::dyn_cast<llvm::BitCastInst>(&inst);
          bc && bc->getType()->isFPOrFPVectorTy() && bc->getSrcTy()->isIntOrIntVectorTy() &&
          bc->getSrcTy()->getScalarSizeInBits() <= 64 && isBoolBits(bc->getOperand(0)))
        casts.push_back(bc);
  for (llvm::BitCastInst *bc : casts) {
    llvm::IRBuilder<> b(bc);
    b.SetCurrentDebugLocation(bc->getDebugLoc());
    bc->setOperand(0, opaqueBits(b, bc->getOperand(0)));
  }
  // Float selects and phis of the bits (after the bitcasts above, which no
  // longer count: their operands are opaque now).
  std::vector<llvm::Instruction *> floats;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if ((llvm::isa<llvm::SelectInst>(inst) || llvm::isa<llvm::PHINode>(inst)) &&
          inst.getType()->isFPOrFPVectorTy() && inst.getType()->getScalarSizeInBits() <= 64 &&
          isBoolBits(&inst))
        floats.push_back(&inst);
  for (llvm::Instruction *v : floats) {
    llvm::IRBuilder<> b(v->getParent(), v->getParent()->getFirstInsertionPt());
    if (!llvm::isa<llvm::PHINode>(v))
      b.SetInsertPoint(v->getNextNode());
    b.SetCurrentDebugLocation(v->getDebugLoc());
    llvm::Type *ity = v->getType()->getWithNewType(b.getIntNTy(v->getType()->getScalarSizeInBits()));
    auto *bits = llvm::cast<llvm::Instruction>(b.CreateBitCast(v, ity));
    llvm::Value *hidden = b.CreateBitCast(opaqueBits(b, bits), v->getType());
    v->replaceUsesWithIf(hidden, [bits](llvm::Use &u) { return u.getUser() != bits; });
  }
}

/// Rewrites every float equality test against 1.0 (`x == 1.0`, `x != 1.0`,
/// ordered or not; any float width, scalar or splat) as a test of x's bits.
/// ptxas (CUDA 13.0, also the driver 580 JIT, sm_90; right at -O0) takes a
/// register it knows holds the integer 0 or 1 (a phi of `selp 1, 0` or of the
/// constants 0 and 1), compared as a float for equality with 1.0, for a bool:
/// it tests `!= 0` instead, so the bits 1 (the smallest subnormal) read as equal
/// to 1.0. `min(bitcast<float>(b % 3), 1.0)` with b true came out 1, not 0: the
/// min's tie test `x == 1.0` took the wrong arm (seed 20261801 kernel 59412;
/// docs/upstream/ptxas-bool-bits-float.md, tests/lit/gpu/fuzz-bool-bits-float.tc).
/// Exact: 1.0 has one encoding, so `x == 1.0` is `bits(x) == bits(1.0)`, and a
/// NaN (the unordered forms) is `(bits(x) & ~sign) > bits(inf)`. ptxas compares
/// those integers right. Runs after the optimiser, which would fold it back.
void compareWithOneAsBits(llvm::Module &m) {
  using namespace llvm::PatternMatch;
  std::vector<llvm::FCmpInst *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *cmp = llvm::dyn_cast<llvm::FCmpInst>(&inst);
          cmp && cmp->isEquality() &&
          (match(cmp->getOperand(0), m_FPOne()) || match(cmp->getOperand(1), m_FPOne())))
        work.push_back(cmp);
  for (llvm::FCmpInst *cmp : work) {
    llvm::IRBuilder<> b(cmp);
    b.SetCurrentDebugLocation(cmp->getDebugLoc());
    bool oneFirst = match(cmp->getOperand(0), m_FPOne());
    llvm::Value *x = cmp->getOperand(oneFirst ? 1 : 0);
    llvm::Type *fty = x->getType();
    unsigned width = fty->getScalarSizeInBits();
    llvm::Type *ity = fty->getWithNewType(b.getIntNTy(width));
    const llvm::fltSemantics &sem = fty->getScalarType()->getFltSemantics();
    auto bitsOf = [&](const llvm::APFloat &v) {
      return llvm::ConstantInt::get(ity, v.bitcastToAPInt());
    };
    llvm::Value *bits = b.CreateBitCast(x, ity);
    llvm::Value *same = b.CreateICmpEQ(bits, bitsOf(llvm::APFloat::getOne(sem)));
    llvm::Value *out = nullptr;
    switch (cmp->getPredicate()) {
    case llvm::CmpInst::FCMP_OEQ:
      out = same;
      break;
    case llvm::CmpInst::FCMP_UNE:
      out = b.CreateNot(same);
      break;
    case llvm::CmpInst::FCMP_UEQ:
    case llvm::CmpInst::FCMP_ONE: {
      llvm::APInt magnitude = llvm::APInt::getSignedMaxValue(width);
      llvm::Value *nan = b.CreateICmpUGT(b.CreateAnd(bits, llvm::ConstantInt::get(ity, magnitude)),
                                         bitsOf(llvm::APFloat::getInf(sem)));
      out = cmp->getPredicate() == llvm::CmpInst::FCMP_UEQ
                ? b.CreateOr(same, nan)
                : b.CreateAnd(b.CreateNot(same), b.CreateNot(nan));
      break;
    }
    default:
      continue; // isEquality() admits only the four above
    }
    out->takeName(cmp);
    cmp->replaceAllUsesWith(out);
    cmp->eraseFromParent();
  }
}

/// Whether `v`, a value computed at run time (not a constant), is used, other
/// than by `except`, by 16-bit float arithmetic (an fadd/fsub/fmul/fdiv/frem,
/// an fneg or a call such as fma).
bool feedsHalfArithmetic(const llvm::Value *v, const llvm::User *except) {
  if (llvm::isa<llvm::Constant>(v))
    return false;
  for (const llvm::User *u : v->users()) {
    if (u == except || !u->getType()->getScalarType()->is16bitFPTy())
      continue;
    if (llvm::isa<llvm::BinaryOperator>(u) || llvm::isa<llvm::UnaryOperator>(u) ||
        llvm::isa<llvm::CallInst>(u))
      return true;
  }
  return false;
}

/// A select of two 16-bit floats, `cond ? t : f`, as the low half of
/// `{t, f} >> (cond ? 0 : 16)` with the pack and the shift in inline PTX: the
/// same bits, and no `selp.b16` for ptxas to turn into a predicated update.
llvm::Value *opaqueHalfSelect(llvm::IRBuilder<> &b, llvm::Value *cond, llvm::Value *t,
                              llvm::Value *f) {
  llvm::Type *i16 = b.getInt16Ty();
  auto *asmTy = llvm::FunctionType::get(i16, {i16, i16, b.getInt32Ty()}, false);
  auto *selAsm =
      llvm::InlineAsm::get(asmTy,
                           "{\n\t.reg .b32 %tc_sel;\n\tmov.b32 %tc_sel, {$1, $2};\n\t"
                           "shr.b32 %tc_sel, %tc_sel, $3;\n\tcvt.u16.u32 $0, %tc_sel;\n\t}",
                           "=h,h,h,r", /*hasSideEffects=*/false);
  llvm::Value *shift = b.CreateSelect(cond, b.getInt32(0), b.getInt32(16));
  llvm::Value *bits =
      b.CreateCall(asmTy, selAsm, {b.CreateBitCast(t, i16), b.CreateBitCast(f, i16), shift});
  return b.CreateBitCast(bits, t->getType());
}

/// Hides every select of two 16-bit floats (fp16, bf16) one of whose operands
/// also feeds 16-bit float arithmetic. ptxas (CUDA 13.0 and 13.2, sm_90, -O1
/// and up, also the driver's JIT) turns the `selp.b16` into a predicated
/// update of the register holding that operand, then pairs the other
/// arithmetic on the operand with an operation after the select into one
/// HADD2/HFMA2 placed after the update, which so reads the select's result
/// instead of the operand: `(a - b) + (a - (p ? b : c))` gave
/// `2 * (a - (p ? b : c))` (docs/upstream/ptxas-hadd2-select.md; seed 20261207
/// kernel 109221, 4 instead of 2 on an H100; right at ptxas -O0). Selects of
/// vectors are left alone: the lowering emits 16-bit float selects one
/// element at a time (tests/lit/gpu/fuzz-half-select.tc checks a vectorised
/// kernel). Runs after the optimiser, which would fold it back into a select.
void hideHalfSelects(llvm::Module &m) {
  std::vector<llvm::SelectInst *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(&inst);
          sel && sel->getType()->is16bitFPTy() &&
          (feedsHalfArithmetic(sel->getTrueValue(), sel) ||
           feedsHalfArithmetic(sel->getFalseValue(), sel)))
        work.push_back(sel);
  for (llvm::SelectInst *sel : work) {
    llvm::IRBuilder<> b(sel);
    b.SetCurrentDebugLocation(sel->getDebugLoc());
    llvm::Value *out =
        opaqueHalfSelect(b, sel->getCondition(), sel->getTrueValue(), sel->getFalseValue());
    out->takeName(sel);
    sel->replaceAllUsesWith(out);
    sel->eraseFromParent();
  }
}

/// Whether `u` turns a bool into a number (zext, sext, uitofp, sitofp).
bool materializesBool(const llvm::User *u) {
  return llvm::isa<llvm::ZExtInst>(u) || llvm::isa<llvm::SExtInst>(u) ||
         llvm::isa<llvm::UIToFPInst>(u) || llvm::isa<llvm::SIToFPInst>(u);
}

/// `cast` (a zext/sext/uitofp/sitofp of a bool) computed from `wide`, the
/// same bool as a 32-bit 0 or 1.
llvm::Value *castFromWideBool(llvm::IRBuilder<> &b, llvm::CastInst *cast, llvm::Value *wide) {
  llvm::Type *to = cast->getDestTy();
  switch (cast->getOpcode()) {
  case llvm::Instruction::ZExt: return b.CreateZExtOrTrunc(wide, to);
  case llvm::Instruction::SExt:
    return b.CreateNeg(b.CreateZExtOrTrunc(wide, to)); // true is all ones
  case llvm::Instruction::UIToFP: return b.CreateUIToFP(wide, to);
  default: // SIToFP: true is -1
    return b.CreateSIToFP(b.CreateNeg(wide), to);
  }
}

/// Carries every bool phi that is also turned into a number (a bool stored,
/// added, converted) as a 32-bit 0/1 instead of a predicate. ptxas (CUDA 13.0,
/// also the driver 580 JIT, sm_90; right at -O0) moves a `selp.u32 %r, 1, 0,
/// %p` past a later in-place update of `%p` (`xor.pred %p, %p, %q`, which is
/// how LLVM's PHI elimination writes a second bool phi into the first one's
/// register), so the number reads the updated bool: seed 20261208 kernel
/// 23167 (`r1 - x1` with r1 the loaded bool, acc3 = x0 flipped K times in the
/// predicate x0 had) stored nothing where it had to store 1
/// (docs/upstream/ptxas-selp-pred-update.md). With the phi in a 32-bit
/// register, each number is read from it and the predicate is a fresh
/// `setp` after the join. Runs after the optimiser, which would narrow it back.
void widenMaterializedBoolPhis(llvm::Module &m) {
  std::vector<llvm::PHINode *> work;
  for (llvm::Function &f : m)
    for (llvm::BasicBlock &bb : f)
      for (llvm::PHINode &phi : bb.phis())
        if (phi.getType()->isIntOrIntVectorTy(1) &&
            llvm::any_of(phi.users(), [](const llvm::User *u) { return materializesBool(u); }))
          work.push_back(&phi);
  for (llvm::PHINode *phi : work) {
    llvm::Type *wideTy = phi->getType()->getWithNewBitWidth(32);
    llvm::PHINode *wide = llvm::PHINode::Create(wideTy, phi->getNumIncomingValues(),
                                                phi->getName() + ".wide", phi->getIterator());
    wide->setDebugLoc(phi->getDebugLoc());
    std::map<llvm::BasicBlock *, llvm::Value *> fromBlock; // a block may come in twice
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      llvm::BasicBlock *pred = phi->getIncomingBlock(i);
      llvm::Value *&w = fromBlock[pred];
      if (!w) {
        llvm::Value *v = phi->getIncomingValue(i);
        if (v == phi) {
          w = wide;
        } else {
          llvm::IRBuilder<> b(pred->getTerminator());
          w = b.CreateZExt(v, wideTy); // folded for a constant
        }
      }
      wide->addIncoming(w, pred);
    }
    llvm::IRBuilder<> b(&*phi->getParent()->getFirstInsertionPt());
    b.SetCurrentDebugLocation(phi->getDebugLoc());
    llvm::Value *asBool = b.CreateICmpNE(wide, llvm::Constant::getNullValue(wideTy));
    for (llvm::User *u : llvm::make_early_inc_range(phi->users())) {
      auto *cast = llvm::dyn_cast<llvm::CastInst>(u);
      if (!cast || !materializesBool(cast))
        continue;
      llvm::IRBuilder<> cb(cast);
      cb.SetCurrentDebugLocation(cast->getDebugLoc());
      llvm::Value *num = castFromWideBool(cb, cast, wide);
      num->takeName(cast);
      cast->replaceAllUsesWith(num);
      cast->eraseFromParent();
    }
    phi->replaceAllUsesWith(asBool);
    phi->eraseFromParent();
  }
}

/// The high 32 bits of `prod`, a 64-bit product `x * y`: `mul.hi.s32` /
/// `mul.hi.u32` of the low halves when both factors are 32-bit numbers
/// sign- (zero-) extended, which is the same value, else `prod`'s `shr.u64`
/// by 32 in inline PTX.
llvm::Value *opaqueProductHigh(llvm::IRBuilder<> &b, const llvm::DataLayout &dl,
                               llvm::BinaryOperator *prod) {
  llvm::Value *x = prod->getOperand(0), *y = prod->getOperand(1);
  bool bothSigned = llvm::ComputeNumSignBits(x, dl) > 32 && llvm::ComputeNumSignBits(y, dl) > 32;
  bool bothUnsigned = llvm::computeKnownBits(x, dl).countMinLeadingZeros() >= 32 &&
                      llvm::computeKnownBits(y, dl).countMinLeadingZeros() >= 32;
  llvm::Type *i32 = b.getInt32Ty();
  if (bothSigned || bothUnsigned)
    return b.CreateIntrinsic(
        i32, bothSigned ? llvm::Intrinsic::nvvm_mulhi_i : llvm::Intrinsic::nvvm_mulhi_ui,
        {b.CreateTrunc(x, i32), b.CreateTrunc(y, i32)});
  auto *asmTy = llvm::FunctionType::get(i32, {b.getInt64Ty()}, false);
  auto *hiAsm = llvm::InlineAsm::get(asmTy,
                                     "{\n\t.reg .b64 %tc_hi;\n\tshr.u64 %tc_hi, $1, 32;\n\t"
                                     "cvt.u32.u64 $0, %tc_hi;\n\t}",
                                     "=r,l", /*hasSideEffects=*/false);
  return b.CreateCall(asmTy, hiAsm, {prod});
}

/// Takes every high half of a 64-bit product, `(i32)(x * y >> 32)` (how
/// `umulhi` of 32-bit integers lowers), without the 64-bit multiply whose
/// upper word LLVM splits out with `mov.b64 {lo, hi}`. ptxas (CUDA 13.0, also
/// the driver 580 JIT, sm_80 to sm_100, -O2 and up; right at -O0 and -O1) rewrites
/// `hi(x * y) * c`, with `y` and `c` the same on each trip round a loop, as
/// `x * hi(y * c)` computed before the loop, where the sign word of `c` is
/// read from R1 (the stack pointer): seed 20261310 kernel 58417
/// (`umulhi(r1, x0) * x1` in a do-while loop) stored -1998779392 where 0 is
/// right (docs/upstream/ptxas-mul-hi-loop.md). `mul.hi.s32` / `mul.hi.u32`
/// (and `shr.u64` for 64-bit factors) come out right. Runs after the
/// optimiser, which would form the 64-bit multiply again.
void hideProductHighHalves(llvm::Module &m) {
  using namespace llvm::PatternMatch;
  std::vector<std::pair<llvm::TruncInst *, llvm::BinaryOperator *>> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *tr = llvm::dyn_cast<llvm::TruncInst>(&inst);
      llvm::Value *wide = nullptr;
      if (!tr || !tr->getType()->isIntegerTy(32) || !tr->getSrcTy()->isIntegerTy(64) ||
          !match(tr->getOperand(0), m_CombineOr(m_LShr(m_Value(wide), m_SpecificInt(32)),
                                                m_AShr(m_Value(wide), m_SpecificInt(32)))))
        continue;
      if (auto *prod = llvm::dyn_cast<llvm::BinaryOperator>(wide);
          prod && prod->getOpcode() == llvm::Instruction::Mul)
        work.emplace_back(tr, prod);
    }
  const llvm::DataLayout &dl = m.getDataLayout();
  for (auto [tr, prod] : work) {
    llvm::IRBuilder<> b(tr);
    b.SetCurrentDebugLocation(tr->getDebugLoc());
    llvm::Value *hi = opaqueProductHigh(b, dl, prod);
    hi->takeName(tr);
    llvm::Value *shift = tr->getOperand(0);
    tr->replaceAllUsesWith(hi);
    tr->eraseFromParent();
    llvm::RecursivelyDeleteTriviallyDeadInstructions(shift);
  }
}

/// The select with a zero arm among `op`'s operands (an integer and/or/xor),
/// and the operand's index; null when there is none.
std::pair<llvm::SelectInst *, unsigned> zeroArmSelectOperand(llvm::BinaryOperator *op) {
  using namespace llvm::PatternMatch;
  for (unsigned i = 0; i < 2; ++i)
    if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(op->getOperand(i));
        sel && (match(sel->getTrueValue(), m_Zero()) || match(sel->getFalseValue(), m_Zero())))
      return {sel, i};
  return {nullptr, 0};
}

/// Moves every integer select with a zero arm that an and/or/xor takes below
/// that operation: `(p ? v : 0) & x` becomes `p ? (v & x) : 0`, and
/// `(p ? v : 0) | x` (also `^`) becomes `p ? (v | x) : x`. ptxas (CUDA 13.0,
/// also the driver 580 JIT, sm_90, -O1 and up; right at -O0) turns such a
/// pair into a LOP3 that ands with a mask `SEL Rm, RZ, 0xffffffff, !P`, and
/// where two loops take the same invariant condition (an unrolled loop and its
/// remainder) it computes the mask in the first loop only: the remainder loop,
/// reached without the first when the trip count is below the unroll factor,
/// read a register that never held the mask. Seed 20261320 kernel 88674
/// (`acc8 += (v7 * i9) & (x0 ^ v6)` for i9 below K = 2, v7 a bool read from a
/// slice) summed to 0 where 1 is right (docs/upstream/ptxas-lop3-mask-loop.md,
/// tests/lit/gpu/fuzz-select-and-loop.tc). A select that ends in anything but
/// a logic operation is left a plain SEL. Runs after the optimiser, which
/// would fold it back.
void sinkZeroArmSelectsBelowLogic(llvm::Module &m) {
  std::vector<llvm::WeakTrackingVH> work; // null once erased (an op may be queued twice)
  auto isLogic = [](const llvm::Value *v) {
    auto *op = llvm::dyn_cast<llvm::BinaryOperator>(v);
    return op && op->isBitwiseLogicOp() && op->getType()->getScalarSizeInBits() > 1;
  };
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if (isLogic(&inst))
        work.emplace_back(&inst);
  while (!work.empty()) {
    auto *op = llvm::cast_or_null<llvm::BinaryOperator>(work.back());
    work.pop_back();
    auto [sel, idx] = op ? zeroArmSelectOperand(op) : std::pair<llvm::SelectInst *, unsigned>{};
    if (!sel)
      continue;
    llvm::Value *other = op->getOperand(1 - idx);
    bool zeroOnTrue = llvm::PatternMatch::match(sel->getTrueValue(), llvm::PatternMatch::m_Zero());
    llvm::Value *v = zeroOnTrue ? sel->getFalseValue() : sel->getTrueValue();
    llvm::IRBuilder<> b(op);
    b.SetCurrentDebugLocation(op->getDebugLoc());
    llvm::Value *inner = b.CreateBinOp(op->getOpcode(), v, other);
    llvm::Value *otherwise = op->getOpcode() == llvm::Instruction::And
                                 ? llvm::Constant::getNullValue(op->getType())
                                 : other; // 0 | x = 0 ^ x = x
    llvm::Value *out = zeroOnTrue ? b.CreateSelect(sel->getCondition(), otherwise, inner)
                                  : b.CreateSelect(sel->getCondition(), inner, otherwise);
    if (!llvm::isa<llvm::Constant>(out)) // IRBuilder folds constant operands
      out->takeName(op);
    op->replaceAllUsesWith(out);
    op->eraseFromParent();
    llvm::RecursivelyDeleteTriviallyDeadInstructions(sel);
    if (isLogic(inner)) // `v & other` may take another zero-arm select
      work.emplace_back(inner);
    for (llvm::User *u : out->users()) // and the new select may feed a logic op
      if (isLogic(u))
        work.emplace_back(u);
  }
}

/// Converts every float to an 8- or 16-bit integer (`fptosi`/`fptoui`) as a
/// conversion to a 32-bit integer and a truncation, the same bits for every
/// value in the target's range (the others are undefined on the GPU either
/// way). ptxas (CUDA 13.0, also the driver 580 JIT, sm_90, -O2 and up; right
/// at -O0 and -O1) rematerialises a `cvt.rzi.s16.f32` that is used before a
/// loop holding a call (the `div.rn.f32` slow path) and again after it, copies
/// it with `PRMT Rx, Ry, 0x7610, Rx` (the low half only) and then compares
/// and converts Rx as the sign-extended 32-bit value, reading the stale upper
/// half: seed 20261320 kernel 156135 (`(int8)min(max(kc, x0), ...)` used
/// before a K loop of divisions and in an if/else after it) compared
/// 0x40000003 where 3 was right and its atomic_cas wrote nothing
/// (docs/upstream/ptxas-f2i16-remat.md, tests/lit/gpu/fuzz-f2i16-remat.tc).
/// With a 32-bit F2I, ptxas sign-extends the narrow value explicitly. Runs
/// after the optimiser, which would narrow the conversion again.
void widenNarrowFloatToInt(llvm::Module &m) {
  std::vector<llvm::CastInst *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f))
      if ((llvm::isa<llvm::FPToSIInst>(&inst) || llvm::isa<llvm::FPToUIInst>(&inst)) &&
          inst.getType()->getScalarSizeInBits() < 32 && inst.getType()->getScalarSizeInBits() > 1)
        work.push_back(llvm::cast<llvm::CastInst>(&inst));
  for (llvm::CastInst *cvt : work) {
    llvm::IRBuilder<> b(cvt);
    b.SetCurrentDebugLocation(cvt->getDebugLoc());
    llvm::Type *wide = cvt->getType()->getWithNewBitWidth(32);
    // Every value of an 8/16-bit type, signed or unsigned, is an int32.
    llvm::Value *w = b.CreateFPToSI(cvt->getOperand(0), wide);
    llvm::Value *out = b.CreateTrunc(w, cvt->getType());
    if (!llvm::isa<llvm::Constant>(out))
      out->takeName(cvt);
    cvt->replaceAllUsesWith(out);
    cvt->eraseFromParent();
  }
}

/// Whether `v` is a 32-bit value that NVPTX computes as a bare `mul.hi`: an
/// unsigned division by a constant that is not a power of two (LLVM's magic
/// number; without a shift where the dividend's range allows), or the
/// `mul.hi` intrinsics (hideProductHighHalves writes them).
bool isMulHiLike(const llvm::Value *v) {
  using namespace llvm::PatternMatch;
  const llvm::APInt *d = nullptr;
  if (match(v, m_UDiv(m_Value(), m_APInt(d))))
    return !d->isPowerOf2();
  auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(v);
  return ii && (ii->getIntrinsicID() == llvm::Intrinsic::nvvm_mulhi_i ||
                ii->getIntrinsicID() == llvm::Intrinsic::nvvm_mulhi_ui);
}

/// Whether the 64-bit `v` is a bare `mul.hi` zero-extended: `zext(m)` with m
/// isMulHiLike, or `(x * y) >> 32` of two 32-bit factors, unsigned or
/// signed (how `umulhi` of 32-bit integers reads once InstCombine has dropped
/// the truncation; NVPTX selects `mul.hi.u32` or `mul.hi.s32` and
/// `cvt.u64.u32`).
bool isWidenedMulHi(const llvm::Value *v) {
  using namespace llvm::PatternMatch;
  const llvm::Value *hi = nullptr, *x = nullptr, *y = nullptr;
  if (match(v, m_ZExt(m_Value(hi))))
    return hi->getType()->isIntegerTy(32) && isMulHiLike(hi);
  auto narrowFactor = [](const llvm::Value *f) {
    const llvm::APInt *c = nullptr;
    if (match(f, m_APInt(c)))
      return c->isIntN(32) || c->isSignedIntN(32);
    const llvm::Value *src = nullptr;
    return match(f, m_ZExtOrSExt(m_Value(src))) && src->getType()->getScalarSizeInBits() <= 32;
  };
  return match(v, m_LShr(m_Mul(m_Value(x), m_Value(y)), m_SpecificInt(32))) && narrowFactor(x) &&
         narrowFactor(y);
}

/// Rewrites every 64-bit `a - b` with `a` a bare `mul.hi.u32` or `mul.hi.s32`
/// widened (isWidenedMulHi) as `~(~a + b)`, the same bits. ptxas (CUDA 13.0, also the driver 580
/// JIT, sm_80 to sm_100, -O1 and up; right at -O0) fuses the `mul.hi.u32`, the
/// `cvt.u64.u32` and the `sub.s64` into an IMAD.HI that adds `{0, -b.lo}` and
/// takes that add's carry into the high word, where `~b.lo + 1`'s is right:
/// when b.lo is 0 the high word came out 0xFFFFFFFF, 2^32 too small. Seed
/// 20261401 kernel 56097 (`cdiv(rn, 3) - (x1 % (S | 1))` stored to int64)
/// stored -4294967296 where 0 is right (docs/upstream/ptxas-imad-hi-sub.md,
/// tests/lit/gpu/fuzz-mulhi-sub64.tc). `mul.hi.s32` the same: seed 20261601
/// kernel 14778 (`umulhi(rm - 1, rm - 1) - (int64)x1` of int32 factors). ptxas keeps the two `not`s and the add
/// apart (one instruction more). Runs after the optimiser, which would fold
/// it back into a `sub`.
void hideMulHiMinuends(llvm::Module &m) {
  using namespace llvm::PatternMatch;
  std::vector<llvm::BinaryOperator *> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      llvm::Value *a = nullptr;
      if (inst.getType()->isIntegerTy(64) && match(&inst, m_Sub(m_Value(a), m_Value())) &&
          isWidenedMulHi(a))
        work.push_back(llvm::cast<llvm::BinaryOperator>(&inst));
    }
  for (llvm::BinaryOperator *sub : work) {
    llvm::IRBuilder<> b(sub);
    b.SetCurrentDebugLocation(sub->getDebugLoc());
    llvm::Value *out =
        b.CreateNot(b.CreateAdd(b.CreateNot(sub->getOperand(0)), sub->getOperand(1)));
    out->takeName(sub);
    sub->replaceAllUsesWith(out);
    sub->eraseFromParent();
  }
}

/// Hides the constant 1.0 of an fp32 `min.f32` and the constant +0.0 of a
/// `max.f32` (floatMinMax's inline PTX) from ptxas: ptxas (CUDA 13.0, sm_90)
/// folds the clamp `max(min(x, 1.0), 0.0)` into a saturating instruction,
/// which makes a NaN x 0 where PTX's min and max give 1.0 (NaN loses): a
/// gpu-mismatch of the fuzz campaign of seed 20261208, kernel 14363
/// ((uint16)min(max(min(NaN, 1), 0), 1000) was 0, not 1). The constant goes
/// through opaqueScalarBits (one prmt), so ptxas no longer sees a clamp to
/// [0, 1].
void hideClampConstants(llvm::Module &m) {
  std::vector<std::pair<llvm::CallInst *, unsigned>> work;
  for (llvm::Function &f : m)
    for (llvm::Instruction &inst : llvm::instructions(f)) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
      auto *ia = call ? llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()) : nullptr;
      if (!ia || !call->getType()->isFloatTy())
        continue;
      const std::string &text = ia->getAsmString();
      bool isMin = text == "min.f32 $0, $1, $2;", isMax = text == "max.f32 $0, $1, $2;";
      if (!isMin && !isMax)
        continue;
      for (unsigned i = 0; i < 2; ++i)
        if (auto *c = llvm::dyn_cast<llvm::ConstantFP>(call->getArgOperand(i));
            c && (isMin ? c->isExactlyValue(1.0) : c->isZero()))
          work.push_back({call, i});
    }
  for (auto [call, i] : work) {
    llvm::IRBuilder<> b(call);
    llvm::Value *c = call->getArgOperand(i);
    llvm::Value *bits = opaqueScalarBits(b, b.CreateBitCast(c, b.getInt32Ty()));
    call->setArgOperand(i, b.CreateBitCast(bits, c->getType()));
  }
}

bool emitPtx(llvm::Module &m, llvm::TargetMachine &tm, std::string &ptx, std::string &error) {
  restoreIntToFloat(m); // done after the optimiser already; no stand-in may reach the PTX
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX target cannot emit assembly";
    return false;
  }
  pm.run(m);
  ptx.assign(buf.begin(), buf.end());
  return true;
}

} // namespace

/// Test hook (docs/fuzz.md): TC_TEST_NO_PTXAS_WORKAROUND=1 leaves the negated
/// min/max operands (and shifted and float-reinterpreted negations and abs), the
/// 16-bit negations and abs of the PTX (rewriteNarrowNegations), the 16-bit float selects, the bool
/// phis, the high halves of 64-bit products, the zero-arm selects under logic operations and the
/// float to 8/16-bit integer conversions and the 64-bit differences of a mul.hi and the constants
/// of fp32 clamps as they are and lets LLVM unroll loops of run-time trip counts, so the culprit
/// search can be shown the ptxas bugs on a GPU. Part of compilerVersion(), so
/// a PTX cache keeps the two apart. Also the wgmma descriptors' 32-bit
/// halves (Lowerer::wgmmaDescriptor).
bool ptxasWorkaroundsOn() {
  const char *keep = std::getenv("TC_TEST_NO_PTXAS_WORKAROUND");
  return !keep || !*keep;
}

namespace {

/// Lowers each of `fns` and links them into the first one's LLVM module (the
/// kernels share the extern `tc_smem`, as CUDA kernels share dynamic shared
/// memory); `lk` describes the first kernel, `entries` (when not null) each
/// kernel's launch interface.
bool lowerKernels(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                  const Options &opts, llvm::LLVMContext &ctx, LoweredKernel &lk,
                  std::string &error, std::vector<std::vector<std::string>> &paths,
                  std::vector<BatchEntry> *entries, std::vector<std::string> &names) {
  // The linker keeps the first declaration's alignment of `tc_smem`: the
  // largest any kernel needs (wgmma's swizzled stages: 1024) is set after;
  // and the module targets sm_90a when any kernel needs it (before, only when
  // the first one did: a wgmma kernel after another one was refused by ptxas).
  llvm::Align smemAlign(1);
  for (size_t i = 0; i < fns.size(); ++i) {
    LoweredKernel one;
    LoweredKernel &k = i == 0 ? lk : one;
    if (!lowerKernel(module, *fns[i], opts, ctx, k, error))
      return false;
    if (const llvm::GlobalVariable *g = k.module->getNamedGlobal("tc_smem"))
      smemAlign = std::max(smemAlign, g->getAlign().valueOrOne());
    lk.archSpecific = lk.archSpecific || k.archSpecific; // one wgmma kernel: sm_90a for all
    paths.push_back(k.paths);
    names.push_back(k.entry);
    if (entries)
      entries->push_back({k.entry, k.numThreads, k.sharedBytes, k.params, k.tensorMaps});
    if (i > 0 && llvm::Linker::linkModules(*lk.module, std::move(one.module))) {
      error = "linking the module's kernels failed";
      return false;
    }
  }
  if (llvm::GlobalVariable *g = lk.module->getNamedGlobal("tc_smem"))
    g->setAlignment(smemAlign);
  return true;
}

} // namespace

Result compile(const ir::Module &module, const ir::Function &fn, const Options &opts) {
  return compileKernels(module, {&fn}, opts);
}

const std::vector<std::string> &loweringPathNames() {
  static const std::vector<std::string> names = {"wgmma",
                                                 "wgmma.int8",
                                                 "mma.sync",
                                                 "mma.loop",
                                                 "pipeline.stages=2",
                                                 "pipeline.stages=3",
                                                 "pipeline.off",
                                                 "dot.fma",
                                                 "vector.load.16B",
                                                 "vector.load.8B",
                                                 "vector.load.4B",
                                                 "vector.store.16B",
                                                 "vector.store.8B",
                                                 "vector.store.4B",
                                                 "remat",
                                                 "slice.registers",
                                                 "slice.shared",
                                                 "atomic.add",
                                                 "atomic.max",
                                                 "atomic.min",
                                                 "atomic.xchg",
                                                 "atomic.and",
                                                 "atomic.or",
                                                 "atomic.xor",
                                                 "atomic.cas",
                                                 "mma.values",
                                                 "mma.values.pipeline.stages=2",
                                                 "mma.values.pipeline.stages=3",
                                                 "mma.values.pipeline.stages=4",
                                                 "mma.values.wgmma",
                                                 "mma.values.key_perm",
                                                 "div.shared",
                                                 "atomic.partword",
                                                 "loop.prefetch",
                                                 "loop.exit_values"};
  return names;
}

bool loweringPaths(const ir::Module &module, const ir::Function &fn, const Options &opts,
                   std::vector<std::string> &paths, std::string &error) {
  llvm::LLVMContext ctx;
  LoweredKernel lk;
  if (!lowerKernel(module, fn, opts, ctx, lk, error))
    return false;
  paths = std::move(lk.paths);
  return true;
}

namespace {
Result compileKernelsWith(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                          const Options &opts, std::vector<BatchEntry> *entries);
} // namespace

Result compileKernels(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                      const Options &opts) {
  return compileKernelsWith(module, fns, opts, nullptr);
}

Result compileKernels(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                      const Options &opts, std::vector<BatchEntry> &entries) {
  entries.clear();
  Result r = compileKernelsWith(module, fns, opts, &entries);
  if (!r.ok())
    entries.clear();
  return r;
}

namespace {

Result compileKernelsWith(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                          const Options &opts, std::vector<BatchEntry> *entries) {
  Result r;
  if (opts.sm < 80) {
    r.error = "the GPU backend targets sm_80 and newer (got sm_" + std::to_string(opts.sm) + ")";
    return r;
  }
  if (fns.empty()) {
    r.error = "no kernel to compile";
    return r;
  }
  Compiled c;
  llvm::LLVMContext ctx;
  auto t0 = Clock::now();
  LoweredKernel lk;
  std::vector<std::string> names; // each kernel's LLVM function
  if (!lowerKernels(module, fns, opts, ctx, lk, r.error, c.paths, entries, names))
    return r;
  c.times.push_back({"lower", msSince(t0)});
  t0 = Clock::now();
  if (!linkLibdevice(*lk.module, r.error))
    return r;
  c.times.push_back({"link-libdevice", msSince(t0)});
  std::unique_ptr<llvm::TargetMachine> tm =
      makeTargetMachine(opts.sm, lk.archSpecific, opts.optLevel, r.error);
  if (!tm)
    return r;
  lk.module->setDataLayout(tm->createDataLayout());
  t0 = Clock::now();
  std::unique_ptr<BisectGate> gate;
  if (opts.optBisectLimit >= 0) {
    gate = std::make_unique<BisectGate>(opts.optBisectLimit);
    ctx.setOptPassGate(*gate);
  }
  if (ptxasWorkaroundsOn())
    keepRuntimeLoopsRolled(*lk.module);
  optimize(*lk.module, *tm, opts.optLevel, gate.get());
  restoreIntToFloat(*lk.module);
  legalizeBoolToFloat(*lk.module);
  if (opts.sharedDivisor) {
    std::set<std::string> rewritten = shareDivisors(*lk.module);
    for (size_t i = 0; i < names.size(); ++i)
      if (rewritten.count(names[i])) {
        c.paths[i].push_back("div.shared");
        std::sort(c.paths[i].begin(), c.paths[i].end());
      }
  }
  if (ptxasWorkaroundsOn()) {
    hideNegatedMinMaxOperands(*lk.module);
    hideAbsOfFloatBits(*lk.module);
    compareWithOneAsBits(*lk.module);
    hideBoolBitsFromFloats(*lk.module);
    hideHalfSelects(*lk.module);
    widenMaterializedBoolPhis(*lk.module);
    hideProductHighHalves(*lk.module);
    sinkZeroArmSelectsBelowLogic(*lk.module);
    widenNarrowFloatToInt(*lk.module);
    hideMulHiMinuends(*lk.module); // after hideProductHighHalves, which writes mul.hi
    hideClampConstants(*lk.module);
  }
  c.times.push_back({"optimize", msSince(t0)});
  if (opts.wantLLVM) {
    llvm::raw_string_ostream os(c.llvmIR);
    lk.module->print(os, nullptr);
  }
  t0 = Clock::now();
  if (!emitPtx(*lk.module, *tm, c.ptx, r.error))
    return r;
  if (ptxasWorkaroundsOn())
    rewriteNarrowNegations(c.ptx);
  c.times.push_back({"ptx", msSince(t0)});
  if (const char *check = std::getenv("TC_TEST_PTXAS_HAZARDS"); check && *check) {
    // Developer check (docs/fuzz.md): a pattern a ptxas workaround should
    // have rewritten is a compile error, which the fuzzer reduces.
    if (std::vector<PtxHazard> hz = findPtxasHazards(c.ptx); !hz.empty()) {
      r.error = "a pattern ptxas miscompiles is left in the PTX (TC_TEST_PTXAS_HAZARDS): " +
                hz[0].what + ", at PTX line " + std::to_string(hz[0].line) + ": " + hz[0].text;
      return r;
    }
  }
  if (gate)
    c.gatedPasses = std::move(gate->seen);
  c.entry = lk.entry;
  c.numThreads = lk.numThreads;
  c.sharedBytes = lk.sharedBytes;
  c.sm = opts.sm;
  c.archSpecific = lk.archSpecific;
  c.params = lk.params;
  c.tensorMaps = lk.tensorMaps;
  r.compiled = std::move(c);
  return r;
}

} // namespace

/// The library this code is in, by size and modification time: any rebuild of
/// the compiler changes it, so a cache never returns PTX of an older build.
std::string buildIdentity() {
  Dl_info info;
  struct stat st;
  if (::dladdr(reinterpret_cast<void *>(&buildIdentity), &info) == 0 || !info.dli_fname ||
      ::stat(info.dli_fname, &st) != 0)
    return "unknown build";
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string compilerVersion() {
  static const std::string v = "triton-c codegen 1 (" + buildIdentity() + "); LLVM " +
                               LLVM_VERSION_STRING " nvptx64; libdevice " + libdeviceHash();
  std::string out = v;
  if (std::string bug = activePlantedBug(); !bug.empty())
    out += " planted:" + bug; // a planted build never reuses clean PTX
  if (!ptxasWorkaroundsOn())
    out += " no-ptxas-workaround"; // nor does the test hook reuse worked-around PTX
  return out;
}

std::string findPtxas() {
  if (const char *p = std::getenv("PTXAS"); p && *p)
    return p;
  std::string cuda = std::string(TC_CUDA_HOME) + "/bin/ptxas";
  if (::access(cuda.c_str(), X_OK) == 0)
    return cuda;
  if (const char *path = std::getenv("PATH")) {
    std::string all = path;
    size_t pos = 0;
    while (pos <= all.size()) {
      size_t end = all.find(':', pos);
      std::string dir = all.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      std::string cand = (dir.empty() ? "." : dir) + "/ptxas";
      if (::access(cand.c_str(), X_OK) == 0)
        return cand;
      if (end == std::string::npos)
        break;
      pos = end + 1;
    }
  }
  return "";
}

std::string ptxasMissing() {
  return "ptxas (from the CUDA toolkit) not found: looked at $PTXAS, " TC_CUDA_HOME
         "/bin/ptxas and $PATH; install the toolkit or set $PTXAS";
}

bool runPtxas(const std::string &ptx, unsigned sm, std::string &log, bool verbose) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    log = ptxasMissing();
    return false;
  }
  char path[] = "/tmp/tc-ptxas-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) {
    log = "cannot create a temporary file for ptxas";
    return false;
  }
  bool wrote = ::write(fd, ptx.data(), ptx.size()) == static_cast<ssize_t>(ptx.size());
  ::close(fd);
  if (!wrote) {
    ::unlink(path);
    log = "cannot write a temporary file for ptxas";
    return false;
  }
  bool archSpecific = ptx.find(".target sm_" + std::to_string(sm) + "a") != std::string::npos;
  std::string cmd = "'" + ptxas + "' -arch=sm_" + std::to_string(sm) + (archSpecific ? "a" : "") +
                    (verbose ? " -v" : "") + " -o /dev/null " + path + " 2>&1";
  log.clear();
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) {
    ::unlink(path);
    log = "cannot run " + ptxas;
    return false;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    log.append(buf, n);
  int status = ::pclose(p);
  ::unlink(path);
  return status == 0;
}

} // namespace tc::codegen
