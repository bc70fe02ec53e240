// Properties of the reference interpreter (DESIGN.md section 4 rule 14 and
// section 8, "Properties that need no GPU"), on random instances of the
// tutorial's kernels (examples/*.tc: random shapes, defines and inputs):
//  - results are bit-identical for 1, 2, 4 and 7 threads;
//  - results do not depend on list-valued tile sizes where the kernel computes
//    the same function (vector add over SIZE; transposes over TM/TN; matmuls
//    over TM/TN/TK with small-integer inputs, where every sum is exact);
//  - the IR pass pipeline does not change results: the module as lowered and
//    after ir::runPipeline (the default pipeline, or a random sequence of
//    passes) give bit-identical buffers.
#include "frontend/Compiler.h"
#include "interp/InterpreterBackend.h"
#include "ir/Passes.h"
#include "runtime/Launch.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef TC_SOURCE_DIR
#error "TC_SOURCE_DIR must be defined"
#endif

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;

// Runs a property at most `maxSuccess` times (RC_PARAMS may lower it and sets
// the seed), so the suite stays within its time budget.
template <typename Testable>
void checkBounded(Testable &&testable, int maxSuccess) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata md;
  md.id = std::string(info->test_suite_name()) + "/" + info->name();
  md.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::min(params.maxSuccess, maxSuccess);
  auto result = rc::detail::checkTestable(std::forward<Testable>(testable), md, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    if (!result.template get<rc::detail::SuccessResult>().distribution.empty()) {
      rc::detail::printResultMessage(result, std::cout);
      std::cout << std::endl;
    }
  } else {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str();
  }
}

DType dtypeOf(const std::string &type) {
  if (type == "float") return DType::F32;
  if (type == "half") return DType::F16;
  if (type == "bf16") return DType::BF16;
  if (type == "double") return DType::F64;
  if (type == "int8") return DType::I8;
  return DType::I32;
}

// One problem: an example with its shape and inputs, independent of tile sizes.
struct Problem {
  std::string file; // examples/<file>
  std::string type;
  int64_t m = 1, n = 1, k = 1;
  bool at = false, bt = false; // matmul_trans
  bool smallInts = false;
  uint64_t seed = 0;
};

struct Tiles {
  int64_t tm = 16, tn = 16, tk = 8, size = 32;
};

bool isMatmul(const std::string &f) { return f.rfind("matmul", 0) == 0; }
bool isTranspose(const std::string &f) { return f.rfind("transpose", 0) == 0; }

tc::DefineList definesOf(const Problem &p, const Tiles &t) {
  if (p.file == "vector_add.tc")
    return {{"SIZE", std::to_string(t.size)}, {"TYPE", p.type}};
  tc::DefineList d = {{"TM", std::to_string(t.tm)}, {"TN", std::to_string(t.tn)}, {"TYPE", p.type}};
  if (isMatmul(p.file))
    d.push_back({"TK", std::to_string(t.tk)});
  if (p.file == "matmul_trans.tc") {
    d.push_back({"AT", p.at ? "1" : "0"});
    d.push_back({"BT", p.bt ? "1" : "0"});
  }
  return d;
}

// A launch's arguments, owned.
struct Instance {
  std::map<std::string, HostArray> arrays;
  std::map<std::string, int64_t> scalars; // int32 parameters
  std::array<int64_t, 3> grid{1, 1, 1};
};

