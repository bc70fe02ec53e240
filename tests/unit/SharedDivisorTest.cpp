// codegen/SharedDivisor.cpp: fp32 divisions that share a divisor.
//
//  1. The fast path's arithmetic (RN(1/b), then q0 = RN(a * y),
//     r = fma(-q0, b, a), q = fma(r, y, q0)) against the host's IEEE division
//     `a / b`, bit for bit: every significand of a at the range's corner
//     exponents against b with extreme significands and random ones, and
//     random pairs over the whole range. Outside the range the fast path
//     declines (the GPU then takes div.rn.f32).
//  2. The rewrite on LLVM IR built here: one reciprocal per divisor, the
//     original fdivs moved to the slow block, a phi per quotient, the module
//     verifies (a straight block, a loop whose back edge carries a quotient, a
//     group cut by a use, too few divisions, a constant divisor).
#include "codegen/SharedDivisor.h"

#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstdint>
#include <bit>
#include <random>

namespace {

using tc::codegen::sharedDivisorQuotient;

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }
float make(bool neg, int exp, uint32_t mant) {
  return std::bit_cast<float>((neg ? 0x80000000u : 0u) | uint32_t(exp + 127) << 23 | (mant & 0x7fffff));
}

/// How many quotients of the fast path differ from IEEE division.
long mismatches(float a, float b, long &checked) {
  float q = 0;
  if (!sharedDivisorQuotient(a, b, q))
    return 0;
  ++checked;
  volatile float want = a / b; // the host's division is IEEE, round to nearest even
  return bitsOf(q) != bitsOf(want) ? 1 : 0;
}

TEST(SharedDivisor, FastPathIsCorrectlyRoundedOverEverySignificand) {
  // The corners of the range (|a|, |b| in [2^-63, 2^63)) and the middle.
  const int corners[][2] = {{0, 0}, {-63, 62}, {62, -63}, {-63, -63}, {62, 62}};
  std::mt19937 rng(20261205);
  long bad = 0, checked = 0;
  for (auto [ea, eb] : corners) {
    // b: the smallest and largest significands and two random ones.
    uint32_t mbs[] = {0, 1, 0x7fffff, 0x7ffffe, uint32_t(rng() & 0x7fffff),
                      uint32_t(rng() & 0x7fffff)};
    for (uint32_t mb : mbs)
      for (uint32_t ma = 0; ma < (1u << 23); ++ma)
        bad += mismatches(make(ma & 1, ea, ma), make(mb & 2, eb, mb), checked);
  }
  EXPECT_EQ(checked, 5L * 6 * (1L << 23));
  EXPECT_EQ(bad, 0);
}

TEST(SharedDivisor, FastPathIsCorrectlyRoundedOnRandomPairs) {
  std::mt19937_64 rng(7);
  long bad = 0, checked = 0;
  for (int i = 0; i < 20'000'000; ++i) {
    uint64_t r = rng();
    int ea = int((r >> 46) % 126) - 63, eb = int((r >> 53) % 126) - 63;
    bad += mismatches(make(r >> 63, ea, uint32_t(r)), make((r >> 62) & 1, eb, uint32_t(r >> 23)),
                      checked);
  }
  EXPECT_EQ(checked, 20'000'000);
  EXPECT_EQ(bad, 0);
}

TEST(SharedDivisor, FastPathDeclinesOutsideItsRange) {
  float q = 0;
  const float inside = 3.0f;
  const float outside[] = {0.0f, -0.0f, std::ldexp(1.0f, -64), std::ldexp(1.0f, 63),
                           std::ldexp(1.5f, -140) /* subnormal */, INFINITY, -INFINITY, NAN,
                           -std::ldexp(1.0f, 100)};
  for (float x : outside) {
    EXPECT_FALSE(sharedDivisorQuotient(x, inside, q)) << x;
    EXPECT_FALSE(sharedDivisorQuotient(inside, x, q)) << x;
  }
  EXPECT_TRUE(sharedDivisorQuotient(std::ldexp(1.0f, -63), std::ldexp(1.99f, 62), q));
  EXPECT_TRUE(sharedDivisorQuotient(-std::ldexp(1.99f, 62), -std::ldexp(1.0f, -63), q));
}

