// codegen/ScalarEmit (one lane of an elementwise op as NVPTX LLVM IR), the
// embedded libdevice and the GPU ULP table.
//
//  1. libdevice: the embedded bytes are LLVM bitcode of a plausible size; the
//     hash is stable. gpuUlpBound: the documented values.
//  2. (LLVM API; built when TC_TEST_LLVM is defined, see below) Every op on
//     every dtype the IR verifier allows it on, and every cast pair (13 x 13)
//     and bitcast pair, as small functions (load operands from a pointer, emit,
//     store): the module verifies, links libdevice, goes through LLVM's O3
//     pipeline and the NVPTX backend (sm_90, and sm_80 for the casts and the
//     16-bit float ops), and ptxas accepts the PTX. The rounding-sensitive
//     cases are checked on the PTX text (add.rn, cvt.rn.bf16.f32, sqrt.rn, no
//     .ftz, no fma contraction, ...). TC_SCALAR_PTX_DIR=<dir> keeps the PTX files.
//  3. Semantics on constants: the emitted IR constant-folded by LLVM (APFloat,
//     round-to-nearest-even) against values worked out by hand, including the
//     double-rounding traps (int -> bf16, f64 -> bf16, f64 -> f16); and every
//     exactly specified op and cast pair on hard operands against the shared
//     scalar rules of support/Numerics.h (what the interpreter runs).
//
// The LLVM part needs LLVM's API in the test binary; libtriton hides LLVM's
// symbols, so it is compiled only where the build links LLVM into the test
// and defines TC_TEST_LLVM (otherwise one test reports the skip).
#include "codegen/Libdevice.h"
#include "codegen/Ulp.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

using tc::DType;
using tc::ir::OpKind;

//===-- libdevice and the ULP table ---------------------------------------===//

TEST(Libdevice, EmbeddedBitcodeHasTheMagicAndSize) {
  std::string_view bc = tc::codegen::libdeviceBitcode();
  ASSERT_GT(bc.size(), 100u * 1024u) << "libdevice is a few hundred KB";
  auto byte = [&](size_t i) { return static_cast<unsigned char>(bc[i]); };
  // Raw bitcode starts with 'B' 'C' 0xC0 0xDE; the wrapper with 0x0B17C0DE
  // (little-endian: DE C0 17 0B) and the raw magic at the offset it gives.
  bool raw = byte(0) == 'B' && byte(1) == 'C' && byte(2) == 0xC0 && byte(3) == 0xDE;
  bool wrapped = byte(0) == 0xDE && byte(1) == 0xC0 && byte(2) == 0x17 && byte(3) == 0x0B;
  EXPECT_TRUE(raw || wrapped) << "not LLVM bitcode";
  if (wrapped) {
    uint32_t offset = 0;
    std::memcpy(&offset, bc.data() + 8, 4);
    ASSERT_LT(offset + 4u, bc.size());
    EXPECT_EQ(bc.substr(offset, 2), "BC");
  }
}

TEST(Libdevice, HashIsStableHex) {
  std::string h = tc::codegen::libdeviceHash();
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_EQ(h, tc::codegen::libdeviceHash());
}

TEST(GpuUlp, DocumentedBounds) {
  using tc::codegen::gpuUlpBound;
  // CUDA C++ Programming Guide, Mathematical Functions appendix (full range).
  EXPECT_EQ(gpuUlpBound(OpKind::Exp, DType::F32), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Exp2, DType::F32), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Log, DType::F32), 1);
  EXPECT_EQ(gpuUlpBound(OpKind::Log2, DType::F32), 1);
  EXPECT_EQ(gpuUlpBound(OpKind::Sin, DType::F32), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Cos, DType::F32), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Rsqrt, DType::F32), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Exp, DType::F64), 1);
  EXPECT_EQ(gpuUlpBound(OpKind::Log, DType::F64), 1);
  EXPECT_EQ(gpuUlpBound(OpKind::Sin, DType::F64), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Cos, DType::F64), 2);
  EXPECT_EQ(gpuUlpBound(OpKind::Rsqrt, DType::F64), 1);
  // fp16/bf16: computed in fp32, rounded once.
  EXPECT_EQ(gpuUlpBound(OpKind::Exp, DType::F16), 1);
  EXPECT_EQ(gpuUlpBound(OpKind::Sin, DType::BF16), 1);
  // Correctly rounded ops and integers.
  for (OpKind k : {OpKind::Sqrt, OpKind::Add, OpKind::Div, OpKind::Fma, OpKind::Rem, OpKind::Cast,
                   OpKind::Max, OpKind::Floor})
    for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
      EXPECT_EQ(gpuUlpBound(k, t), 0);
  EXPECT_EQ(gpuUlpBound(OpKind::Add, DType::I32), 0);
}

} // namespace

#ifndef TC_TEST_LLVM

TEST(ScalarEmit, NeedsLLVMInTheTestBinary) {
  GTEST_SKIP() << "ScalarEmit's LLVM-level tests need LLVM linked into the test binary "
                  "(build with TC_TEST_LLVM defined and LLVM's libraries linked)";
}

#else // TC_TEST_LLVM

#include "codegen/Codegen.h"
#include "codegen/ScalarEmit.h"
#include "support/Numerics.h"
#include "support/ValueBits.h"

#include <llvm/Analysis/ConstantFolding.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace {

using tc::codegen::ScalarEmitter;
using Emit = std::function<llvm::Value *(ScalarEmitter &, const std::vector<llvm::Value *> &)>;

const char *kTriple = "nvptx64-nvidia-cuda";

std::string dtName(DType t) {
  return std::string(tc::irName(t));
}

//===-- Which ops the IR allows on which dtype (ir/Verifier.cpp) ------------===//

struct OpInfo {
  OpKind kind;
  const char *name;
  int arity;
};

const std::vector<OpInfo> &elementwiseOps() {
  static const std::vector<OpInfo> ops = {
      {OpKind::Neg, "neg", 1},      {OpKind::Not, "not", 1},       {OpKind::Abs, "abs", 1},
      {OpKind::Exp, "exp", 1},      {OpKind::Exp2, "exp2", 1},     {OpKind::Log, "log", 1},
      {OpKind::Log2, "log2", 1},    {OpKind::Sqrt, "sqrt", 1},     {OpKind::Rsqrt, "rsqrt", 1},
      {OpKind::Sin, "sin", 1},      {OpKind::Cos, "cos", 1},       {OpKind::Floor, "floor", 1},
      {OpKind::Ceil, "ceil", 1},    {OpKind::Add, "add", 2},       {OpKind::Sub, "sub", 2},
      {OpKind::Mul, "mul", 2},      {OpKind::Div, "div", 2},       {OpKind::Rem, "rem", 2},
      {OpKind::And, "and", 2},      {OpKind::Or, "or", 2},         {OpKind::Xor, "xor", 2},
      {OpKind::Shl, "shl", 2},      {OpKind::Shr, "shr", 2},       {OpKind::Min, "min", 2},
      {OpKind::Max, "max", 2},      {OpKind::UMulHi, "umulhi", 2}, {OpKind::CmpEq, "cmp_eq", 2},
      {OpKind::CmpNe, "cmp_ne", 2}, {OpKind::CmpLt, "cmp_lt", 2},  {OpKind::CmpLe, "cmp_le", 2},
      {OpKind::CmpGt, "cmp_gt", 2}, {OpKind::CmpGe, "cmp_ge", 2},  {OpKind::Fma, "fma", 3},
  };
  return ops;
}

bool isCompare(OpKind k) {
  return k == OpKind::CmpEq || k == OpKind::CmpNe || k == OpKind::CmpLt || k == OpKind::CmpLe ||
         k == OpKind::CmpGt || k == OpKind::CmpGe;
}

