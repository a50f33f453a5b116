// Decoding of Kubernetes v1.Pod and v1.Node JSON into gpusched's model, with simdjson On-Demand.
//
// Only the fields the model needs are read; unknown fields are skipped. Nodes keep only extended
// resources (cpu, memory, pods and storage are left to kube-scheduler). Quantities may be JSON
// strings or numbers; label and annotation values may be any scalar (YAML converted to JSON turns
// unquoted "8" into a number). Errors throw DecodeError with a short message naming the field.
// A pod's nodeSelector and node affinity become its node pins, within their budget
// (gpusched/codec/k8s_pins_decode.h), and a node's pin labels are kept
// (gpusched/model/node_pins.h). What only planning reads of a pod is never a reason to refuse it: a
// malformed creationTimestamp or priority reads as 0, an ownerReference with an overlong kind, name
// or uid is not kept, and only the first controller reference is. An object keeps at most
// kMaxExtendedResourceEntries extended resource entries (names with a '/', counted over all its
// resource lists, in the order written): a legal pod may ask for 8,000 distinct nvidia.com/mig-*
// names, and kept name by name they cost a gigabyte over 240 pods and reach /metrics and
// /why-pending. Past the budget a name's quantity is still checked, then only counted
// (PodInfo/NodeInfo::resources_not_kept); native resources are always kept. Functions are
// reentrant; each thread uses its own parser. A DecodeError carries the bound an object passed,
// when that is why it was refused (DecodeError::bound).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/util/input_error.h"
#include "gpusched/util/quote.h"

namespace gpusched {

// An InputError like every reader's, so a front door catches it with the rest; its message names
// the field, not the source, which the caller knows.
class DecodeError : public InputError {
 public:
  using InputError::InputError;
  // An object refused for passing one of gpusched's bounds rather than for being malformed:
  // `bound` names the bound (a static string, the `reason` label callers count it under).
  DecodeError(const std::string& message, const char* bound) : InputError(message), bound_(bound) {}
  // Which bound the object passed; nullptr when it is invalid.
  const char* bound() const { return bound_; }

 private:
  const char* bound_ = nullptr;
};

PodInfo DecodePod(simdjson::ondemand::object object);
NodeInfo DecodeNode(simdjson::ondemand::object object);
// Only metadata's name, namespace and uid: what a deletion needs, whatever else the object holds.
PodInfo DecodeIdentity(simdjson::ondemand::object object);

// A Kubernetes timestamp (RFC 3339: 2026-11-25T14:30:27Z, fractional seconds and a numeric
// offset allowed) as whole seconds since the Unix epoch; nullopt when malformed or outside the
// years 1970..9999.
std::optional<int64_t> ParseRfc3339Seconds(std::string_view text);
// Far above what a node offers (a dozen MIG profiles, shared variants, a few other devices, in
// capacity and allocatable) or a pod asks for (two entries, request and limit, per name and
// container).
inline constexpr size_t kMaxExtendedResourceEntries = 128;
// Longest ownerReference kind, name or uid kept (Kubernetes names are at most 253 bytes).
inline constexpr size_t kMaxOwnerRefField = 256;

// A scalar's text: strings unescaped, numbers and booleans as written, null as "".
std::string_view ScalarText(simdjson::ondemand::value value);
// Whether `value` is JSON null (which Kubernetes writes for an empty list or object).
inline bool IsNull(simdjson::ondemand::value value) {
  return value.type() == simdjson::ondemand::json_type::null;
}
// Throws DecodeError when anything but whitespace follows the fully consumed document.
void ExpectEnd(simdjson::ondemand::document& doc);

// Runs `decode` and turns simdjson's errors into DecodeError("<what>: <simdjson message>").
template <class F>
auto WithContext(std::string_view what, F&& decode) -> decltype(decode()) {
  try {
    return decode();
  } catch (const simdjson::simdjson_error& e) {
    throw DecodeError(std::string(what) + ": " + simdjson::error_message(e.error()));
  } catch (const DecodeError& e) {
    throw DecodeError(std::string(what) + ": " + e.what(), e.bound());
  }
}

// Calls `each(key, value)` on every field of the object `v` (null: none), each in the context of
// its key (quoted: keys are the input's).
template <class F>
void ForFields(simdjson::ondemand::value v, F&& each) {
  if (IsNull(v)) return;
  for (simdjson::ondemand::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    WithContext(QuoteForMessage(key, 128), [&] { each(key, f.value()); });
  }
}

}  // namespace gpusched
