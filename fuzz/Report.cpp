// Campaign summaries as JSON, the known signatures, merging, and the
// Markdown / HTML reports (fuzz/Report.h).
#include "fuzz/Report.h"
#include "codegen/Codegen.h"
#include "fuzz/Generator.h"
#include "support/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>

namespace fs = std::filesystem;

namespace tc::fuzz {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char *kFormat = "triton-fuzz-campaign/1";
constexpr const char *kSignatureTag = "fuzz-signature:";
constexpr size_t kMessageLimit = 600; // bytes of a finding's message shown in a report

// --- JSON writing -----------------------------------------------------------

Json findingToJson(const Finding &f) {
  return Json{{"signature", f.signature},   {"property", f.property},
              {"campaign_seed", f.campaignSeed}, {"index", f.index},
              {"message", f.message},       {"case_file", f.caseFile},
              {"reproduce", f.reproduce},   {"features", f.features},
              {"culprit", f.culprit}};
}

Json partToJson(const PartSummary &p) {
  return Json{{"name", p.name},
              {"mode", p.mode},
              {"device", p.device},
              {"started", p.started},
              {"finished", p.finished},
              {"seed", p.seed},
              {"shard_index", p.shardIndex},
              {"shard_count", p.shardCount},
              {"elapsed_seconds", p.elapsedSeconds},
              {"generation_seconds", p.generationSeconds},
              {"kernels", p.kernels},
              {"discards", p.discards},
              {"failures", p.failures}};
}

// --- JSON reading (types checked; errors name the field) --------------------

bool convert(const Json &v, std::string &out) {
  if (!v.is_string())
    return false;
  out = v.get<std::string>();
  return true;
}
bool convert(const Json &v, int64_t &out) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    return false;
  out = v.get<int64_t>();
  return true;
}
bool convert(const Json &v, uint64_t &out) {
  if (!v.is_number_unsigned())
    return false;
  out = v.get<uint64_t>();
  return true;
}
bool convert(const Json &v, int &out) {
  int64_t wide = 0;
  if (!convert(v, wide) || wide < std::numeric_limits<int>::min() ||
      wide > std::numeric_limits<int>::max())
    return false;
  out = static_cast<int>(wide);
  return true;
}
bool convert(const Json &v, double &out) {
  if (!v.is_number())
    return false;
  out = v.get<double>();
  return true;
}
bool convert(const Json &v, std::vector<std::string> &out) {
  if (!v.is_array())
    return false;
  out.assign(v.size(), "");
  for (size_t i = 0; i < v.size(); ++i)
    if (!convert(v[i], out[i]))
      return false;
  return true;
}
template <typename T> bool convert(const Json &v, std::map<std::string, T> &out) {
  if (!v.is_object())
    return false;
  out.clear();
  for (const auto &[key, value] : v.items())
    if (!convert(value, out[key]))
      return false;
  return true;
}

const char *typeName(const std::string &) { return "a string"; }
const char *typeName(int64_t) { return "an integer"; }
const char *typeName(uint64_t) { return "a non-negative integer"; }
const char *typeName(int) { return "a 32-bit integer"; }
const char *typeName(double) { return "a number"; }
const char *typeName(const std::vector<std::string> &) { return "an array of strings"; }
const char *typeName(const std::map<std::string, double> &) {
  return "an object of numbers";
}
const char *typeName(const std::map<std::string, int64_t> &) {
  return "an object of integers";
}

// Reads optional fields of one JSON object; the first wrong type sets the error.
class FieldReader {
public:
  FieldReader(const Json &obj, std::string where, std::string &error)
      : obj_(obj), where_(std::move(where)), error_(error) {}

  template <class T> void get(const char *key, T &out) {
    if (!error_.empty() || !obj_.contains(key))
      return;
    if (!convert(obj_.at(key), out))
      error_ = "field '" + where_ + key + "' must be " + typeName(out);
  }

private:
  const Json &obj_;
  std::string where_;
  std::string &error_;
};