//===-- The rewrite -------------------------------------------------------===//

struct Fixture {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = std::make_unique<llvm::Module>("t", ctx);
  llvm::Type *f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type *ptr = llvm::PointerType::get(ctx, 1);

  llvm::Function *function(const char *name) {
    auto *ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, f32, f32}, false);
    return llvm::Function::Create(ty, llvm::Function::ExternalLinkage, name, *m);
  }
  /// Loads n floats from p[first...] and divides each by `den`.
  std::vector<llvm::Value *> divs(llvm::IRBuilder<> &b, llvm::Value *p, llvm::Value *den, int n,
                                  int first = 0) {
    std::vector<llvm::Value *> q;
    for (int i = 0; i < n; ++i) {
      llvm::Value *a = b.CreateLoad(f32, b.CreateConstGEP1_32(f32, p, first + i));
      q.push_back(b.CreateFDiv(a, den));
    }
    return q;
  }
  void stores(llvm::IRBuilder<> &b, llvm::Value *p, const std::vector<llvm::Value *> &vs,
              int first = 0) {
    for (size_t i = 0; i < vs.size(); ++i)
      b.CreateStore(vs[i], b.CreateConstGEP1_32(f32, p, first + int(i)));
  }
  void expectValid() {
    std::string err;
    llvm::raw_string_ostream os(err);
    EXPECT_FALSE(llvm::verifyModule(*m, &os)) << err;
  }
  int count(llvm::Function *f, llvm::Intrinsic::ID id) {
    int n = 0;
    for (llvm::Instruction &i : llvm::instructions(*f))
      if (auto *c = llvm::dyn_cast<llvm::IntrinsicInst>(&i); c && c->getIntrinsicID() == id)
        ++n;
    return n;
  }
  int slowBlocks(llvm::Function *f) {
    int n = 0;
    for (llvm::BasicBlock &bb : *f)
      n += bb.getName().ends_with(".div.slow");
    return n;
  }
  /// fdivs per block name suffix: in a slow block, elsewhere.
  std::pair<int, int> fdivs(llvm::Function *f) {
    int slow = 0, other = 0;
    for (llvm::Instruction &i : llvm::instructions(*f))
      if (i.getOpcode() == llvm::Instruction::FDiv)
        (i.getParent()->getName().ends_with(".div.slow") ? slow : other)++;
    return {slow, other};
  }
};

TEST(SharedDivisor, RewritesAStraightBlock) {
  Fixture t;
  llvm::Function *f = t.function("straight");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(t.ctx, "entry", f));
  llvm::Value *p = f->getArg(0), *l = f->getArg(1), *c = f->getArg(2);
  std::vector<llvm::Value *> q = t.divs(b, p, l, 8);
  std::vector<llvm::Value *> few = t.divs(b, p, c, 2, 8);       // too few for c
  std::vector<llvm::Value *> k = t.divs(b, p, llvm::ConstantFP::get(t.f32, 3.0), 5, 10);
  t.stores(b, p, q, 16);
  t.stores(b, p, few, 24);
  t.stores(b, p, k, 26);
  b.CreateRetVoid();
  EXPECT_EQ(tc::codegen::shareDivisors(*t.m), std::set<std::string>{f->getName().str()});
  t.expectValid();
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_rcp_rn_f), 1);
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_mul_rn_f), 8);
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_fma_rn_f), 16);
  EXPECT_EQ(t.fdivs(f), std::make_pair(8, 7)); // c's two and the constant's five stay
  int phis = 0;
  for (llvm::Instruction &i : llvm::instructions(*f))
    phis += llvm::isa<llvm::PHINode>(&i);
  EXPECT_EQ(phis, 8);
}

