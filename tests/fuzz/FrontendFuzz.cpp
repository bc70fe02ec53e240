//===- FrontendFuzz.cpp - Fuzz the frontend and the IR parser --------------===//
//
// frontend_fuzz [--seconds N] [--src DIR] [--seed S] [--timeout SEC] [--out DIR]
//               [--rss-mb MB] [--minimize-seconds N] [--max-failures N]
// frontend_fuzz --check FILE...     run saved inputs (.tc with //!fuzz options, .tir)
// frontend_fuzz --minimize FILE     shrink a failing input, keeping its failure
//
// The default mode is a supervisor. It first reruns the saved reproducers in
// tests/fuzz/crashes/ (each must pass), then runs a worker process (this binary
// with --worker) that draws inputs with RapidCheck generators until the
// deadline -- seed files (examples/, tests/lit/, tests/fuzz/corpus/ under
// --src), random kernels, token soup, deep nesting and macro chains, mutated
// token-wise, with random -D/-U/-Werror/-Wnone -- and checks each with
// FuzzTarget (compile to Stage::Lower, verify, print/parse/print round trip,
// pass pipeline, then mutated IR text into ir::parseModule + ir::verifyModule).
//
// A broken property (FuzzTarget) is saved by the worker, once per signature,
// and fuzzing goes on. Anything that ends the worker -- a sanitizer report, an
// assertion, a signal, a hang past --timeout or memory growth past --rss-mb
// (its watchdog thread), a leak (LeakSanitizer after each input) -- is found in
// the state file the worker rewrites before each input; the supervisor saves
// that input and starts a new worker for the remaining time. Each new failure
// is printed with its report and path, then shrunk by delta debugging in child
// processes running --check. The exit status is non-zero when anything failed.
//
// Environment: TC_FUZZ_SECONDS (default 60), TC_FUZZ_SEED, TC_SOURCE_DIR.
//
//===----------------------------------------------------------------------===//
#include "frontend/Defines.h"
#include "tests/fuzz/FuzzInput.h"
#include "tests/fuzz/FuzzTarget.h"

#include <rapidcheck.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <pthread.h>
#include <optional>
#include <set>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TC_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_FUZZ_ASAN 1
#endif
#endif
#ifdef TC_FUZZ_ASAN
#include <sanitizer/lsan_interface.h>
// In every ASan runtime, but GCC 12 ships no allocator_interface.h declaring it.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                                         void (*free_hook)(const volatile void *));
#endif

#ifdef TC_FUZZ_ASAN
// Defaults that ASAN_OPTIONS / UBSAN_OPTIONS override. A short allocation
// context keeps ASan's stack depot (which never shrinks) from growing by ~100 KB
// per input over a long run of deeply recursive inputs; the failing access's
// own stack trace is always complete.
extern "C" const char *__asan_default_options() { return "malloc_context_size=6:detect_leaks=1"; }
extern "C" const char *__ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
#endif

#ifndef TC_FUZZ_DEFAULT_SOURCE_DIR
#define TC_FUZZ_DEFAULT_SOURCE_DIR "."
#endif

extern char **environ;

namespace fs = std::filesystem;
using namespace tc::fuzz;

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

enum class Mode { Supervise, Worker, Check, Minimize };

struct Options {
  Mode mode = Mode::Supervise;
  double seconds = 60;
  std::string srcDir;
  uint64_t seed = 0;
  double timeout = 2.0;
  long rssMb = 2048;
  std::string outDir;
  double minimizeSeconds = 60;
  int maxFailures = 8;
  std::string stateFile;
  int64_t untilMs = 0;
  bool verbose = false;
  std::vector<std::string> files;
};

int64_t nowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

[[noreturn]] void usage(const std::string &error) {
  std::cerr << "frontend_fuzz: " << error << "\n"
            << "usage: frontend_fuzz [--seconds N] [--src DIR] [--seed S] [--timeout SEC] [--out DIR]\n"
            << "                     [--rss-mb MB] [--minimize-seconds N] [--max-failures N]\n"
            << "       frontend_fuzz --check FILE... [--verbose]\n"
            << "       frontend_fuzz --minimize FILE\n";
  std::exit(2);
}

/// Parses argv and the TC_FUZZ_* environment variables.
Options parseOptions(int argc, char **argv) {
  Options o;
  if (const char *s = std::getenv("TC_FUZZ_SECONDS"))
    o.seconds = std::atof(s);
  if (const char *s = std::getenv("TC_SOURCE_DIR"))
    o.srcDir = s;
  o.seed = static_cast<uint64_t>(nowMs()) ^ (static_cast<uint64_t>(getpid()) << 32);
  if (const char *s = std::getenv("TC_FUZZ_SEED"))
    o.seed = std::strtoull(s, nullptr, 10);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "--seconds")
      o.seconds = std::atof(value().c_str());
    else if (a == "--src")
      o.srcDir = value();
    else if (a == "--seed")
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--timeout")
      o.timeout = std::atof(value().c_str());
    else if (a == "--rss-mb")
      o.rssMb = std::atol(value().c_str());
    else if (a == "--out")
      o.outDir = value();
    else if (a == "--minimize-seconds")
      o.minimizeSeconds = std::atof(value().c_str());
    else if (a == "--max-failures")
      o.maxFailures = std::atoi(value().c_str());
    else if (a == "--worker")
      o.mode = Mode::Worker;
    else if (a == "--state")
      o.stateFile = value();
    else if (a == "--until-ms")
      o.untilMs = std::atoll(value().c_str());
    else if (a == "--check")
      o.mode = Mode::Check;
    else if (a == "--minimize")
      o.mode = Mode::Minimize;
    else if (a == "--verbose")
      o.verbose = true;
    else if (!a.empty() && a[0] == '-')
      usage("unknown option " + a);
    else
      o.files.push_back(fs::absolute(a).string());
  }
  if (o.srcDir.empty())
    o.srcDir = TC_FUZZ_DEFAULT_SOURCE_DIR;
  o.srcDir = fs::absolute(o.srcDir).lexically_normal().string();
  if ((o.mode == Mode::Check || o.mode == Mode::Minimize) && o.files.empty())
    usage("no input file");
  return o;
}