/// The dtype classes of ir/Verifier.cpp's verifyOp, for the ops above.
bool definedOn(OpKind k, DType t) {
  bool fl = tc::isFloat(t), in = tc::isInt(t), bo = t == DType::Bool;
  auto among = [k](std::initializer_list<OpKind> ks) {
    return std::find(ks.begin(), ks.end(), k) != ks.end();
  };
  if (among({OpKind::Neg, OpKind::Abs, OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
             OpKind::Rem}))
    return in || fl;
  if (among({OpKind::Not, OpKind::And, OpKind::Or, OpKind::Xor}))
    return in || bo;
  if (among({OpKind::Shl, OpKind::Shr, OpKind::UMulHi}))
    return in;
  if (among({OpKind::Min, OpKind::Max}) || isCompare(k))
    return true;
  return fl; // exp exp2 log log2 sqrt rsqrt sin cos floor ceil fma
}

Emit emitOp(const OpInfo &op, DType t) {
  return [op, t](ScalarEmitter &e, const std::vector<llvm::Value *> &v) -> llvm::Value * {
    if (op.arity == 1)
      return e.unary(op.kind, t, v[0]);
    if (op.arity == 3)
      return e.fma(t, v[0], v[1], v[2]);
    return e.binary(op.kind, t, v[0], v[1]);
  };
}

//===-- Building, compiling and assembling modules -------------------------===//

void initNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> targetMachine(unsigned sm) {
  initNvptx();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options; // default: no FP op fusion, IEEE denormals
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(kTriple, "sm_" + std::to_string(sm), "", options, std::nullopt,
                                  std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

/// Adds `void name(ptr addrspace(1) in, ptr addrspace(1) out)`: loads one
/// operand of dtype `in[i]` from in[i] (memory types), emits, stores the result
/// (dtype `out`) to out[0].
void addKernel(llvm::Module &m, const std::string &name, const std::vector<DType> &in, DType out,
               const Emit &emit) {
  llvm::LLVMContext &c = m.getContext();
  llvm::Type *ptr = llvm::PointerType::get(c, 1);
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, ptr}, false);
  auto *f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  ScalarEmitter e(b, m);
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < in.size(); ++i) {
    llvm::Type *mt = e.memType(in[i]);
    llvm::Value *p = b.CreateConstInBoundsGEP1_32(b.getInt64Ty(), f->getArg(0), i);
    args.push_back(e.fromMemory(b.CreateLoad(mt, p), in[i]));
  }
  b.CreateStore(e.toMemory(emit(e, args), out), f->getArg(1));
  b.CreateRetVoid();
}

/// Links the libdevice functions `m` calls (internalized) into `m`.
bool linkLibdevice(llvm::Module &m, std::string &error) {
  auto buffer =
      llvm::MemoryBuffer::getMemBuffer(tc::codegen::libdeviceBitcode(), "libdevice", false);
  auto lib = llvm::parseBitcodeFile(buffer->getMemBufferRef(), m.getContext());
  if (!lib) {
    error = llvm::toString(lib.takeError());
    return false;
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  bool failed =
      llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded,
                                [](llvm::Module &dst, const llvm::StringSet<> &linked) {
                                  llvm::internalizeModule(dst, [&](const llvm::GlobalValue &gv) {
                                    return !gv.hasName() || !linked.contains(gv.getName());
                                  });
                                });
  if (failed)
    error = "linking libdevice failed";
  return !failed;
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

/// verify, link libdevice, O3, PTX for `tm`. Returns false with `error` set.
bool compileToPtx(llvm::Module &m, llvm::TargetMachine &tm, std::string &ptx, std::string &error) {
  llvm::raw_string_ostream errs(error);
  if (llvm::verifyModule(m, &errs))
    return false;
  if (!linkLibdevice(m, error))
    return false;
  if (llvm::verifyModule(m, &errs))
    return false;
  optimize(m, tm);
  tc::codegen::restoreIntToFloat(m); // as codegen/Target.cpp does after its optimiser
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX target cannot emit assembly";
    return false;
  }
  pm.run(m);
  ptx = std::string(text.str());
  return true;
}

std::string ptxasPath() {
  return tc::codegen::findPtxas();
}

/// Runs ptxas on `ptx`; nullopt when ptxas is not installed.
std::optional<bool> ptxasAccepts(const std::string &ptx, unsigned sm, std::string &log) {
  std::string exe = ptxasPath();
  if (exe.empty() || access(exe.c_str(), X_OK) != 0)
    return std::nullopt;
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path();
  std::string stem = "tc-scalar-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  fs::path in = dir / (stem + ".ptx"), out = dir / (stem + ".cubin"), err = dir / (stem + ".log");
  std::ofstream(in) << ptx;
  std::string cmd = exe + " -arch=sm_" + std::to_string(sm) + " " + in.string() + " -o " +
                    out.string() + " > " + err.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream logIn(err);
  log.assign(std::istreambuf_iterator<char>(logIn), std::istreambuf_iterator<char>());
  fs::remove(in);
  fs::remove(out);
  fs::remove(err);
  return rc == 0;
}

/// The PTX text of function `name` (from its header to the next function).
std::string functionPtx(const std::string &ptx, const std::string &name) {
  size_t at = ptx.find(".func " + name + "(");
  if (at == std::string::npos)
    return "";
  size_t end = ptx.find("\n.visible", at + 1);
  size_t end2 = ptx.find("\n.func", at + 1);
  end = std::min(end, end2);
  return ptx.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

/// A module of small functions, compiled once per target.
class PtxModule {
public:
  explicit PtxModule(std::string name)
      : name_(std::move(name)), m_(std::make_unique<llvm::Module>(name_, ctx_)) {
    m_->setTargetTriple(kTriple);
  }
  void add(const std::string &name, const std::vector<DType> &in, DType out, const Emit &emit) {
    addKernel(*m_, name, in, out, emit);
  }
  /// Compiles a copy for sm_<sm>; ptxas-checks it; returns the PTX (empty on failure).
  std::string compile(unsigned sm) {
    auto tm = targetMachine(sm);
    EXPECT_TRUE(tm) << "no NVPTX target";
    if (!tm)
      return "";
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m_);
    copy->setDataLayout(tm->createDataLayout());
    std::string ptx, error;
    EXPECT_TRUE(compileToPtx(*copy, *tm, ptx, error)) << error;
    if (ptx.empty())
      return "";
    if (const char *dir = std::getenv("TC_SCALAR_PTX_DIR")) // for reading the PTX by hand
      std::ofstream(std::string(dir) + "/" + name_ + "_sm" + std::to_string(sm) + ".ptx") << ptx;
    std::string log;
    std::optional<bool> ok = ptxasAccepts(ptx, sm, log);
    if (!ok)
      std::fprintf(stderr, "note: PTX not assembled: %s\n", tc::codegen::ptxasMissing().c_str());
    else
      EXPECT_TRUE(*ok) << "ptxas -arch=sm_" << sm << " rejected the PTX:\n" << log;
    return ptx;
  }

private:
  std::string name_;
  llvm::LLVMContext ctx_;
  std::unique_ptr<llvm::Module> m_;
};

/// Expects `needle` in function `fn`'s PTX.
void expectIn(const std::string &ptx, const std::string &fn, const std::string &needle) {
  std::string body = functionPtx(ptx, fn);
  ASSERT_FALSE(body.empty()) << fn << " is not in the PTX";
  EXPECT_NE(body.find(needle), std::string::npos) << fn << ": expected '" << needle << "' in\n"
                                                  << body;
}