// Reads the array `key` of objects with `readOne(element, where)`.
template <class T, class F>
void readObjects(const Json &obj, const char *key, std::vector<T> &out, std::string &error,
                 F readOne) {
  if (!error.empty() || !obj.contains(key))
    return;
  const Json &list = obj.at(key);
  if (!list.is_array()) {
    error = std::string("field '") + key + "' must be an array";
    return;
  }
  out.assign(list.size(), T{});
  for (size_t i = 0; i < list.size() && error.empty(); ++i) {
    std::string where = std::string(key) + "[" + std::to_string(i) + "].";
    if (!list[i].is_object())
      error = "'" + where.substr(0, where.size() - 1) + "' must be an object";
    else
      readOne(list[i], FieldReader(list[i], where, error), out[i]);
  }
}

void readFinding(const Json &, FieldReader r, Finding &f) {
  r.get("signature", f.signature);
  r.get("property", f.property);
  r.get("campaign_seed", f.campaignSeed);
  r.get("index", f.index);
  r.get("message", f.message);
  r.get("case_file", f.caseFile);
  r.get("reproduce", f.reproduce);
  r.get("features", f.features);
  r.get("culprit", f.culprit);
}

void readPart(const Json &, FieldReader r, PartSummary &p) {
  r.get("name", p.name);
  r.get("mode", p.mode);
  r.get("device", p.device);
  r.get("started", p.started);
  r.get("finished", p.finished);
  r.get("seed", p.seed);
  r.get("shard_index", p.shardIndex);
  r.get("shard_count", p.shardCount);
  r.get("elapsed_seconds", p.elapsedSeconds);
  r.get("generation_seconds", p.generationSeconds);
  r.get("kernels", p.kernels);
  r.get("discards", p.discards);
  r.get("failures", p.failures);
}

void readSummary(const Json &j, CampaignSummary &s, std::string &error) {
  FieldReader r(j, "", error);
  r.get("name", s.name);
  r.get("seed", s.seed);
  r.get("shard_index", s.shardIndex);
  r.get("shard_count", s.shardCount);
  r.get("mode", s.mode);
  r.get("device", s.device);
  r.get("started", s.started);
  r.get("finished", s.finished);
  r.get("elapsed_seconds", s.elapsedSeconds);
  r.get("generation_seconds", s.generationSeconds);
  r.get("stage_seconds", s.stageSeconds);
  r.get("kernels", s.kernels);
  r.get("passed", s.passed);
  r.get("discards", s.discards);
  r.get("failures", s.failures);
  r.get("generator_bugs", s.generatorBugs);
  r.get("worker_restarts", s.workerRestarts);
  r.get("discards_by_kind", s.discardsByKind);
  r.get("failures_by_property", s.failuresByProperty);
  r.get("features", s.features);
  r.get("paths", s.paths);
  r.get("path_kernels", s.pathKernels);
  r.get("parts", s.parts);
  readObjects(j, "findings", s.findings, error, readFinding);
  readObjects(j, "part_stats", s.partStats, error, readPart);
}

// --- Known signatures -------------------------------------------------------

bool readText(const fs::path &path, std::string &out) {
  std::string error;
  return readFileCapped(path.string(), kMaxJsonFileBytes, out, error);
}

std::string trim(const std::string &s) {
  const char *space = " \t\r\n\f\v";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string::npos)
    return "";
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

// Every "fuzz-signature: <sig>" of a conformance suite file's description.
void addSuiteSignatures(const fs::path &file, std::set<std::string> &out) {
  std::string text;
  if (!readText(file, text))
    return;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("format") || j["format"] != "triton-conformance/1" ||
      !j.contains("description") || !j["description"].is_string())
    return;
  const std::string &desc = j["description"].get_ref<const std::string &>();
  for (size_t at = desc.find(kSignatureTag); at != std::string::npos;
       at = desc.find(kSignatureTag, at + 1)) {
    size_t begin = at + std::char_traits<char>::length(kSignatureTag);
    std::string sig = trim(desc.substr(begin, desc.find('\n', begin) - begin));
    if (!sig.empty())
      out.insert(sig);
  }
}