//===----------------------------------------------------------------------===//
// Files and the include directory
//===----------------------------------------------------------------------===//

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Creates the output directory (a fresh temporary one when none was given).
void ensureOutDir(Options &o) {
  if (o.outDir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "frontend_fuzz.XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::perror("frontend_fuzz: mkdtemp");
      std::exit(2);
    }
    o.outDir = tmpl;
  }
  fs::create_directories(o.outDir);
  o.outDir = fs::absolute(o.outDir).string();
}

/// Headers the inputs may #include (self-including, mutually recursive, guarded),
/// in <out>/include; the process works in that directory so that relative
/// includes cannot reach anything else. Returns the include directories.
std::vector<std::string> setupIncludes(const Options &o) {
  std::string dir = o.outDir + "/include";
  fs::create_directories(dir);
  writeFile(dir + "/self.h", "#include \"self.h\"\n");
  writeFile(dir + "/ping.h", "#include \"pong.h\"\nint ping_value = 1;\n");
  writeFile(dir + "/pong.h", "#include \"ping.h\"\n");
  writeFile(dir + "/guard.h", "#ifndef GUARD_H\n#define GUARD_H\n#include \"guard.h\"\n#define TM 32\n#endif\n");
  writeFile(dir + "/defs.h", "#define TM 32\n#define TN 32\n#define TK 8\n#define TYPE float\n");
  if (chdir(dir.c_str()) != 0)
    std::perror("frontend_fuzz: chdir");
  std::vector<std::string> dirs = {dir, o.srcDir + "/examples"};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(o.srcDir + "/tests/lit", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && it->path().filename() == "Inputs")
      dirs.push_back(it->path().string());
  return dirs;
}

//===----------------------------------------------------------------------===//
// Watchdog: per-input time limit and memory limit
//===----------------------------------------------------------------------===//

// The limit is on the CPU time of the thread running the input (so a loaded
// machine does not cause false timeouts), plus a wall-clock limit of five times
// as much for inputs that block.
std::atomic<int64_t> gInputStartMs{0};
std::atomic<int64_t> gInputStartCpuNs{0};
std::atomic<long> gInputStartRssMb{0};
clockid_t gMainCpuClock;
double gTimeoutSec = 2.0;
long gRssLimitMb = 2048;

int64_t cpuNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// Resident set size in MB, read without allocating.
long rssMb() {
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0)
    return 0;
  char buf[128] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  long pages = 0, resident = 0;
  if (std::sscanf(buf, "%ld %ld", &pages, &resident) != 2)
    return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

/// Writes a failure line and ends the process at once (no destructors, no leak check).
[[noreturn]] void dieWith(const char *kind, const std::string &detail, int code) {
  std::string line = std::string("FUZZ-FAILURE: ") + kind + ": " + detail + "\n";
  ssize_t ignored = write(2, line.data(), line.size());
  (void)ignored;
  _exit(code);
}

void watchdogLoop() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int64_t start = gInputStartMs.load();
    if (start != 0) {
      double cpu = static_cast<double>(cpuNs(gMainCpuClock) - gInputStartCpuNs.load()) / 1e9;
      double wall = static_cast<double>(nowMs() - start) / 1e3;
      if ((cpu > gTimeoutSec || wall > 5 * gTimeoutSec + 5) && gInputStartMs.load() == start) {
        char msg[160];
        std::snprintf(msg, sizeof(msg),
                      "input still running after %.2f s of CPU time (%.2f s wall): a hang or a far too slow path",
                      cpu, wall);
        dieWith("timeout", msg, 4);
      }
    }
    // Memory: what the running input added (a slow growth over many inputs is
    // ASan's bookkeeping, not the input's).
    long rss = rssMb(), base = gInputStartRssMb.load();
    if (start != 0 && rss - base > gRssLimitMb && gInputStartMs.load() == start) {
      char msg[160];
      std::snprintf(msg, sizeof(msg), "resident memory grew by %ld MB (to %ld MB) during the input, over the %ld MB limit",
                    rss - base, rss, gRssLimitMb);
      dieWith("out-of-memory", msg, 5);
    }
  }
}

void startWatchdog(const Options &o) {
  gTimeoutSec = o.timeout;
  gRssLimitMb = o.rssMb;
  pthread_getcpuclockid(pthread_self(), &gMainCpuClock);
  std::thread(watchdogLoop).detach();
}

//===----------------------------------------------------------------------===//
// Leak detection per input (LeakSanitizer, when the build has it)
//===----------------------------------------------------------------------===//

#ifdef TC_FUZZ_ASAN
std::atomic<long> gMallocs{0}, gFrees{0};
std::atomic<bool> gCounting{false};
void mallocHook(const volatile void *, size_t) {
  if (gCounting.load(std::memory_order_relaxed))
    gMallocs.fetch_add(1, std::memory_order_relaxed);
}
void freeHook(const volatile void *) {
  if (gCounting.load(std::memory_order_relaxed))
    gFrees.fetch_add(1, std::memory_order_relaxed);
}
#endif