void expectNotIn(const std::string &ptx, const std::string &fn, const std::string &needle) {
  std::string body = functionPtx(ptx, fn);
  ASSERT_FALSE(body.empty()) << fn << " is not in the PTX";
  EXPECT_EQ(body.find(needle), std::string::npos) << fn << ": unexpected '" << needle << "' in\n"
                                                  << body;
}

bool isLibdeviceOp(OpKind k) {
  return k == OpKind::Exp || k == OpKind::Exp2 || k == OpKind::Log || k == OpKind::Log2 ||
         k == OpKind::Rsqrt || k == OpKind::Sin || k == OpKind::Cos || k == OpKind::Rem;
}

//===-- Every op on every dtype ---------------------------------------------===//

/// The module of every op defined on `t`: functions named op_<op>_<dtype>.
std::string compileOps(DType t, unsigned sm) {
  PtxModule m("ops_" + dtName(t));
  for (const OpInfo &op : elementwiseOps()) {
    if (!definedOn(op.kind, t))
      continue;
    DType out = isCompare(op.kind) ? DType::Bool : t;
    m.add("op_" + std::string(op.name) + "_" + dtName(t), std::vector<DType>(op.arity, t), out,
          emitOp(op, t));
  }
  return m.compile(sm);
}

/// compileOps, once per (dtype, sm) for the whole test program.
const std::string &opsPtx(DType t, unsigned sm) {
  static std::map<std::pair<DType, unsigned>, std::string> cache;
  auto key = std::make_pair(t, sm);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, compileOps(t, sm)).first;
  return it->second;
}

/// No flush-to-zero and no approximation in the ops that do not call libdevice.
void expectStrictIeee(const std::string &ptx, DType t) {
  for (const OpInfo &op : elementwiseOps()) {
    if (!definedOn(op.kind, t) || isLibdeviceOp(op.kind))
      continue;
    std::string fn = "op_" + std::string(op.name) + "_" + dtName(t);
    expectNotIn(ptx, fn, ".ftz");
    expectNotIn(ptx, fn, ".approx");
  }
}

class OpsPerDType : public ::testing::TestWithParam<DType> {};

TEST_P(OpsPerDType, CompileAndAssembleForSm90) {
  DType t = GetParam();
  std::string ptx = opsPtx(t, 90);
  ASSERT_FALSE(ptx.empty());
  if (tc::isFloat(t))
    expectStrictIeee(ptx, t);
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, OpsPerDType, ::testing::ValuesIn(tc::kAllDTypes),
                         [](const auto &info) { return dtName(info.param); });

TEST(ScalarEmitPtx, Float32RoundsEachOpOnce) {
  std::string ptx = opsPtx(DType::F32, 90);
  ASSERT_FALSE(ptx.empty());
  // .rn on add/sub/mul also keeps ptxas from contracting them into an fma.
  expectIn(ptx, "op_add_f32", "add.rn.f32");
  expectIn(ptx, "op_sub_f32", "sub.rn.f32");
  expectIn(ptx, "op_mul_f32", "mul.rn.f32");
  for (const char *fn : {"op_add_f32", "op_sub_f32", "op_mul_f32"})
    expectNotIn(ptx, fn, "fma");
  expectIn(ptx, "op_div_f32", "div.rn.f32");
  expectIn(ptx, "op_sqrt_f32", "sqrt.rn.f32");
  expectIn(ptx, "op_fma_f32", "fma.rn.f32");
  expectIn(ptx, "op_cmp_ne_f32", "setp.neu.f32");
  expectIn(ptx, "op_cmp_lt_f32", "setp.lt.f32");
  expectIn(ptx, "op_cmp_eq_f32", "setp.eq.f32");
  expectIn(ptx, "op_max_f32", "max.f32");
  expectIn(ptx, "op_min_f32", "min.f32");
  expectIn(ptx, "op_neg_f32", "neg.f32");
  expectIn(ptx, "op_floor_f32", "cvt.rmi.f32.f32");
  expectIn(ptx, "op_ceil_f32", "cvt.rpi.f32.f32");
  // libdevice is inlined: no calls left.
  for (const char *fn : {"op_exp_f32", "op_log_f32", "op_sin_f32", "op_rsqrt_f32", "op_rem_f32"})
    expectNotIn(ptx, fn, "call");
}

TEST(ScalarEmitPtx, Float64RoundsEachOpOnce) {
  std::string ptx = opsPtx(DType::F64, 90);
  ASSERT_FALSE(ptx.empty());
  expectIn(ptx, "op_add_f64", "add.rn.f64");
  expectIn(ptx, "op_mul_f64", "mul.rn.f64");
  expectIn(ptx, "op_div_f64", "div.rn.f64");
  expectIn(ptx, "op_sqrt_f64", "sqrt.rn.f64");
  expectIn(ptx, "op_fma_f64", "fma.rn.f64");
  expectIn(ptx, "op_cmp_ne_f64", "setp.neu.f64");
}

TEST(ScalarEmitPtx, HalfAndBFloat16OnSm90AreNativeOrThroughF32) {
  std::string h = opsPtx(DType::F16, 90), bf = opsPtx(DType::BF16, 90);
  ASSERT_FALSE(h.empty());
  ASSERT_FALSE(bf.empty());
  expectIn(h, "op_add_f16", "add.rn.f16");
  expectIn(h, "op_mul_f16", "mul.rn.f16");
  expectIn(h, "op_fma_f16", "fma.rn.f16");
  expectIn(h, "op_div_f16", "div.rn.f32");
  expectIn(h, "op_div_f16", "cvt.rn.f16.f32");
  expectIn(h, "op_sqrt_f16", "sqrt.rn.f32");
  expectIn(h, "op_sqrt_f16", "cvt.rn.f16.f32");
  expectIn(h, "op_exp_f16", "cvt.rn.f16.f32");
  expectIn(bf, "op_add_bf16", "add.rn.bf16");
  expectIn(bf, "op_mul_bf16", "mul.rn.bf16");
  expectIn(bf, "op_fma_bf16", "fma.rn.bf16");
  expectIn(bf, "op_div_bf16", "div.rn.f32");
  expectIn(bf, "op_div_bf16", "cvt.rn.bf16.f32");
  expectIn(bf, "op_sqrt_bf16", "sqrt.rn.f32");
}

TEST(ScalarEmitPtx, HalfAndBFloat16OnSm80) {
  for (DType t : {DType::F16, DType::BF16}) {
    std::string ptx = opsPtx(t, 80);
    ASSERT_FALSE(ptx.empty());
    expectStrictIeee(ptx, t);
    std::string n = dtName(t);
    expectIn(ptx, "op_fma_" + n, "fma.rn." + n); // one rounding in hardware
    // bf16 + on sm_80 is computed in f32 (exact for 8-bit significands) or as fma.rn.bf16.
    std::string add = functionPtx(ptx, "op_add_" + n);
    EXPECT_TRUE(add.find("add.rn.") != std::string::npos ||
                add.find("fma.rn.bf16") != std::string::npos)
        << add;
  }
}

TEST(ScalarEmitPtx, IntegerOps) {
  std::string s = opsPtx(DType::I32, 90), u = opsPtx(DType::U32, 90);
  std::string s64 = opsPtx(DType::I64, 90), u64 = opsPtx(DType::U64, 90);
  expectIn(s, "op_div_i32", "div.s32");
  expectIn(u, "op_div_u32", "div.u32");
  expectIn(s, "op_rem_i32", "rem.s32");
  expectIn(u, "op_rem_u32", "rem.u32");
  expectIn(s, "op_shr_i32", "shr.s32");
  expectIn(u, "op_shr_u32", "shr.u32");
  expectIn(s, "op_shl_i32", "shl.b32");
  expectIn(s, "op_cmp_lt_i32", "setp.lt.s32");
  expectIn(u, "op_cmp_lt_u32", "setp.lt.u32");
  expectIn(s64, "op_umulhi_i64", "mul.hi.s64");
  expectIn(u64, "op_umulhi_u64", "mul.hi.u64");
  expectIn(u, "op_umulhi_u32", "mul.hi.u32");
  expectIn(s, "op_max_i32", "max.s32");
  expectIn(u, "op_min_u32", "min.u32");
}