void addListSignatures(const std::string &listFile, std::set<std::string> &out) {
  std::string text, error;
  if (!readFileCapped(listFile, kMaxJsonFileBytes, text, error))
    return;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (!line.empty() && line[0] != '#')
      out.insert(line);
  }
}

// --- Merging ----------------------------------------------------------------

PartSummary partOf(const CampaignSummary &s) {
  PartSummary p;
  p.name = s.name;
  p.mode = s.mode;
  p.device = s.device;
  p.started = s.started;
  p.finished = s.finished;
  p.seed = s.seed;
  p.shardIndex = s.shardIndex;
  p.shardCount = s.shardCount;
  p.elapsedSeconds = s.elapsedSeconds;
  p.generationSeconds = s.generationSeconds;
  p.kernels = s.kernels;
  p.discards = s.discards;
  p.failures = s.failures;
  return p;
}

void addCounts(std::map<std::string, int64_t> &to, const std::map<std::string, int64_t> &from) {
  for (const auto &[key, n] : from)
    to[key] += n;
}

// The parts' common value of a field, or "mixed".
std::string common(const std::vector<CampaignSummary> &parts,
                   std::string CampaignSummary::*field) {
  for (const CampaignSummary &p : parts)
    if (p.*field != parts.front().*field)
      return "mixed";
  return parts.front().*field;
}

// Earliest (`latest` false) or latest non-empty ISO 8601 time.
void keepTime(std::string &kept, const std::string &t, bool latest) {
  if (!t.empty() && (kept.empty() || (latest ? t > kept : t < kept)))
    kept = t;
}

void mergeOne(CampaignSummary &m, const CampaignSummary &p) {
  m.elapsedSeconds = std::max(m.elapsedSeconds, p.elapsedSeconds);
  m.generationSeconds += p.generationSeconds;
  for (const auto &[stage, seconds] : p.stageSeconds)
    m.stageSeconds[stage] += seconds;
  m.kernels += p.kernels;
  m.passed += p.passed;
  m.discards += p.discards;
  m.failures += p.failures;
  m.generatorBugs += p.generatorBugs;
  m.workerRestarts += p.workerRestarts;
  addCounts(m.discardsByKind, p.discardsByKind);
  addCounts(m.failuresByProperty, p.failuresByProperty);
  addCounts(m.features, p.features);
  addCounts(m.paths, p.paths);
  m.pathKernels += p.pathKernels;
  keepTime(m.started, p.started, false);
  keepTime(m.finished, p.finished, true);
  std::string prefix = p.name.empty() ? "" : p.name + "/";
  for (Finding f : p.findings) {
    if (!f.caseFile.empty())
      f.caseFile = prefix + f.caseFile;
    m.findings.push_back(std::move(f));
  }
  m.parts.push_back(p.name);
  if (p.partStats.empty()) {
    m.partStats.push_back(partOf(p));
    return;
  }
  for (PartSummary sub : p.partStats) {
    sub.name = prefix + sub.name;
    m.partStats.push_back(std::move(sub));
  }
}

// --- Text helpers shared by both renderings ----------------------------------

constexpr const char *kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// Length of the valid UTF-8 sequence at s[i] (0 when invalid).
size_t utf8Length(const std::string &s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size())
    return 0;
  uint32_t cp = len == 1 ? c : c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  bool valid = cp >= kMin[len] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
  return valid ? len : 0;
}

// Valid UTF-8 without control characters (but newlines and tabs): each bad
// byte or control character becomes U+FFFD.
std::string sanitize(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t len = utf8Length(s, i);
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool control = len == 1 && (c == 0x7F || (c < 0x20 && c != '\n' && c != '\t'));
    if (len == 0 || control) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

// At most `limit` bytes of sanitized text, cut at a character boundary.
std::string truncated(const std::string &s, size_t limit) {
  std::string clean = sanitize(s);
  if (clean.size() <= limit)
    return clean;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80)
    --cut;
  return clean.substr(0, cut) + " [...]";
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) + "%" : "-";
}

std::string rate(int64_t kernels, double seconds) {
  return seconds > 0 ? fixed(static_cast<double>(kernels) / seconds, 1) : "-";
}

