// The coverage bitmap (RunResult::buffers: which elements some program
// stored) when programs' contiguous stores start and end inside 64-element
// words and cross the bitmap's 4096-element chunks: a store of whole words is
// a plain write of all ones (AccessTracker::setStored), and two programs on
// different threads set the two halves of a shared word with an atomic OR.
// Expected counts and ranges: worked out from the kernel text (program p
// stores elements OFF + p * SIZE ... OFF + (p + 1) * SIZE - 1 below N).
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;

const char *kOffsetCopy = R"(__global__ void copyFrom(float *X, float *Y, int OFF, int N) {
  int i[SIZE] = OFF + get_program_id(0) * SIZE + (0 ... SIZE);
  bool m[SIZE] = i < N;
  *?(m)(Y + i) = *?(m)(X + i);
}
)";

struct Case {
  int64_t size, off, n;
};

void checkCoverage(const Case &c) {
  tc::CompileRequest req;
  req.sourceName = "coverage.tc";
  req.sourceText = kOffsetCopy;
  req.defines = {{"SIZE", std::to_string(c.size)}};
  tc::CompileOutcome out = tc::compileKernel(req);
  ASSERT_TRUE(out.ok()) << out.diagnostics;
  HostArray x = HostArray::zeros(DType::F32, {c.n}), y = HostArray::zeros(DType::F32, {c.n});
  for (int64_t i = 0; i < c.n; ++i)
    x.setDouble(i, static_cast<double>(i % 251) + 0.5);
  tc::LaunchArgs args;
  args.setBuffer("X", &x);
  args.setBuffer("Y", &y);
  args.setScalar("OFF", tc::ScalarValue::ofInt(DType::I32, c.off));
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, c.n));
  int64_t programs = (c.n - c.off + c.size - 1) / c.size;
  for (unsigned threads : {1u, 2u, 4u}) {
    for (bool race : {false, true}) {
      tc::RunOptions o;
      o.threads = threads;
      o.raceCheck = race;
      for (int64_t i = 0; i < c.n; ++i)
        y.setDouble(i, -1.0);
      RunResult r = tc::createInterpreterBackend()->launch(*out.kernel, {programs, 1, 1}, args, o);
      ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
      ASSERT_EQ(r.buffers.size(), 2u);
      const tc::BufferAccess &b = r.buffers[1];
      std::string where = "SIZE " + std::to_string(c.size) + ", OFF " + std::to_string(c.off) +
                          ", threads " + std::to_string(threads) + (race ? ", race check" : "");
      EXPECT_EQ(b.name, "Y") << where;
      EXPECT_EQ(b.elements, c.n) << where;
      EXPECT_EQ(b.stored, c.n - c.off) << where;
      std::vector<std::pair<int64_t, int64_t>> gaps;
      if (c.off > 0)
        gaps.emplace_back(0, c.off - 1);
      EXPECT_EQ(b.unwritten, gaps) << where;
      for (int64_t i = 0; i < c.n; ++i)
        ASSERT_EQ(y.getDouble(i), i < c.off ? -1.0 : x.getDouble(i)) << where << ", element " << i;
    }
  }
}

// 100-element offset: every program starts and ends inside a word, so each
// shared word gets its low bits from one program and its high bits from the
// next; the last program is masked (N - OFF is not a multiple of SIZE).
TEST(InterpCoverageWords, UnalignedProgramsShareWords) {
  checkCoverage({1024, 100, 3 * 4096 + 37});
}

// 8192-element programs cross two chunk boundaries each, starting 3 elements
// into a word; the buffer ends 5 elements into a word.
TEST(InterpCoverageWords, ProgramsAcrossChunks) {
  checkCoverage({8192, 3, 5 * 8192 + 5});
}

// Word-aligned programs of whole words: only plain stores of all ones.
TEST(InterpCoverageWords, AlignedWholeWords) {
  checkCoverage({256, 0, 64 * 256});
  checkCoverage({64, 64, 40 * 64});
}

} // namespace