TEST(SharedDivisor, AUseEndsAGroup) {
  Fixture t;
  llvm::Function *f = t.function("cut");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(t.ctx, "entry", f));
  llvm::Value *p = f->getArg(0), *l = f->getArg(1);
  std::vector<llvm::Value *> q1 = t.divs(b, p, l, 4);
  t.stores(b, p, {q1[0]}, 32); // the first use: the next divisions form another group
  std::vector<llvm::Value *> q2 = t.divs(b, p, l, 4, 4);
  t.stores(b, p, q1, 40);
  t.stores(b, p, q2, 44);
  b.CreateRetVoid();
  EXPECT_EQ(tc::codegen::shareDivisors(*t.m), std::set<std::string>{f->getName().str()});
  t.expectValid();
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_rcp_rn_f), 1); // the second group reuses it
  EXPECT_EQ(t.slowBlocks(f), 2);
  EXPECT_EQ(t.fdivs(f), std::make_pair(8, 0));
}

TEST(SharedDivisor, LongGroupsAreCutAndShareTheReciprocal) {
  Fixture t;
  llvm::Function *f = t.function("long");
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(t.ctx, "entry", f));
  llvm::Value *p = f->getArg(0), *l = f->getArg(1);
  std::vector<llvm::Value *> q = t.divs(b, p, l, 40); // groups of 16, 16 and 8
  t.stores(b, p, q, 64);
  b.CreateRetVoid();
  EXPECT_EQ(tc::codegen::shareDivisors(*t.m), std::set<std::string>{"long"});
  t.expectValid();
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_rcp_rn_f), 1);
  EXPECT_EQ(t.count(f, llvm::Intrinsic::nvvm_fma_rn_f), 80);
  EXPECT_EQ(t.slowBlocks(f), 3);
  EXPECT_EQ(t.fdivs(f), std::make_pair(40, 0));
}

TEST(SharedDivisor, RewritesALoopBodyWhoseBackEdgeCarriesAQuotient) {
  Fixture t;
  llvm::Function *f = t.function("loop");
  llvm::Value *p = f->getArg(0), *l = f->getArg(1);
  auto *entry = llvm::BasicBlock::Create(t.ctx, "entry", f);
  auto *body = llvm::BasicBlock::Create(t.ctx, "body", f);
  auto *exit = llvm::BasicBlock::Create(t.ctx, "exit", f);
  llvm::IRBuilder<> b(entry);
  b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::PHINode *carried = b.CreatePHI(t.f32, 2);
  llvm::PHINode *i = b.CreatePHI(b.getInt32Ty(), 2);
  carried->addIncoming(llvm::ConstantFP::get(t.f32, 1.0), entry);
  i->addIncoming(b.getInt32(0), entry);
  std::vector<llvm::Value *> q = t.divs(b, p, l, 4);
  llvm::Value *again = b.CreateFDiv(carried, l);
  t.stores(b, p, q, 8);
  llvm::Value *next = b.CreateAdd(i, b.getInt32(1));
  b.CreateCondBr(b.CreateICmpSLT(next, b.getInt32(10)), body, exit);
  b.SetInsertPoint(exit);
  b.CreateStore(again, p);
  b.CreateRetVoid();
  llvm::BasicBlock *latch = body;
  carried->addIncoming(again, latch);
  i->addIncoming(next, latch);
  EXPECT_EQ(tc::codegen::shareDivisors(*t.m), std::set<std::string>{"loop"});
  t.expectValid();
  EXPECT_EQ(t.fdivs(f), std::make_pair(5, 0));
  // The loop's phi now takes the quotient from the block holding the back edge.
  for (unsigned k = 0; k < carried->getNumIncomingValues(); ++k)
    if (carried->getIncomingBlock(k) != entry) {
      EXPECT_TRUE(llvm::isa<llvm::PHINode>(carried->getIncomingValue(k)));
      EXPECT_TRUE(carried->getIncomingBlock(k)->getName().ends_with(".div.cont"));
    }
}

} // namespace
