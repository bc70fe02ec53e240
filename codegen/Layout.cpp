// Layouts of tile values (Layout.h): construction, printing, and the
// --emit=layouts text. The pass itself is LowerLayouts.cpp.
#include "codegen/Layout.h"

#include "ir/Printer.h"

#include <map>
#include <ostream>
#include <sstream>

namespace tc::codegen {

namespace {

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string bytesText(size_t b) {
  if (b >= 1024 && b % 1024 == 0)
    return std::to_string(b / 1024) + " KiB";
  if (b >= 1024) {
    std::ostringstream os;
    os.precision(1);
    os << std::fixed << static_cast<double>(b) / 1024 << " KiB";
    return os.str();
  }
  return std::to_string(b) + (b == 1 ? " byte" : " bytes");
}

} // namespace

Layout Layout::blocked(const ir::Shape &shape, int64_t numThreads, int64_t vec,
                       const std::vector<int64_t> &perm) {
  Layout l;
  l.kind = Kind::Blocked;
  l.numThreads = numThreads;
  size_t r = shape.size();
  std::vector<int64_t> p = perm;
  if (p.empty())
    for (size_t d = 0; d < r; ++d)
      p.push_back(static_cast<int64_t>(d));
  int64_t n = 1;
  for (int64_t x : shape)
    n *= x;
  // Lower.h: thread t owns K = n / T slots in runs of V' = min(V, K).
  l.vec = n >= numThreads ? std::max<int64_t>(1, std::min(vec, n / numThreads)) : 1;
  if (r == 0)
    return l;
  // The run, then the 32 lanes, then the warps fill the axes fastest first
  // (the flat index's order); what is left over wraps around the slowest axis.
  std::vector<int64_t> rem;
  for (int64_t d : p)
    rem.push_back(shape[static_cast<size_t>(d)]);
  bool ok = true;
  auto fill = [&](int64_t amount) {
    std::vector<int64_t> out(r, 1);
    for (size_t i = r; i-- > 0;) {
      int64_t take = std::max<int64_t>(1, std::min(amount, rem[i]));
      if (rem[i] % take || amount % take)
        ok = false;
      rem[i] /= take;
      amount /= take;
      out[i] = take;
    }
    out[0] *= amount;
    return out;
  };
  std::vector<int64_t> spt = fill(l.vec), tpw = fill(32), wpc = fill(numThreads / 32);
  if (!ok || numThreads % 32) {
    l.flat = true;
    return l;
  }
  l.sizePerThread.assign(r, 1);
  l.threadsPerWarp.assign(r, 1);
  l.warpsPerCTA.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    auto d = static_cast<size_t>(p[i]);
    l.sizePerThread[d] = spt[i];
    l.threadsPerWarp[d] = tpw[i];
    l.warpsPerCTA[d] = wpc[i];
  }
  for (size_t i = r; i-- > 0;)
    l.order.push_back(p[i]);
  return l;
}

Layout Layout::slice(const Layout &parent, int64_t dim) {
  Layout l;
  l.kind = Kind::Slice;
  l.dim = dim;
  l.parent = std::make_shared<Layout>(parent);
  return l;
}

Layout Layout::shared(std::vector<int64_t> order, int64_t padEvery, int64_t padElems,
                      int64_t swizzleBytes, int64_t stages, bool transposedRows) {
  Layout l;
  l.kind = Kind::Shared;
  l.order = std::move(order);
  l.padEvery = padElems > 0 ? padEvery : 0;
  l.padElems = padElems;
  l.swizzleBytes = swizzleBytes;
  l.stages = stages;
  l.transposedRows = transposedRows;
  return l;
}

Layout Layout::mma(int version, std::vector<int64_t> instrShape, std::vector<int64_t> warpTile,
                   int64_t numWarps) {
  Layout l;
  l.kind = Kind::Mma;
  l.version = version;
  l.instrShape = std::move(instrShape);
  l.warpTile = std::move(warpTile);
  l.numWarps = numWarps;
  return l;
}

Layout Layout::dotOperand(int opIdx, const Layout &parent, int64_t kWidth) {
  Layout l;
  l.kind = Kind::DotOperand;
  l.opIdx = opIdx;
  l.parent = std::make_shared<Layout>(parent);
  l.kWidth = kWidth;
  return l;
}