std::string joined(const std::vector<std::string> &items, const std::string &sep) {
  std::string out;
  for (const std::string &item : items)
    out += (out.empty() ? "" : sep) + item;
  return out;
}

// --- The report's content, independent of the output format -----------------

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// Whether column `c` holds only figures ("12", "5.0%", "0/2", "-"): right-aligned.
bool numericColumn(const Table &t, size_t c) {
  for (const auto &row : t.rows)
    if (c >= row.size() || row[c].empty() || (!std::isdigit(static_cast<unsigned char>(row[c][0])) &&
                                              row[c] != "-"))
      return false;
  return !t.rows.empty();
}

struct Field {
  std::string label, text;
  bool code = false; // a command or file name
};

// What a report is made of; the Markdown and HTML renderers implement it.
class Renderer {
public:
  virtual ~Renderer() = default;
  virtual void title(const std::string &text) = 0;
  virtual void heading(const std::string &text, bool isNew) = 0;
  virtual void subheading(const std::string &text, bool isNew) = 0;
  virtual void paragraph(const std::string &text) = 0;
  virtual void fields(const std::vector<Field> &items) = 0;
  virtual void table(const Table &t) = 0;
  virtual void preformatted(const std::string &text) = 0;
  virtual std::string finish() = 0;
};

struct SignatureGroup {
  std::string signature;
  bool known = false;
  std::vector<const Finding *> findings;
};

std::vector<SignatureGroup> groupFindings(const CampaignSummary &s,
                                          const std::set<std::string> &known) {
  std::map<std::string, SignatureGroup> bySignature;
  for (const Finding &f : s.findings) {
    SignatureGroup &g = bySignature[f.signature];
    g.signature = f.signature;
    g.known = known.count(f.signature) > 0;
    g.findings.push_back(&f);
  }
  std::vector<SignatureGroup> groups;
  for (auto &[sig, g] : bySignature)
    groups.push_back(std::move(g));
  std::stable_sort(groups.begin(), groups.end(), [](const auto &a, const auto &b) {
    if (a.known != b.known)
      return !a.known;
    return a.findings.size() > b.findings.size();
  });
  return groups;
}

bool mixedSeeds(const CampaignSummary &s) {
  for (const PartSummary &p : s.partStats)
    if (p.seed != s.seed)
      return true;
  return false;
}

std::string shardsText(const CampaignSummary &s) {
  auto one = [](int index, int count) {
    return std::to_string(index) + "/" + std::to_string(count);
  };
  if (s.partStats.empty())
    return one(s.shardIndex, s.shardCount);
  std::vector<std::string> shards;
  for (const PartSummary &p : s.partStats)
    shards.push_back(one(p.shardIndex, p.shardCount));
  return joined(shards, ", ");
}

// Wall time the kernels' generation is compared with: each part's own.
double wallSeconds(const CampaignSummary &s) {
  if (s.partStats.empty())
    return s.elapsedSeconds;
  double sum = 0;
  for (const PartSummary &p : s.partStats)
    sum += p.elapsedSeconds;
  return sum;
}

void writeHeader(const CampaignSummary &s, Renderer &r) {
  r.title("triton-fuzz campaign " + s.name);
  std::vector<Field> f = {
      {"mode", s.mode.empty() ? "-" : s.mode},
      {"device", s.device.empty() ? "-" : s.device},
      {"seed", mixedSeeds(s) ? "mixed" : std::to_string(s.seed)},
      {s.partStats.empty() ? "shard" : "shards", shardsText(s)},
      {"started", s.started.empty() ? "-" : s.started},
      {"finished", s.finished.empty() ? "-" : s.finished}};
  if (!s.parts.empty())
    f.push_back({"merged from " + std::to_string(s.parts.size()) + " parts", joined(s.parts, ", ")});
  r.fields(f);
}

