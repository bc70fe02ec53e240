//===- Journal.cpp - A campaign's state on disk: arguments and journal ---===//
#include "fuzz/Journal.h"
#include "support/FileIO.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tc::fuzz {
namespace {

using Json = nlohmann::ordered_json;

const char *const kStateFile = "campaign-args.json";

Json findingToJson(const Finding &f) {
  return {{"signature", f.signature}, {"property", f.property}, {"seed", f.campaignSeed},
          {"index", f.index},         {"message", f.message},   {"case", f.caseFile},
          {"reproduce", f.reproduce}, {"features", f.features},   {"culprit", f.culprit}};
}

Finding findingFromJson(const Json &j) {
  Finding f;
  f.signature = j.at("signature").get<std::string>();
  f.property = j.at("property").get<std::string>();
  f.campaignSeed = j.at("seed").get<uint64_t>();
  f.index = j.at("index").get<int64_t>();
  f.message = j.at("message").get<std::string>();
  f.caseFile = j.at("case").get<std::string>();
  f.reproduce = j.at("reproduce").get<std::string>();
  f.features = j.at("features").get<std::vector<std::string>>();
  f.culprit = j.value("culprit", "");
  return f;
}

Json argsJson(const CampaignArgs &a) {
  return {{"seed", a.seed},
          {"shard", std::to_string(a.shardIndex) + "/" + std::to_string(a.shardCount)},
          {"mode", a.mode},
          {"num_warps", a.numWarps},
          {"disable_opt", a.disableOpt},
          {"threads", a.threads},
          {"fail_on_feature", a.plantFeature}};
}

CampaignArgs argsFromJson(const Json &j) {
  CampaignArgs a;
  a.seed = j.at("seed").get<uint64_t>();
  std::string shard = j.at("shard").get<std::string>();
  size_t slash = shard.find('/');
  a.shardIndex = std::stoi(shard.substr(0, slash));
  a.shardCount = std::stoi(shard.substr(slash + 1));
  a.mode = j.at("mode").get<std::string>();
  a.numWarps = j.at("num_warps").get<unsigned>();
  a.disableOpt = j.at("disable_opt").get<std::string>();
  a.threads = j.at("threads").get<unsigned>();
  a.plantFeature = j.at("fail_on_feature").get<std::string>();
  return a;
}

// "seed 1 (now 2), mode cpu-only (now gpu)": the fields that differ.
std::string differences(const CampaignArgs &was, const CampaignArgs &now) {
  Json a = argsJson(was), b = argsJson(now);
  std::string out;
  for (auto it = a.begin(); it != a.end(); ++it)
    if (b[it.key()] != it.value())
      out += (out.empty() ? "" : ", ") + it.key() + " " +
             it.value().dump(-1, ' ', false, Json::error_handler_t::replace) + " (now " +
             b[it.key()].dump(-1, ' ', false, Json::error_handler_t::replace) + ")";
  return out;
}

} // namespace

std::string recordToLine(const KernelRecord &r) {
  Json j = {{"index", r.index},      {"status", r.status},     {"property", r.property},
            {"message", r.message},  {"features", r.features}, {"gen_ms", r.genMs},
            {"check_ms", r.checkMs}, {"elapsed", r.elapsed},   {"restarts", r.restarts}};
  if (!r.stageMs.empty())
    j["stages"] = r.stageMs;
  if (r.paths)
    j["paths"] = *r.paths;
  if (!r.sample.empty())
    j["sample"] = r.sample;
  if (!r.rawSignature.empty())
    j["raw_signature"] = r.rawSignature;
  if (r.finding)
    j["finding"] = findingToJson(*r.finding);
  // Invalid UTF-8 (from a compiler message) must not make the line unreadable.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::optional<KernelRecord> recordFromLine(const std::string &line) {
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::nullopt;
  try {
    KernelRecord r;
    r.index = j.at("index").get<int64_t>();
    r.status = j.at("status").get<std::string>();
    r.property = j.at("property").get<std::string>();
    r.message = j.at("message").get<std::string>();
    r.features = j.at("features").get<std::vector<std::string>>();
    r.genMs = j.at("gen_ms").get<double>();
    r.checkMs = j.at("check_ms").get<double>();
    r.elapsed = j.at("elapsed").get<double>();
    r.restarts = j.at("restarts").get<int64_t>();
    if (j.contains("stages"))
      r.stageMs = j.at("stages").get<std::map<std::string, double>>();
    if (j.contains("paths"))
      r.paths = j.at("paths").get<std::vector<std::string>>();
    r.sample = j.value("sample", "");
    r.rawSignature = j.value("raw_signature", "");
    if (j.contains("finding"))
      r.finding = findingFromJson(j.at("finding"));
    return r;
  } catch (const Json::exception &) {
    return std::nullopt;
  }
}

