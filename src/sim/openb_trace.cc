#include "gpusched/sim/openb_trace.h"

#include <charconv>
#include <map>
#include <unordered_map>

#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/quote.h"

namespace gpusched {

int64_t TraceNode::gpu_capacity_milli() const {
  int64_t milli = int64_t{gpus} * 1000;
  for (const auto& [resource, units] : resources) milli += GpuEquivalentMilli(resource, units);
  return milli;
}

int64_t GpuCapacityMilli(const std::vector<TraceNode>& nodes) {
  int64_t milli = 0;
  for (const TraceNode& node : nodes) milli += node.gpu_capacity_milli();
  return milli;
}

int64_t TracePod::gpu_request_milli() const {
  int64_t milli = num_gpu * gpu_milli;
  for (const auto& [resource, units] : resources) milli += GpuEquivalentMilli(resource, units);
  return milli;
}

namespace {

std::vector<std::string_view> SplitFields(std::string_view line, char sep) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(sep, start);
    fields.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

// Walks a CSV text row by row, giving typed access to named columns with located errors.
class CsvRows {
 public:
  CsvRows(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {
    if (!Next()) throw TraceError(source_ + ": empty file, expected a header line");
    for (size_t i = 0; i < fields_.size(); ++i) columns_[std::string(fields_[i])] = i;
  }

  // Advances to the next non-empty row; false at the end.
  bool Next() {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      fields_ = SplitFields(line, ',');
      return true;
    }
    return false;
  }

  bool Has(const std::string& column) const { return columns_.count(column) > 0; }

  std::string_view Text(const std::string& column) const {
    auto it = columns_.find(column);
    if (it == columns_.end())
      throw TraceError(source_ + ": no column \"" + column + "\" in the header");
    if (it->second >= fields_.size()) Fail(column, "missing field");
    return fields_[it->second];
  }

  int64_t Int(const std::string& column, int64_t min, int64_t max) const {
    std::string_view s = Text(column);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size())
      Fail(column, "not a whole number: \"" + QuoteForMessage(s, 64) + "\"");
    if (v < min || v > max) {
      Fail(column,
           std::to_string(v) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
    }
    return v;
  }

  [[noreturn]] void Fail(const std::string& column, const std::string& problem) const {
    throw TraceError(source_, line_, 0, column, problem);
  }

  int line() const { return line_; }

 private:
  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string_view> fields_;
  std::map<std::string, size_t> columns_;
};

// The openb CSVs are at most about 0.5 MB; a trace hundreds of times larger still fits.
constexpr size_t kMaxTraceCsvBytes = 256u << 20;

std::string ReadWhole(const std::string& path) {
  return ReadFileText(path, kMaxTraceCsvBytes, "trace CSV");
}

// A node or a pod of the current row with the columns both lists have: its name (in
// `name_column`), CPU and memory.
template <class Record>
Record ReadCommon(CsvRows& rows, const std::string& name_column) {
  Record record;
  record.name = rows.Text(name_column);
  record.cpu_milli = rows.Int("cpu_milli", 0, kMaxTraceCpuMilli);
  record.memory_mib = rows.Int("memory_mib", 0, kMaxTraceMemoryMib);
  return record;
}

}  // namespace

std::vector<TraceNode> ParseOpenbNodes(std::string_view csv, const std::string& source) {
  CsvRows rows(csv, source);
  std::vector<TraceNode> nodes;
  // The simulator, like Kubernetes, tells nodes apart by name: a name listed twice would make two
  // nodes that every lookup by name confuses.
  std::unordered_map<std::string, int> first_line;
  while (rows.Next()) {
    TraceNode n = ReadCommon<TraceNode>(rows, "sn");
    if (n.name.empty()) rows.Fail("sn", "empty: every node needs a name");
    if (auto [it, added] = first_line.emplace(n.name, rows.line()); !added) {
      rows.Fail("sn", "node \"" + QuoteForMessage(n.name, 64) +
                          "\" is listed twice (first on line " + std::to_string(it->second) + ")");
    }
    n.gpus = static_cast<int32_t>(rows.Int("gpu", 0, 64));
    n.model = rows.Text("model");
    if (n.gpus > 0 && n.model.empty()) rows.Fail("model", "empty for a node with GPUs");
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::vector<TracePod> ParseOpenbPods(std::string_view csv, const std::string& source) {
  CsvRows rows(csv, source);
  bool has_spec = rows.Has("gpu_spec");
  std::vector<TracePod> pods;
  while (rows.Next()) {
    TracePod p = ReadCommon<TracePod>(rows, "name");
    p.num_gpu = static_cast<int32_t>(rows.Int("num_gpu", 0, 64));
    p.gpu_milli = rows.Int("gpu_milli", 0, 1000);
    if (p.num_gpu > 1 && p.gpu_milli != 1000)
      rows.Fail("gpu_milli", "a multi-GPU task must ask for 1000 per GPU");
    if ((p.num_gpu == 0) != (p.gpu_milli == 0))
      rows.Fail("gpu_milli", "must be 0 exactly when num_gpu is 0");
    if (has_spec) {
      std::string_view spec = rows.Text("gpu_spec");
      if (!spec.empty()) {
        for (std::string_view model : SplitFields(spec, '|')) p.gpu_spec.emplace_back(model);
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

std::vector<TraceNode> LoadOpenbNodes(const std::string& path) {
  return ParseOpenbNodes(ReadWhole(path), path);
}
std::vector<TracePod> LoadOpenbPods(const std::string& path) {
  return ParseOpenbPods(ReadWhole(path), path);
}

}  // namespace gpusched
