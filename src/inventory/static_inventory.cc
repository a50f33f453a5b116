#include "gpusched/inventory/static_inventory.h"

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/k8s_dra_decode.h"
#include "gpusched/codec/k8s_pdb_decode.h"
#include "gpusched/codec/ondemand_types.h"
#include "gpusched/codec/yaml_to_json.h"
#include "gpusched/util/file_text.h"

namespace gpusched {
namespace {

using namespace ondemand_types;  // NOLINT(google-build-using-namespace)

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
  if (kind == "PodDisruptionBudgetList") return DecodeItems(o, "PodDisruptionBudget", out);
  if (kind == "ResourceSliceList") return DecodeItems(o, "ResourceSlice", out);
  if (kind == "ResourceClaimList") return DecodeItems(o, "ResourceClaim", out);
  if (kind == "DeviceClassList") return DecodeItems(o, "DeviceClass", out);
  if (kind == "Node") {
    out.nodes.push_back(DecodeNode(o));
  } else if (kind == "Pod") {
    out.pods.push_back(DecodePod(o));
  } else if (kind == "PodDisruptionBudget") {
    out.budgets.push_back(DecodeDisruptionBudget(o));
  } else if (kind == "ResourceSlice") {
    out.dra_slices.push_back(DecodeDraSlice(o));
  } else if (kind == "ResourceClaim") {
    out.dra_claims.push_back(DecodeDraClaim(o));
  } else if (kind == "DeviceClass") {
    out.dra_classes.push_back(DecodeDraDeviceClass(o));
  } else {
    ++out.skipped_objects;
    o.raw_json().value();  // consumed, or a skipped top-level object leaves "unexpected data"
  }
}

void DecodeJsonDocument(const std::string& json, std::string_view default_kind, Inventory& out) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc = parser.iterate(padded);
  if (doc.type() == json_type::array) {
    for (value item : doc.get_array()) DecodeObject(item.get_object(), default_kind, out);
  } else {
    DecodeObject(doc.get_object(), default_kind, out);
  }
  ExpectEnd(doc);
}

// The objects of `text`; `default_kind` for those without a kind.
Inventory Parse(std::string_view text, std::string_view source, std::string_view default_kind) {
  size_t first = text.find_first_not_of(" \t\r\n");
  bool is_json = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  Inventory out;
  try {
    std::vector<std::string> docs =
        is_json ? std::vector<std::string>{std::string(text)} : YamlDocumentsToJson(text);
    for (size_t i = 0; i < docs.size(); ++i) {
      std::string what = docs.size() > 1 ? "document " + std::to_string(i + 1) : "document";
      WithContext(what, [&] { DecodeJsonDocument(docs[i], default_kind, out); });
    }
  } catch (const YamlError& e) {  // a syntax error: its line and column, as every reader's
    throw InventoryError(YamlInputError(source, e));
  } catch (const InputError& e) {  // a decoder's: the object, the field and the value, quoted
    throw InventoryError(InContext(source, e));
  }
  return out;
}

}  // namespace

Inventory ParseInventory(std::string_view text, std::string_view source) {
  return Parse(text, source, "");
}

Inventory LoadInventoryFile(const std::string& path) {
  return ParseInventory(ReadFileText(path, kMaxInventoryBytes, "cluster inventory"), path);
}

Inventory LoadInventoryOrSample(const std::string& path, bool allow_empty) {
  if (path.empty()) return ParseInventory(kSampleClusterYaml, "sample cluster");
  Inventory inventory = LoadInventoryFile(path);
  if (inventory.nodes.empty() && !allow_empty) {
    throw InventoryError(path + ": no Node in the inventory (" +
                         std::to_string(inventory.pods.size()) + " pods, " +
                         std::to_string(inventory.skipped_objects) +
                         " other objects); --allow-empty-inventory accepts that");
  }
  return inventory;
}

PodInfo ParsePod(std::string_view text, std::string_view source) {
  Inventory parsed = Parse(text, source, "Pod");
  const size_t others = parsed.nodes.size() + parsed.budgets.size() + parsed.skipped_objects;
  if (parsed.pods.size() != 1 || others > 0) {
    throw InventoryError(std::string(source) + ": expected exactly one Pod, found " +
                         std::to_string(parsed.pods.size()) + " pods and " +
                         std::to_string(others) + " other objects");
  }
  return std::move(parsed.pods[0]);
}

PodInfo LoadPodFile(const std::string& path) {
  return ParsePod(ReadFileText(path, kMaxPodFileBytes, "pod file"), path);
}

void ApplyInventory(const Inventory& inventory, ClusterLedger& ledger) {
  for (const auto& node : inventory.nodes) ledger.UpsertNode(node);
  for (const auto& pod : inventory.pods) ledger.UpsertPod(pod);
  for (const auto& slice : inventory.dra_slices) ledger.dra().Upsert(slice);
  for (const auto& claim : inventory.dra_claims) ledger.dra().Upsert(claim);
  for (const auto& device_class : inventory.dra_classes) ledger.dra().Upsert(device_class);
}

}  // namespace gpusched