//===-- Every cast and bitcast pair ------------------------------------------===//

std::string castName(DType from, DType to) {
  return "cast_" + dtName(from) + "_to_" + dtName(to);
}

/// The module of all 13 x 13 casts and every bitcast between equal widths.
PtxModule &castModule() {
  static PtxModule *m = [] {
    auto *mod = new PtxModule("casts");
    for (DType from : tc::kAllDTypes)
      for (DType to : tc::kAllDTypes) {
        mod->add(castName(from, to), {from}, to,
                 [from, to](ScalarEmitter &e, const std::vector<llvm::Value *> &v) {
                   return e.cast(v[0], from, to);
                 });
        if (tc::bitWidth(from) == tc::bitWidth(to))
          mod->add("bitcast_" + dtName(from) + "_to_" + dtName(to), {from}, to,
                   [from, to](ScalarEmitter &e, const std::vector<llvm::Value *> &v) {
                     return e.bitcast(v[0], from, to);
                   });
      }
    return mod;
  }();
  return *m;
}

/// Checks shared by sm_80 and sm_90: one cvt.rn for each narrowing float
/// conversion, truncation for float -> int, no flush-to-zero anywhere.
void expectCastRounding(const std::string &ptx) {
  expectIn(ptx, castName(DType::F32, DType::F16), "cvt.rn.f16.f32");
  expectIn(ptx, castName(DType::F32, DType::BF16), "cvt.rn.bf16.f32");
  expectIn(ptx, castName(DType::F64, DType::F32), "cvt.rn.f32.f64");
  expectIn(ptx, castName(DType::F64, DType::F16), "cvt.rn.f16.f64");
  expectIn(ptx, castName(DType::F16, DType::BF16), "cvt.rn.bf16.f32");
  expectIn(ptx, castName(DType::BF16, DType::F16), "cvt.rn.f16.f32");
  expectIn(ptx, castName(DType::I32, DType::F32), "cvt.rn.f32.s32");
  expectIn(ptx, castName(DType::U64, DType::F64), "cvt.rn.f64.u64");
  expectIn(ptx, castName(DType::I64, DType::F32), "cvt.rn.f32.s64");
  expectIn(ptx, castName(DType::F32, DType::I32), "cvt.rzi.s32.f32");
  expectIn(ptx, castName(DType::F64, DType::U64), "cvt.rzi.u64.f64");
  expectIn(ptx, castName(DType::F32, DType::Bool), "setp.neu.f32");
  for (DType from : tc::kAllDTypes)
    for (DType to : tc::kAllDTypes) {
      expectNotIn(ptx, castName(from, to), ".ftz");
      expectNotIn(ptx, castName(from, to), ".approx");
    }
  // Integers wider than 24 bits reach bf16 through a round-to-odd step.
  for (DType from : {DType::I32, DType::U32, DType::I64, DType::U64})
    expectIn(ptx, castName(from, DType::BF16), "clz.b");
}

TEST(ScalarEmitCasts, AllPairsForSm90) {
  std::string ptx = castModule().compile(90);
  ASSERT_FALSE(ptx.empty());
  expectCastRounding(ptx);
  expectIn(ptx, castName(DType::F64, DType::BF16), "cvt.rn.bf16.f64");
}

TEST(ScalarEmitCasts, AllPairsForSm80) {
  std::string ptx = castModule().compile(80);
  ASSERT_FALSE(ptx.empty());
  expectCastRounding(ptx);
  // No cvt.rn.bf16.f64 before sm_90: LLVM rounds to odd in f32 (a compare and
  // a step of the bits) and then rounds to bf16 once.
  std::string fn = castName(DType::F64, DType::BF16);
  expectIn(ptx, fn, "cvt.rn.f32.f64");
  expectIn(ptx, fn, "setp.");
  expectIn(ptx, fn, "cvt.rn.bf16.f32");
}

//===-- Semantics on constants ------------------------------------------------===//

/// Emits `emit` on constant operands in a host function and constant-folds
/// it with LLVM's folder (APFloat for floats); returns the result's bits.
class Folder {
public:
  Folder() : m_("fold", ctx_) {}

  /// As fold(), but none where LLVM's folder leaves an intrinsic (e.g. NVVM's) unfolded.
  std::optional<uint64_t> tryFold(DType out, const std::vector<llvm::Constant *> &in,
                                  const Emit &emit) {
    mayNotFold_ = true;
    uint64_t r = fold(out, in, emit);
    mayNotFold_ = false;
    if (r == kNotFolded)
      return std::nullopt;
    return r;
  }

  uint64_t fold(DType out, const std::vector<llvm::Constant *> &in, const Emit &emit) {
    llvm::Type *rt = regTypeOf(out);
    auto *f =
        llvm::Function::Create(llvm::FunctionType::get(rt, false), llvm::Function::ExternalLinkage,
                               "f" + std::to_string(n_++), m_);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", f));
    ScalarEmitter e(b, m_);
    std::vector<llvm::Value *> args(in.begin(), in.end());
    b.CreateRet(emit(e, args));
    return bitsOf(foldFunction(*f));
  }

  llvm::Constant *intC(DType t, uint64_t bits) {
    return llvm::ConstantInt::get(regTypeOf(t), bits);
  }
  llvm::Constant *floatC(DType t, uint64_t bits) {
    unsigned w = tc::bitWidth(t);
    return llvm::ConstantFP::get(ctx_, llvm::APFloat(semantics(t), llvm::APInt(w, bits)));
  }
  llvm::Constant *f32(float v) { return llvm::ConstantFP::get(ctx_, llvm::APFloat(v)); }
  llvm::Constant *f64(double v) { return llvm::ConstantFP::get(ctx_, llvm::APFloat(v)); }

  uint64_t cast(DType from, llvm::Constant *v, DType to) {
    return fold(to, {v}, [&](ScalarEmitter &e, const std::vector<llvm::Value *> &a) {
      return e.cast(a[0], from, to);
    });
  }
  uint64_t binary(OpKind k, DType t, llvm::Constant *x, llvm::Constant *y) {
    DType out = isCompare(k) ? DType::Bool : t;
    return fold(out, {x, y}, [&](ScalarEmitter &e, const std::vector<llvm::Value *> &a) {
      return e.binary(k, t, a[0], a[1]);
    });
  }
  uint64_t unary(OpKind k, DType t, llvm::Constant *x) {
    return fold(t, {x}, [&](ScalarEmitter &e, const std::vector<llvm::Value *> &a) {
      return e.unary(k, t, a[0]);
    });
  }
  uint64_t constant(DType t, const tc::ir::AttrValue &v) {
    return fold(t, {}, [&](ScalarEmitter &e, const std::vector<llvm::Value *> &) {
      return e.constant(t, v);
    });
  }

private:
  static const llvm::fltSemantics &semantics(DType t) {
    if (t == DType::F16)
      return llvm::APFloat::IEEEhalf();
    if (t == DType::BF16)
      return llvm::APFloat::BFloat();
    if (t == DType::F32)
      return llvm::APFloat::IEEEsingle();
    return llvm::APFloat::IEEEdouble();
  }
  llvm::Type *regTypeOf(DType t) {
    llvm::IRBuilder<> b(ctx_);
    ScalarEmitter e(b, m_);
    return e.regType(t);
  }
  /// Folds every instruction of `f` until its return value is a constant.
  llvm::Constant *foldFunction(llvm::Function &f) {
    const llvm::DataLayout &dl = m_.getDataLayout();
    for (bool changed = true; changed;) {
      changed = false;
      for (llvm::Instruction &i : llvm::make_early_inc_range(llvm::instructions(f))) {
        if (llvm::Constant *c = llvm::ConstantFoldInstruction(&i, dl)) {
          i.replaceAllUsesWith(c);
          i.eraseFromParent();
          changed = true;
        }
      }
    }
    auto *ret = llvm::cast<llvm::ReturnInst>(f.getEntryBlock().getTerminator());
    auto *c = llvm::dyn_cast<llvm::Constant>(ret->getReturnValue());
    if (!mayNotFold_) {
      EXPECT_TRUE(c) << "did not fold to a constant";
    }
    return c;
  }
  static uint64_t bitsOf(llvm::Constant *c) {
    if (!c)
      return kNotFolded;
    if (auto *f = llvm::dyn_cast<llvm::ConstantFP>(c))
      return f->getValueAPF().bitcastToAPInt().getZExtValue();
    if (auto *i = llvm::dyn_cast<llvm::ConstantInt>(c))
      return i->getValue().getZExtValue();
    ADD_FAILURE() << "folded to an unexpected constant kind";
    return 0;
  }