void installLeakHooks() {
#ifdef TC_FUZZ_ASAN
  __sanitizer_install_malloc_and_free_hooks(mallocHook, freeHook);
#endif
}

/// Runs `fn` as one input: under the time limit, and (with LeakSanitizer)
/// followed by a leak check when it allocated more blocks than it freed.
template <typename Fn> CheckResult runInput(Fn &&fn) {
#ifdef TC_FUZZ_ASAN
  gMallocs = 0;
  gFrees = 0;
  gCounting = true;
#endif
  gInputStartRssMb = rssMb();
  gInputStartCpuNs = cpuNs(CLOCK_THREAD_CPUTIME_ID);
  gInputStartMs = nowMs();
  CheckResult r;
  try {
    r = fn();
  } catch (const std::exception &e) {
    r.failed = true;
    r.kind = "exception";
    r.detail = e.what();
  } catch (...) {
    r.failed = true;
    r.kind = "exception";
    r.detail = "a non-std exception escaped";
  }
  gInputStartMs = 0;
#ifdef TC_FUZZ_ASAN
  // Count the frees of the result's own blocks too (a copy, not counted, survives),
  // so that `live` is exactly what the input left allocated.
  gCounting = false;
  CheckResult copy = r;
  gCounting = true;
  { CheckResult dead = std::move(r); }
  gCounting = false;
  long live = gMallocs - gFrees;
  // A leak ends the process like a crash, so that LeakSanitizer's report (on
  // stderr, above) is what the supervisor shows with the input.
  if (live != 0 && __lsan_do_recoverable_leak_check() != 0)
    dieWith("leak", "LeakSanitizer found memory leaked by this input (report above)", 6);
  return copy;
#else
  return r;
#endif
}

//===----------------------------------------------------------------------===//
// Worker: the RapidCheck-driven loop
//===----------------------------------------------------------------------===//

struct Corpus {
  std::vector<SeedFile> sources, irs;
  std::vector<std::vector<std::string>> defineSets; // -D sets seen in the seed files
};

Corpus loadCorpus(const std::string &src) {
  std::vector<SeedFile> all;
  for (const char *sub : {"examples", "tests/lit", "tests/fuzz/corpus"})
    loadSeeds(src + "/" + sub, all);
  Corpus c;
  for (auto &f : all) {
    if (!f.defines.empty())
      c.defineSets.push_back(f.defines);
    if (f.isIR)
      c.irs.push_back(std::move(f));
    else
      c.sources.push_back(std::move(f));
  }
  return c;
}

/// State file: "tc\n" or "tir\n", then the input, rewritten before each input.
class StateFile {
public:
  explicit StateFile(const std::string &path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd_ < 0) {
      std::perror(("frontend_fuzz: " + path).c_str());
      std::exit(2);
    }
  }
  void set(const char *kind, const std::string &text) {
    buf_ = std::string(kind) + "\n" + text;
    if (pwrite(fd_, buf_.data(), buf_.size(), 0) != static_cast<ssize_t>(buf_.size()) ||
        ftruncate(fd_, static_cast<off_t>(buf_.size())) != 0)
      std::perror("frontend_fuzz: state file");
  }

private:
  int fd_;
  std::string buf_;
};

struct Stats {
  long sources = 0, sourcesReachingIR = 0, irTexts = 0, irVerified = 0, findings = 0;
  std::map<std::string, long> errors, irErrors; // first error kind -> count
};

/// A short, input-independent name of a property failure: its kind, plus the
/// first error message in its detail (if any) with numbers blanked out.
std::string propertySignature(const CheckResult &r) {
  std::string sig = "FUZZ-FAILURE: " + r.kind;
  size_t p = r.detail.find("error: ");
  if (p == std::string::npos)
    return sig;
  size_t end = r.detail.find('\n', p);
  std::string msg = r.detail.substr(p + 7, end == std::string::npos ? std::string::npos : end - p - 7);
  std::string norm;
  for (char ch : msg)
    if (!std::isdigit(static_cast<unsigned char>(ch)))
      norm += ch;
    else if (norm.empty() || norm.back() != '#')
      norm += '#';
  return sig + ": " + norm;
}

/// --check: a property failure ends the run with its signature.
[[noreturn]] void reportPropertyFailure(const CheckResult &r) {
  std::cerr << "FUZZ-SIGNATURE: " << propertySignature(r) << std::endl;
  dieWith(r.kind.c_str(), "\n" + r.detail, 3);
}

rc::Gen<std::string> genSourceToken() {
  return rc::gen::weightedOneOf<std::string>(
      {{12, rc::gen::elementOf(sourceTokens())},
       {2, rc::gen::elementOf(interestingNumbers())},
       {1, rc::gen::map(rc::gen::inRange(1, 40), [](int n) { return "v" + std::to_string(n); })},
       {1, rc::gen::container<std::string>(rc::gen::inRange<char>(1, 127))}});
}

rc::Gen<Mutation> genMutation(rc::Gen<std::string> tokens) {
  return rc::gen::apply(
      [](int kind, uint32_t a, uint32_t b, uint32_t c, std::string tok) {
        return Mutation{static_cast<MutKind>(kind), a, b, c, std::move(tok)};
      },
      rc::gen::inRange(0, static_cast<int>(MutKind::NumKinds)), rc::gen::arbitrary<uint32_t>(),
      rc::gen::arbitrary<uint32_t>(), rc::gen::arbitrary<uint32_t>(), std::move(tokens));
}

