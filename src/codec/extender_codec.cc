#include "gpusched/codec/extender_codec.h"

#include <charconv>

#include "gpusched/codec/json_writer.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/ondemand_types.h"
#include "gpusched/util/text_store.h"

namespace gpusched {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

// The text a decoded value's views point into: the JSON as received (raw objects are views of
// it) and copies of unescaped strings.
struct DecodedText {
  // A copy of `json`, padded as simdjson reads.
  explicit DecodedText(std::string_view json)
      : copy(json),
        body(copy.data(), copy.size(), copy.size() + simdjson::SIMDJSON_PADDING),
        strings(json.size()) {}
  // `json` itself, taken over, with its spare capacity as the padding (grown only when short):
  // a request body of megabytes is not copied once more.
  explicit DecodedText(std::string&& json)
      : owned(WithPadding(std::move(json))),
        body(owned.data(), owned.size(), owned.capacity()),
        strings(owned.size()) {}

  static std::string WithPadding(std::string&& json) {
    if (json.capacity() < json.size() + simdjson::SIMDJSON_PADDING) {
      json.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    }
    return std::move(json);
  }

  simdjson::padded_string copy;  // decoding a view
  std::string owned;             // decoding a string handed over
  simdjson::padded_string_view body;
  TextStore strings;
};

// Parses `json` as one JSON object and hands it to `decode` with the text, which the decoded value
// keeps when it points into it; rejects anything after the object.
// Documents larger than this do not leave their parser buffers behind in the thread's parser:
// after a burst of large requests the memory goes back, not into eight idle parsers.
constexpr size_t kKeepParserBytes = 4 << 20;

template <class T, class Json, class F>
T DecodeTop(Json&& json, std::string_view type_name, F&& decode) {
  thread_local simdjson::ondemand::parser parser;
  struct ShrinkAfterLarge {
    size_t bytes;
    ~ShrinkAfterLarge() {
      if (bytes > kKeepParserBytes) parser = simdjson::ondemand::parser();
    }
  } shrink{json.size()};
  auto text = std::make_shared<DecodedText>(std::forward<Json>(json));
  return WithContext(type_name, [&] {
    simdjson::ondemand::document doc = parser.iterate(text->body);
    T result = decode(doc, text);
    ExpectEnd(doc);
    return result;
  });
}

std::vector<std::string_view> DecodeStringArray(value v, TextStore& text) {
  std::vector<std::string_view> out;
  for (value item : v.get_array()) out.push_back(text.Keep(item.get_string().value()));
  return out;
}

// simdjson On-Demand checks only what it reads, but a node object of a full-Nodes request is
// echoed back whole in the filter answer: it is checked whole, or a malformed value the decoder
// skipped would reach kube-scheduler as an answer that is not JSON. `raw` lies inside a padded
// document, so the padding simdjson reads past its end is there.
void RequireValidJson(std::string_view raw) {
  auto check = [&](simdjson::dom::parser& parser) {
    auto parsed = parser.parse(raw.data(), raw.size(), /*realloc_if_needed=*/false);
    if (parsed.error()) {
      throw DecodeError(std::string("not valid JSON: ") + simdjson::error_message(parsed.error()));
    }
  };
  if (raw.size() > kKeepParserBytes) {
    simdjson::dom::parser once;
    check(once);
    return;
  }
  thread_local simdjson::dom::parser parser;
  check(parser);
}

std::vector<WireNode> DecodeNodeList(value v) {
  std::vector<WireNode> nodes;
  for (field f : v.get_object()) {
    if (f.unescaped_key().value() != "items") continue;
    value items = f.value();
    if (IsNull(items)) continue;
    size_t index = 0;
    for (value item : items.get_array()) {
      WithContext("items[" + std::to_string(index++) + "]", [&] {
        object o = item.get_object();
        WireNode node;
        node.raw_json = o.raw_json().value();
        RequireValidJson(node.raw_json);
        o.reset();
        node.info = DecodeNode(o);
        nodes.push_back(std::move(node));
      });
    }
  }
  return nodes;
}

void WriteStringArray(JsonWriter& w, const std::optional<std::vector<std::string_view>>& items) {
  if (!items) {
    w.Null();
    return;
  }
  w.BeginArray();
  for (const auto& s : *items) w.String(s);
  w.EndArray();
}

void WriteNodeList(JsonWriter& w, std::span<const std::string_view> raw_nodes) {
  w.BeginObject().Key("metadata").BeginObject().EndObject().Key("items").BeginArray();
  for (const auto& raw : raw_nodes) w.Raw(raw);
  w.EndArray().EndObject();
}

void WriteStringMap(JsonWriter& w, const FailedNodesMap& map) {
  w.BeginObject();
  for (const auto& [k, v] : map) w.Key(k).String(v);
  w.EndObject();
}

// About the size of `result` encoded, so the answer is written into one buffer without regrowing.
size_t EncodedSizeHint(const ExtenderFilterResult& result) {
  size_t bytes = 128;
  for (const auto* list : {&result.node_names, &result.nodes_raw}) {
    if (!*list) continue;
    for (std::string_view s : **list) bytes += s.size() + 3;
  }
  for (const auto* map : {&result.failed_nodes, &result.failed_and_unresolvable_nodes}) {
    for (const auto& [node, reason] : *map) bytes += node.size() + reason.size() + 6;
  }
  return bytes + result.error.size();
}

}  // namespace