  static constexpr uint64_t kNotFolded = ~uint64_t(0) - 12345;
  llvm::LLVMContext ctx_;
  llvm::Module m_;
  int n_ = 0;
  bool mayNotFold_ = false;
};

TEST(ScalarEmitSemantics, IntegersToBFloat16RoundOnce) {
  Folder f;
  // 2^24 + 2^16 + 1 is just above the midpoint of 2^24 and 2^24 + 2^17: up.
  // (Through f32 first it would be a tie, then rounded down to 2^24 = 0x4B80.)
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 16842753), DType::BF16), 0x4B81u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, uint32_t(-16842753)), DType::BF16), 0xCB81u);
  EXPECT_EQ(f.cast(DType::U32, f.intC(DType::U32, 16842753), DType::BF16), 0x4B81u);
  // Exact ties stay ties: to even.
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 16842752), DType::BF16), 0x4B80u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 16973824), DType::BF16), 0x4B82u);
  EXPECT_EQ(f.cast(DType::U32, f.intC(DType::U32, 0xFFFFFFFFu), DType::BF16), 0x4F80u);
  // 2^62 + 2^54 + 1: up to 2^62 + 2^55 (through f64 it would be 0x5E80).
  uint64_t big = (uint64_t(1) << 62) + (uint64_t(1) << 54) + 1;
  EXPECT_EQ(f.cast(DType::I64, f.intC(DType::I64, big), DType::BF16), 0x5E81u);
  EXPECT_EQ(f.cast(DType::U64, f.intC(DType::U64, big), DType::BF16), 0x5E81u);
  EXPECT_EQ(f.cast(DType::U64, f.intC(DType::U64, ~uint64_t(0)), DType::BF16), 0x5F80u);
  EXPECT_EQ(f.cast(DType::I64, f.intC(DType::I64, uint64_t(1) << 63), DType::BF16), 0xDF00u);
  EXPECT_EQ(f.cast(DType::I16, f.intC(DType::I16, uint16_t(-257)), DType::BF16), 0xC380u);
  EXPECT_EQ(f.cast(DType::Bool, f.intC(DType::Bool, 1), DType::BF16), 0x3F80u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 0), DType::BF16), 0x0000u);
}

TEST(ScalarEmitSemantics, IntegersToOtherFloats) {
  Folder f;
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 16777217), DType::F32), 0x4B800000u);
  EXPECT_EQ(f.cast(DType::U64, f.intC(DType::U64, ~uint64_t(0)), DType::F32), 0x5F800000u);
  EXPECT_EQ(f.cast(DType::I64, f.intC(DType::I64, uint64_t(1) << 63), DType::F64),
            0xC3E0000000000000u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 2049), DType::F16), 0x6800u);  // tie to even
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 65520), DType::F16), 0x7C00u); // inf
  EXPECT_EQ(f.cast(DType::U8, f.intC(DType::U8, 255), DType::F16), 0x5BF8u);
}

TEST(ScalarEmitSemantics, NarrowingFloatConversionsRoundOnce) {
  Folder f;
  // 1 + 2^-8 + 2^-30: above the bf16 midpoint 1 + 2^-8 (through f32: a tie, 0x3F80).
  EXPECT_EQ(f.cast(DType::F64, f.f64(1 + 0x1p-8 + 0x1p-30), DType::BF16), 0x3F81u);
  EXPECT_EQ(f.cast(DType::F64, f.f64(1 + 0x1p-8), DType::BF16), 0x3F80u);
  // 1 + 2^-11 + 2^-40: above the fp16 midpoint (through f32: 0x3C00).
  EXPECT_EQ(f.cast(DType::F64, f.f64(1 + 0x1p-11 + 0x1p-40), DType::F16), 0x3C01u);
  EXPECT_EQ(f.cast(DType::F64, f.f64(1 + 0x1p-24 + 0x1p-50), DType::F32), 0x3F800001u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(65520.0f), DType::F16), 0x7C00u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(65519.0f), DType::F16), 0x7BFFu);
  EXPECT_EQ(f.cast(DType::F32, f.f32(0x1p-25f), DType::F16), 0x0000u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(0x1.8p-25f), DType::F16), 0x0001u);
  EXPECT_EQ(f.cast(DType::F32, f.floatC(DType::F32, 0x3F808000), DType::BF16), 0x3F80u);
  EXPECT_EQ(f.cast(DType::F32, f.floatC(DType::F32, 0x3F818000), DType::BF16), 0x3F82u);
  EXPECT_EQ(f.cast(DType::F16, f.floatC(DType::F16, 0x7BFF), DType::BF16), 0x4780u);
  EXPECT_EQ(f.cast(DType::BF16, f.floatC(DType::BF16, 0x4780), DType::F16), 0x7C00u);
  EXPECT_EQ(f.cast(DType::BF16, f.floatC(DType::BF16, 0x3380), DType::F16), 0x0001u);
  EXPECT_EQ(f.cast(DType::BF16, f.floatC(DType::BF16, 0x3F81), DType::F16), 0x3C08u);
  EXPECT_EQ(f.cast(DType::F16, f.floatC(DType::F16, 0x0001), DType::F64), 0x3E70000000000000u);
}

TEST(ScalarEmitSemantics, FloatToIntAndBool) {
  Folder f;
  EXPECT_EQ(f.cast(DType::F32, f.f32(255.9f), DType::U8), 255u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(-0.5f), DType::U8), 0u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(-3.7f), DType::I32), uint32_t(-3));
  EXPECT_EQ(f.cast(DType::BF16, f.floatC(DType::BF16, 0xC2F7), DType::I8), uint8_t(-123)); // -123.5
  EXPECT_EQ(f.cast(DType::F32, f.f32(NAN), DType::Bool), 1u);
  EXPECT_EQ(f.cast(DType::F32, f.f32(-0.0f), DType::Bool), 0u);
  EXPECT_EQ(f.cast(DType::F16, f.floatC(DType::F16, 0x0001), DType::Bool), 1u);
}