void writeTotals(const CampaignSummary &s, Renderer &r) {
  double n = static_cast<double>(s.kernels);
  auto row = [&](const char *what, int64_t count) {
    return std::vector<std::string>{what, std::to_string(count), percent(count, n)};
  };
  r.heading("Totals", false);
  r.table({{"", "count", "of kernels"},
           {row("kernels", s.kernels), row("passed", s.passed), row("discards", s.discards),
            row("failures", s.failures), row("generator bugs", s.generatorBugs),
            {"worker restarts", std::to_string(s.workerRestarts), "-"}}});
  if (s.failuresByProperty.empty())
    return;
  Table byProperty{{"failed property", "kernels"}, {}};
  for (const auto &[property, count] : s.failuresByProperty)
    byProperty.rows.push_back({property, std::to_string(count)});
  r.table(byProperty);
}

void writeThroughput(const CampaignSummary &s, Renderer &r) {
  r.heading("Throughput", false);
  r.fields({{"elapsed", fixed(s.elapsedSeconds, 1) + " s"},
            {"kernels per second", rate(s.kernels, s.elapsedSeconds)},
            {"generation", fixed(s.generationSeconds, 1) + " s, " +
                               percent(s.generationSeconds, wallSeconds(s)) +
                               " of the wall time (summed over workers)"}});
  if (std::string stages = stageTimesLine(s); !stages.empty())
    r.paragraph(stages);
  if (s.partStats.empty())
    return;
  Table parts{{"part", "shard", "seed", "mode", "device", "kernels", "elapsed s", "kernels/s",
               "generation", "discards", "failures"},
              {}};
  for (const PartSummary &p : s.partStats)
    parts.rows.push_back({p.name, std::to_string(p.shardIndex) + "/" + std::to_string(p.shardCount),
                          std::to_string(p.seed), p.mode, p.device, std::to_string(p.kernels),
                          fixed(p.elapsedSeconds, 1), rate(p.kernels, p.elapsedSeconds),
                          percent(p.generationSeconds, p.elapsedSeconds),
                          std::to_string(p.discards), std::to_string(p.failures)});
  r.table(parts);
}

void writeDiscards(const CampaignSummary &s, Renderer &r) {
  r.heading("Discards by trap kind", false);
  if (s.discardsByKind.empty()) {
    r.paragraph("No kernel was discarded.");
    return;
  }
  Table t{{"trap kind", "kernels", "of kernels"}, {}};
  for (const auto &[kind, count] : s.discardsByKind)
    t.rows.push_back({kind, std::to_string(count), percent(count, s.kernels)});
  r.table(t);
}

// The distinct values of `field` over a group's findings, in order of appearance.
std::vector<std::string> distinct(const SignatureGroup &g, std::string Finding::*field) {
  std::vector<std::string> out;
  for (const Finding *f : g.findings)
    if (!(f->*field).empty() && std::find(out.begin(), out.end(), f->*field) == out.end())
      out.push_back(f->*field);
  return out;
}

void writeGroup(const SignatureGroup &g, Renderer &r) {
  const Finding &first = *g.findings.front();
  std::string sig = g.signature.empty() ? "(no signature)" : g.signature;
  r.subheading((g.known ? "known: " : "NEW: ") + sig, !g.known);
  std::vector<std::string> cases = distinct(g, &Finding::caseFile);
  std::vector<Field> f = {
      {"kernels", std::to_string(g.findings.size())},
      {"property", joined(distinct(g, &Finding::property), ", ")},
      {"first kernel", "seed " + std::to_string(first.campaignSeed) + ", index " +
                           std::to_string(first.index)}};
  for (const std::string &c : cases)
    f.push_back({"case file", c, true});
  if (cases.empty())
    f.push_back({"case file", "(none stored)"});
  if (!first.reproduce.empty())
    f.push_back({"reproduce", first.reproduce, true});
  for (const std::string &c : distinct(g, &Finding::culprit))
    f.push_back({"culprit", c});
  r.fields(f);
  if (!first.message.empty())
    r.preformatted(truncated(first.message, kMessageLimit));
}

