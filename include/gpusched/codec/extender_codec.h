// JSON encoding and decoding of the extender wire types.
//
// Decoders accept what kube-scheduler sends: envelope keys spelled exactly as the Go field names,
// unknown keys ignored, null for any map, slice or pointer; they throw DecodeError (one line,
// naming the field) on anything else, including trailing garbage and an ExtenderArgs with both
// node lists. Encoders
// write compact JSON with the exact PascalCase keys and integers as integers.
#ifndef GPUSCHED_CODEC_EXTENDER_CODEC_H_
#define GPUSCHED_CODEC_EXTENDER_CODEC_H_

#include <string>
#include <string_view>

#include "gpusched/codec/extender_types.h"

namespace gpusched {

ExtenderArgs DecodeExtenderArgs(std::string_view json);
// The same, keeping `json` itself as the text the result points into instead of a copy (the
// server's request bodies: megabytes in full-Nodes mode).
ExtenderArgs TakeAndDecodeExtenderArgs(std::string&& json);
ExtenderFilterResult DecodeExtenderFilterResult(std::string_view json);
HostPriorityList DecodeHostPriorityList(std::string_view json);
ExtenderBindingArgs DecodeExtenderBindingArgs(std::string_view json);
ExtenderBindingResult DecodeExtenderBindingResult(std::string_view json);
ExtenderPreemptionArgs DecodeExtenderPreemptionArgs(std::string_view json);
ExtenderPreemptionResult DecodeExtenderPreemptionResult(std::string_view json);

std::string EncodeExtenderArgs(const ExtenderArgs& args);
std::string EncodeExtenderPreemptionArgs(const ExtenderPreemptionArgs& args);
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
std::string EncodeHostPriorityList(const HostPriorityList& list);
std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args);
std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result);
std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result);
// The HTTP error body: {"error":"<message>"}.
std::string EncodeError(std::string_view message);

}  // namespace gpusched

#endif  // GPUSCHED_CODEC_EXTENDER_CODEC_H_
