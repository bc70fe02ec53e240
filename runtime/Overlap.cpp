// Overlapping host arrays of one launch as one memory (Overlap.h).
#include "runtime/Overlap.h"

#include "support/DType.h"

#include <algorithm>
#include <map>

namespace tc {
namespace {

/// A distinct host array of the launch and the first parameter bound to it.
struct Entry {
  HostArray *array;
  unsigned param;
};

bool isHost(const HostArray *a) {
  return a && a->device == 0 && a->byteCount() > 0 && a->bytes();
}

bool overlapsNotSame(const HostArray &x, const HostArray &y) {
  const uint8_t *xb = x.bytes(), *yb = y.bytes();
  size_t xn = x.byteCount(), yn = y.byteCount();
  bool same = xb == yb && xn == yn;
  return !same && xb < yb + yn && yb < xb + xn;
}

/// The distinct host arrays in parameter order.
std::vector<Entry> hostEntries(const CompiledKernel &kernel, const LaunchArgs &args) {
  const ir::Function &fn = kernel.function();
  std::vector<Entry> out;
  for (unsigned p = 0; p < fn.numParams(); ++p) {
    if (!fn.param(p)->type().isPtr)
      continue;
    HostArray *a = args.buffer(fn.paramName(p));
    if (!isHost(a))
      continue;
    bool seen = false;
    for (const Entry &e : out)
      seen = seen || e.array == a;
    if (!seen)
      out.push_back({a, p});
  }
  return out;
}

/// Groups (indices into `es`, two or more each) of arrays connected by overlap.
std::vector<std::vector<size_t>> overlapGroups(const std::vector<Entry> &es) {
  size_t n = es.size();
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i)
    parent[i] = i;
  auto root = [&](size_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  bool any = false;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      if (overlapsNotSame(*es[i].array, *es[j].array)) {
        parent[root(i)] = root(j);
        any = true;
      }
  std::vector<std::vector<size_t>> groups;
  if (!any)
    return groups;
  std::map<size_t, size_t> index; // root -> group
  for (size_t i = 0; i < n; ++i) {
    size_t r = root(i);
    auto [it, fresh] = index.emplace(r, groups.size());
    if (fresh)
      groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::erase_if(groups, [](const std::vector<size_t> &g) { return g.size() < 2; });
  return groups;
}

std::string argumentText(const CompiledKernel &kernel, unsigned p) {
  const ir::Function &fn = kernel.function();
  return "argument '" + fn.paramName(p) + "' (" +
         std::string(conformanceName(fn.param(p)->type().dtype)) + "*)";
}

std::string mixedReadOnlyText(const CompiledKernel &kernel, unsigned p, unsigned first) {
  return argumentText(kernel, p) + " overlaps " + argumentText(kernel, first) +
         " in memory, and one of them is read-only: not supported yet (pass both "
         "writable, or a copy)";
}

/// Two distinct arrays over the same bytes, one read-only and one writable
/// (one memory to the GPU, two regions to the interpreter: refused as for
/// overlapping views).
std::optional<std::string> sameBytesMixedReadOnly(const CompiledKernel &kernel,
                                                  const std::vector<Entry> &es) {
  for (size_t i = 0; i < es.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const HostArray &x = *es[i].array, &y = *es[j].array;
      if (x.bytes() == y.bytes() && x.byteCount() == y.byteCount() && x.readOnly != y.readOnly)
        return mixedReadOnlyText(kernel, es[i].param, es[j].param);
    }
  return std::nullopt;
}

} // namespace

std::optional<std::string> mergeOverlappingHostArrays(const CompiledKernel &kernel,
                                                      LaunchArgs &args) {
  std::vector<Entry> es = hostEntries(kernel, args);
  if (std::optional<std::string> refused = sameBytesMixedReadOnly(kernel, es))
    return refused;
  std::vector<std::vector<size_t>> groups = overlapGroups(es);
  struct Change {
    HostArray *array;
    uint8_t *lo;
    size_t bytes;
    uint64_t origin;
  };
  std::vector<Change> changes;
  for (const std::vector<size_t> &g : groups) {
    const Entry &first = es[g[0]];
    uint8_t *lo = first.array->bytes(), *hi = lo;
    for (size_t i : g) {
      HostArray &h = *es[i].array;
      lo = std::min(lo, h.bytes());
      hi = std::max(hi, h.bytes() + h.byteCount());
      if (h.readOnly != first.array->readOnly)
        return mixedReadOnlyText(kernel, es[i].param, first.param);
    }
    size_t bytes = static_cast<size_t>(hi - lo);
    for (size_t i : g) {
      HostArray &h = *es[i].array;
      size_t size = byteSize(h.dtype);
      uint64_t origin = static_cast<uint64_t>(h.bytes() - lo) + h.origin;
      // Name two different arguments: the first of the group is never the one
      // that overlaps itself.
      if (origin % size != 0 || bytes % size != 0)
        return argumentText(kernel, es[i == g[0] ? g[1] : i].param) + " overlaps " +
               argumentText(kernel, first.param) +
               " in memory at an offset that is not a whole number of its elements: not "
               "supported yet (pass a copy)";
      changes.push_back({&h, lo, bytes, origin});
    }
  }
  for (const Change &c : changes) {
    c.array->external = c.lo;
    c.array->externalBytes = c.bytes;
    c.array->origin = c.origin;
    c.array->shape = {static_cast<int64_t>(c.bytes / byteSize(c.array->dtype))};
  }
  return std::nullopt;
}

std::optional<Trap> OverlappingViews::prepare(const CompiledKernel &kernel, LaunchArgs &args) {
  args_ = &args;
  merged_ = false;
  views_.clear();
  pairs_.clear();
  std::vector<Entry> es = hostEntries(kernel, args);
  std::optional<std::string> refused = sameBytesMixedReadOnly(kernel, es);
  std::vector<std::vector<size_t>> groups = overlapGroups(es);
  if ((!refused && groups.empty()) || checkLaunchArguments(kernel, args))
    return std::nullopt;
  if (refused)
    return makeLaunchTrap(kernel, TrapKind::InvalidLaunch, *refused);
  local_ = args;
  std::map<const HostArray *, HostArray *> viewOf;
  for (const std::vector<size_t> &g : groups)
    for (size_t i : g) {
      HostArray *a = es[i].array;
      auto v = std::make_unique<HostArray>();
      v->dtype = a->dtype;
      v->shape = a->shape;
      v->external = a->bytes();
      v->externalBytes = a->byteCount();
      v->origin = a->origin;
      v->readOnly = a->readOnly;
      viewOf[a] = v.get();
      pairs_.emplace_back(a, v.get());
      views_.push_back(std::move(v));
    }
  for (const auto &[name, a] : args.buffers())
    if (auto it = viewOf.find(a); it != viewOf.end())
      local_.setBuffer(name, it->second);
  if (std::optional<std::string> refused = mergeOverlappingHostArrays(kernel, local_))
    return makeLaunchTrap(kernel, TrapKind::InvalidLaunch, *refused);
  merged_ = true;
  return std::nullopt;
}

void OverlappingViews::finish(RunResult &r) const {
  if (!merged_)
    return;
  std::vector<std::pair<const uint8_t *, std::vector<uint8_t>>> states;
  for (const auto &[caller, view] : pairs_) {
    auto it = r.trapState.find(view->bytes());
    if (it == r.trapState.end())
      continue;
    size_t from = static_cast<size_t>(caller->bytes() - view->bytes());
    size_t n = std::min(caller->byteCount(), it->second.size() - std::min(from, it->second.size()));
    auto start =
        it->second.begin() + static_cast<std::ptrdiff_t>(std::min(from, it->second.size()));
    states.emplace_back(caller->bytes(),
                        std::vector<uint8_t>(start, start + static_cast<std::ptrdiff_t>(n)));
  }
  for (auto &[key, bytes] : states)
    r.trapState[key] = std::move(bytes);
  std::vector<const uint8_t *> written;
  for (const auto &[caller, view] : pairs_)
    if (std::find(r.written.begin(), r.written.end(), view->bytes()) != r.written.end() &&
        std::find(r.written.begin(), r.written.end(), caller->bytes()) == r.written.end() &&
        std::find(written.begin(), written.end(), caller->bytes()) == written.end())
      written.push_back(caller->bytes());
  r.written.insert(r.written.end(), written.begin(), written.end());
}

} // namespace tc
