#include "gpusched/inventory/static_inventory.h"

#include <fstream>
#include <sstream>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/yaml_to_json.h"

namespace gpusched {
namespace {

using simdjson::ondemand::field;
using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

void DecodeObject(object o, std::string_view default_kind, Inventory& out);

void DecodeItems(object list, std::string_view item_kind, Inventory& out) {
  for (field f : list) {
    if (f.unescaped_key().value() != "items") continue;
    value items = f.value();
    if (items.type() == json_type::null) return;
    size_t index = 0;
    for (value item : items.get_array()) {
      WithContext("items[" + std::to_string(index++) + "]",
                  [&] { DecodeObject(item.get_object(), item_kind, out); });
    }
  }
}

void DecodeObject(object o, std::string_view default_kind, Inventory& out) {
  std::string kind;
  for (field f : o) {
    if (f.unescaped_key().value() == "kind") kind = std::string(ScalarText(f.value()));
  }
  o.reset();
  if (kind.empty()) kind = default_kind;
  if (kind == "List") return DecodeItems(o, "", out);
  if (kind == "NodeList") return DecodeItems(o, "Node", out);
  if (kind == "PodList") return DecodeItems(o, "Pod", out);
  if (kind == "Node") {
    out.nodes.push_back(DecodeNode(o));
  } else if (kind == "Pod") {
    out.pods.push_back(DecodePod(o));
  } else {
    ++out.skipped_objects;
  }
}

void DecodeJsonDocument(const std::string& json, Inventory& out) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc = parser.iterate(padded);
  if (doc.type() == json_type::array) {
    for (value item : doc.get_array()) DecodeObject(item.get_object(), "", out);
  } else {
    DecodeObject(doc.get_object(), "", out);
  }
  ExpectEnd(doc);
}

}  // namespace

Inventory ParseInventory(std::string_view text, std::string_view source) {
  size_t first = text.find_first_not_of(" \t\r\n");
  bool is_json = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  Inventory out;
  try {
    std::vector<std::string> docs =
        is_json ? std::vector<std::string>{std::string(text)} : YamlDocumentsToJson(text);
    for (size_t i = 0; i < docs.size(); ++i) {
      std::string what = docs.size() > 1 ? "document " + std::to_string(i + 1) : "document";
      WithContext(what, [&] { DecodeJsonDocument(docs[i], out); });
    }
  } catch (const std::exception& e) {
    throw InventoryError(std::string(source) + ": " + e.what());
  }
  return out;
}

Inventory LoadInventoryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InventoryError(path + ": cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseInventory(buffer.str(), path);
}

void ApplyInventory(const Inventory& inventory, ClusterLedger& ledger) {
  for (const auto& node : inventory.nodes) ledger.UpsertNode(node);
  for (const auto& pod : inventory.pods) ledger.UpsertPod(pod);
}

}  // namespace gpusched