namespace {

template <class Json>
ExtenderArgs DecodeArgs(Json&& json) {
  return DecodeTop<ExtenderArgs>(
      std::forward<Json>(json), "ExtenderArgs",
      [](auto& doc, const std::shared_ptr<DecodedText>& text) {
        ExtenderArgs args;
        bool has_pod = false;
        for (field f : doc.get_object()) {
          std::string_view key = f.unescaped_key();
          value v = f.value();
          if (key == "Pod") {
            if (IsNull(v)) continue;
            args.pod = WithContext("Pod", [&] { return DecodePod(v.get_object()); });
            has_pod = true;
          } else if (key == "NodeNames") {
            if (!IsNull(v))
              args.node_names =
                  WithContext("NodeNames", [&] { return DecodeStringArray(v, text->strings); });
          } else if (key == "Nodes") {
            if (!IsNull(v)) args.nodes = WithContext("Nodes", [&] { return DecodeNodeList(v); });
          }
        }
        if (!has_pod) throw DecodeError("no Pod in the request");
        if (!args.node_names && !args.nodes) {
          throw DecodeError("neither NodeNames nor Nodes in the request");
        }
        // kube-scheduler sends exactly one list (NodeNames when nodeCacheCapable is true); with
        // both, which one the answer should follow is a guess, so the request is refused.
        if (args.node_names && args.nodes) {
          throw DecodeError("both NodeNames and Nodes in the request: send exactly one");
        }
        args.text = text;
        return args;
      });
}

}  // namespace

ExtenderArgs DecodeExtenderArgs(std::string_view json) { return DecodeArgs(json); }

ExtenderArgs TakeAndDecodeExtenderArgs(std::string&& json) { return DecodeArgs(std::move(json)); }

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  std::string out;
  out.reserve(EncodedSizeHint(result));
  JsonWriter w(out);
  w.BeginObject().Key("Nodes");
  if (result.nodes_raw) {
    WriteNodeList(w, *result.nodes_raw);
  } else {
    w.Null();
  }
  w.Key("NodeNames");
  WriteStringArray(w, result.node_names);
  w.Key("FailedNodes");
  WriteStringMap(w, result.failed_nodes);
  w.Key("FailedAndUnresolvableNodes");
  WriteStringMap(w, result.failed_and_unresolvable_nodes);
  w.Key("Error").String(result.error).EndObject();
  return out;
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  // Thousands of entries per answer: written directly rather than through JsonWriter.
  static constexpr std::string_view kHost = R"({"Host":)";
  static constexpr std::string_view kScore = R"(,"Score":)";
  std::string out;
  size_t bytes = 2;
  for (const auto& hp : list.hosts) bytes += hp.host.size() + kHost.size() + kScore.size() + 8;
  out.reserve(bytes);
  out.push_back('[');
  for (size_t i = 0; i < list.hosts.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(kHost);
    AppendJsonString(out, list.hosts[i].host);
    out.append(kScore);
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, list.hosts[i].score);
    out.append(digits, end);
    out.push_back('}');
  }
  out.push_back(']');
  return out;
}

std::string EncodeError(std::string_view message) {
  std::string out;
  JsonWriter(out).BeginObject().Key("error").String(message).EndObject();
  return out;
}

}  // namespace gpusched
