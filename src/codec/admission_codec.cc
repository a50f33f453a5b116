#include "gpusched/codec/admission_codec.h"

#include <simdjson.h>

#include "gpusched/codec/json_writer.h"
#include "gpusched/codec/k8s_decode.h"

namespace gpusched {
namespace {

// Qualified names: in a unity build this file shares its unit with the On-Demand decoders.
using DomElement = simdjson::dom::element;
using DomObject = simdjson::dom::object;

// Documents larger than this do not leave their buffers in the thread's parser.
constexpr size_t kKeepReviewParserBytes = 4 << 20;

// The member `key` of `o` when present and not null.
std::optional<DomElement> Member(DomObject o, std::string_view key) {
  DomElement e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

DomObject ObjectOf(DomElement e, std::string_view what) {
  DomObject o;
  if (e.get(o) != simdjson::SUCCESS) throw DecodeError(std::string(what) + ": not an object");
  return o;
}

std::string StringOf(DomObject o, std::string_view key) {
  auto e = Member(o, key);
  if (!e) return "";
  std::string_view s;
  if (e->get(s) != simdjson::SUCCESS) throw DecodeError(std::string(key) + ": not a string");
  return std::string(s);
}

std::vector<std::string> ItemTexts(DomObject term, std::string_view key) {
  std::vector<std::string> out;
  auto list = Member(term, key);
  if (!list) return out;
  simdjson::dom::array items;
  if (list->get(items) != simdjson::SUCCESS) throw DecodeError(std::string(key) + ": not a list");
  for (DomElement item : items) {
    if (!item.is_object()) throw DecodeError(std::string(key) + ": an item is not an object");
    out.push_back(simdjson::minify(item));
  }
  return out;
}

PodPatchShape ShapeOf(DomObject pod) {
  PodPatchShape shape;
  if (auto metadata = Member(pod, "metadata")) {
    shape.has_annotations = Member(ObjectOf(*metadata, "metadata"), "annotations").has_value();
  }
  auto spec = Member(pod, "spec");
  if (!spec) return shape;
  auto affinity = Member(ObjectOf(*spec, "spec"), "affinity");
  if (!affinity) return shape;
  shape.has_affinity = true;
  auto node_affinity = Member(ObjectOf(*affinity, "affinity"), "nodeAffinity");
  if (!node_affinity) return shape;
  shape.has_node_affinity = true;
  auto required = Member(ObjectOf(*node_affinity, "nodeAffinity"),
                         "requiredDuringSchedulingIgnoredDuringExecution");
  if (!required) return shape;
  shape.has_required = true;
  auto terms = Member(ObjectOf(*required, "requiredDuringSchedulingIgnoredDuringExecution"),
                      "nodeSelectorTerms");
  if (!terms) return shape;
  simdjson::dom::array list;
  if (terms->get(list) != simdjson::SUCCESS) throw DecodeError("nodeSelectorTerms: not a list");
  for (DomElement term : list) {
    ++shape.required_term_count;
    if (shape.required_term_count > kMaxPodSelectorTerms) continue;
    DomObject t = ObjectOf(term, "nodeSelectorTerms item");
    shape.required_terms.push_back(
        PodSelectorTermText{ItemTexts(t, "matchExpressions"), ItemTexts(t, "matchFields")});
  }
  return shape;
}

PodInfo DecodePodText(const std::string& json) {
  simdjson::padded_string padded(json);
  simdjson::ondemand::parser parser;
  return WithContext("object", [&] {
    simdjson::ondemand::document doc = parser.iterate(padded);
    PodInfo pod = DecodePod(doc.get_object());
    ExpectEnd(doc);
    return pod;
  });
}

AdmissionRequest DecodeRequest(DomObject review) {
  AdmissionRequest out;
  out.api_version = StringOf(review, "apiVersion");
  if (out.api_version.empty()) out.api_version = "admission.k8s.io/v1";
  if (StringOf(review, "kind") != "AdmissionReview") throw DecodeError("kind: not AdmissionReview");
  auto request = Member(review, "request");
  if (!request) throw DecodeError("request: missing");
  DomObject r = ObjectOf(*request, "request");
  out.uid = StringOf(r, "uid");
  if (out.uid.empty()) throw DecodeError("request.uid: missing");
  out.operation = StringOf(r, "operation");
  out.sub_resource = StringOf(r, "subResource");
  out.namespace_name = StringOf(r, "namespace");
  if (auto resource = Member(r, "resource")) {
    out.resource = StringOf(ObjectOf(*resource, "request.resource"), "resource");
  }
  if (auto dry = Member(r, "dryRun")) {
    bool b = false;
    if (dry->get(b) == simdjson::SUCCESS) out.dry_run = b;
  }
  auto object_element = Member(r, "object");
  if (!object_element) return out;
  DomObject pod = ObjectOf(*object_element, "request.object");
  if (StringOf(pod, "kind") != "Pod" && out.resource != "pods") return out;
  out.has_pod = true;
  out.shape = ShapeOf(pod);
  out.pod = DecodePodText(simdjson::minify(*object_element));
  if (out.pod.namespace_name.empty()) out.pod.namespace_name = out.namespace_name;
  return out;
}

}  // namespace

AdmissionRequest DecodeAdmissionReview(std::string_view body) {
  auto decode = [&](simdjson::dom::parser& parser) {
    DomElement root;
    if (auto error = parser.parse(body.data(), body.size()).get(root)) {
      throw DecodeError(std::string("AdmissionReview: not valid JSON: ") +
                        simdjson::error_message(error));
    }
    return DecodeRequest(ObjectOf(root, "AdmissionReview"));
  };
  if (body.size() > kKeepReviewParserBytes) {
    simdjson::dom::parser once;
    return decode(once);
  }
  thread_local simdjson::dom::parser parser;
  return decode(parser);
}

std::optional<AdmissionIdentity> DecodeAdmissionIdentity(std::string_view body) {
  simdjson::dom::parser parser;
  DomElement root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  std::string_view uid, api_version = "admission.k8s.io/v1";
  if (root.at_pointer("/request/uid").get(uid) != simdjson::SUCCESS || uid.empty()) {
    return std::nullopt;
  }
  std::string_view given;
  if (root.at_pointer("/apiVersion").get(given) == simdjson::SUCCESS && !given.empty()) {
    api_version = given;
  }
  return AdmissionIdentity{std::string(api_version), std::string(uid)};
}

const std::vector<PodSelectorTermText>& TermsToExtend(const PodPatchShape& shape) {
  static const std::vector<PodSelectorTermText> kOneEmptyTerm = {PodSelectorTermText{}};
  return shape.has_required ? shape.required_terms : kOneEmptyTerm;
}

void WriteExtendedTerm(JsonWriter& w, const PodSelectorTermText& term,
                       const std::function<void(JsonWriter&)>& more) {
  w.BeginObject().Key("matchExpressions").BeginArray();
  for (const std::string& e : term.match_expressions) w.Raw(e);
  more(w);
  w.EndArray();
  if (!term.match_fields.empty()) {
    w.Key("matchFields").BeginArray();
    for (const std::string& f : term.match_fields) w.Raw(f);
    w.EndArray();
  }
  w.EndObject();
}

PodSchedulingText DecodePodSchedulingText(std::string_view pod_json) {
  simdjson::dom::parser parser;
  DomElement root;
  if (auto error = parser.parse(pod_json.data(), pod_json.size()).get(root)) {
    throw DecodeError(std::string("Pod: not valid JSON: ") + simdjson::error_message(error));
  }
  DomObject pod = ObjectOf(root, "Pod");
  std::string kind = StringOf(pod, "kind");
  if (!kind.empty() && kind != "Pod") throw DecodeError("kind: not Pod");
  PodSchedulingText out;
  if (auto metadata = Member(pod, "metadata")) {
    out.uid = StringOf(ObjectOf(*metadata, "metadata"), "uid");
  }
  out.shape = ShapeOf(pod);
  auto spec_element = Member(pod, "spec");
  if (!spec_element) return out;
  DomObject spec = ObjectOf(*spec_element, "spec");
  auto raw = [](std::optional<DomElement> e, bool list, std::string_view what) -> std::string {
    if (!e) return "";
    if (list ? !e->is_array() : !e->is_object()) {
      throw DecodeError(std::string(what) + (list ? ": not a list" : ": not an object"));
    }
    return simdjson::minify(*e);
  };
  out.node_selector = raw(Member(spec, "nodeSelector"), false, "nodeSelector");
  out.tolerations = raw(Member(spec, "tolerations"), true, "tolerations");
  out.scheduler_name = StringOf(spec, "schedulerName");
  if (auto affinity = Member(spec, "affinity")) {
    if (auto node = Member(ObjectOf(*affinity, "affinity"), "nodeAffinity")) {
      out.preferred = raw(Member(ObjectOf(*node, "nodeAffinity"),
                                 "preferredDuringSchedulingIgnoredDuringExecution"),
                          true, "preferredDuringSchedulingIgnoredDuringExecution");
    }
  }
  return out;
}

std::string EncodeAdmissionReview(std::string_view api_version, std::string_view uid,
                                  const std::string* patch) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("apiVersion").String(api_version).Key("kind").String("AdmissionReview");
  w.Key("response").BeginObject().Key("uid").String(uid).Key("allowed").Bool(true);
  if (patch) w.Key("patchType").String("JSONPatch").Key("patch").String(Base64(*patch));
  w.EndObject().EndObject();
  return out;
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) |
                 uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace gpusched
