// The interpreter on the caller's memory (HostArray::external, what Python
// passes): stores land there; RunOptions::undoOnTrap puts back every byte a
// trapping launch wrote (pages shared by overlapping arrays too);
// HostArray::readOnly traps the first store before anything is written;
// HostArray::origin is where the pointer argument points inside the bytes;
// RunOptions::cancel stops a launch as Ctrl-C does. Expected values are
// worked out from the kernel text.
#include "interp/InterpreterBackend.h"
#include "interp/UndoJournal.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;

std::shared_ptr<tc::CompiledKernel> compile(const std::string &text) {
  tc::CompileRequest req;
  req.sourceName = "zc.tc";
  req.sourceText = text;
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

/// A HostArray over `v`'s memory.
HostArray view(std::vector<float> &v, size_t first = 0, size_t count = SIZE_MAX) {
  HostArray a;
  a.dtype = DType::F32;
  count = std::min(count, v.size() - first);
  a.shape = {static_cast<int64_t>(count)};
  a.external = reinterpret_cast<uint8_t *>(v.data() + first);
  a.externalBytes = count * sizeof(float);
  return a;
}

const char *kTwoStores = R"(
__global__ void f(float *Y, float *Z, int N) {
  int i[64] = 0 ... 64;
  bool m[64] = i < N;
  *?(m)(Y + i) = 1.0;
  *?(m)(Z + i + N) = 2.0;
})";

TEST(ZeroCopy, StoresLandInTheCallersMemory) {
  auto k = compile(kTwoStores);
  std::vector<float> y(64, 0), z(128, 0);
  HostArray ya = view(y), za = view(z);
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("Z", &za);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 64));
  tc::RunOptions o;
  o.undoOnTrap = true;
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, o);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(y[63], 1.0f);
  EXPECT_EQ(z[64], 2.0f);
  EXPECT_EQ(z[63], 0.0f);
  EXPECT_EQ(r.written.size(), 2u); // both buffers were written
}

TEST(ZeroCopy, UndoOnTrapRestoresEveryByte) {
  auto k = compile(kTwoStores);
  std::vector<float> y(64), z(100);
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>(i);
  for (size_t i = 0; i < z.size(); ++i)
    z[i] = static_cast<float>(-static_cast<int>(i));
  std::vector<float> y0 = y, z0 = z;
  HostArray ya = view(y), za = view(z);
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("Z", &za);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 64)); // Z + 64 + 63 > 100: trap
  tc::RunOptions o;
  o.undoOnTrap = true;
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::OutOfBounds);
  EXPECT_EQ(y, y0);
  EXPECT_EQ(z, z0);
  // trapState keeps Y as the trap left it: every element stored 1.0.
  auto it = r.trapState.find(ya.bytes());
  ASSERT_NE(it, r.trapState.end());
  std::vector<float> seen(64);
  std::memcpy(seen.data(), it->second.data(), 64 * sizeof(float));
  EXPECT_EQ(seen, std::vector<float>(64, 1.0f));
}

TEST(ZeroCopy, WithoutUndoTheStoresStay) {
  auto k = compile(kTwoStores);
  std::vector<float> y(64, 0), z(100, 0);
  HostArray ya = view(y), za = view(z);
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("Z", &za);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 64));
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(y[0], 1.0f); // the CLI's rule: a trap leaves the stores made before it
}

TEST(ZeroCopy, OverlappingArraysUndoToTheOriginal) {
  // Y and Z are two views of one vector, overlapping in [32, 64): the
  // interpreter sees two buffers; undo must still give the original bytes.
  auto k = compile(kTwoStores);
  std::vector<float> mem(2000);
  for (size_t i = 0; i < mem.size(); ++i)
    mem[i] = static_cast<float>(i);
  std::vector<float> mem0 = mem;
  HostArray ya = view(mem, 1024, 64), za = view(mem, 1024 + 32, 100);
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("Z", &za);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 64));
  tc::RunOptions o;
  o.undoOnTrap = true;
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(mem, mem0);
}

TEST(ZeroCopy, ReadOnlyTrapsBeforeWriting) {
  auto k = compile(kTwoStores);
  std::vector<float> y(64, 0), z(128, 0);
  HostArray ya = view(y), za = view(z);
  za.readOnly = true;
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("Z", &za);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 64));
  tc::RunOptions o;
  o.undoOnTrap = true;
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("store to 'Z', a read-only array"), std::string::npos)
      << r.trap->message;
  EXPECT_EQ(r.trap->line, 6u);
  EXPECT_EQ(z, std::vector<float>(128, 0.0f));
  EXPECT_EQ(y, std::vector<float>(64, 0.0f)); // undone
}

