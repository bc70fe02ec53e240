//===- host_api.cpp - Running a kernel from C++ with runtime/Launch.h ------===//
//
// Compiles examples/vector_add.tc with SIZE=1024 and TYPE=float, runs it on
// 5000 elements (5 programs: cdiv(5000, 1024)) on the reference interpreter,
// and checks c == a + b against a plain loop.
//
//   build/bin/host_api [path/to/vector_add.tc]
//
// Exit status 0 when every element matches.
//
//===----------------------------------------------------------------------===//
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <cstdio>
#include <cstring>
#include <string>

#ifndef TC_EXAMPLES_DIR
#define TC_EXAMPLES_DIR "examples"
#endif

namespace {

/// The float value of element i of an f32 array.
float at(const tc::HostArray &a, int64_t i) {
  float v;
  std::memcpy(&v, a.data.data() + i * sizeof(float), sizeof v);
  return v;
}

} // namespace

int main(int argc, char **argv) {
  const int n = 5000;
  std::string path = argc > 1 ? argv[1] : TC_EXAMPLES_DIR "/vector_add.tc";

  // 1. Compile one variant of the kernel.
  tc::CompileRequest request;
  request.path = path;
  request.defines = {{"SIZE", "1024"}, {"TYPE", "float"}};
  tc::CompileOutcome compiled = tc::compileKernel(request);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s", compiled.diagnostics.c_str());
    return 2;
  }

  // 2. Host buffers: a[i] = i / 4, b[i] = 3 - i, c = 0 (all exact in float).
  tc::HostArray a = tc::HostArray::zeros(tc::DType::F32, {n});
  tc::HostArray b = tc::HostArray::zeros(tc::DType::F32, {n});
  tc::HostArray c = tc::HostArray::zeros(tc::DType::F32, {n});
  for (int i = 0; i < n; ++i) {
    a.setDouble(i, i / 4.0);
    b.setDouble(i, 3.0 - i);
  }

  // 3. Bind the arguments by parameter name.
  tc::LaunchArgs args;
  args.setScalar("N", tc::ScalarValue::ofInt(tc::DType::I32, n));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &c);

  // 4. The grid, as an expression over the defines and scalar arguments.
  tc::GridOutcome grid = tc::evalGrid({{"cdiv(N, SIZE)"}}, *compiled.kernel, args);
  if (!grid.dims) {
    std::fprintf(stderr, "grid: %s\n", grid.error.c_str());
    return 3;
  }

  // 5. Run on the interpreter.
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  tc::RunResult r = backend->launch(*compiled.kernel, *grid.dims, args, {});
  if (r.status == tc::RunResult::Status::Trapped) {
    std::fprintf(stderr, "%s", r.trap->render().c_str());
    return 1;
  }
  if (r.status == tc::RunResult::Status::Error) {
    std::fprintf(stderr, "error: %s\n", r.error.c_str());
    return 1;
  }

  // 6. Check against a plain loop.
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = at(a, i) + at(b, i);
    if (at(c, i) != want && bad++ < 5)
      std::fprintf(stderr, "c[%d] = %g, expected %g\n", i, at(c, i), want);
  }
  std::printf("vector_add: %d programs, %d elements, %d mismatches\n", int((*grid.dims)[0]), n,
              bad);
  return bad == 0 ? 0 : 1;
}
