// Reading and validating suite files (the format of conformance/FORMAT.md).
#include "conformance/Case.h"
#include "conformance/Json.h"
#include "conformance/Value.h"
#include "support/Numerics.h"
#include "support/FileIO.h"
#include "support/Npy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace tc::conf {

namespace {

namespace fs = std::filesystem;

// No more than one buffer's byte limit (support/FileIO.h, as for --arg), counted in
// elements of the buffer's dtype in loadShape.
int64_t kMaxElementsOf(DType t) {
  return static_cast<int64_t>(kMaxBufferBytes / byteSize(t));
}

std::string join(const std::string &path, const std::string &key) {
  return path.empty() ? key : path + "." + key;
}
std::string at(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const Json *get(const Json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Validates one suite file into a LoadResult.
class SuiteLoader {
public:
  SuiteLoader(std::string file, std::string dir, LoadResult &out)
      : file_(std::move(file)), dir_(std::move(dir)), out_(out) {}

  void load(const std::string &text);

private:
  // Messages ---------------------------------------------------------------
  void error(const std::string &path, const std::string &msg) {
    std::string m = file_ + ": " + (path.empty() ? "" : path + ": ") + msg;
    out_.errors.push_back(m);
    caseErrors_.push_back(m);
  }
  void warning(const std::string &path, const std::string &msg) {
    out_.warnings.push_back(file_ + ": " + (path.empty() ? "" : path + ": ") + msg);
  }
  /// A finite number beyond a float dtype's range (it rounds to inf): a warning.
  bool warnIfInfinite(const Json &v, DType t, uint64_t bits, const std::string &path) {
    if (!roundedToInfinity(v, t, bits))
      return false;
    warning(path, shortText(v) + " is beyond the range of " + std::string(conformanceName(t)) +
                      ": it rounds to " + (bits == infBits(t, true) ? "-inf" : "inf") +
                      " (write \"inf\" or \"-inf\" if that is meant)");
    return true;
  }
  // Unknown keys of `obj`: warnings (top level, cases) or errors (the rest).
  void checkKeys(const Json &obj, const std::string &path, std::initializer_list<const char *> known,
                 bool warnOnly);

  // Typed field access: nullptr / nullopt with an error on a wrong type.
  const Json *require(const Json &obj, const std::string &path, const char *key);
  std::optional<std::string> stringField(const Json &obj, const std::string &path, const char *key,
                                         bool required);
  std::optional<std::vector<std::string>> stringList(const Json &obj, const std::string &path,
                                                     const char *key);
  std::optional<DType> dtypeField(const Json &obj, const std::string &path);
  std::optional<int64_t> intField(const Json &v, const std::string &path, int64_t min);
  std::optional<double> realField(const Json &v, const std::string &path);

  // The parts of a suite --------------------------------------------------------
  bool loadTop(const Json &root, Suite &s);
  void loadCase(const Json &j, const std::string &path, Suite &s);
  void loadSource(const Json &j, const std::string &path, Case &c);
  void loadDefines(const Json &j, const std::string &path, Case &c);
  void loadGrid(const Json &j, const std::string &path, Case &c);
  void loadArgs(const Json &j, const std::string &path, Case &c);
  std::optional<ArgSpec> loadArg(const Json &j, const std::string &path);
  bool loadScalar(const Json &j, const std::string &path, ArgSpec &a);
  bool loadBuffer(const Json &j, const std::string &path, ArgSpec &a);
  bool loadShape(const Json &j, const std::string &path, ArgSpec &a);
  bool loadRandom(const Json &j, const std::string &path, ArgSpec &a);
  std::optional<HostArray> loadData(const Json &j, const std::string &path, DType t,
                                    const std::vector<int64_t> &shape);
  std::optional<HostArray> loadNpy(const Json &j, const std::string &path, DType t,
                                   const std::vector<int64_t> &shape);
  void loadExpect(const Json &j, const std::string &path, Case &c);
  void loadOutputs(const Json &j, const std::string &path, Case &c);
  std::optional<CompareSpec> loadCompare(const Json &j, const std::string &path, DType t);
  void loadCompileError(const Json &j, const std::string &path, Case &c);
  void loadTrap(const Json &j, const std::string &path, Case &c);

  std::string file_, dir_;
  LoadResult &out_;
  const Json *sources_ = nullptr;
  std::vector<std::string> caseErrors_;
  std::set<std::string> caseNames_;
  std::set<std::string> failedArgs_; // arguments of the current case that did not load
};

void SuiteLoader::checkKeys(const Json &obj, const std::string &path,
                            std::initializer_list<const char *> known, bool warnOnly) {
  for (const auto &[key, value] : obj.items()) {
    bool found = false;
    for (const char *k : known)
      found = found || key == k;
    if (found)
      continue;
    if (warnOnly)
      warning(path, "unknown field '" + key + "' (ignored)");
    else
      error(join(path, key), "unknown field '" + key + "'");
  }
}

const Json *SuiteLoader::require(const Json &obj, const std::string &path, const char *key) {
  const Json *v = get(obj, key);
  if (!v)
    error(path, std::string("missing field '") + key + "'");
  return v;
}

std::optional<std::string> SuiteLoader::stringField(const Json &obj, const std::string &path,
                                                    const char *key, bool required) {
  const Json *v = required ? require(obj, path, key) : get(obj, key);
  if (!v)
    return std::nullopt;
  if (!v->is_string()) {
    error(join(path, key), "expected a string, found " + typeName(*v) + " " + shortText(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::vector<std::string>>
SuiteLoader::stringList(const Json &obj, const std::string &path, const char *key) {
  const Json *v = get(obj, key);
  if (!v)
    return std::vector<std::string>{};
  std::string p = join(path, key);
  if (!v->is_array()) {
    error(p, "expected a list of strings, found " + typeName(*v));
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json &e = (*v)[i];
    if (!e.is_string()) {
      error(at(p, i), "expected a string, found " + typeName(e) + " " + shortText(e));
      return std::nullopt;
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::optional<DType> SuiteLoader::dtypeField(const Json &obj, const std::string &path) {
  std::optional<std::string> name = stringField(obj, path, "dtype", true);
  if (!name)
    return std::nullopt;
  if (std::optional<DType> t = parseConformanceName(*name))
    return t;
  if (*name == "float8e4m3" || *name == "float8e5m2")
    error(join(path, "dtype"), "dtype '" + *name + "' is not supported yet");
  else
    error(join(path, "dtype"),
          "unknown dtype '" + *name +
              "' (expected bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
              "float16, bfloat16, float32 or float64)");
  return std::nullopt;
}

std::optional<int64_t> SuiteLoader::intField(const Json &v, const std::string &path,
                                             int64_t min) {
  std::optional<int64_t> i = intValue(v);
  if (!i) {
    error(path, "expected an integer, found " + typeName(v) + " " + shortText(v));
    return std::nullopt;
  }
  if (*i < min) {
    error(path, "must be at least " + std::to_string(min) + ", found " + std::to_string(*i));
    return std::nullopt;
  }
  return i;
}

std::optional<double> SuiteLoader::realField(const Json &v, const std::string &path) {
  std::optional<double> d = numberValue(v);
  if (!d || !std::isfinite(*d)) {
    error(path, "expected a finite number, found " + typeName(v) + " " + shortText(v));
    return std::nullopt;
  }
  return d;
}

void SuiteLoader::load(const std::string &text) {
  std::string perr;
  std::optional<Json> root = parseJson(text, perr);
  if (!root) {
    // parseJson puts "LINE:COL: " first: "suite.json:12:5: cases[3]: malformed JSON: ...".
    bool hasLine = !perr.empty() && std::isdigit(static_cast<unsigned char>(perr[0]));
    out_.errors.push_back(file_ + (hasLine ? ":" : ": ") + perr);
    return;
  }
  Suite s;
  s.file = file_;
  s.dir = dir_;
  if (!loadTop(*root, s))
    return;
  const Json &cases = (*root)["cases"];
  for (size_t i = 0; i < cases.size(); ++i)
    loadCase(cases[i], at("cases", i), s);
  out_.suite = std::move(s);
}

bool SuiteLoader::loadTop(const Json &root, Suite &s) {
  if (!root.is_object()) {
    error("", "a suite file must hold a JSON object, found " + typeName(root));
    return false;
  }
  checkKeys(root, "", {"format", "suite", "description", "sources", "cases"}, true);
  size_t before = out_.errors.size();
  std::optional<std::string> format = stringField(root, "", "format", true);
  if (format && *format != kSuiteFormat)
    error("format", "unsupported format '" + *format + "' (expected '" +
                        std::string(kSuiteFormat) + "')");
  if (std::optional<std::string> name = stringField(root, "", "suite", true)) {
    if (name->empty())
      error("suite", "the suite name is empty");
    s.name = *name;
  }
  s.description = stringField(root, "", "description", false).value_or("");
  sources_ = get(root, "sources");
  if (sources_ && !sources_->is_object()) {
    error("sources", "expected an object of named kernel sources, found " + typeName(*sources_));
    sources_ = nullptr;
  }
  if (sources_)
    for (const auto &[key, value] : sources_->items())
      if (!value.is_string())
        error(join("sources", key), "expected kernel source text, found " + typeName(value));
  if (const Json *cases = require(root, "", "cases"); cases && !cases->is_array())
    error("cases", "expected a list of cases, found " + typeName(*cases));
  return out_.errors.size() == before;
}

void SuiteLoader::loadCase(const Json &j, const std::string &path, Suite &s) {
  caseErrors_.clear();
  failedArgs_.clear();
  Case c;
  c.path = path;
  if (!j.is_object()) {
    error(path, "expected a case object, found " + typeName(j));
    s.invalid.push_back({path, path, caseErrors_.front()});
    return;
  }
  checkKeys(j, path,
            {"name", "description", "features", "source", "source_ref", "source_file", "kernel",
             "defines", "grid", "num_warps", "args", "expect", "backends"},
            true);
  if (std::optional<std::string> name = stringField(j, path, "name", true)) {
    if (!caseNames_.insert(*name).second)
      error(join(path, "name"), "a second case named '" + *name + "'");
    else if (name->empty())
      error(join(path, "name"), "the case name is empty");
    c.name = *name;
  }
  c.features = stringList(j, path, "features").value_or(std::vector<std::string>{});
  loadSource(j, path, c);
  c.kernel = stringField(j, path, "kernel", false).value_or("");
  loadDefines(j, path, c);
  loadGrid(j, path, c);
  if (const Json *w = get(j, "num_warps")) {
    c.numWarps = intField(*w, join(path, "num_warps"), 1);
    if (c.numWarps && !validNumWarps(*c.numWarps)) {
      error(join(path, "num_warps"),
            "must be 1, 2, 4, 8, 16 or 32, found " + std::to_string(*c.numWarps));
      c.numWarps.reset();
    }
  }
  loadArgs(j, path, c);
  loadExpect(j, path, c);
  if (std::optional<std::vector<std::string>> b = stringList(j, path, "backends")) {
    for (size_t i = 0; i < b->size(); ++i)
      if ((*b)[i] != "interp" && (*b)[i] != "gpu")
        warning(at(join(path, "backends"), i), "unknown backend '" + (*b)[i] + "'");
    c.backends = std::move(*b);
  }
  if (!caseErrors_.empty()) {
    std::string all;
    for (const std::string &e : caseErrors_)
      all += (all.empty() ? "" : "\n") + e;
    s.invalid.push_back({c.name.empty() ? path : c.name, path, all});
    return;
  }
  s.cases.push_back(std::move(c));
}

void SuiteLoader::loadSource(const Json &j, const std::string &path, Case &c) {
  const char *keys[] = {"source", "source_ref", "source_file"};
  std::vector<const char *> given;
  for (const char *k : keys)
    if (get(j, k))
      given.push_back(k);
  if (given.size() != 1) {
    error(path, given.empty() ? "missing field 'source' (or 'source_ref' or 'source_file')"
                              : std::string("both '") + given[0] + "' and '" + given[1] +
                                    "' given; a case has exactly one source");
    return;
  }
  std::string key = given[0];
  std::optional<std::string> value = stringField(j, path, given[0], true);
  if (!value)
    return;
  if (key == "source") {
    c.source = *value;
    c.sourceName = file_ + "#" + c.name;
  } else if (key == "source_ref") {
    const Json *src = sources_ ? get(*sources_, value->c_str()) : nullptr;
    if (!src || !src->is_string()) {
      error(join(path, "source_ref"), "no source named '" + *value + "' in 'sources'");
      return;
    }
    c.source = src->get<std::string>();
    c.sourceName = file_ + "#sources." + *value;
  } else {
    fs::path p = fs::path(dir_) / *value;
    out_.filesRead.push_back(p.string());
    if (std::string why; !readFileCapped(p.string(), kMaxSourceFileBytes, c.source, why)) {
      error(join(path, "source_file"), why);
      return;
    }
    c.sourceFile = p.string();
    c.sourceName = p.string();
  }
  if (c.source.size() > kMaxSourceFileBytes) // as for a .tc file
    error(join(path, key), "the source is larger than the limit of " +
                               std::to_string(kMaxSourceFileBytes) + " bytes");
}

void SuiteLoader::loadDefines(const Json &j, const std::string &path, Case &c) {
  const Json *d = get(j, "defines");
  if (!d)
    return;
  std::string dp = join(path, "defines");
  if (!d->is_object()) {
    error(dp, "expected an object of macro values, found " + typeName(*d));
    return;
  }
  auto valueText = [&](const Json &v, const std::string &p) -> std::optional<std::string> {
    if (isNumber(v))
      return numberText(v);
    if (v.is_string())
      return v.get<std::string>();
    error(p, "a define value must be a number or a string, found " + typeName(v));
    return std::nullopt;
  };
  for (const auto &[name, value] : d->items()) {
    std::string p = join(dp, name);
    if (!isIdentifier(name)) {
      error(p, "'" + name + "' is not a macro name");
      continue;
    }
    DefineSpec spec;
    spec.name = name;
    if (value.is_array()) {
      spec.isList = true;
      if (value.empty())
        error(p, "an empty list of values");
      for (size_t i = 0; i < value.size(); ++i)
        if (std::optional<std::string> t = valueText(value[i], at(p, i)))
          spec.values.push_back(*t);
    } else if (std::optional<std::string> t = valueText(value, p)) {
      spec.values.push_back(*t);
    }
    c.defines.push_back(std::move(spec));
  }
  size_t variants = 1;
  for (const DefineSpec &spec : c.defines) {
    variants *= std::max<size_t>(spec.values.size(), 1);
    if (variants > kMaxVariants) {
      error(dp, "more than " + std::to_string(kMaxVariants) +
                    " variants (the product of the list lengths)");
      return;
    }
  }
}

void SuiteLoader::loadGrid(const Json &j, const std::string &path, Case &c) {
  const Json *g = require(j, path, "grid");
  if (!g)
    return;
  std::string gp = join(path, "grid");
  if (!g->is_array() || g->empty() || g->size() > 3) {
    error(gp, "expected a list of 1 to 3 entries, found " + shortText(*g));
    return;
  }
  for (size_t i = 0; i < g->size(); ++i) {
    const Json &e = (*g)[i];
    if (e.is_string() && !e.get<std::string>().empty()) {
      c.grid.push_back(e.get<std::string>());
    } else if (isNumber(e)) {
      if (std::optional<int64_t> v = intField(e, at(gp, i), 0))
        c.grid.push_back(std::to_string(*v));
    } else {
      error(at(gp, i), "a grid entry is a number or an expression string, found " + shortText(e));
    }
  }
}

void SuiteLoader::loadArgs(const Json &j, const std::string &path, Case &c) {
  const Json *a = require(j, path, "args");
  if (!a)
    return;
  std::string ap = join(path, "args");
  if (!a->is_array()) {
    error(ap, "expected a list of arguments, found " + typeName(*a));
    return;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < a->size(); ++i) {
    std::optional<ArgSpec> arg = loadArg((*a)[i], at(ap, i));
    if (!arg) {
      // Its error is reported; outputs naming it should not add another.
      if ((*a)[i].is_object() && get((*a)[i], "name") && (*a)[i]["name"].is_string())
        failedArgs_.insert((*a)[i]["name"].get<std::string>());
      continue;
    }
    if (!names.insert(arg->name).second)
      error(join(at(ap, i), "name"), "a second argument named '" + arg->name + "'");
    c.args.push_back(std::move(*arg));
  }
}

std::optional<ArgSpec> SuiteLoader::loadArg(const Json &j, const std::string &path) {
  if (!j.is_object()) {
    error(path, "expected an argument object, found " + typeName(j));
    return std::nullopt;
  }
  ArgSpec a;
  std::optional<std::string> name = stringField(j, path, "name", true);
  if (name && !isIdentifier(*name))
    error(join(path, "name"), "'" + *name + "' is not a parameter name");
  std::optional<DType> t = dtypeField(j, path);
  bool hasValue = get(j, "value") != nullptr, hasShape = get(j, "shape") != nullptr;
  if (hasValue && hasShape) {
    error(path, "both 'value' (a scalar) and 'shape' (a buffer) given");
    return std::nullopt;
  }
  if (!hasValue && !hasShape) {
    error(path, "missing field 'value' (a scalar) or 'shape' (a buffer)");
    return std::nullopt;
  }
  if (!name || !t) {
    checkKeys(j, path, {"name", "dtype", "value", "shape", "data", "fill", "random", "npy"}, false);
    return std::nullopt;
  }
  a.name = *name;
  a.dtype = *t;
  bool ok = hasValue ? loadScalar(j, path, a) : loadBuffer(j, path, a);
  if (!ok)
    return std::nullopt;
  return a;
}

bool SuiteLoader::loadScalar(const Json &j, const std::string &path, ArgSpec &a) {
  checkKeys(j, path, {"name", "dtype", "value"}, false);
  std::string err;
  std::optional<uint64_t> bits = elementBits(*get(j, "value"), a.dtype, err);
  if (!bits) {
    error(join(path, "value"), err);
    return false;
  }
  warnIfInfinite(*get(j, "value"), a.dtype, *bits, join(path, "value"));
  a.scalar.dtype = a.dtype;
  a.scalar.bits = *bits;
  if (isFloat(a.dtype)) {
    HostArray one = HostArray::zeros(a.dtype, {1});
    one.setBits(0, *bits);
    a.scalar.f = one.getDouble(0);
  }
  return true;
}

bool SuiteLoader::loadShape(const Json &j, const std::string &path, ArgSpec &a) {
  const Json &s = *get(j, "shape");
  std::string sp = join(path, "shape");
  if (!s.is_array()) {
    error(sp, "expected a list of dimensions, found " + shortText(s));
    return false;
  }
  int64_t total = 1;
  const int64_t kMaxElements = kMaxElementsOf(a.dtype);
  for (size_t i = 0; i < s.size(); ++i) {
    std::optional<int64_t> d = intField(s[i], at(sp, i), 0);
    if (!d)
      return false;
    a.shape.push_back(*d);
    if (*d != 0 && total > kMaxElements / *d) {
      error(sp, "the buffer is too large (limit " + std::to_string(kMaxBufferBytes) + " bytes)");
      return false;
    }
    total *= *d;
  }
  return true;
}

bool SuiteLoader::loadBuffer(const Json &j, const std::string &path, ArgSpec &a) {
  checkKeys(j, path, {"name", "dtype", "shape", "data", "fill", "random", "npy"}, false);
  a.isBuffer = true;
  if (!loadShape(j, path, a))
    return false;
  const char *inits[] = {"data", "fill", "random", "npy"};
  std::vector<const char *> given;
  for (const char *k : inits)
    if (get(j, k))
      given.push_back(k);
  if (given.size() != 1) {
    error(path, given.empty() ? "missing the buffer's contents: one of 'data', 'fill', 'random', "
                                "'npy'"
                              : std::string("two initialisers ('") + given[0] + "' and '" +
                                    given[1] + "'); give exactly one");
    return false;
  }
  std::string key = given[0];
  const Json &v = *get(j, given[0]);
  std::string p = join(path, key);
  if (key == "fill") {
    a.init = InitKind::Fill;
    std::string err;
    std::optional<uint64_t> bits = elementBits(v, a.dtype, err);
    if (!bits)
      error(p, err);
    else
      warnIfInfinite(v, a.dtype, *bits, p);
    a.fillBits = bits.value_or(0);
    return bits.has_value();
  }
  if (key == "random") {
    a.init = InitKind::Random;
    return loadRandom(v, p, a);
  }
  std::optional<HostArray> contents =
      key == "data" ? loadData(v, p, a.dtype, a.shape) : loadNpy(v, p, a.dtype, a.shape);
  if (!contents)
    return false;
  a.init = key == "data" ? InitKind::Data : InitKind::Npy;
  if (key == "npy")
    a.npyPath = (fs::path(dir_) / v.get<std::string>()).string();
  a.contents = std::move(*contents);
  return true;
}

std::optional<HostArray> SuiteLoader::loadData(const Json &v, const std::string &path, DType t,
                                               const std::vector<int64_t> &shape) {
  if (!v.is_array()) {
    error(path, "expected a flat list of values, found " + typeName(v));
    return std::nullopt;
  }
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d; // loadShape keeps this below 2^32
  if (static_cast<int64_t>(v.size()) != n) {
    error(path, std::to_string(v.size()) + " values for shape " + shapeText(shape));
    return std::nullopt;
  }
  HostArray a = HostArray::zeros(t, shape);
  bool ok = true, warned = false;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string err;
    std::optional<uint64_t> bits = elementBits(v[i], t, err);
    if (!bits) {
      error(at(path, i), err);
      ok = false;
      continue;
    }
    if (!warned) // (the first such value of the list)
      warned = warnIfInfinite(v[i], t, *bits, at(path, i));
    a.setBits(static_cast<int64_t>(i), *bits);
  }
  if (!ok)
    return std::nullopt;
  return a;
}

std::optional<HostArray> SuiteLoader::loadNpy(const Json &v, const std::string &path, DType t,
                                              const std::vector<int64_t> &shape) {
  if (!v.is_string()) {
    error(path, "expected a file name, found " + typeName(v));
    return std::nullopt;
  }
  std::string file = (fs::path(dir_) / v.get<std::string>()).string();
  out_.filesRead.push_back(file);
  NpyReadOptions opts;
  opts.bf16FromU2 = t == DType::BF16; // bf16 files are written as '<u2' bit patterns
  std::string err;
  std::optional<NpyArray> npy = readNpy(file, opts, err);
  if (!npy) {
    error(path, err);
    return std::nullopt;
  }
  if (npy->dtype != t) {
    error(path, "'" + file + "' holds " + std::string(conformanceName(npy->dtype)) +
                    ", the buffer is " + std::string(conformanceName(t)));
    return std::nullopt;
  }
  if (npy->shape != shape) {
    error(path, "'" + file + "' has shape " + shapeText(npy->shape) + ", the buffer " +
                    shapeText(shape));
    return std::nullopt;
  }
  HostArray a;
  a.dtype = t;
  a.shape = shape;
  a.data = std::move(npy->data);
  return a;
}

bool SuiteLoader::loadRandom(const Json &j, const std::string &path, ArgSpec &a) {
  if (!j.is_object()) {
    error(path, "expected {\"seed\": N, \"dist\": ...}, found " + shortText(j));
    return false;
  }
  size_t before = out_.errors.size();
  RandomSpec &r = a.random;
  if (const Json *s = require(j, path, "seed")) {
    std::optional<uint64_t> seed = uintValue(*s);
    if (!seed)
      error(join(path, "seed"), "expected a non-negative integer, found " + shortText(*s));
    r.seed = seed.value_or(0);
  }
  std::optional<std::string> dist = stringField(j, path, "dist", true);
  if (!dist)
    return false;
  auto real = [&](const char *key, double def) {
    const Json *v = get(j, key);
    return v ? realField(*v, join(path, key)).value_or(def) : def;
  };
  if (*dist == "uniform" || *dist == "normal") {
    bool uniform = *dist == "uniform";
    checkKeys(j, path, {"seed", "dist", uniform ? "low" : "mean", uniform ? "high" : "std"}, false);
    if (!isFloat(a.dtype))
      error(join(path, "dist"), "'" + *dist + "' needs a float dtype; use 'int' for " +
                                    std::string(conformanceName(a.dtype)));
    r.dist = uniform ? RandomSpec::Dist::Uniform : RandomSpec::Dist::Normal;
    if (uniform) {
      r.low = real("low", 0);
      r.high = real("high", 1);
      if (!(r.low <= r.high) || !std::isfinite(r.high - r.low))
        error(path, "needs low <= high (finite)");
    } else {
      r.mean = real("mean", 0);
      r.stddev = real("std", 1);
      if (r.stddev < 0)
        error(join(path, "std"), "must not be negative");
    }
  } else if (*dist == "int") {
    checkKeys(j, path, {"seed", "dist", "low", "high"}, false);
    r.dist = RandomSpec::Dist::Int;
    for (const char *key : {"low", "high"}) {
      const Json *v = require(j, path, key);
      if (!v)
        continue;
      std::string err;
      DType range = isFloat(a.dtype) ? DType::I64 : a.dtype;
      std::optional<uint64_t> bits = elementBits(*v, range, err);
      if (!bits) {
        error(join(path, key), err);
        continue;
      }
      __int128 iv = num::intValue(range, *bits);
      if (iv > INT64_MAX) {
        error(join(path, key), "the int distribution takes integers up to 2^63 - 1");
        continue;
      }
      if (isFloat(a.dtype) && (iv > (int64_t(1) << 53) || iv < -(int64_t(1) << 53))) {
        error(join(path, key), "float buffers take integers in [-2^53, 2^53]");
        continue;
      }
      (std::string(key) == "low" ? r.intLow : r.intHigh) = static_cast<int64_t>(iv);
    }
    if (out_.errors.size() == before && r.intLow > r.intHigh)
      error(path, "needs low <= high");
  } else {
    error(join(path, "dist"), "unknown distribution '" + *dist + "' (uniform, normal or int)");
  }
  return out_.errors.size() == before;
}

void SuiteLoader::loadExpect(const Json &j, const std::string &path, Case &c) {
  const Json *e = require(j, path, "expect");
  if (!e)
    return;
  std::string ep = join(path, "expect");
  if (!e->is_object()) {
    error(ep, "expected an object, found " + typeName(*e));
    return;
  }
  checkKeys(*e, ep, {"outputs", "compile_error", "trap", "implementation_defined"}, false);
  std::vector<std::string> kinds;
  for (const char *k : {"outputs", "compile_error", "trap", "implementation_defined"})
    if (get(*e, k))
      kinds.push_back(k);
  if (kinds.size() != 1) {
    error(ep, kinds.empty() ? "no expectation: give one of 'outputs', 'compile_error', 'trap', "
                              "'implementation_defined'"
                            : "both '" + kinds[0] + "' and '" + kinds[1] +
                                  "' given; give exactly one");
    return;
  }
  const Json &v = *get(*e, kinds[0].c_str());
  std::string p = join(ep, kinds[0]);
  if (kinds[0] == "outputs")
    loadOutputs(v, p, c);
  else if (kinds[0] == "compile_error")
    loadCompileError(v, p, c);
  else if (kinds[0] == "trap")
    loadTrap(v, p, c);
  else if (!v.is_boolean() || !v.get<bool>())
    error(p, "must be true");
  else
    c.expect.kind = ExpectKind::ImplementationDefined;
}

void SuiteLoader::loadOutputs(const Json &j, const std::string &path, Case &c) {
  c.expect.kind = ExpectKind::Outputs;
  if (!j.is_object()) {
    error(path, "expected an object of expected buffers, found " + typeName(j));
    return;
  }
  for (const auto &[name, spec] : j.items()) {
    std::string p = join(path, name);
    const ArgSpec *arg = c.arg(name);
    if (!arg && failedArgs_.count(name))
      continue;
    if (!arg || !arg->isBuffer) {
      error(p, arg ? "'" + name + "' is a scalar argument, not a buffer"
                   : "no buffer argument named '" + name + "'");
      continue;
    }
    if (!spec.is_object()) {
      error(p, "expected {\"data\": [...]} or {\"npy\": FILE}, found " + typeName(spec));
      continue;
    }
    checkKeys(spec, p, {"data", "npy", "compare"}, false);
    const Json *data = get(spec, "data"), *npy = get(spec, "npy");
    if ((data != nullptr) == (npy != nullptr)) {
      error(p, data ? "both 'data' and 'npy' given" : "missing field 'data' (or 'npy')");
      continue;
    }
    OutputSpec out;
    out.name = name;
    std::optional<HostArray> want = data ? loadData(*data, join(p, "data"), arg->dtype, arg->shape)
                                         : loadNpy(*npy, join(p, "npy"), arg->dtype, arg->shape);
    out.compare = defaultCompare(arg->dtype);
    if (const Json *cmp = get(spec, "compare")) {
      std::optional<CompareSpec> cs = loadCompare(*cmp, join(p, "compare"), arg->dtype);
      if (!cs)
        continue;
      out.compare = *cs;
      out.compareGiven = true;
    }
    if (!want)
      continue;
    out.want = std::move(*want);
    c.expect.outputs.push_back(std::move(out));
  }
}

std::optional<CompareSpec> SuiteLoader::loadCompare(const Json &j, const std::string &path,
                                                    DType t) {
  if (j.is_string() && j.get<std::string>() == "exact")
    return CompareSpec::exact();
  if (!j.is_object()) {
    error(path, "expected \"exact\", {\"rtol\": R, \"atol\": A} or {\"ulp\": N}, found " +
                    shortText(j));
    return std::nullopt;
  }
  size_t before = out_.errors.size();
  checkKeys(j, path, {"rtol", "atol", "ulp"}, false);
  if (!isFloat(t)) {
    error(path, std::string(conformanceName(t)) + " outputs are compared exactly; only \"exact\" "
                                                  "is allowed");
    return std::nullopt;
  }
  CompareSpec cs;
  if (const Json *u = get(j, "ulp")) {
    if (get(j, "rtol") || get(j, "atol")) {
      error(path, "'ulp' cannot be combined with 'rtol' or 'atol'");
      return std::nullopt;
    }
    std::optional<uint64_t> n = uintValue(*u);
    if (!n)
      error(join(path, "ulp"), "expected a non-negative integer, found " + shortText(*u));
    cs = CompareSpec::ulps(n.value_or(0));
  } else {
    if (j.empty())
      error(path, "an empty comparison; give 'rtol' and/or 'atol', or 'ulp'");
    double tol[2] = {0, 0};
    const char *keys[2] = {"rtol", "atol"};
    for (int k = 0; k < 2; ++k)
      if (const Json *v = get(j, keys[k])) {
        tol[k] = realField(*v, join(path, keys[k])).value_or(0);
        if (tol[k] < 0)
          error(join(path, keys[k]), "must not be negative");
      }
    cs = CompareSpec::tolerance(tol[0], tol[1]);
  }
  if (out_.errors.size() != before)
    return std::nullopt;
  return cs;
}

void SuiteLoader::loadCompileError(const Json &j, const std::string &path, Case &c) {
  c.expect.kind = ExpectKind::CompileError;
  if (!j.is_object()) {
    error(path, "expected {\"message\": TEXT, \"line\": N}, found " + shortText(j));
    return;
  }
  checkKeys(j, path, {"message", "line"}, false);
  c.expect.message = stringField(j, path, "message", true).value_or("");
  if (const Json *l = get(j, "line"))
    c.expect.line = static_cast<uint32_t>(intField(*l, join(path, "line"), 1).value_or(0));
}

void SuiteLoader::loadTrap(const Json &j, const std::string &path, Case &c) {
  c.expect.kind = ExpectKind::Trap;
  if (!j.is_object()) {
    error(path, "expected {\"kind\": KIND, \"message\": TEXT}, found " + shortText(j));
    return;
  }
  checkKeys(j, path, {"kind", "message"}, false);
  c.expect.message = stringField(j, path, "message", false).value_or("");
  std::optional<std::string> kind = stringField(j, path, "kind", true);
  if (!kind)
    return;
  if (std::optional<TrapKind> k = parseTrapKind(*kind)) {
    c.expect.trap = *k;
    return;
  }
  std::string names;
  for (int i = 0; i < kNumTrapKinds; ++i)
    names += std::string(i ? ", " : "") + std::string(trapKindName(static_cast<TrapKind>(i)));
  error(join(path, "kind"), "unknown trap kind '" + *kind + "' (expected one of " + names + ")");
}

} // namespace

LoadResult loadSuiteText(const std::string &text, const std::string &file,
                         const std::string &dir) {
  LoadResult out;
  SuiteLoader(file, dir, out).load(text);
  return out;
}

LoadResult loadSuiteFile(const std::string &path) {
  std::string text;
  if (std::string why; !readFileCapped(path, kMaxJsonFileBytes, text, why)) {
    LoadResult out;
    out.errors.push_back(path + ": cannot read the file: " + why);
    return out;
  }
  std::string dir = fs::path(path).parent_path().string();
  return loadSuiteText(text, path, dir.empty() ? "." : dir);
}

} // namespace tc::conf
