// JSON decoding of the extender requests gpusched serves (filter and prioritize share one body)
// and encoding of its answers. gpusched offers no bind or preempt verb (docs/architecture.md,
// "Assume, not bind"), so their types have no codec.
//
// The decoder accepts what kube-scheduler sends: envelope keys spelled exactly as the Go field
// names, unknown keys ignored, null for any map, slice or pointer; it throws DecodeError (one
// line, naming the field) on anything else, including trailing garbage and an ExtenderArgs with
// both node lists. Encoders write compact JSON with the exact PascalCase keys and integers as
// integers.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/codec/extender_types.h"

namespace gpusched {

ExtenderArgs DecodeExtenderArgs(std::string_view json);
// The same, keeping `json` itself as the text the result points into instead of a copy (the
// server's request bodies: megabytes in full-Nodes mode).
ExtenderArgs TakeAndDecodeExtenderArgs(std::string&& json);

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const HostPriorityList& list);
// The HTTP error body: {"error":"<message>"}.
std::string EncodeError(std::string_view message);

}  // namespace gpusched