TEST(ScalarEmitSemantics, IntegerConversions) {
  Folder f;
  EXPECT_EQ(f.cast(DType::U8, f.intC(DType::U8, 200), DType::I8), 200u); // bits; value -56
  EXPECT_EQ(f.cast(DType::I8, f.intC(DType::I8, 0xFF), DType::U32), 0xFFFFFFFFu);
  EXPECT_EQ(f.cast(DType::U16, f.intC(DType::U16, 0xFFFF), DType::I64), 0xFFFFu);
  EXPECT_EQ(f.cast(DType::I64, f.intC(DType::I64, 0x123456789), DType::U16), 0x6789u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 5), DType::Bool), 1u);
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 256), DType::Bool), 1u); // != 0, not truncation
  EXPECT_EQ(f.cast(DType::I32, f.intC(DType::I32, 0), DType::Bool), 0u);
  EXPECT_EQ(f.cast(DType::Bool, f.intC(DType::Bool, 1), DType::I32), 1u);
  EXPECT_EQ(f.cast(DType::Bool, f.intC(DType::Bool, 1), DType::I8), 1u); // zext, not -1
}

TEST(ScalarEmitSemantics, MinMaxSignedZerosAndNaN) {
  Folder f;
  auto pz = f.f32(0.0f), nz = f.f32(-0.0f), nan = f.f32(NAN), one = f.f32(1.0f);
  EXPECT_EQ(f.binary(OpKind::Max, DType::F32, nz, pz), 0x00000000u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::F32, pz, nz), 0x00000000u);
  EXPECT_EQ(f.binary(OpKind::Min, DType::F32, nz, pz), 0x80000000u);
  EXPECT_EQ(f.binary(OpKind::Min, DType::F32, pz, nz), 0x80000000u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::F32, nan, one), 0x3F800000u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::F32, one, nan), 0x3F800000u);
  EXPECT_EQ(f.binary(OpKind::Min, DType::F32, nan, f.f32(-2.0f)), 0xC0000000u);
  EXPECT_EQ(
      f.binary(OpKind::Max, DType::F16, f.floatC(DType::F16, 0x8000), f.floatC(DType::F16, 0x0000)),
      0x0000u);
  EXPECT_EQ(f.binary(OpKind::Min, DType::BF16, f.floatC(DType::BF16, 0x0000),
                     f.floatC(DType::BF16, 0x8000)),
            0x8000u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::F64, f.f64(-0.0), f.f64(0.0)), 0u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::I8, f.intC(DType::I8, 0xFF), f.intC(DType::I8, 1)), 1u);
  EXPECT_EQ(f.binary(OpKind::Max, DType::U8, f.intC(DType::U8, 0xFF), f.intC(DType::U8, 1)), 0xFFu);
  EXPECT_EQ(f.binary(OpKind::Max, DType::Bool, f.intC(DType::Bool, 0), f.intC(DType::Bool, 1)), 1u);
  EXPECT_EQ(f.binary(OpKind::Min, DType::Bool, f.intC(DType::Bool, 0), f.intC(DType::Bool, 1)), 0u);
}

TEST(ScalarEmitSemantics, Compares) {
  Folder f;
  auto nan = f.f32(NAN), one = f.f32(1.0f);
  EXPECT_EQ(f.binary(OpKind::CmpNe, DType::F32, nan, nan), 1u);
  EXPECT_EQ(f.binary(OpKind::CmpEq, DType::F32, nan, nan), 0u);
  EXPECT_EQ(f.binary(OpKind::CmpLt, DType::F32, nan, one), 0u);
  EXPECT_EQ(f.binary(OpKind::CmpGe, DType::F32, nan, one), 0u);
  EXPECT_EQ(f.binary(OpKind::CmpEq, DType::F32, f.f32(-0.0f), f.f32(0.0f)), 1u);
  EXPECT_EQ(
      f.binary(OpKind::CmpLt, DType::I32, f.intC(DType::I32, uint32_t(-1)), f.intC(DType::I32, 0)),
      1u);
  EXPECT_EQ(
      f.binary(OpKind::CmpLt, DType::U32, f.intC(DType::U32, 0xFFFFFFFFu), f.intC(DType::U32, 0)),
      0u);
  EXPECT_EQ(f.binary(OpKind::CmpLt, DType::Bool, f.intC(DType::Bool, 0), f.intC(DType::Bool, 1)),
            1u);
  EXPECT_EQ(f.binary(OpKind::CmpGt, DType::Bool, f.intC(DType::Bool, 0), f.intC(DType::Bool, 1)),
            0u);
}

TEST(ScalarEmitSemantics, IntegerArithmetic) {
  Folder f;
  auto i32 = [&](int32_t v) { return f.intC(DType::I32, uint32_t(v)); };
  EXPECT_EQ(f.binary(OpKind::Add, DType::I8, f.intC(DType::I8, 127), f.intC(DType::I8, 1)), 0x80u);
  EXPECT_EQ(f.binary(OpKind::Div, DType::I32, i32(-7), i32(2)), uint32_t(-3));
  EXPECT_EQ(f.binary(OpKind::Rem, DType::I32, i32(-7), i32(2)), uint32_t(-1));
  EXPECT_EQ(f.binary(OpKind::Rem, DType::I32, i32(7), i32(-2)), 1u);
  EXPECT_EQ(
      f.binary(OpKind::Div, DType::U32, f.intC(DType::U32, 0xFFFFFFFFu), f.intC(DType::U32, 2)),
      0x7FFFFFFFu);
  EXPECT_EQ(f.binary(OpKind::Shr, DType::I8, f.intC(DType::I8, 0xF8), f.intC(DType::I8, 1)), 0xFCu);
  EXPECT_EQ(f.binary(OpKind::Shr, DType::U8, f.intC(DType::U8, 0xF8), f.intC(DType::U8, 1)), 0x7Cu);
  EXPECT_EQ(f.binary(OpKind::Shl, DType::U8, f.intC(DType::U8, 0x81), f.intC(DType::U8, 1)), 0x02u);
  // umulhi: the high half of the double-width product, signed for signed dtypes.
  EXPECT_EQ(f.binary(OpKind::UMulHi, DType::I32, i32(-1), i32(-1)), 0u);
  EXPECT_EQ(f.binary(OpKind::UMulHi, DType::I32, i32(INT32_MIN), i32(2)), 0xFFFFFFFFu);
  EXPECT_EQ(f.binary(OpKind::UMulHi, DType::U32, f.intC(DType::U32, 0xFFFFFFFFu),
                     f.intC(DType::U32, 0xFFFFFFFFu)),
            0xFFFFFFFEu);
  EXPECT_EQ(f.binary(OpKind::UMulHi, DType::U64, f.intC(DType::U64, uint64_t(1) << 63),
                     f.intC(DType::U64, 4)),
            2u);
  EXPECT_EQ(f.unary(OpKind::Abs, DType::I32, i32(INT32_MIN)), 0x80000000u);
  EXPECT_EQ(f.unary(OpKind::Neg, DType::I8, f.intC(DType::I8, 0x80)), 0x80u);
  EXPECT_EQ(f.unary(OpKind::Not, DType::I8, f.intC(DType::I8, 0)), 0xFFu);
  EXPECT_EQ(f.unary(OpKind::Not, DType::Bool, f.intC(DType::Bool, 1)), 0u);
  EXPECT_EQ(f.binary(OpKind::Xor, DType::Bool, f.intC(DType::Bool, 1), f.intC(DType::Bool, 1)), 0u);
}