/// Draws a list of mutations (mostly few).
std::vector<Mutation> drawMutations(rc::Gen<std::string> tokens, int maxCount) {
  int n = *rc::gen::weightedElement<int>({{3, 0}, {4, 1}, {3, 2}, {2, 3}, {2, 5}, {1, 10}});
  n = std::min(n, maxCount);
  return *rc::gen::container<std::vector<Mutation>>(static_cast<size_t>(n), genMutation(std::move(tokens)));
}

enum class Base { Corpus, Kernel, Soup, Deep, Macro, Splice };

class Worker {
public:
  Worker(const Options &o, Corpus corpus, std::vector<std::string> includeDirs)
      : opts_(o), corpus_(std::move(corpus)), includeDirs_(std::move(includeDirs)), state_(o.stateFile) {
    for (const auto &f : corpus_.irs)
      irPool_.push_back(f.text);
    std::istringstream known(readFile(o.outDir + "/known-signatures.txt"));
    for (std::string line; std::getline(known, line);)
      known_.insert(line);
  }

  /// Runs RapidCheck batches until the deadline.
  int run() {
    int64_t lastProgress = nowMs();
    for (uint64_t batch = 0; nowMs() < opts_.untilMs; ++batch) {
      rc::detail::TestParams params;
      params.seed = opts_.seed * 1000003u + batch;
      params.maxSuccess = 200;
      params.maxSize = 100;
      params.disableShrinking = true; // failures end the process; the supervisor shrinks
      auto result = rc::detail::checkProperty(rc::detail::toProperty([this] { oneCase(); }),
                                              rc::detail::TestMetadata(), params);
      rc::detail::SuccessResult success;
      if (!result.match(success)) {
        std::cerr << "FUZZ-FAILURE: rapidcheck: ";
        rc::detail::printResultMessage(result, std::cerr);
        std::cerr << std::endl;
        return 3;
      }
      if (nowMs() - lastProgress > 15000) {
        printStats("progress");
        lastProgress = nowMs();
      }
    }
    printStats("done");
    return 0;
  }

private:
  void printStats(const char *what) {
    std::cerr << "frontend_fuzz worker " << what << ": " << stats_.sources << " sources ("
              << stats_.sourcesReachingIR << " compiled to IR and round-tripped), " << stats_.irTexts
              << " IR texts (" << stats_.irVerified << " parsed and verified), " << stats_.findings
              << " inputs broke a property; rss " << rssMb() << " MB" << std::endl;
    if (std::string(what) != "done")
      return;
    for (const auto *table : {&stats_.errors, &stats_.irErrors}) {
      std::cerr << (table == &stats_.errors ? "first errors of sources:" : "first errors of IR texts:");
      for (const auto &[name, count] : *table)
        std::cerr << " " << name << "=" << count;
      std::cerr << std::endl;
    }
  }

  /// One RapidCheck test: a source case, then a few IR texts.
  void oneCase() {
    if (nowMs() >= opts_.untilMs)
      return;
    state_.set("none", ""); // a death while drawing is the harness's own
    SourceCase c = drawSource();
    state_.set("tc", c.text());
    CheckResult r = runInput([&] { return checkSource(c, includeDirs_); });
    ++stats_.sources;
    if (r.failed)
      recordFinding(r, ".tc", c.text());
    if (r.reachedIR) {
      ++stats_.sourcesReachingIR;
      addToIRPool(r.printedIR);
    }
    ++stats_.errors[r.firstError.empty() ? std::string("(none)") : r.firstError];
    int irCount = *rc::gen::inRange(0, 4);
    for (int i = 0; i < irCount; ++i)
      oneIR(r.printedIR, c.body);
  }

  /// A property failure (not a crash): saved once per signature, and fuzzing goes on.
  void recordFinding(const CheckResult &r, const char *ext, const std::string &text) {
    std::string sig = propertySignature(r);
    ++stats_.findings;
    if (!known_.insert(sig).second)
      return;
    std::string path = opts_.outDir + "/found-" + std::to_string(opts_.seed) + "-" + std::to_string(known_.size()) + ext;
    writeFile(path, text);
    std::cerr << "FUZZ-FOUND: " << path << "\n" << sig << "\n" << r.detail << "\nFUZZ-FOUND-END" << std::endl;
  }

  void addToIRPool(const std::string &text) {
    if (irPool_.size() < 200)
      irPool_.push_back(text);
    else
      irPool_[static_cast<size_t>(stats_.sourcesReachingIR) % irPool_.size()] = text;
  }

  /// Mutated IR text into the IR parser and verifier.
  void oneIR(const std::string &fresh, const std::string &source) {
    std::string base;
    int which = *rc::gen::inRange(0, 20);
    if (which < 8 && !fresh.empty())
      base = fresh;
    else if (which == 0)
      base = source; // Triton-C where IR is expected
    else if (!irPool_.empty())
      base = irPool_[*rc::gen::inRange<size_t>(0, irPool_.size())];
    else
      return;
    std::string other = irPool_.empty() ? base : irPool_[*rc::gen::inRange<size_t>(0, irPool_.size())];
    std::string text = base;
    state_.set("none", "");
    for (const Mutation &m : drawMutations(rc::gen::elementOf(irTokens()), 6))
      text = applyMutation(text, m, other);
    state_.set("tir", text);
    CheckResult r = runInput([&] { return checkIR(text); });
    ++stats_.irTexts;
    if (r.failed)
      recordFinding(r, ".tir", text);
    if (r.reachedIR)
      ++stats_.irVerified;
    ++stats_.irErrors[r.firstError.empty() ? std::string("(none)") : r.firstError];
  }