HostArray randomArray(DType t, int64_t n, std::mt19937_64 &rng, bool smallInts) {
  HostArray a = HostArray::zeros(t, {n});
  std::uniform_int_distribution<int> ints(-3, 3);
  std::uniform_real_distribution<double> reals(-2.0, 2.0);
  for (int64_t i = 0; i < n; ++i)
    a.setDouble(i, smallInts || t == DType::I8 ? ints(rng) : reals(rng));
  return a;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Instance instanceOf(const Problem &p, const Tiles &t) {
  Instance in;
  DType dt = dtypeOf(p.type);
  std::mt19937_64 rng(p.seed);
  if (p.file == "vector_add.tc") {
    in.arrays["a"] = randomArray(dt, p.n, rng, p.smallInts);
    in.arrays["b"] = randomArray(dt, p.n, rng, p.smallInts);
    in.arrays["c"] = HostArray::zeros(dt, {p.n});
    in.scalars["N"] = p.n;
    in.grid = {cdiv(p.n, t.size), 1, 1};
  } else if (isTranspose(p.file)) {
    // X(m, n) at m + n * ldx with ldx = M; Y(m, n) at m * ldy + n with ldy = N.
    in.arrays["X"] = randomArray(dt, p.m * p.n, rng, p.smallInts);
    in.arrays["Y"] = HostArray::zeros(dt, {p.m * p.n});
    in.scalars = {{"M", p.m}, {"N", p.n}, {"ldx", p.m}, {"ldy", p.n}};
    in.grid = {cdiv(p.m, t.tm), cdiv(p.n, t.tn), 1};
  } else {
    int64_t lda = p.at ? p.m : p.k, ldb = p.bt ? p.k : p.n;
    in.arrays["A"] = randomArray(dt, p.m * p.k, rng, p.smallInts);
    in.arrays["B"] = randomArray(dt, p.k * p.n, rng, p.smallInts);
    in.arrays["C"] = HostArray::zeros(dt, {p.m * p.n});
    in.scalars = {{"M", p.m}, {"N", p.n}, {"K", p.k}, {"lda", lda}, {"ldb", ldb}, {"ldc", p.n}};
    in.grid = {p.m / t.tm, p.n / t.tn, 1};
  }
  return in;
}

std::string describe(const RunResult &r) {
  switch (r.status) {
  case RunResult::Status::Ok: return "ok";
  case RunResult::Status::Error: return "error: " + r.error;
  case RunResult::Status::Trapped: return "trap: " + (r.trap ? r.trap->render() : "?");
  }
  return "?";
}

// The outcome of a run: status text and every buffer's bytes afterwards.
struct Outcome {
  std::string status;
  std::map<std::string, std::vector<uint8_t>> buffers;
  bool operator==(const Outcome &) const = default;
};

Outcome run(const tc::CompiledKernel &k, Instance in, unsigned threads) {
  tc::LaunchArgs args;
  for (auto &[name, a] : in.arrays)
    args.setBuffer(name, &a);
  for (auto &[name, v] : in.scalars)
    args.setScalar(name, tc::ScalarValue::ofInt(DType::I32, v));
  tc::RunOptions opts;
  opts.threads = threads;
  RunResult r = tc::createInterpreterBackend()->launch(k, in.grid, args, opts);
  Outcome o;
  o.status = describe(r);
  for (auto &[name, a] : in.arrays)
    o.buffers[name] = a.data;
  return o;
}

// Compiles an example; with `passes`, runs that IR pipeline on the module
// first ("default" for the default pipeline) and builds the CompiledKernel
// from the transformed module.
std::shared_ptr<tc::CompiledKernel> compile(const Problem &p, const Tiles &t,
                                            const std::vector<std::string> *passes = nullptr) {
  tc::CompileOptions opts;
  opts.defines = definesOf(p, t);
  auto c = std::make_shared<tc::Compilation>(opts);
  c->diags().setOutput(nullptr);
  std::string path = std::string(TC_SOURCE_DIR) + "/examples/" + p.file;
  if (!c->addMainFile(path) || !c->run(tc::Stage::Lower))
    return nullptr;
  std::unique_ptr<tc::ir::Module> m = c->takeModule();
  if (passes) {
    tc::ir::PipelineOptions po;
    po.verifyEach = true;
    std::ostringstream log;
    po.out = &log;
    if (!(passes->size() == 1 && passes->front() == "default"))
      po.passes = *passes;
    if (!tc::ir::runPipeline(*m, po)) {
      ADD_FAILURE() << "pipeline failed:\n" << log.str();
      return nullptr;
    }
  }
  if (m->functions.size() != 1)
    return nullptr;
  const tc::ir::Function *f = m->functions.front().get();
  std::shared_ptr<tc::SourceManager> sm(c, &c->sourceManager());
  return std::make_shared<tc::CompiledKernel>(std::move(m), f, std::move(sm), opts.defines);
}

std::string show(const Problem &p, const Tiles &t) {
  std::ostringstream os;
  os << p.file << " TYPE=" << p.type << " M=" << p.m << " N=" << p.n << " K=" << p.k << " AT=" << p.at
     << " BT=" << p.bt << (p.smallInts ? " ints" : " general") << " seed=" << p.seed << " | TM=" << t.tm
     << " TN=" << t.tn << " TK=" << t.tk << " SIZE=" << t.size;
  return os.str();
}

// First byte offset where two outcomes differ, for the failure message.
std::string firstDifference(const Outcome &a, const Outcome &b) {
  if (a.status != b.status)
    return "status '" + a.status + "' vs '" + b.status + "'";
  for (const auto &[name, bytes] : a.buffers) {
    const auto &other = b.buffers.at(name);
    for (size_t i = 0; i < bytes.size(); ++i)
      if (bytes[i] != other[i])
        return "buffer " + name + " differs at byte " + std::to_string(i);
  }
  return "no difference";
}

//===-- Generators ------------------------------------------------------------===//

const std::vector<std::string> kFloatTypes = {"float", "half", "bf16", "double"};

// A random problem of any example with tiles that fit it.
std::pair<Problem, Tiles> genAny() {
  static const std::vector<std::string> files = {"vector_add.tc",   "transpose.tc",       "transpose_masked.tc",
                                                 "matmul.tc",       "matmul_prefetch.tc", "matmul_remat.tc",
                                                 "matmul_trans.tc"};
  Problem p;
  Tiles t;
  p.file = *rc::gen::elementOf(files);
  p.seed = *rc::gen::arbitrary<uint64_t>();
  p.smallInts = *rc::gen::arbitrary<bool>();
  t.tm = *rc::gen::elementOf(std::vector<int64_t>{8, 16, 32});
  t.tn = *rc::gen::elementOf(std::vector<int64_t>{8, 16, 32});
  t.tk = *rc::gen::elementOf(std::vector<int64_t>{8, 16});
  t.size = *rc::gen::elementOf(std::vector<int64_t>{1, 16, 32, 128});
  if (p.file == "vector_add.tc") {
    p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "bf16", "double", "int8", "int"});
    p.n = *rc::gen::inRange<int64_t>(1, 600);
  } else if (p.file == "transpose.tc") {
    p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "int8"});
    p.m = t.tm * *rc::gen::inRange<int64_t>(1, 4);
    p.n = t.tn * *rc::gen::inRange<int64_t>(1, 4);
  } else if (p.file == "transpose_masked.tc") {
    p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "int8"});
    p.m = *rc::gen::inRange<int64_t>(1, 80);
    p.n = *rc::gen::inRange<int64_t>(1, 80);
  } else {
    p.type = *rc::gen::elementOf(kFloatTypes);
    p.m = t.tm * *rc::gen::inRange<int64_t>(1, 3);
    p.n = t.tn * *rc::gen::inRange<int64_t>(1, 3);
    p.k = t.tk * *rc::gen::inRange<int64_t>(1, 4);
    if (p.file == "matmul_trans.tc") {
      p.at = *rc::gen::arbitrary<bool>();
      p.bt = *rc::gen::arbitrary<bool>();
    }
  }
  return {p, t};
}

} // namespace