void writeFindings(const CampaignSummary &s, const std::set<std::string> &known, Renderer &r) {
  std::vector<SignatureGroup> groups = groupFindings(s, known);
  int64_t fresh = std::count_if(groups.begin(), groups.end(), [](auto &g) { return !g.known; });
  r.heading("Findings: " + std::to_string(groups.size()) + " signatures (" +
                std::to_string(fresh) + " new, " + std::to_string(groups.size() - fresh) +
                " known)",
            fresh > 0);
  if (groups.empty())
    r.paragraph("No failures.");
  for (const SignatureGroup &g : groups)
    writeGroup(g, r);
}

void writeFeatures(const CampaignSummary &s, Renderer &r) {
  r.heading("Feature coverage", false);
  Table t{{"feature", "kernels", "of kernels"}, {}};
  std::vector<std::string> never;
  for (const auto &[feature, count] : s.features) {
    t.rows.push_back({feature, std::to_string(count), percent(count, s.kernels)});
    if (count == 0)
      never.push_back(feature);
  }
  r.table(t);
  if (!never.empty())
    r.paragraph("Never generated: " + joined(never, ", ") + ".");
}

/// The paths every report lists (codegen::loweringPathNames) that no kernel took.
std::vector<std::string> pathsNeverTaken(const CampaignSummary &s) {
  const std::vector<std::string> &names = codegen::loweringPathNames();
  std::vector<std::string> never;
  for (const std::string &p : names)
    if (!s.paths.count(p) || s.paths.at(p) == 0)
      never.push_back(p);
  return never;
}

void writePaths(const CampaignSummary &s, Renderer &r) {
  r.heading("Path coverage", false);
  if (s.pathKernels == 0) {
    r.paragraph("No kernel was compiled by the GPU backend (a cpu-only campaign, or none "
                "got that far).");
    return;
  }
  r.paragraph(std::to_string(s.pathKernels) + " of " + std::to_string(s.kernels) +
              " kernels compiled by the GPU backend; the lowering paths their code took, as "
              "the backend reported them (docs/fuzz.md, \"Path coverage\").");
  Table t{{"path", "kernels", "of kernels"}, {}};
  for (const auto &[path, count] : s.paths)
    t.rows.push_back({path, std::to_string(count), percent(count, s.kernels)});
  r.table(t);
  if (std::vector<std::string> never = pathsNeverTaken(s); !never.empty())
    r.paragraph("Never taken: " + joined(never, ", ") + ".");
}

std::string render(const CampaignSummary &s, const std::set<std::string> &known, Renderer &r) {
  writeHeader(s, r);
  writeTotals(s, r);
  writeThroughput(s, r);
  writeDiscards(s, r);
  writeFindings(s, known, r);
  writeFeatures(s, r);
  writePaths(s, r);
  return r.finish();
}

// --- Markdown ---------------------------------------------------------------