TEST(ZeroCopy, ReadOnlyInputIsRead) {
  auto k = compile(R"(
__global__ void f(float *Y, float *X) {
  int i[8] = 0 ... 8;
  *(Y + i) = *(X + i) * 2;
})");
  std::vector<float> y(8, 0), x = {1, 2, 3, 4, 5, 6, 7, 8};
  HostArray ya = view(y), xa = view(x);
  xa.readOnly = true;
  tc::LaunchArgs args;
  args.setBuffer("Y", &ya);
  args.setBuffer("X", &xa);
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok);
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
}

TEST(ZeroCopy, OriginPointsInsideTheBuffer) {
  // A view starting at element 3 of an 8-element storage: the kernel's
  // pointer is element 3, and Y - 3 is still inside the buffer.
  auto k = compile(R"(
__global__ void f(float *Y) {
  *Y = 7.0;
  *(Y - 3) = 5.0;
  *(Y + 4) = 9.0;
})");
  std::vector<float> s(8, 0);
  HostArray a = view(s);
  a.origin = 3 * sizeof(float);
  tc::LaunchArgs args;
  args.setBuffer("Y", &a);
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(s, (std::vector<float>{5, 0, 0, 7, 0, 0, 0, 9}));
  a.origin = 5 * sizeof(float); // Y + 4 is element 9: past the storage
  r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::OutOfBounds);
}

TEST(ZeroCopy, ViewsOfOneStorageAreOneBuffer) {
  // X and Y are views of one storage (Y starts at element 4): a pointer
  // computed from either reaches the whole storage (pointer provenance is per
  // buffer, and this is one buffer). Separate storages are two buffers: X + 4
  // landing in the other one traps.
  auto k = compile(R"(
__global__ void f(float *X, float *Y) {
  int i[4] = 0 ... 4;
  *(X + i) = *(X + 4 + i) + 1.0; // what Y addresses
  *(Y + i) = *(Y - 4 + i) * 2.0; // what X addresses
})");
  std::vector<float> s = {0, 1, 2, 3, 4, 5, 6, 7};
  HostArray x = view(s), y = view(s);
  y.origin = 4 * sizeof(float);
  tc::LaunchArgs args;
  args.setBuffer("X", &x);
  args.setBuffer("Y", &y);
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(s, (std::vector<float>{5, 6, 7, 8, 10, 12, 14, 16}));
  // X's storage is [0x10000, 0x10020); the other one starts at 0x11100, so
  // X + 4 + i must not reach it however far X's storage is from it.
  std::vector<float> s1(4, 0), s2 = {1, 2, 3, 4};
  HostArray x1 = view(s1), y2 = view(s2);
  tc::LaunchArgs two;
  two.setBuffer("X", &x1);
  two.setBuffer("Y", &y2);
  auto far = compile(R"(
__global__ void f(float *X, float *Y) {
  int i[4] = 0 ... 4;
  *(Y + i) = *(X + 1088 + i);
})");
  r = tc::createInterpreterBackend()->launch(*far, {1, 1, 1}, two, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0x11100 (lane [0]) is inside 'Y' [0x11100, "
                             "0x11110), but the pointer comes from 'X' [0x10000, 0x10010)");
}

TEST(ZeroCopy, AlignedClaimHoldsForTheStorageNotForEveryOrigin) {
  // X's 4 floats are [0x10000, 0x10010); Y's storage follows at 0x10010 +
  // 4096 rounded up to its claim, 1024: 0x11400. The claim is on the pointer
  // argument, storage + origin: an origin of 256 floats (1024 bytes) keeps
  // it, one of 4 floats breaks it.
  auto k = compile(R"(
__global__ void f(float *X, float *Y __aligned(1024)) {
  *Y = *X + 1.0;
})");
  std::vector<float> x = {4, 0, 0, 0}, s(512, 0);
  HostArray xa = view(x), ya = view(s);
  tc::LaunchArgs args;
  args.setBuffer("X", &xa);
  args.setBuffer("Y", &ya);
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(s[0], 5);
  ya.origin = 256 * sizeof(float);
  r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(s[256], 5);
  ya.origin = 4 * sizeof(float);
  r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::Misaligned);
  EXPECT_EQ(r.trap->message, "pointer argument 'Y' = 0x11410 is not aligned to 1024 bytes (its "
                             "__aligned(1024) claim)");
  EXPECT_EQ(s[4], 0);
}

TEST(ZeroCopy, CancelStopsALaunch) {
  auto k = compile(R"(
__global__ void f(float *Y, int N) {
  *Y = 1.0;
  float acc = 0;
  for (int i = 0; i < N; i++)
    acc = acc + 1.0;
  *(Y + 1) = acc;
})");
  std::vector<float> y(2, 0);
  HostArray a = view(y);
  tc::LaunchArgs args;
  args.setBuffer("Y", &a);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 2000000000));
  std::atomic<bool> cancel{false};
  tc::RunOptions o;
  o.cancel = &cancel;
  o.undoOnTrap = true;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  RunResult r = tc::createInterpreterBackend()->launch(*k, {1, 1, 1}, args, o);
  stopper.join();
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(y, (std::vector<float>{0, 0}));
}