std::string Layout::str() const {
  switch (kind) {
  case Kind::Blocked:
    if (!flat && sizePerThread.empty()) // a scalar: every thread holds it
      return "#uniform<{threads = " + std::to_string(numThreads) + "}>";
    if (flat)
      return "#blocked<{flat, vec = " + std::to_string(vec) +
             ", threads = " + std::to_string(numThreads) + "}>";
    return "#blocked<{sizePerThread = " + list(sizePerThread) +
           ", threadsPerWarp = " + list(threadsPerWarp) + ", warpsPerCTA = " + list(warpsPerCTA) +
           ", order = " + list(order) + ", vec = " + std::to_string(vec) + "}>";
  case Kind::Slice:
    return "#slice<{dim = " + std::to_string(dim) + ", parent = " + parent->str() + "}>";
  case Kind::Shared: {
    std::string s = "#shared<{order = " + list(order);
    if (padEvery)
      s += ", pad = " + std::to_string(padElems) + " per " + std::to_string(padEvery);
    if (swizzleBytes)
      s += ", swizzle = " + std::to_string(swizzleBytes) + "B";
    if (stages > 1)
      s += ", stages = " + std::to_string(stages);
    if (transposedRows)
      s += ", transposed";
    return s + "}>";
  }
  case Kind::Mma:
    return "#mma<{versionMajor = " + std::to_string(version) +
           ", instrShape = " + list(instrShape) + ", warpTile = " + list(warpTile) +
           ", warps = " + std::to_string(numWarps) + "}>";
  case Kind::DotOperand:
    return "#dot_op<{opIdx = " + std::to_string(opIdx) + ", parent = " + parent->str() +
           ", kWidth = " + std::to_string(kWidth) + "}>";
  }
  return "#?";
}

int64_t Layout::threadOf(const ir::Shape &shape, const std::vector<int64_t> &coords) const {
  int64_t e = 0, n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    e = e * shape[d] + coords[d];
    n *= shape[d];
  }
  if (flat || sizePerThread.empty())
    return sizePerThread.empty() && !flat ? 0 : n < numThreads ? e : (e / vec) % numThreads;
  int64_t lane = 0, warp = 0, laneStride = 1, warpStride = 1;
  for (int64_t od : order) {
    auto d = static_cast<size_t>(od);
    int64_t tile = sizePerThread[d] * threadsPerWarp[d] * warpsPerCTA[d];
    int64_t c = coords[d] % tile;
    lane += (c / sizePerThread[d]) % threadsPerWarp[d] * laneStride;
    warp += (c / (sizePerThread[d] * threadsPerWarp[d])) % warpsPerCTA[d] * warpStride;
    laneStride *= threadsPerWarp[d];
    warpStride *= warpsPerCTA[d];
  }
  return warp * 32 + lane;
}

std::string Conversion::str() const {
  std::string s;
  switch (mechanism) {
  case Mechanism::Free: s = "free"; break;
  case Mechanism::Registers: s = "in registers"; break;
  case Mechanism::Shared: s = "through shared memory"; break;
  case Mechanism::CpAsync: s = "cp.async into shared memory"; break;
  case Mechanism::Tma: s = "TMA into shared memory"; break;
  }
  if (bytes)
    s += ", " + bytesText(bytes);
  if (mechanism == Mechanism::Shared || mechanism == Mechanism::CpAsync ||
      mechanism == Mechanism::Tma)
    s += ", " + std::to_string(barriers) + (barriers == 1 ? " barrier" : " barriers");
  if (loopDepth > 0)
    s += ", every loop trip";
  return s + ": " + how;
}