// Plain text for Markdown: one line, with the characters that mean something
// there escaped.
std::string mdText(const std::string &s) {
  std::string out;
  for (char c : sanitize(s)) {
    if (c == '\n' || c == '\t')
      c = ' ';
    if (std::string_view("\\`*_[]<>|#&!").find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

// The longest run of `c` in `s`.
size_t longestRun(const std::string &s, char c) {
  size_t best = 0, run = 0;
  for (char x : s) {
    run = x == c ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// An inline code span that holds any text (on one line).
std::string mdCode(const std::string &s) {
  std::string text = sanitize(s);
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::string ticks(longestRun(text, '`') + 1, '`');
  return ticks + " " + text + " " + ticks;
}

class MarkdownRenderer : public Renderer {
public:
  void title(const std::string &text) override { os_ << "# " << mdText(text) << "\n\n"; }
  void heading(const std::string &text, bool) override { os_ << "## " << mdText(text) << "\n\n"; }
  void subheading(const std::string &text, bool) override {
    os_ << "### " << mdText(text) << "\n\n";
  }
  void paragraph(const std::string &text) override { os_ << mdText(text) << "\n\n"; }
  void fields(const std::vector<Field> &items) override {
    for (const Field &f : items)
      os_ << "- " << mdText(f.label) << ": " << (f.code ? mdCode(f.text) : mdText(f.text)) << "\n";
    os_ << "\n";
  }
  void table(const Table &t) override {
    row(t.header);
    os_ << "|";
    for (size_t i = 0; i < t.header.size(); ++i)
      os_ << (numericColumn(t, i) ? "---:|" : "---|");
    os_ << "\n";
    for (const auto &cells : t.rows)
      row(cells);
    os_ << "\n";
  }
  void preformatted(const std::string &text) override {
    std::string clean = sanitize(text);
    std::string fence(std::max<size_t>(3, longestRun(clean, '`') + 1), '`');
    os_ << fence << "text\n" << clean << (clean.empty() || clean.back() != '\n' ? "\n" : "")
        << fence << "\n\n";
  }
  std::string finish() override { return os_.str(); }

private:
  void row(const std::vector<std::string> &cells) {
    os_ << "|";
    for (const std::string &c : cells)
      os_ << " " << mdText(c) << " |";
    os_ << "\n";
  }
  std::ostringstream os_;
};

// --- HTML -------------------------------------------------------------------

std::string htmlText(const std::string &s) {
  std::string out;
  for (char c : sanitize(s)) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

constexpr const char *kCss = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 8px; white-space: pre-wrap; }
code { background: #f3f3f3; padding: 0 3px; }
.new { color: #a40000; } .known { color: #555; }
ul.fields { list-style: none; padding-left: 0; } ul.fields b { display: inline-block; min-width: 10em; }
)";

class HtmlRenderer : public Renderer {
public:
  void title(const std::string &text) override {
    os_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
        << htmlText(text) << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n<h1>"
        << htmlText(text) << "</h1>\n";
  }
  void heading(const std::string &text, bool isNew) override { tag("h2", text, isNew); }
  void subheading(const std::string &text, bool isNew) override { tag("h3", text, isNew); }
  void paragraph(const std::string &text) override { os_ << "<p>" << htmlText(text) << "</p>\n"; }
  void fields(const std::vector<Field> &items) override {
    os_ << "<ul class=\"fields\">\n";
    for (const Field &f : items)
      os_ << "<li><b>" << htmlText(f.label) << "</b> "
          << (f.code ? "<code>" + htmlText(f.text) + "</code>" : htmlText(f.text)) << "</li>\n";
    os_ << "</ul>\n";
  }
  void table(const Table &t) override {
    std::vector<std::string> open;
    for (size_t i = 0; i < t.header.size(); ++i)
      open.push_back(numericColumn(t, i) ? "<td class=\"num\">" : "<td>");
    os_ << "<table>\n<tr>";
    for (const std::string &h : t.header)
      os_ << "<th>" << htmlText(h) << "</th>";
    os_ << "</tr>\n";
    for (const auto &cells : t.rows) {
      os_ << "<tr>";
      for (size_t i = 0; i < cells.size(); ++i)
        os_ << (i < open.size() ? open[i] : "<td>") << htmlText(cells[i]) << "</td>";
      os_ << "</tr>\n";
    }
    os_ << "</table>\n";
  }
  void preformatted(const std::string &text) override {
    os_ << "<pre>" << htmlText(text) << "</pre>\n";
  }
  std::string finish() override {
    os_ << "</body>\n</html>\n";
    return os_.str();
  }

private:
  void tag(const char *name, const std::string &text, bool isNew) {
    os_ << "<" << name << " class=\"" << (isNew ? "new" : "known") << "\">" << htmlText(text)
        << "</" << name << ">\n";
  }
  std::ostringstream os_;
};

} // namespace

std::string summaryToJson(const CampaignSummary &s) {
  Json j;
  j["format"] = kFormat;
  j["name"] = s.name;
  j["seed"] = s.seed;
  j["shard_index"] = s.shardIndex;
  j["shard_count"] = s.shardCount;
  j["mode"] = s.mode;
  j["device"] = s.device;
  j["started"] = s.started;
  j["finished"] = s.finished;
  j["elapsed_seconds"] = s.elapsedSeconds;
  j["generation_seconds"] = s.generationSeconds;
  j["stage_seconds"] = s.stageSeconds;
  j["kernels"] = s.kernels;
  j["passed"] = s.passed;
  j["discards"] = s.discards;
  j["failures"] = s.failures;
  j["generator_bugs"] = s.generatorBugs;
  j["worker_restarts"] = s.workerRestarts;
  j["discards_by_kind"] = s.discardsByKind;
  j["failures_by_property"] = s.failuresByProperty;
  j["features"] = s.features;
  j["paths"] = s.paths;
  j["path_kernels"] = s.pathKernels;
  j["findings"] = Json::array();
  for (const Finding &f : s.findings)
    j["findings"].push_back(findingToJson(f));
  j["parts"] = s.parts;
  j["part_stats"] = Json::array();
  for (const PartSummary &p : s.partStats)
    j["part_stats"].push_back(partToJson(p));
  // A bad byte in a message (a kernel's output) becomes U+FFFD, never an exception.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool summaryFromJson(const std::string &text, CampaignSummary &out, std::string &error) {
  error.clear();
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = "not valid JSON";
    return false;
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    error = std::string("not a campaign summary (\"format\" must be \"") + kFormat + "\")";
    return false;
  }
  CampaignSummary s;
  readSummary(j, s, error);
  if (!error.empty())
    return false;
  out = std::move(s);
  return true;
}

std::set<std::string> knownSignatures(const std::string &casesDir, const std::string &listFile) {
  std::set<std::string> out;
  std::error_code ec;
  if (!casesDir.empty() && fs::is_directory(casesDir, ec)) {
    fs::recursive_directory_iterator it(casesDir, fs::directory_options::skip_permission_denied,
                                        ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".json" && it->is_regular_file(ec))
        addSuiteSignatures(it->path(), out);
  }
  if (!listFile.empty())
    addListSignatures(listFile, out);
  return out;
}

std::string stageTimesLine(const CampaignSummary &s) {
  double total = 0;
  std::vector<std::pair<double, std::string>> order;
  for (const auto &[stage, seconds] : s.stageSeconds) {
    total += seconds;
    order.emplace_back(seconds, stage);
  }
  if (total <= 0)
    return "";
  std::sort(order.begin(), order.end(), std::greater<>());
  std::ostringstream shares, perKernel;
  shares << std::fixed << std::setprecision(0);
  perKernel << std::fixed << std::setprecision(2);
  for (size_t i = 0; i < order.size(); ++i) {
    const auto &[seconds, stage] = order[i];
    shares << (i ? " " : "") << stage << " " << 100 * seconds / total << "%";
    perKernel << (i ? ", " : "")
              << 1000 * seconds / static_cast<double>(std::max<int64_t>(1, s.kernels)) << " "
              << stage;
  }
  return "stage times: " + shares.str() +
         " (ms per kernel, summed over workers: " + perKernel.str() + ")";
}

std::string markdownReport(const CampaignSummary &s, const std::set<std::string> &known) {
  MarkdownRenderer r;
  return render(s, known, r);
}

std::string htmlReport(const CampaignSummary &s, const std::set<std::string> &known) {
  HtmlRenderer r;
  return render(s, known, r);
}

std::string pathCoverageText(const CampaignSummary &s) {
  if (s.pathKernels == 0)
    return "";
  std::ostringstream os;
  os << "path coverage (kernels whose code took each path; " << s.pathKernels << " of "
     << s.kernels << " kernels compiled):\n";
  for (const auto &[p, n] : s.paths)
    os << "  " << std::setw(6) << std::fixed << std::setprecision(2)
       << (s.kernels ? 100.0 * static_cast<double>(n) / static_cast<double>(s.kernels) : 0)
       << "% " << p << " (" << n << ")\n";
  if (std::vector<std::string> never = pathsNeverTaken(s); !never.empty())
    os << "  never taken: " << joined(never, ", ") << "\n";
  return os.str();
}

CampaignSummary mergeSummaries(const std::vector<CampaignSummary> &parts) {
  CampaignSummary m;
  m.name = "merged";
  if (parts.empty())
    return m;
  m.seed = parts.front().seed;
  m.mode = common(parts, &CampaignSummary::mode);
  m.device = common(parts, &CampaignSummary::device);
  for (const CampaignSummary &p : parts)
    mergeOne(m, p);
  return m;
}

} // namespace tc::fuzz