// The journal's pages are aligned to the address space; malloc's alignment
// would let a store straddle two of them and change the counts below.
std::span<uint8_t> pageAligned(std::vector<uint8_t> &storage, size_t bytes, uint8_t fill) {
  constexpr size_t kPage = tc::interp::UndoJournal::kPage;
  storage.assign(bytes + kPage, fill);
  size_t skip = (kPage - reinterpret_cast<uintptr_t>(storage.data()) % kPage) % kPage;
  return {storage.data() + skip, bytes};
}

TEST(UndoJournal, CopiesEachPageOnceAndOnlyInsideTheRanges) {
  constexpr size_t kPage = tc::interp::UndoJournal::kPage;
  std::vector<uint8_t> storage;
  std::span<uint8_t> mem = pageAligned(storage, 3 * kPage + 100, 7);
  uint8_t *lo = mem.data() + 50, *hi = mem.data() + mem.size() - 50;
  tc::interp::UndoJournal j;
  j.cover(lo, static_cast<size_t>(hi - lo));
  j.build();
  j.beforeWrite(lo + 10, 4);
  lo[10] = 1;
  j.beforeWrite(lo + 11, 4);
  lo[11] = 2;
  j.beforeWrite(hi - 4, 4);
  hi[-1] = 3;
  j.beforeWrite(mem.data(), 4); // outside every range: ignored
  mem[0] = 9;
  EXPECT_TRUE(j.touched(lo, 20));
  EXPECT_EQ(j.pagesSaved(), 2u); // the first page and the last, once each
  j.undo();
  EXPECT_EQ(lo[10], 7);
  EXPECT_EQ(lo[11], 7);
  EXPECT_EQ(hi[-1], 7);
  EXPECT_EQ(mem[0], 9); // never copied, never restored
}

// Copies live in areas that later journals reuse (UndoJournal.h): a journal
// taking a used area puts back only the pages it copied itself, never the
// bytes an earlier journal left in the area.
TEST(UndoJournal, ReusedAreasPutBackOnlyTheirOwnCopies) {
  constexpr size_t kPage = tc::interp::UndoJournal::kPage;
  std::vector<uint8_t> a(6 * kPage, 1), b(6 * kPage, 2);
  {
    tc::interp::UndoJournal j;
    j.cover(a.data(), a.size());
    j.build();
    for (size_t i = 0; i < a.size(); i += 100) {
      j.beforeWrite(a.data() + i, 1);
      a[i] = 5;
    }
    j.undo();
  }
  EXPECT_EQ(a, std::vector<uint8_t>(6 * kPage, 1));
  EXPECT_GT(tc::interp::UndoJournal::cachedBytes(), 0u); // the area went back to the cache
  // A journal that takes that area (or another one), over a range that is
  // not page-aligned at either end.
  tc::interp::UndoJournal j;
  j.cover(b.data() + 100, b.size() - 200);
  j.build();
  uint8_t *p = b.data() + 3 * kPage + 17;
  j.beforeWrite(p, 8);
  std::memset(p, 7, 8);
  EXPECT_TRUE(j.touched(p, 1));
  EXPECT_FALSE(j.touched(b.data() + 100, 1));
  j.undo();
  EXPECT_EQ(b, std::vector<uint8_t>(6 * kPage, 2));
}

// Threads storing to the same pages at once: each page is copied once,
// before the first store changes it, whichever thread gets there first.
TEST(UndoJournal, ThreadsCopyEachPageOnceBeforeAnyStore) {
  constexpr size_t kPage = tc::interp::UndoJournal::kPage;
  const size_t pages = 64;
  std::vector<uint8_t> storage;
  std::span<uint8_t> mem = pageAligned(storage, pages * kPage, 0);
  for (size_t i = 0; i < mem.size(); ++i)
    mem[i] = static_cast<uint8_t>(i * 7 + 3);
  const std::vector<uint8_t> before(mem.begin(), mem.end());
  tc::interp::UndoJournal j;
  j.cover(mem.data(), mem.size());
  j.build();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < pages; ++k) {
        size_t page = (k * (2 * t + 1) + t) % pages; // each thread its own order
        uint8_t *q = mem.data() + page * kPage + t * 16;
        j.beforeWrite(q, 16);
        std::memset(q, 0xF0 + t, 16); // (each thread its own bytes of the page)
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(j.pagesSaved(), pages);
  j.undo();
  EXPECT_TRUE(std::equal(mem.begin(), mem.end(), before.begin()));
}

} // namespace