std::string KernelLayouts::summary() const {
  // [0]: outside loops, [1]: per trip of the loops around them.
  size_t shared[2] = {0, 0}, sharedBytes[2] = {0, 0}, cp[2] = {0, 0}, cpBytes[2] = {0, 0};
  size_t tma[2] = {0, 0}, tmaBytes[2] = {0, 0};
  int barriers[2] = {plainBarriers[0], plainBarriers[1]};
  size_t freeOnes = 0;
  for (const Conversion &c : conversions) {
    size_t i = c.loopDepth > 0 ? 1 : 0;
    barriers[i] += c.barriers;
    if (c.mechanism == Conversion::Mechanism::Shared) {
      ++shared[i];
      sharedBytes[i] += c.bytes;
    } else if (c.mechanism == Conversion::Mechanism::CpAsync) {
      ++cp[i];
      cpBytes[i] += c.bytes;
    } else if (c.mechanism == Conversion::Mechanism::Tma) {
      ++tma[i];
      tmaBytes[i] += c.bytes;
    } else {
      ++freeOnes;
    }
  }
  auto part = [&](size_t i) {
    std::string s =
        std::to_string(shared[i]) + " through shared memory (" + bytesText(sharedBytes[i]) + "), ";
    if (cp[i])
      s += std::to_string(cp[i]) + " cp.async (" + bytesText(cpBytes[i]) + "), ";
    if (tma[i])
      s += std::to_string(tma[i]) + " TMA (" + bytesText(tmaBytes[i]) + "), ";
    return s + std::to_string(barriers[i]) + (barriers[i] == 1 ? " barrier" : " barriers");
  };
  return "summary: conversions outside loops: " + part(0) + "; per loop trip: " + part(1) +
         "; free or in registers: " + std::to_string(freeOnes);
}

void printLayouts(const ir::Module &module, const ir::Function &fn, const KernelLayouts &kl,
                  std::ostream &os) {
  // Aliases by kind, numbered in order of first appearance.
  std::map<std::string, std::string> alias;
  std::vector<std::string> defs;
  std::map<std::string, int> counts;
  auto nameOf = [&](const Layout &l) {
    std::string text = l.str();
    auto it = alias.find(text);
    if (it != alias.end())
      return it->second;
    std::string kind = text.substr(0, text.find('<'));
    std::string a = kind + std::to_string(counts[kind]++);
    alias[text] = a;
    defs.push_back(a + " = " + text);
    return a;
  };
  std::multimap<const ir::Op *, const Conversion *> convs;
  for (const Conversion &c : kl.conversions)
    convs.insert({c.op, &c});
  ir::PrintOptions po;
  po.locations = false;
  ir::PrintHooks hooks;
  hooks.valueSuffix = [&](const ir::Value &v) -> std::string {
    auto it = kl.values.find(&v);
    return it == kl.values.end() ? std::string() : " " + nameOf(it->second);
  };
  hooks.opComments = [&](const ir::Op &op, const std::function<std::string(const ir::Value *)> &name) {
    std::vector<std::string> out;
    if (auto it = kl.notes.find(&op); it != kl.notes.end())
      out = it->second;
    auto [b, e] = convs.equal_range(&op);
    for (auto it = b; it != e; ++it) {
      const Conversion &c = *it->second;
      std::string what = c.what;
      if (what.rfind("operand ", 0) == 0) {
        unsigned i = static_cast<unsigned>(std::stoul(what.substr(8)));
        if (i < op.numOperands())
          what += " " + name(op.operand(i));
      } else if (what == "result" && op.numResults()) {
        what += " " + name(op.result());
      }
      out.push_back("convert " + what + ": " + nameOf(c.from) + " -> " + nameOf(c.to) + ", " +
                    c.str());
    }
    return out;
  };
  // The module's text, of which fn's part is kept (the printer numbers values
  // per function, so the part is as fn alone would print).
  std::ostringstream all;
  ir::printModule(module, all, po, hooks);
  std::string text = all.str(), head = "kernel @" + fn.name() + "(";
  size_t at = text.find(head);
  size_t end = at == std::string::npos ? std::string::npos : text.find("\n}\n", at);
  std::string part = at == std::string::npos ? text : text.substr(at, end + 3 - at);
  os << "// layouts of kernel @" << fn.name() << " (" << kl.numThreads << " threads, "
     << kl.numThreads / 32 << " warps, blocked runs of up to " << kl.vec << " elements)\n";
  for (const std::string &d : defs)
    os << d << '\n';
  os << part;
  os << "// " << kl.summary() << '\n';
}

} // namespace tc::codegen