  /// Draws a Triton-C case: a base text, mutations, -D/-U options.
  SourceCase drawSource() {
    bool haveSeeds = !corpus_.sources.empty();
    Base base = *rc::gen::weightedElement<Base>(
        {{8, Base::Corpus}, {5, Base::Kernel}, {3, Base::Soup}, {1, Base::Deep}, {1, Base::Macro}, {2, Base::Splice}});
    if (!haveSeeds && (base == Base::Corpus || base == Base::Splice))
      base = Base::Kernel;
    int size = *rc::gen::withSize([](int s) { return rc::gen::just(s); });
    std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
    SourceCase c;
    const SeedFile *seed = nullptr;
    switch (base) {
    case Base::Corpus:
      seed = &corpus_.sources[*rc::gen::inRange<size_t>(0, corpus_.sources.size())];
      c.body = seed->text;
      break;
    case Base::Kernel:
      c.body = generateKernel(rng, size);
      break;
    case Base::Soup: {
      auto toks = *rc::gen::container<std::vector<std::string>>(genSourceToken());
      for (const auto &t : toks)
        c.body += t + (std::uniform_int_distribution<int>(0, 3)(rng) ? " " : "\n");
      break;
    }
    case Base::Deep: {
      int depth = *rc::gen::weightedElement<int>({{4, 100}, {3, 1000}, {2, 10000}, {1, 50000}});
      c.body = generateDeepNesting(rng, *rc::gen::inRange(depth / 2, depth + 1));
      break;
    }
    case Base::Macro:
      c.body = generateMacroChain(rng, *rc::gen::inRange(1, 300));
      break;
    case Base::Splice: {
      const std::string &a = corpus_.sources[*rc::gen::inRange<size_t>(0, corpus_.sources.size())].text;
      const std::string &b = corpus_.sources[*rc::gen::inRange<size_t>(0, corpus_.sources.size())].text;
      size_t cutA = *rc::gen::inRange<size_t>(0, a.size() + 1), cutB = *rc::gen::inRange<size_t>(0, b.size() + 1);
      c.body = a.substr(0, cutA) + b.substr(cutB);
      break;
    }
    }
    const std::string &other = haveSeeds ? corpus_.sources[*rc::gen::inRange<size_t>(0, corpus_.sources.size())].text
                                         : c.body;
    if (base != Base::Corpus || *rc::gen::inRange(0, 4) != 0)
      for (const Mutation &m : drawMutations(genSourceToken(), 12))
        c.body = applyMutation(c.body, m, other);
    if (c.body.size() > (1u << 18))
      c.body.resize(1u << 18);
    drawOptions(c, seed);
    return c;
  }

  /// -D options: the seed's own (or another seed's) set, plus random ones; sometimes a -U.
  void drawOptions(SourceCase &c, const SeedFile *seed) {
    std::vector<std::string> defs;
    int choice = *rc::gen::inRange(0, 10);
    if (seed && !seed->defines.empty() && choice < 6)
      defs = seed->defines;
    else if (!corpus_.defineSets.empty() && choice < 8)
      defs = corpus_.defineSets[*rc::gen::inRange<size_t>(0, corpus_.defineSets.size())];
    int extra = *rc::gen::weightedElement<int>({{5, 0}, {3, 1}, {1, 2}, {1, 4}});
    for (int i = 0; i < extra; ++i)
      defs.push_back(*rc::gen::elementOf(defineCandidates()));
    for (const auto &d : defs) {
      std::string error;
      auto spec = tc::parseDefine(d, error); // what the tools accept, nothing else
      if (!spec || spec->values.empty() || spec->values[0].find('\n') != std::string::npos)
        continue;
      c.defines.emplace_back(spec->name, spec->values[0]);
    }
    if (*rc::gen::inRange(0, 10) == 0) {
      std::string name = *rc::gen::elementOf(undefineCandidates());
      if (!name.empty())
        c.undefines.push_back(name);
    }
    int warnings = *rc::gen::inRange(0, 20);
    c.warningsAsErrors = warnings == 0;
    c.ignoreWarnings = warnings == 1;
  }

  const Options &opts_;
  Corpus corpus_;
  std::vector<std::string> includeDirs_;
  StateFile state_;
  std::vector<std::string> irPool_;
  std::set<std::string> known_; // signatures already reported (by any worker)
  Stats stats_;
};

int runWorker(Options o) {
  ensureOutDir(o);
  Corpus corpus = loadCorpus(o.srcDir);
  auto includes = setupIncludes(o);
  installLeakHooks();
  startWatchdog(o);
  std::cerr << "frontend_fuzz worker: seed " << o.seed << ", " << corpus.sources.size() << " source seeds, "
            << corpus.irs.size() << " IR seeds" << std::endl;
  Worker w(o, std::move(corpus), std::move(includes));
  return w.run();
}

//===----------------------------------------------------------------------===//
// --check: run saved inputs
//===----------------------------------------------------------------------===//

bool isIRFile(const std::string &path) { return fs::path(path).extension() == ".tir"; }

int runCheck(Options o) {
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const auto &f : o.files) {
    if (!fs::is_regular_file(f)) {
      std::cerr << "frontend_fuzz: cannot read " << f << "\n";
      return 2;
    }
    inputs.emplace_back(f, readFile(f));
  }
  ensureOutDir(o);
  auto includes = setupIncludes(o);
  installLeakHooks();
  startWatchdog(o);
  for (const auto &[path, text] : inputs) {
    CheckResult r = isIRFile(path) ? runInput([&] { return checkIR(text); })
                                   : runInput([&] { return checkSource(parseSourceCase(text), includes); });
    if (r.failed)
      reportPropertyFailure(r);
    std::cout << "ok: " << path << (r.reachedIR ? " (valid: round trip checked)" : " (rejected with a diagnostic)")
              << "\n";
    if (o.verbose && !r.printedIR.empty())
      std::cout << r.printedIR;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Supervisor: child processes, failure signatures, minimization
//===----------------------------------------------------------------------===//

std::string selfPath() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("frontend_fuzz") : p.string();
}