TEST(ScalarEmitSemantics, FloatArithmetic) {
  Folder f;
  EXPECT_EQ(f.unary(OpKind::Neg, DType::F32, f.f32(0.0f)), 0x80000000u);
  EXPECT_EQ(f.unary(OpKind::Neg, DType::BF16, f.floatC(DType::BF16, 0x3F80)), 0xBF80u);
  EXPECT_EQ(f.unary(OpKind::Abs, DType::F32, f.f32(-0.0f)), 0u);
  EXPECT_EQ(f.unary(OpKind::Floor, DType::F32, f.f32(-0.5f)), 0xBF800000u);
  EXPECT_EQ(f.unary(OpKind::Ceil, DType::F32, f.f32(-0.5f)), 0x80000000u);
  EXPECT_EQ(f.unary(OpKind::Sqrt, DType::F16, f.floatC(DType::F16, 0x4000)), 0x3DA8u); // sqrt 2
  // (half)2048 + (half)1 == 2048 (the tie goes to even).
  EXPECT_EQ(
      f.binary(OpKind::Add, DType::F16, f.floatC(DType::F16, 0x6800), f.floatC(DType::F16, 0x3C00)),
      0x6800u);
  // fma(1 + 2^-23, 1 + 2^-23, -(1 + 2^-22)) is 2^-46 rounded once (0 if the product rounds).
  auto a = f.f32(1 + 0x1p-23f);
  EXPECT_EQ(f.fold(DType::F32, {a, a, f.f32(-(1 + 0x1p-22f))},
                   [](ScalarEmitter &e, const std::vector<llvm::Value *> &v) {
                     return e.fma(DType::F32, v[0], v[1], v[2]);
                   }),
            0x28800000u);
}

TEST(ScalarEmitSemantics, ConstantsRoundLikeACastFromDouble) {
  Folder f;
  EXPECT_EQ(f.constant(DType::F16, 0.1), 0x2E66u);
  EXPECT_EQ(f.constant(DType::BF16, 0.1), 0x3DCDu);
  EXPECT_EQ(f.constant(DType::BF16, 1 + 0x1p-8 + 0x1p-30), 0x3F81u); // one rounding
  EXPECT_EQ(f.constant(DType::F16, 65520.0), 0x7C00u);
  EXPECT_EQ(f.constant(DType::F32, 1e40), 0x7F800000u);
  EXPECT_EQ(f.constant(DType::F64, -0.0), 0x8000000000000000u);
  EXPECT_EQ(f.constant(DType::I8, int64_t(-1)), 0xFFu);
  EXPECT_EQ(f.constant(DType::U64, int64_t(-1)), ~uint64_t(0));
  EXPECT_EQ(f.constant(DType::I16, int64_t(-2)), 0xFFFEu);
  EXPECT_EQ(f.constant(DType::Bool, int64_t(1)), 1u);
  EXPECT_EQ(f.constant(DType::Bool, int64_t(0)), 0u);
  EXPECT_EQ(f.constant(DType::F16, int64_t(2049)), 0x6800u);
  EXPECT_EQ(f.constant(DType::F32, int64_t(16777217)), 0x4B800000u);
}

//===-- Types, memory, builder state ------------------------------------------===//

/// Hard operand bits of dtype t: zeros of both signs, extremes, rounding midpoints.
std::vector<uint64_t> hardBits(DType t) {
  unsigned w = tc::bitWidth(t);
  uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  if (t == DType::Bool)
    return {0, 1};
  if (!tc::isFloat(t)) {
    uint64_t top = uint64_t(1) << (w - 1);
    return {0,    1,        2,   7,       w - 1,   w,
            mask, mask - 1, top, top - 1, top + 1, 0x5A5A5A5A5A5A5A5Au & mask};
  }
  std::vector<uint64_t> out;
  for (double d : std::initializer_list<double>{0.0,
                                                -0.0,
                                                1.0,
                                                -1.0,
                                                1.5,
                                                -2.5,
                                                3.0,
                                                65504.0,
                                                65520.0,
                                                1e30,
                                                1e-30,
                                                16777217.0,
                                                9007199254740993.0,
                                                -2147483649.0,
                                                255.5,
                                                1 + 0x1p-8 + 0x1p-30,
                                                1 + 0x1p-11,
                                                0x1p-24,
                                                double(INFINITY),
                                                -double(INFINITY),
                                                double(NAN)})
    out.push_back(tc::num::floatBits(t, d));
  return out;
}

/// The shared scalar rules (support/Numerics.h) on `x`; none where the op
/// traps or is computed by libdevice (the transcendentals: ULP-bounded).
std::optional<uint64_t> sharedRule(OpKind k, DType t, const std::vector<uint64_t> &x) {
  namespace num = tc::num;
  bool fl = tc::isFloat(t);
  uint64_t r = 0;
  auto trapping = [&](num::Status (*fn)(DType, uint64_t, uint64_t, uint64_t &)) {
    return fn(t, x[0], x[1], r) == num::Status::Ok ? std::optional(r) : std::nullopt;
  };
  const std::pair<OpKind, num::Cmp> cmps[] = {
      {OpKind::CmpEq, num::Cmp::Eq}, {OpKind::CmpNe, num::Cmp::Ne}, {OpKind::CmpLt, num::Cmp::Lt},
      {OpKind::CmpLe, num::Cmp::Le}, {OpKind::CmpGt, num::Cmp::Gt}, {OpKind::CmpGe, num::Cmp::Ge}};
  for (auto [op, c] : cmps)
    if (k == op)
      return num::compare(t, c, x[0], x[1]);
  if (k == OpKind::Add)
    return fl ? num::floatAdd(t, x[0], x[1]) : num::intAdd(t, x[0], x[1]);
  if (k == OpKind::Sub)
    return fl ? num::floatSub(t, x[0], x[1]) : num::intSub(t, x[0], x[1]);
  if (k == OpKind::Mul)
    return fl ? num::floatMul(t, x[0], x[1]) : num::intMul(t, x[0], x[1]);
  if (k == OpKind::Div)
    return fl ? std::optional(num::floatDiv(t, x[0], x[1])) : trapping(num::intDiv);
  if (k == OpKind::Rem)
    return fl ? std::optional(num::floatRem(t, x[0], x[1])) : trapping(num::intRem);
  if (k == OpKind::Shl)
    return trapping(num::intShl);
  if (k == OpKind::Shr)
    return trapping(num::intShr);
  if (k == OpKind::UMulHi)
    return num::intMulHi(t, x[0], x[1]);
  if (k == OpKind::And)
    return num::bitAnd(t, x[0], x[1]);
  if (k == OpKind::Or)
    return num::bitOr(t, x[0], x[1]);
  if (k == OpKind::Xor)
    return num::bitXor(t, x[0], x[1]);
  if (k == OpKind::Min)
    return num::minOf(t, x[0], x[1]);
  if (k == OpKind::Max)
    return num::maxOf(t, x[0], x[1]);
  if (k == OpKind::Neg)
    return fl ? num::floatNeg(t, x[0]) : num::intNeg(t, x[0]);
  if (k == OpKind::Not)
    return num::bitNot(t, x[0]);
  if (k == OpKind::Abs)
    return num::absOf(t, x[0]);
  if (k == OpKind::Floor)
    return num::floatMath(t, num::MathFn::Floor, x[0]);
  if (k == OpKind::Ceil)
    return num::floatMath(t, num::MathFn::Ceil, x[0]);
  if (k == OpKind::Sqrt)
    return num::floatMath(t, num::MathFn::Sqrt, x[0]);
  if (k == OpKind::Fma && (t == DType::F32 || t == DType::F64))
    return num::floatFma(t, x[0], x[1], x[2]);
  return std::nullopt;
}

bool sameResult(DType t, uint64_t a, uint64_t b) {
  if (tc::isFloat(t) && std::isnan(tc::num::floatValue(t, a)) &&
      std::isnan(tc::num::floatValue(t, b)))
    return true; // NaN payloads are not part of the semantics
  return a == b;
}