std::vector<KernelRecord> readJournal(const std::string &path, int64_t *skipped) {
  std::vector<KernelRecord> out;
  std::set<int64_t> seen;
  int64_t bad = 0;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    std::optional<KernelRecord> r = recordFromLine(line);
    if (!r || !seen.insert(r->index).second) {
      ++bad;
      continue;
    }
    out.push_back(std::move(*r));
  }
  if (skipped)
    *skipped = bad;
  return out;
}

Journal::~Journal() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool Journal::open(const std::string &path, std::string &error) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  // A torn last line (kill -9 mid-write) must not swallow the next record.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    int rd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (rd >= 0) {
      (void)!::pread(rd, &last, 1, st.st_size - 1);
      ::close(rd);
    }
    if (last != '\n')
      (void)!::write(fd_, "\n", 1);
  }
  return true;
}

bool Journal::append(const KernelRecord &r, std::string &error) {
  std::string line = recordToLine(r);
  ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    error = std::string("cannot append to the journal: ") +
            (n < 0 ? std::strerror(errno) : "short write");
    return false;
  }
  return true;
}

std::string argsToJson(const CampaignArgs &a) {
  return argsJson(a).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool loadState(const std::string &dir, CampaignState &state, bool &exists, std::string &error) {
  fs::path path = fs::path(dir) / kStateFile;
  std::error_code ec;
  exists = fs::exists(fs::symlink_status(path, ec));
  if (!exists)
    return true;
  std::string text;
  if (!readFileCapped(path.string(), kMaxJsonFileBytes, text, error))
    return false;
  Json j = Json::parse(text, nullptr, false);
  try {
    if (j.is_discarded())
      throw std::runtime_error("not JSON");
    state.args = argsFromJson(j.at("args"));
    state.started = j.at("started").get<std::string>();
    state.device = j.value("device", "");
    return true;
  } catch (const std::exception &e) {
    // The library's words without its codes ("[json.exception.type_error.302]"),
    // and a number that does not parse said as such (std::stoi's "stoi").
    std::string why = e.what();
    if (size_t p = why.find("] "); why.starts_with("[json.exception.") && p != std::string::npos)
      why = why.substr(p + 2);
    if (dynamic_cast<const std::invalid_argument *>(&e) ||
        dynamic_cast<const std::out_of_range *>(&e))
      why = "a field that must be a number is not one, or is out of range";
    error = path.string() + " is not a campaign state file (" + why +
            "); remove it or use another --out";
    return false;
  }
}

bool saveState(const std::string &dir, const CampaignState &state, std::string &error) {
  fs::path path = fs::path(dir) / kStateFile, tmp = path.string() + ".tmp";
  Json j = {{"args", argsJson(state.args)}, {"started", state.started}, {"device", state.device}};
  {
    std::ofstream out(tmp);
    out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    if (!out) {
      error = "cannot write " + tmp.string();
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec); // atomic: a kill never leaves half a state file
  if (ec)
    error = "cannot write " + path.string() + ": " + ec.message();
  return !ec;
}

bool openCampaign(const std::string &dir, const CampaignArgs &args, CampaignState &state,
                  std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  // Only regular files where the campaign keeps its state, journal and reports
  // (a FIFO or a directory there would block or break it).
  const char *own[] = {kStateFile, "journal.jsonl", "campaign.json", "report.md", "report.html"};
  for (const char *name : own) {
    fs::path p = fs::path(dir) / name;
    if (fs::exists(fs::symlink_status(p, ec)) && !fs::is_regular_file(p, ec)) {
      error = "cannot use " + dir + " as the campaign folder: " + regularFileProblem(p.string());
      return false;
    }
  }
  bool exists = false;
  if (!loadState(dir, state, exists, error))
    return false;
  if (!exists) // a new campaign: never over files that some other run left there
    for (const char *name : own)
      if (fs::exists(fs::path(dir) / name, ec)) {
        error = dir + " already holds " + name + " but no campaign state (" + kStateFile +
                "): it is not a triton-fuzz campaign folder; use another --out";
        return false;
      }
  if (exists) {
    if (state.args == args)
      return true;
    error = dir + " holds a campaign with other arguments: " + differences(state.args, args) +
            "; use another --out, or the same arguments to resume it";
    return false;
  }
  state = {args, isoNow(), ""};
  return saveState(dir, state, error);
}

std::string isoNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

} // namespace tc::fuzz