// Not a property of the interpreter: the generated problems compile, so the
// properties below are not vacuous.
TEST(InterpProperty, GeneratedProblemsCompile) {
  checkBounded(
      [] {
        auto [p, t] = genAny();
        RC_ASSERT(compile(p, t) != nullptr);
      },
      60);
}

TEST(InterpProperty, ResultsIdenticalForAnyThreadCount) {
  checkBounded(
      [] {
        auto [p, t] = genAny();
        RC_TAG(p.file);
        auto k = compile(p, t);
        RC_ASSERT(k != nullptr);
        Instance in = instanceOf(p, t);
        Outcome one = run(*k, in, 1);
        RC_ASSERT(one.status == "ok");
        for (unsigned threads : {2u, 4u, 7u}) {
          Outcome many = run(*k, in, threads);
          if (!(many == one))
            RC_FAIL(show(p, t) + ": threads=" + std::to_string(threads) + ": " + firstDifference(one, many));
        }
      },
      60);
}

TEST(InterpProperty, VectorAddIndependentOfSize) {
  checkBounded(
      [] {
        Problem p;
        p.file = "vector_add.tc";
        p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "bf16", "double", "int8", "int"});
        p.n = *rc::gen::inRange<int64_t>(1, 1100);
        p.seed = *rc::gen::arbitrary<uint64_t>();
        std::optional<Outcome> first;
        for (int64_t size : {32, 64, 128, 256}) {
          Tiles t;
          t.size = size;
          auto k = compile(p, t);
          RC_ASSERT(k != nullptr);
          Outcome o = run(*k, instanceOf(p, t), 1);
          RC_ASSERT(o.status == "ok");
          if (!first)
            first = o;
          else if (!(o == *first))
            RC_FAIL(show(p, t) + ": differs from SIZE=32: " + firstDifference(*first, o));
        }
      },
      30);
}