// The emitted code, folded by LLVM (APFloat), computes what the shared scalar
// rules compute, on every op and cast pair over hard operands (the same rules
// the interpreter runs and the constant folder folds with).
TEST(ScalarEmitSemantics, AgreesWithTheSharedScalarRules) {
  Folder f;
  auto constOf = [&](DType t, uint64_t bits) {
    return tc::isFloat(t) ? f.floatC(t, bits) : f.intC(t, bits);
  };
  int checked = 0;
  std::set<std::string> unfolded; // LLVM leaves their intrinsics unfolded
  for (const OpInfo &op : elementwiseOps())
    for (DType t : tc::kAllDTypes) {
      if (!definedOn(op.kind, t))
        continue;
      std::vector<uint64_t> hard = hardBits(t);
      size_t n = hard.size(), combos = op.arity == 1 ? n : op.arity == 2 ? n * n : n * n * n;
      for (size_t c = 0; c < combos; c += op.arity == 3 ? 7 : 1) {
        std::vector<uint64_t> x = {hard[c % n], hard[(c / n) % n], hard[(c / n / n) % n]};
        std::optional<uint64_t> want = sharedRule(op.kind, t, x);
        if (!want)
          continue;
        std::vector<llvm::Constant *> in;
        for (int i = 0; i < op.arity; ++i)
          in.push_back(constOf(t, x[size_t(i)]));
        DType out = isCompare(op.kind) ? DType::Bool : t;
        std::optional<uint64_t> folded = f.tryFold(out, in, emitOp(op, t));
        if (!folded) {
          unfolded.insert(std::string(op.name) + " " + std::string(tc::irName(t)));
          continue;
        }
        uint64_t got = *folded;
        ++checked;
        EXPECT_TRUE(sameResult(out, got, *want))
            << op.name << " " << tc::irName(t) << " on 0x" << std::hex << x[0] << ", 0x" << x[1]
            << ", 0x" << x[2] << ": emitted 0x" << got << ", the rules 0x" << *want;
      }
    }
  for (DType from : tc::kAllDTypes)
    for (DType to : tc::kAllDTypes)
      for (uint64_t bits : hardBits(from)) {
        uint64_t want = 0;
        if (tc::num::convert(from, bits, to, want) != tc::num::Status::Ok)
          continue;
        std::optional<uint64_t> folded = f.tryFold(
            to, {constOf(from, bits)}, [&](ScalarEmitter &e, const std::vector<llvm::Value *> &a) {
              return e.cast(a[0], from, to);
            });
        if (!folded) {
          unfolded.insert("cast " + std::string(tc::irName(from)) + " -> " +
                          std::string(tc::irName(to)));
          continue;
        }
        uint64_t got = *folded;
        ++checked;
        EXPECT_TRUE(sameResult(to, got, want))
            << "cast " << tc::irName(from) << " -> " << tc::irName(to) << " of 0x" << std::hex
            << bits << ": emitted 0x" << got << ", the rules 0x" << want;
      }
  std::string list;
  for (const std::string &u : unfolded)
    list += " [" + u + "]";
  std::cout << checked << " results compared; not folded by LLVM, so not compared here:" << list
            << "\n";
  EXPECT_GT(checked, 5000);
}

TEST(ScalarEmitTypes, RegisterAndMemoryTypes) {
  llvm::LLVMContext c;
  llvm::Module m("t", c);
  llvm::IRBuilder<> b(c);
  ScalarEmitter e(b, m);
  EXPECT_TRUE(e.regType(DType::Bool)->isIntegerTy(1));
  EXPECT_TRUE(e.memType(DType::Bool)->isIntegerTy(8));
  EXPECT_TRUE(e.regType(DType::U16)->isIntegerTy(16));
  EXPECT_TRUE(e.regType(DType::F16)->isHalfTy());
  EXPECT_TRUE(e.regType(DType::BF16)->isBFloatTy());
  EXPECT_TRUE(e.memType(DType::BF16)->isBFloatTy());
  EXPECT_TRUE(e.regType(DType::F64)->isDoubleTy());
  llvm::Type *p = e.regType(tc::ir::Type::ptrTile(DType::F32, {4}));
  ASSERT_TRUE(p->isPointerTy());
  EXPECT_EQ(p->getPointerAddressSpace(), 1u);
  EXPECT_TRUE(e.regType(tc::ir::Type::tile(DType::I8, {4}))->isIntegerTy(8));
}

TEST(ScalarEmitTypes, BoolMemoryIsAByte) {
  Folder f;
  EXPECT_EQ(f.fold(DType::Bool, {},
                   [&](ScalarEmitter &e, const std::vector<llvm::Value *> &) {
                     return e.fromMemory(llvm::ConstantInt::get(e.memType(DType::Bool), 2),
                                         DType::Bool);
                   }),
            1u); // any non-zero byte is true
  EXPECT_EQ(f.fold(DType::U8, {},
                   [&](ScalarEmitter &e, const std::vector<llvm::Value *> &) {
                     return e.toMemory(llvm::ConstantInt::getTrue(e.regType(DType::Bool)),
                                       DType::Bool);
                   }),
            1u);
}

TEST(ScalarEmitTypes, NoFastMathFlagsEvenIfTheBuilderHasThem) {
  llvm::LLVMContext c;
  llvm::Module m("t", c);
  auto *f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getFloatTy(c),
                              {llvm::Type::getFloatTy(c), llvm::Type::getFloatTy(c)}, false),
      llvm::Function::ExternalLinkage, "f", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  llvm::FastMathFlags fast;
  fast.setFast();
  b.setFastMathFlags(fast);
  ScalarEmitter e(b, m);
  llvm::Value *sum = e.binary(OpKind::Add, DType::F32, f->getArg(0), f->getArg(1));
  llvm::Value *prod = e.binary(OpKind::Mul, DType::F32, f->getArg(0), f->getArg(1));
  for (llvm::Value *v : {sum, prod}) {
    auto *i = llvm::dyn_cast<llvm::Instruction>(v);
    ASSERT_TRUE(i);
    EXPECT_FALSE(i->getFastMathFlags().any()) << "no contract / fast flags on emitted ops";
  }
  EXPECT_TRUE(b.getFastMathFlags().isFast()) << "the builder's flags are restored";
}

TEST(ScalarEmitTypes, TranscendentalsDeclareLibdevice) {
  llvm::LLVMContext c;
  llvm::Module m("t", c);
  auto *f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                              {llvm::Type::getHalfTy(c), llvm::Type::getDoubleTy(c)}, false),
      llvm::Function::ExternalLinkage, "f", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  ScalarEmitter e(b, m);
  llvm::Value *h = e.unary(OpKind::Sin, DType::F16, f->getArg(0));
  e.unary(OpKind::Log2, DType::F64, f->getArg(1));
  EXPECT_TRUE(h->getType()->isHalfTy());
  llvm::Function *sinf = m.getFunction("__nv_sinf");
  ASSERT_TRUE(sinf);
  EXPECT_TRUE(sinf->doesNotAccessMemory());
  EXPECT_TRUE(sinf->getReturnType()->isFloatTy());
  EXPECT_TRUE(m.getFunction("__nv_log2"));
}

// A fatal error inside LLVM (only a bug in the backend or in LLVM reaches
// one; LLVM 19's NVPTX backend aborted on an i128 division, seed 20261601
// kernel 248931) is a compiler error with exit code 70, not an abort.
TEST(CodegenFatalErrorDeathTest, LlvmFatalErrorIsAnInternalCompilerError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        tc::codegen::installLlvmFatalErrorHandler();
        llvm::report_fatal_error("Undefined external symbol \"\"");
      },
      testing::ExitedWithCode(70),
      "error: internal compiler error: LLVM's NVPTX code generator stopped: Undefined external "
      "symbol \"\"\nnote: this is a bug in the GPU backend or in LLVM");
}

} // namespace

#endif // TC_TEST_LLVM
