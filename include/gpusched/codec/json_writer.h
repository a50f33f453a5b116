// JsonWriter: appends compact JSON to a string without building a document tree.
//
// The caller is responsible for well-formed nesting; the writer inserts commas. Strings are
// escaped per RFC 8259. Integers are written as JSON integers (kube-scheduler rejects 8.0 for an
// int64). Not synchronized.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Writes `json` verbatim as one value; it must already be valid JSON.
  JsonWriter& Raw(std::string_view json);

 private:
  void BeforeValue();

  std::string& out_;
  std::vector<bool> has_items_;  // per open container: whether a comma is due
  bool after_key_ = false;
};

// `text` as a quoted, escaped JSON string.
std::string JsonQuote(std::string_view text);
// Appends `text` to `out` as a quoted, escaped JSON string.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace gpusched