struct ChildResult {
  int status = 0;
  bool killed = false; // we killed it (ran past its wall-clock limit)
  std::string log;
};

/// Runs this binary with `args`, stdout and stderr into `logPath`, for at most `limitSec`.
ChildResult runChild(const std::vector<std::string> &args, const std::string &logPath, double limitSec) {
  std::string self = selfPath();
  std::vector<char *> argv;
  argv.push_back(self.data());
  std::vector<std::string> copy = args;
  for (auto &a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  ChildResult r;
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    r.status = -1;
    r.log = "posix_spawn failed";
    return r;
  }
  posix_spawn_file_actions_destroy(&actions);
  int64_t deadline = nowMs() + static_cast<int64_t>(limitSec * 1000);
  for (;;) {
    pid_t w = waitpid(pid, &r.status, WNOHANG);
    if (w == pid)
      break;
    if (nowMs() > deadline && !r.killed) {
      kill(pid, SIGKILL);
      r.killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.log = readFile(logPath);
  return r;
}

bool childOk(const ChildResult &r) { return !r.killed && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\n'))
    s.pop_back();
  return s;
}

/// The line of `log` that starts at `pos`.
std::string lineAt(const std::string &log, size_t pos) {
  size_t end = log.find('\n', pos);
  return trim(log.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
}

/// A short, input-independent name of how a child failed; minimization keeps it.
std::string signature(const ChildResult &r) {
  const std::string &log = r.log;
  size_t p;
  if ((p = log.find("FUZZ-SIGNATURE: ")) != std::string::npos)
    return lineAt(log, p + std::string("FUZZ-SIGNATURE: ").size());
  if ((p = log.find("FUZZ-FAILURE: ")) != std::string::npos) {
    std::string line = lineAt(log, p);
    size_t colon = line.find(':', std::string("FUZZ-FAILURE: ").size());
    return line.substr(0, colon);
  }
  if (log.find("stack-overflow") != std::string::npos)
    return "AddressSanitizer: stack-overflow";
  if (log.find("LeakSanitizer: detected memory leaks") != std::string::npos)
    return "LeakSanitizer: memory leak";
  if ((p = log.find("SUMMARY: ")) != std::string::npos)
    return lineAt(log, p);
  if ((p = log.find("runtime error: ")) != std::string::npos) {
    size_t start = log.rfind('\n', p);
    return lineAt(log, start == std::string::npos ? 0 : start + 1);
  }
  if ((p = log.find(": Assertion `")) != std::string::npos) {
    size_t start = log.rfind('\n', p);
    std::string line = lineAt(log, start == std::string::npos ? 0 : start + 1);
    size_t progEnd = line.find(": ");
    return progEnd == std::string::npos ? line : line.substr(progEnd + 2);
  }
  if (r.killed)
    return "killed after the wall-clock limit";
  if (WIFSIGNALED(r.status))
    return "signal " + std::to_string(WTERMSIG(r.status)) + " (" + strsignal(WTERMSIG(r.status)) + ")";
  return "exit status " + std::to_string(WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1);
}

/// The interesting part of a failure log: from the first report line, at most `maxLines` lines.
std::string excerpt(const std::string &log, int maxLines) {
  size_t start = std::string::npos;
  for (const char *marker : {"FUZZ-FAILURE: ", "==ERROR: ", "ERROR: ", "runtime error: ", "Assertion `"}) {
    size_t p = log.find(marker);
    if (p != std::string::npos)
      start = std::min(start, log.rfind('\n', p) == std::string::npos ? 0 : log.rfind('\n', p) + 1);
  }
  if (start == std::string::npos)
    start = log.size() > 4000 ? log.size() - 4000 : 0;
  std::istringstream in(log.substr(start));
  std::string line, out;
  for (int i = 0; i < maxLines && std::getline(in, line); ++i)
    out += "    " + line + "\n";
  return out;
}

/// The common arguments a child needs to see the same world.
std::vector<std::string> childArgs(const Options &o) {
  char timeout[32];
  std::snprintf(timeout, sizeof(timeout), "%g", o.timeout);
  return {"--src", o.srcDir, "--out", o.outDir, "--timeout", timeout, "--rss-mb", std::to_string(o.rssMb)};
}

/// A failing input: Triton-C (options + body) or IR text.
struct FailingInput {
  bool isIR = false;
  SourceCase source;
  std::string ir;

  std::string text() const { return isIR ? ir : source.text(); }
  const char *ext() const { return isIR ? ".tir" : ".tc"; }
};

class Minimizer {
public:
  Minimizer(const Options &o, std::string target, int64_t deadlineMs)
      : opts_(o), target_(std::move(target)), deadlineMs_(deadlineMs) {}

  /// Whether `in` still fails with the target signature.
  bool reproduces(const FailingInput &in) {
    ++runs_;
    std::string path = opts_.outDir + "/minimize-candidate" + in.ext();
    writeFile(path, in.text());
    auto args = childArgs(opts_);
    args.insert(args.begin(), {"--check", path});
    ChildResult r = runChild(args, opts_.outDir + "/minimize-candidate.log", opts_.timeout + 30);
    return !childOk(r) && signature(r) == target_;
  }

  /// Shrinks `in` (options, then lines, then tokens) while it keeps failing.
  FailingInput minimize(FailingInput in) {
    if (!in.isIR)
      dropOptions(in);
    for (bool progress = true; progress && !timeUp();) {
      progress = false;
      std::string &body = in.isIR ? in.ir : in.source.body;
      size_t before = body.size();
      shrinkChunks(in, body, splitLines(body));
      shrinkChunks(in, body, splitTokens(body));
      progress = body.size() < before;
    }
    return in;
  }

  int runs() const { return runs_; }
  bool timeUp() const { return nowMs() > deadlineMs_; }

private:
  void dropOptions(FailingInput &in) {
    for (size_t i = in.source.defines.size(); i-- > 0 && !timeUp();) {
      FailingInput c = in;
      c.source.defines.erase(c.source.defines.begin() + static_cast<long>(i));
      if (reproduces(c))
        in = c;
    }
    for (bool *flag : {&in.source.warningsAsErrors, &in.source.ignoreWarnings}) {
      if (!*flag || timeUp())
        continue;
      *flag = false;
      if (!reproduces(in))
        *flag = true;
    }
    for (size_t i = in.source.undefines.size(); i-- > 0 && !timeUp();) {
      FailingInput c = in;
      c.source.undefines.erase(c.source.undefines.begin() + static_cast<long>(i));
      if (reproduces(c))
        in = c;
    }
  }

  static std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < text.size()) {
      size_t e = text.find('\n', i);
      e = e == std::string_view::npos ? text.size() : e + 1;
      out.push_back(text.substr(i, e - i));
      i = e;
    }
    return out;
  }

  /// Delta debugging: remove ever smaller runs of chunks while the failure stays.
  void shrinkChunks(FailingInput &in, std::string &body, std::vector<std::string_view> views) {
    std::vector<std::string> chunks(views.begin(), views.end());
    size_t n = 2;
    while (chunks.size() >= 2 && !timeUp()) {
      size_t len = (chunks.size() + n - 1) / n;
      bool reduced = false;
      for (size_t start = 0; start < chunks.size() && !timeUp(); start += len) {
        std::vector<std::string> candidate(chunks.begin(), chunks.begin() + static_cast<long>(start));
        candidate.insert(candidate.end(), chunks.begin() + static_cast<long>(std::min(chunks.size(), start + len)),
                         chunks.end());
        std::string saved = body;
        body.clear();
        for (const auto &c : candidate)
          body += c;
        if (reproduces(in)) {
          chunks = std::move(candidate);
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
          break;
        }
        body = saved;
      }
      if (!reduced) {
        if (n >= chunks.size())
          break;
        n = std::min(chunks.size(), n * 2);
      }
    }
  }

  const Options &opts_;
  std::string target_;
  int64_t deadlineMs_;
  int runs_ = 0;
};

FailingInput readFailingInput(const std::string &path, const std::string &text) {
  FailingInput in;
  in.isIR = isIRFile(path);
  if (in.isIR)
    in.ir = text;
  else
    in.source = parseSourceCase(text);
  return in;
}

/// Shrinks the input saved at `path` and writes `<path without ext>.min<ext>`; returns that path.
std::optional<std::string> minimizeSaved(const Options &o, const std::string &path, double seconds) {
  FailingInput in = readFailingInput(path, readFile(path));
  auto args = childArgs(o);
  args.insert(args.begin(), {"--check", path});
  ChildResult first = runChild(args, o.outDir + "/minimize-first.log", o.timeout + 30);
  if (childOk(first)) {
    std::cout << "  (does not fail when run alone: it may depend on earlier inputs; not minimized)\n";
    return std::nullopt;
  }
  std::string target = signature(first);
  Minimizer m(o, target, nowMs() + static_cast<int64_t>(seconds * 1000));
  FailingInput small = m.minimize(in);
  fs::path out = fs::path(path).replace_extension(std::string(".min") + small.ext());
  writeFile(out.string(), small.text());
  std::cout << "  minimized with " << m.runs() << " runs" << (m.timeUp() ? " (time limit reached)" : "")
            << ": " << in.text().size() << " -> " << small.text().size() << " bytes\n";
  return out.string();
}

int runMinimize(Options o) {
  ensureOutDir(o);
  auto path = minimizeSaved(o, o.files[0], o.minimizeSeconds);
  if (path)
    std::cout << "minimized input: " << *path << "\n";
  return path ? 0 : 1;
}

/// Runs workers until the deadline; reports, saves and shrinks what they find.
class Supervisor {
public:
  explicit Supervisor(Options o) : o_(std::move(o)) {}

  int run() {
    int64_t start = nowMs();
    int64_t until = start + static_cast<int64_t>(o_.seconds * 1000);
    std::cout << "frontend_fuzz: seed " << o_.seed << ", " << o_.seconds << " s, sources from " << o_.srcDir
              << ", per-input limit " << o_.timeout << " s, output in " << o_.outDir << std::endl;
    minimizeUntil_ = until + static_cast<int64_t>(3 * o_.minimizeSeconds * 1000);
    replayCrashes();
    // Stop early after --max-failures distinct failures, or after too many worker deaths.
    for (int run = 0; nowMs() < until && static_cast<int>(seen_.size()) < o_.maxFailures &&
                      crashes_ < 5 * o_.maxFailures;
         ++run) {
      std::string statePath = o_.outDir + "/state-" + std::to_string(run);
      std::string logPath = o_.outDir + "/worker-" + std::to_string(run) + ".log";
      auto args = childArgs(o_);
      for (const std::string &a : {std::string("--worker"), std::string("--seed"), std::to_string(o_.seed + run),
                                   std::string("--until-ms"), std::to_string(until), std::string("--state"),
                                   statePath})
        args.push_back(a);
      double limit = static_cast<double>(until - nowMs()) / 1000 + o_.timeout + 60;
      ChildResult r = runChild(args, logPath, limit);
      collectFindings(r.log);
      if (childOk(r)) {
        size_t p = r.log.rfind("frontend_fuzz worker done");
        std::cout << (p == std::string::npos ? "worker finished" : lineAt(r.log, p)) << std::endl;
        continue;
      }
      handleCrash(r, statePath);
    }
    std::cout << "\nfrontend_fuzz: " << (nowMs() - start) / 1000 << " s; " << seen_.size()
              << " distinct failure(s) (" << crashes_ << " worker death(s))"
              << (seen_.empty() ? "" : "; inputs in " + o_.outDir) << std::endl;
    return seen_.empty() && crashes_ == 0 ? 0 : 1;
  }

private:
  /// Reruns the saved reproducers of earlier failures (tests/fuzz/crashes/): each must pass now.
  void replayCrashes() {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(o_.srcDir + "/tests/fuzz/crashes", ec))
      if (e.path().extension() == ".tc" || e.path().extension() == ".tir")
        files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto &f : files) {
      auto args = childArgs(o_);
      args.insert(args.begin(), {"--check", f});
      ChildResult r = runChild(args, o_.outDir + "/replay.log", o_.timeout + 30);
      if (!childOk(r)) {
        ++crashes_;
        report("regression: " + signature(r), f, excerpt(r.log, 40), /*shrink=*/false);
      }
    }
    std::cout << "replayed " << files.size() << " saved reproducer(s) from tests/fuzz/crashes" << std::endl;
  }

  /// Property failures a worker found and saved (FUZZ-FOUND blocks in its log).
  void collectFindings(const std::string &log) {
    const std::string begin = "FUZZ-FOUND: ", end = "\nFUZZ-FOUND-END";
    for (size_t p = log.find(begin); p != std::string::npos; p = log.find(begin, p + 1)) {
      size_t stop = log.find(end, p);
      std::string block = log.substr(p, stop == std::string::npos ? std::string::npos : stop - p);
      std::istringstream in(block);
      std::string first, sig;
      std::getline(in, first);
      std::getline(in, sig);
      std::string detail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      report(sig, first.substr(begin.size()), detail);
    }
  }

  /// A worker died (sanitizer, assertion, signal, timeout, memory): its state file holds the input.
  void handleCrash(const ChildResult &r, const std::string &statePath) {
    ++crashes_;
    std::string state = readFile(statePath);
    size_t nl = state.find('\n');
    std::string kind = state.substr(0, nl);
    std::string base = o_.outDir + "/crash-" + std::to_string(crashes_);
    writeFile(base + ".log", r.log);
    std::string detail = excerpt(r.log, 40) + "    (full log: " + base + ".log)\n";
    if (kind != "tc" && kind != "tir") {
      report(signature(r), "(none: the worker died outside an input, a bug of the harness)", detail, false);
      return;
    }
    std::string path = base + "." + kind;
    writeFile(path, state.substr(nl + 1));
    report(signature(r), path, detail);
  }

  /// Prints one failure; new signatures are recorded and (when `shrink`) minimized.
  void report(const std::string &sig, const std::string &path, const std::string &detail, bool shrink = true) {
    auto it = seen_.find(sig);
    if (it != seen_.end()) {
      std::cout << "\nagain: " << sig << "\n  input: " << path << " (same failure as " << it->second << ")\n";
      return;
    }
    seen_[sig] = path;
    std::ofstream(o_.outDir + "/known-signatures.txt", std::ios::app) << sig << "\n";
    std::cout << "\nFAILURE " << seen_.size() << ": " << sig << "\n  input: " << path << "\n  report:\n"
              << indentLines(detail, 48);
    if (path[0] == '(') {
      std::cout << std::flush;
      return;
    }
    std::cout << "  reproduce: frontend_fuzz --check " << path;
    if (!isIRFile(path))
      std::cout << "   or   tritonc " << path << parseSourceCase(readFile(path)).flags() << " --emit=ir";
    std::cout << std::endl;
    double seconds = std::min(o_.minimizeSeconds, static_cast<double>(minimizeUntil_ - nowMs()) / 1000);
    if (!shrink || seconds <= 1)
      return;
    if (auto small = minimizeSaved(o_, path, seconds)) {
      std::string text = readFile(*small);
      std::cout << "  minimized input: " << *small << "\n";
      if (text.size() < 800)
        std::cout << indentLines(text, 30) << std::flush;
    }
  }

  static std::string indentLines(const std::string &text, int maxLines) {
    std::istringstream in(text);
    std::string line, out;
    for (int i = 0; std::getline(in, line); ++i) {
      if (i == maxLines) {
        out += "    ...\n";
        break;
      }
      if (line.rfind("    ", 0) != 0)
        line = "    " + line;
      out += line + "\n";
    }
    return out;
  }

  Options o_;
  std::map<std::string, std::string> seen_; // signature -> first input
  int crashes_ = 0;
  int64_t minimizeUntil_ = 0;
};

int runSupervisor(Options o) {
  ensureOutDir(o);
  return Supervisor(std::move(o)).run();
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  switch (o.mode) {
  case Mode::Worker:
    return runWorker(o);
  case Mode::Check:
    return runCheck(o);
  case Mode::Minimize:
    return runMinimize(o);
  case Mode::Supervise:
    return runSupervisor(o);
  }
  return 2;
}