TEST(InterpProperty, TransposeIndependentOfTiles) {
  checkBounded(
      [] {
        Problem p;
        p.file = *rc::gen::elementOf(std::vector<std::string>{"transpose.tc", "transpose_masked.tc"});
        p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "int8"});
        p.seed = *rc::gen::arbitrary<uint64_t>();
        bool masked = p.file == "transpose_masked.tc";
        // transpose.tc needs M, N multiples of every TM, TN tried (up to 64).
        p.m = masked ? *rc::gen::inRange<int64_t>(1, 100) : 64 * *rc::gen::inRange<int64_t>(1, 3);
        p.n = masked ? *rc::gen::inRange<int64_t>(1, 100) : 64 * *rc::gen::inRange<int64_t>(1, 3);
        std::optional<Outcome> first;
        for (auto [tm, tn] : {std::pair<int64_t, int64_t>{8, 8}, {16, 64}, {64, 16}, {32, 32}}) {
          Tiles t;
          t.tm = tm;
          t.tn = tn;
          auto k = compile(p, t);
          RC_ASSERT(k != nullptr);
          Outcome o = run(*k, instanceOf(p, t), 1);
          RC_ASSERT(o.status == "ok");
          if (!first)
            first = o;
          else if (!(o == *first))
            RC_FAIL(show(p, t) + ": differs from TM=8 TN=8: " + firstDifference(*first, o));
        }
      },
      30);
}

TEST(InterpProperty, MatmulIndependentOfTilesOnExactInputs) {
  checkBounded(
      [] {
        Problem p;
        p.file = *rc::gen::elementOf(
            std::vector<std::string>{"matmul.tc", "matmul_prefetch.tc", "matmul_remat.tc", "matmul_trans.tc"});
        p.type = *rc::gen::elementOf(std::vector<std::string>{"float", "half", "double"});
        p.smallInts = true; // every partial sum is an exact integer below 2^11
        p.seed = *rc::gen::arbitrary<uint64_t>();
        p.m = 64 * *rc::gen::inRange<int64_t>(1, 3);
        p.n = 64 * *rc::gen::inRange<int64_t>(1, 3);
        p.k = 32 * *rc::gen::inRange<int64_t>(1, 3);
        if (p.file == "matmul_trans.tc") {
          p.at = *rc::gen::arbitrary<bool>();
          p.bt = *rc::gen::arbitrary<bool>();
        }
        std::vector<Tiles> variants = {{16, 16, 8, 0}, {64, 32, 32, 0}, {32, 64, 16, 0}};
        variants.push_back({*rc::gen::elementOf(std::vector<int64_t>{16, 32, 64}),
                            *rc::gen::elementOf(std::vector<int64_t>{16, 32, 64}),
                            *rc::gen::elementOf(std::vector<int64_t>{8, 16, 32}), 0});
        std::optional<Outcome> first;
        for (const Tiles &t : variants) {
          auto k = compile(p, t);
          RC_ASSERT(k != nullptr);
          Outcome o = run(*k, instanceOf(p, t), 1);
          RC_ASSERT(o.status == "ok");
          if (!first)
            first = o;
          else if (!(o == *first))
            RC_FAIL(show(p, t) + ": differs from TM=16 TN=16 TK=8: " + firstDifference(*first, o));
        }
      },
      20);
}

TEST(InterpProperty, PassPipelineDoesNotChangeResults) {
  checkBounded(
      [] {
        auto [p, t] = genAny();
        RC_TAG(p.file);
        std::vector<std::string> passes = {"default"};
        if (*rc::gen::arbitrary<bool>()) {
          std::vector<std::string> names = tc::ir::passNames();
          passes = *rc::gen::container<std::vector<std::string>>(
              *rc::gen::inRange<size_t>(1, 5), rc::gen::elementOf(names));
        }
        auto lowered = compile(p, t);
        auto optimised = compile(p, t, &passes);
        RC_ASSERT(lowered != nullptr);
        RC_ASSERT(optimised != nullptr);
        Instance in = instanceOf(p, t);
        Outcome a = run(*lowered, in, 1), b = run(*optimised, in, 1);
        RC_ASSERT(a.status == "ok");
        if (!(a == b)) {
          std::string list;
          for (const auto &s : passes)
            list += s + " ";
          RC_FAIL(show(p, t) + ": passes [ " + list + "]: " + firstDifference(a, b));
        }
      },
      80);
}
